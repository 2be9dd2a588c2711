"""An MT tuning run resolved once against the config: what the workflow's tuning rules ask of a
run, with every default filled in.

A condition name leaves some of its run's settings to the config (:class:`Condition`: a
``None`` field means "the config's"): the tuning metric (``tuning.metric``, Fig. 4.8), the
untargeted paraphrases' self-paraphrase bias (``tuning.paraphraser_bias``, Fig. 5.14) and a
targeted run's paraphraser configuration (``grid_search.point``, else the grid search's choice,
§5.2.3). :func:`resolve_run` fills them in, with the run's start weights (§5.3) and seed, in one
place; the rules obtain a :class:`ResolvedRun` through one helper and build their inputs and
params from it (:meth:`ResolvedRun.inputs`, :meth:`ResolvedRun.to_params`) instead of parsing
the wildcard again, and the evaluation and report rules give their scripts the runs themselves.

The file names a run reads and writes, and every other file name that the package (the plan's
inputs, :mod:`circle.pipeline.plan`) and the workflow's rules both spell, are the templates
below: each is defined here once, and the rule that writes it names it in its output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from circle.experiments.conditions import (
    UNTUNED_TRANSLATION_OOV,
    Condition,
    TuningRun,
    oov_variant_tag,
    reference_tag,
    run_seed,
    tagged_oov_variant,
    tuning_params,
)
from circle.paraphrase.config import ParaphraserConfig, bias_name

EFFECTIVE_CONFIG_FILE = "results/{experiment}/config.yaml"
"""The experiment's effective configuration, its config files merged and the schema's defaults
filled in (rule effective_config)."""

CORPUS_TABLE = "results/{experiment}/corpus/{split}.parquet"
"""A split's table of segments as read from the corpus, before tokenisation (rule
prepare_corpus)."""

TOKENIZED_TABLE = "results/{experiment}/tokenized/{split}.parquet"
"""A split's tokenised table (rule tokenize_corpus; a pivot system's training bitext: rules
pivot_bitext and pivot_language; the held-out system's splits: rule hold_out_blocks)."""

EFLOMAL_ALIGNMENT = "results/{experiment}/align/eflomal.parquet"
"""eflomal's symmetrised alignment of a system's training bitext (rule align_corpus)."""

ALIGNMENT_LINKS = "results/{experiment}/align/links.parquet"
"""The alignment of a training bitext the workflow joins or cuts rather than aligns: a pivot
language's (rule pivot_language) and the held-out system's (rule hold_out_blocks)."""

LM_BINARY = "results/{experiment}/lm/{order}gram.binary"
"""The MT system's KenLM binary of an order (rule estimate_lm)."""

PARAPHRASER_LM_BINARY = "results/{experiment}/paraphrase/lm/{order}gram.binary"
"""The paraphraser's own KenLM binary of an order (rule estimate_paraphraser_lm)."""

LEXICAL_TABLE = "results/{experiment}/grammar/extraction/lexical.parquet"
"""The lexical weights of a system's training bitext (rule split_for_counting)."""

BILINGUAL_GRAMMAR = "results/{experiment}/grammar/bilingual.parquet"
"""A system's bilingual Hiero grammar (rule extract_grammar)."""

PIVOTED_PART = "results/{experiment}/paraphrase/pivoted/part{job}.parquet"
"""One pairing job's part of the unbiased paraphrase grammar of the Hiero pivot (rule
pivot_part)."""

PIVOT_SELF_PARAPHRASE = "results/{experiment}/paraphrase/self_paraphrase.parquet"
"""The Hiero pivot's residuals (eq. 5.2) for the bias (rule prepare_pivot)."""

PARAPHRASE_GRAMMAR = "results/{experiment}/paraphrase/bias{bias}.parquet"
"""The paraphrase grammar with self-paraphrase bias ``{bias}`` (:func:`bias_name`; rule
bias_grammar)."""

TRAINING_PARSES = "results/{experiment}/samt/train.parses.parquet"
"""The parses of the English side of the training bitext (rule parse_training)."""

LABELLED_BILINGUAL_GRAMMAR = "results/{experiment}/samt/bilingual.parquet"
"""The bilingual grammar with SAMT labels (rule extract_labelled_grammar)."""

LABELLED_PARAPHRASE_GRAMMAR_FILE = "results/{experiment}/samt/paraphrase/part0.parquet"
"""The labelled paraphrase grammar, pivoted in one part (rule pivot_labelled_grammar)."""

LABELLED_SELF_PARAPHRASE = "results/{experiment}/samt/paraphrase/self_paraphrase.parquet"
"""The labelled pivot's residuals per labelled phrase (rule pivot_labelled_grammar)."""

COLLAPSED_PARAPHRASE_GRAMMAR = "results/{experiment}/samt/collapsed/part0.parquet"
"""The labelled paraphrase grammar collapsed to X (rule collapse_labelled_grammar)."""

COLLAPSED_SELF_PARAPHRASE = "results/{experiment}/samt/collapsed/self_paraphrase.parquet"
"""The collapsed grammar's residuals (eq. 5.2) for the bias (rule collapse_labelled_grammar)."""

EVALSET_TABLE = "results/{experiment}/sets/{evalset}.parquet"
"""An evaluation set's selected segments (rule select_evalset)."""

FILTERED_GRAMMAR = "results/{experiment}/grammar/filtered/{evalset}.parquet"
"""The translation grammar filtered to an evaluation set (rule filter_grammar)."""

OOV_PARAPHRASED_GRAMMAR = (
    "results/{experiment}/grammar/oov_paraphrased{oov_variant}/{evalset}.parquet")
"""The filtered grammar with the rules the set's OOV phrases borrow from their distributional
paraphrases (rule augment_grammar, Marton et al. 2009), made with oov_paraphrase's settings or
a variant's (``{oov_variant}``: :func:`~circle.experiments.conditions.oov_variant_tag`)."""

OOV_PARAPHRASE_TABLE = "results/{experiment}/oov/paraphrases{oov_variant}/{evalset}.parquet"
"""The distributional paraphrases of a set's OOV phrases (rule oov_paraphrases), with
oov_paraphrase's search settings or a variant's."""

OOV_MASKING_TABLE = "results/{experiment}/evaluation/oov_masking.parquet"
"""Known words masked as OOV, scored at several amounts of monolingual text (rule
oov_masking_table, circle.experiments.oov_masking)."""

WEIGHTS = "results/{experiment}/weights/{weights}.txt"
"""A weights file: a tuning run's returned weights (``<run>``), the untuned ones
(``untuned-translation``, ``untuned-paraphrase``) or the tuned paraphraser's."""

TUNING_LOG = "results/{experiment}/tune/{run}.parquet"
"""A tuning run's log, one row per iteration (circle.tune.loop.write_tuning_log)."""

DECODE_NBEST = "results/{experiment}/decode/{weights}/{evalset}.nbest.parquet"
"""An evaluation set's n-best lists at one weights file (the decode stage)."""

DECODE_ONEBEST = "results/{experiment}/decode/{weights}/{evalset}.1best.txt"
"""An evaluation set's tokenised 1-best output at one weights file (rule gather_nbest)."""

DECODE_NBEST_TEXT = "results/{experiment}/decode/{weights}/{evalset}.nbest.txt"
"""The same n-best lists in Moses's text format (rule gather_nbest)."""

DECODE_ONEBEST_DETOK = "results/{experiment}/decode/{weights}/{evalset}.1best.detok.txt"
"""The detokenised 1-best output (rule gather_nbest), what sacrebleu scores."""

UNTARGETED_PARAPHRASES = ("results/{experiment}/paraphrase/untargeted-bias{bias}/"
                          "tune{reference}.nbest.parquet")
"""The untargeted k-best paraphrases of the tune set's single reference (``{reference}``:
:func:`circle.experiments.conditions.reference_tag`) at a bias (rule paraphrase_references)."""

REFERENCE_TEXT = "results/{experiment}/sets/{evalset}.ref{k}.txt"
"""An evaluation set's k-th reference (from 1), tokenised, one segment a line (rule
reference_texts)."""

REFERENCE_TEXT_DETOK = "results/{experiment}/sets/{evalset}.ref{k}.detok.txt"
"""The same reference detokenised (rule reference_texts)."""

EXTRA_REFERENCES = "results/{experiment}/references/{extra}.parquet"
"""A 1H+1X condition's fixed extra references (rule extra_references)."""

LATTICE_REFERENCES = "results/{experiment}/lattice/tune.{human}H.references.parquet"
"""The lattice sentences of kH's references for kH+mL (rule lattice_references)."""

TUNING_ITERATIONS = "results/{experiment}/tune/{condition}.rep{replicate}.iterations"
"""The directory of a fanned-out tuning run's iteration files (circle.tune.fanout)."""

TUNING_ITERATION = TUNING_ITERATIONS + "/iteration-{iteration}.parquet"
"""One iteration's file of a fanned-out tuning run (checkpoint tune_iteration)."""

TARGETED_CACHE_DIR = "results/{experiment}/targeted/cache"
"""Where the 1H+kT tuning jobs cache their targeted paraphrases (their ``targeted`` param's
``cache``, no rule's output)."""

EVALUATION_TABLE = "results/{experiment}/evaluation/{run_set}results.parquet"
"""A run set's per-run evaluation (``{run_set}``: '' or 'paper/', 'dose/', ...; rule
evaluate_runs)."""

EVALUATION_CONDITIONS = "results/{experiment}/evaluation/{run_set}conditions.parquet"
"""A run set's per-condition summary of its evaluation (rule evaluate_runs)."""

GRID_ROW = "results/{experiment}/grid/grid/bias{bias}.{kind}.parquet"
"""One bias's row of the grid search, its ``nbest`` or ``distances`` table (rule grid_row)."""

GRID_CHOICE = "results/{experiment}/grid/chosen.parquet"
"""The grid search's choice of the targeted paraphraser's configuration (§5.2.3)."""


@dataclass(frozen=True)
class ResolvedRun:
    """One MT tuning run with what its condition leaves to the config filled in."""

    run: TuningRun
    tuning: Mapping[str, Any]
    """The tuning job's settings: the config's ``tuning`` section without the keys that name
    runs, the metric the condition's own where it names one (:func:`tuning_params`)."""
    seed: int
    """The run's own seed (:func:`circle.experiments.conditions.run_seed`)."""
    paraphrase_bias: float | None
    """1H+kP: the self-paraphrase bias of the untargeted paraphrases it adds, the condition's
    ``_b<bias>`` or ``tuning.paraphraser_bias``; None for the other conditions."""
    paraphraser: ParaphraserConfig | None
    """1H+kT: its targeted paraphraser's configuration, the condition's ``_b<bias>_w<weight>``
    or ``grid_search.point`` (:func:`configured_point`), decided here once; None for the other
    conditions and where the grid search chooses (a table the workflow makes, read by the job:
    :func:`circle.paraphrase.targeted.targeted_setup`)."""
    oov_variant: str | None = None
    """The OOV variant whose augmented grammars the run decodes with ("" oov_paraphrase's own
    settings: a ``kH_oov`` condition, or every run with ``oov_paraphrase.translate``; a name:
    ``kH_oov-<name>``; :func:`translation_grammar`); None: the filtered grammars."""

    @property
    def condition(self) -> Condition:
        return self.run.condition

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def start(self) -> str:
        """The weights file the run starts from (:attr:`TuningRun.start`, §5.3)."""
        return self.run.start

    @property
    def metric(self) -> str:
        return str(self.tuning["metric"])

    def inputs(self, experiment: str, lm: str) -> dict[str, str]:
        """The files the run reads besides a targeted paraphraser's (the workflow's
        ``targeted_paraphraser_inputs``): the tune set, its grammar
        (:func:`translation_grammar`), the decoding LM ``lm``, the start weights, and the extra
        references its condition adds (the untargeted paraphrases of 1H+kP, the extra reference
        table of 1H+1X, the lattice table of kH+mL)."""
        inputs = {
            "evalset": EVALSET_TABLE.format(experiment=experiment, evalset="tune"),
            "grammar": translation_grammar(experiment, "tune", self.oov_variant),
            "lm": lm,
            "weights": WEIGHTS.format(experiment=experiment, weights=self.start),
        }
        condition = self.condition
        if self.paraphrase_bias is not None:
            inputs["paraphrases"] = untargeted_paraphrases(experiment, self.paraphrase_bias,
                                                           condition.reference)
        elif condition.extra is not None:
            inputs["extra"] = EXTRA_REFERENCES.format(experiment=experiment,
                                                      extra=condition.extra)
        elif condition.lattice:
            inputs["lattice"] = LATTICE_REFERENCES.format(experiment=experiment,
                                                          human=condition.human)
        return inputs

    def to_params(self, experiment: str, decoder: Mapping[str, Any],
                  targeted: Mapping[str, Any] | None) -> dict[str, Any]:
        """The params every job of the run shares (tune_translation, and tune_shard and
        tune_iteration when it fans out), read back by
        :meth:`circle.experiments.mt_tuning.RunSettings.from_params`: the ``decoder``
        settings, the run's tuning settings and seed, its targeted paraphraser's settings
        (1H+kT: :meth:`circle.pipeline.plan.Plan.targeted_settings` at :attr:`paraphraser`;
        else None) and its iterations' directory: plain values, which Snakemake records (a
        changed value reruns the job) and a tuning checkpoint is keyed by."""
        return {
            "settings": dict(decoder),
            "tuning": dict(self.tuning),
            "seed": self.seed,
            "targeted": None if targeted is None else dict(targeted),
            "iterations": TUNING_ITERATIONS.format(experiment=experiment,
                                                   condition=self.condition.name,
                                                   replicate=self.run.replicate),
        }


def translation_grammar(experiment: str, evalset: str, oov_variant: str | None) -> str:
    """The grammar the MT system decodes (and tunes on) an evaluation set with: the filtered
    grammar (``oov_variant`` None), or the filtered grammar augmented with the rules its OOV
    phrases borrow under oov_paraphrase's settings ("") or a variant's, whose extra paraphrase
    features the untuned weights name and MERT tunes like any other."""
    if oov_variant is None:
        return FILTERED_GRAMMAR.format(experiment=experiment, evalset=evalset)
    return OOV_PARAPHRASED_GRAMMAR.format(experiment=experiment, evalset=evalset,
                                          oov_variant=oov_variant_tag(oov_variant))


def untargeted_paraphrases(experiment: str, bias: float, reference: int | None = None) -> str:
    """The untargeted paraphrase table of the tune set's single reference (or of its reference
    set ``reference``) at ``bias``."""
    return UNTARGETED_PARAPHRASES.format(experiment=experiment, bias=bias_name(bias),
                                         reference=reference_tag(reference))


def augmented_weights(weights: str) -> str | None:
    """The OOV variant ("" oov_paraphrase's own settings) whose augmented grammars the weights
    file ``weights`` (a name under ``weights/``) belongs to whatever the config: a kH_oov or
    kH_oov-<variant> run's, or the untuned weights they start from; None for any other."""
    if weights.startswith(UNTUNED_TRANSLATION_OOV):
        try:
            return tagged_oov_variant(weights[len(UNTUNED_TRANSLATION_OOV):])
        except ValueError:
            return None
    try:
        condition = TuningRun.parse(weights).condition
    except ValueError:
        return None
    return condition.oov_variant if condition.oov else None


def oov_paraphrased(config: Mapping[str, Any]) -> bool:
    """Whether the config's MT system translates with the grammars augmented for OOV phrases
    (``oov_paraphrase.translate``; off by default)."""
    return bool(config["oov_paraphrase"]["translate"])


def configured_point(config: Mapping[str, Any]) -> ParaphraserConfig | None:
    """The targeted paraphraser's configuration ``grid_search.point`` fixes; None: the grid
    search's choice (§5.2.3)."""
    point = config["grid_search"]["point"]
    return None if point is None else ParaphraserConfig.from_point(point)


def resolve_run(condition: str | Condition, replicate: int | str,
                config: Mapping[str, Any]) -> ResolvedRun:
    """The run of ``condition`` and ``replicate`` under ``config`` (after the schema filled in
    its defaults), every setting its condition leaves open taken from the config."""
    if isinstance(condition, str):
        condition = Condition.parse(condition)
    run = TuningRun(condition, int(replicate))
    tuning = config["tuning"]
    bias = None
    if condition.paraphrases and not condition.targeted:
        bias = float(tuning["paraphraser_bias"] if condition.bias is None else condition.bias)
    paraphraser = condition.paraphraser
    if condition.targeted and paraphraser is None:
        paraphraser = configured_point(config)
    variant = condition.oov_variant if condition.oov else ("" if oov_paraphrased(config) else None)
    return ResolvedRun(run, tuning_params(tuning, condition), run_seed(config["seed"], run.name),
                       bias, paraphraser, variant)

"""The layout of an experiment's results: every file name under ``results/<experiment>/`` that
the package and the workflow's rules both spell, and :class:`Results`, one experiment's results
directory read through them.

Each template below is defined here once; the rule that writes the file names the template in
its output (``workflow/rules/``), the plan builds its inputs from them
(:mod:`circle.pipeline.plan`), and the readers of a finished experiment (``circle translate``,
the ladder, the verdict, the summary page) open its files through :class:`Results`, so that no
module spells the layout again (``tests/test_package_layout.py`` keeps it so).
"""

from __future__ import annotations

import os
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = "results/{experiment}"
"""An experiment's results directory, relative to the project root; every template below lies
under it."""

RUN = "{condition}.rep{replicate}"
"""A tuning run's name as the rules' ``{condition}`` and ``{replicate}`` wildcards spell it
(:attr:`circle.experiments.conditions.TuningRun.name`): its weights file, tuning log,
iterations, logs and benchmarks are named by it."""

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

TUNING_ITERATIONS = "results/{experiment}/tune/" + RUN + ".iterations"
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

PARAPHRASER_RUN = "paraphraser-bias{bias}"
"""The paraphraser's tuning run on the grammar of bias ``{bias}`` (:func:`bias_name
<circle.paraphrase.config.bias_name>`): the name of its weights file and tuning log (rule
tune_paraphraser)."""

UNTUNED_PARAPHRASE = "untuned-paraphrase"
"""The name of the paraphraser's untuned weights file (rule write_initial_weights's
``untuned-{model}``)."""

REPORT_FILE = "results/{experiment}/report/{file}"
"""A file of the report directory: a page (``<page>.md``, ``.html``), its table (``.csv``) or
its plot (``.png``), written by the figure and page rules (:func:`report_file`)."""


def report_file(file: str, experiment: str = "{experiment}") -> str:
    """The report directory's ``file`` as a rule names it: under the ``{experiment}`` wildcard
    (a page rule's output), or under a named experiment (a target)."""
    return REPORT_FILE.format(experiment=experiment, file=file)


def under_experiment(template: str, **fields: Any) -> str:
    """A path template filled in, relative to the experiment's ``results/<experiment>/``."""
    return template.removeprefix(RESULTS + "/").format(**fields)


@dataclass(frozen=True)
class Results:
    """One experiment's results directory (``results/<experiment>`` under the project root, or
    any directory laid out alike) and the files in it, named by the templates above."""

    directory: Path

    @classmethod
    def of(cls, root: str | os.PathLike, experiment: str) -> Results:
        """The results of ``experiment`` under the project root ``root``."""
        return cls(Path(root) / RESULTS.format(experiment=experiment))

    @classmethod
    def at(cls, directory: str | os.PathLike) -> Results:
        return cls(Path(directory))

    @property
    def experiment(self) -> str:
        return self.directory.name

    def path(self, template: str, **fields: Any) -> Path:
        """The file of ``template`` with ``fields`` filled in."""
        return self.directory / under_experiment(template, **fields)

    def files(self, template: str, **fields: Any) -> list[Path]:
        """The existing files of ``template`` with ``fields`` filled in and the fields not
        given matching anything (glob patterns in ``fields`` match as globs), sorted."""
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        wild = {name: "*" for name in names - {"experiment"}}
        return sorted(self.directory.glob(under_experiment(template, **{**wild, **fields})))

    @property
    def config(self) -> Path:
        """The effective config (rule effective_config)."""
        return self.path(EFFECTIVE_CONFIG_FILE)

    def weights(self, name: str) -> Path:
        """The weights file ``name`` (a run's, ``untuned-translation``, ...)."""
        return self.path(WEIGHTS, weights=name)

    def lm(self, order: int) -> Path:
        """The MT system's LM binary of ``order``."""
        return self.path(LM_BINARY, order=order)

    def paraphraser_lm(self, order: int) -> Path:
        """The paraphraser's own LM binary of ``order``."""
        return self.path(PARAPHRASER_LM_BINARY, order=order)

    def paraphraser_weights(self, bias: str) -> Path:
        """The paraphraser's weights tuned on the grammar of the bias named ``bias``."""
        return self.weights(PARAPHRASER_RUN.format(bias=bias))

    def paraphrase_grammar(self, bias: str) -> Path:
        """The paraphrase grammar of the bias named ``bias``
        (:func:`circle.paraphrase.config.bias_name`)."""
        return self.path(PARAPHRASE_GRAMMAR, bias=bias)

    @property
    def report_directory(self) -> Path:
        return self.report("")

    def report(self, file: str) -> Path:
        """The report directory's ``file``."""
        return self.path(REPORT_FILE, file=file)

    def evaluation_conditions(self, run_set: str = "") -> Path:
        """The per-condition summary of the run set ``run_set`` ('' the config's runs, or
        'dose/', 'paper/', ...; the slash may be left off)."""
        name = run_set.strip("/")
        return self.path(EVALUATION_CONDITIONS, run_set=f"{name}/" if name else "")

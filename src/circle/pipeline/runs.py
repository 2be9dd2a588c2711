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

The file names a run reads and writes are the templates of :mod:`circle.core.layout`, the one
spelling of the results layout that the rules, the plan and the readers share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from circle.core.layout import (
    EVALSET_TABLE,
    EXTRA_REFERENCES,
    FILTERED_GRAMMAR,
    LATTICE_REFERENCES,
    OOV_PARAPHRASED_GRAMMAR,
    TUNING_ITERATIONS,
    UNTARGETED_PARAPHRASES,
    WEIGHTS,
)
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

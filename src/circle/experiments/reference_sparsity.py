"""The reference-sparsity experiments of thesis ch. 4 as functions over pipeline tables.

Conditions name the reference set the MT system is tuned with (thesis §4.3, Fig. 4.3):
``kH`` is the first k human references in the set's seeded per-document order (``1H`` is the
simulated single reference), ``1H+kP`` is the single reference plus the k-best untargeted
paraphrases of it by the tuned paraphraser (§4.3.2). The paraphraser itself is tuned by MERT on
the paraphraser-tuning set, where per document one human translation is the input and the
others are its references (§3.2.3). ``1H+1X_<extra>`` adds one fixed extra reference of known
quality per segment (:mod:`circle.experiments.dose_response`, beyond the thesis).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from circle.core.pages import write_page
from circle.core.schemas import EVALSET, EXTRA_REFERENCE, TUNING_LOG
from circle.core.tables import atomic_path, read_metadata, read_table, write_table
from circle.corpus.preprocess import detokenize
from circle.decoder import (
    DecoderSettings,
    decode_corpus,
    grammar_features,
    load_grammar,
    read_weights,
    write_weights,
)
from circle.decoder.model import Model
from circle.decoder.nbest import NBEST
from circle.decoder.sets import RecordedDecode, write_nbest
from circle.experiments.evaluate import (
    AR_SHUFFLES,
    CHRF_METRIC,
    MATCHED_BLEU,
    SIGNIFICANCE_LEVEL,
    SUMMARY_METRICS,
    check_tuning_log,
    chrf_statistics,
    condition_summary,
    corpus_bleu,
    detokenised_scores,
    evaluate_system,
    write_condition_summary,
    write_evaluation,
)
from circle.experiments.heldout import TUNING_SETS, tuning_set_rows
from circle.experiments.length_matching import match_length, reference_length
from circle.paraphrase.paraphraser import Paraphraser, ParaphraserConfig
from circle.paraphrase.targeted import TargetedReferences, TargetedSetup, targeted_setup
from circle.tune import fanout
from circle.tune.checkpoint import Checkpoint, SavedIteration, read_iteration
from circle.tune.loop import (
    PoolBuilder,
    TuningProblem,
    TuningResult,
    TuningSettings,
    default_hook,
    ordered_references,
    single_references,
    tune,
    write_tuning_log,
)
from circle.tune.metrics import get_metric

_NUMBER = r"\d+(?:\.\d+)?"
EXTRA_PATTERN = r"kjv|mt|shuffle|noise\d+"
"""Names of the fixed extra references of the dose-response conditions ``1H+1X_<extra>``
(:mod:`circle.experiments.dose_response`; the Snakemake wildcard constraint of ``{extra}``): ``kjv``
the verse in the King James Version, ``mt`` the untuned system's 1-best, ``noise<p>`` the second
human reference with p % of its words replaced by random tune-set words, ``shuffle`` its words
in a random order."""
_CONDITION = re.compile(
    rf"^(?:(?P<human>\d+)H|1H\+(?P<paraphrases>\d+)(?P<kind>[PT])"
    rf"|1H\+1X_(?P<extra>{EXTRA_PATTERN}))"
    rf"(?:_b(?P<bias>{_NUMBER})(?:_w(?P<weight>-{_NUMBER}))?)?(?:_ref(?P<reference>\d+))?"
    r"(?:_t(?P<tuning_set>\d+))?(?:_(?P<metric>bleu|ter|terbleu))?$")
CONDITION_PATTERN = re.sub(r"\(\?P<\w+>", "(?:", _CONDITION.pattern)[1:-1]
"""Tuning condition names (the Snakemake wildcard constraint; the parser's regular expression
without its group names, so that the two cannot disagree): ``kH``, ``1H+kP`` or ``1H+kT``
(the thesis's 1H+kP′, targeted) or ``1H+1X_<extra>`` (one fixed extra reference,
:data:`EXTRA_PATTERN`), then optional parts in this order: ``_b<bias>`` the untargeted
paraphraser's self-paraphrase bias (1H+kP, Fig. 5.14) or, with ``_w<weight>``, a 1H+kT run's own
targeted paraphraser (Fig. 5.4); ``_ref<n>`` the tune set's n-th reference set as every segment's
single reference (1H, 1H+kP; Fig. 4.10); ``_t<n>`` the tuning set T<n> of a held-out system's
tune set, its base set and first n held-out training blocks (1H, 1H+kP; Fig. 4.11/4.12);
``_<metric>`` the tuning metric (Fig. 4.8/4.9)."""

TUNING_FIXED: tuple[str, ...] = ("target", "oov")
"""Weights MERT leaves at their initial values in these experiments: the targeting feature
(untargeted here) and the pass-through penalty. Passing a word through is the decoder's fallback,
not a choice to tune (Moses' ``UnknownWordPenalty`` is not tuneable either): left free, MERT
gave the paraphraser a positive ``oov`` weight, a reward for copying that would compete with the
self-paraphrase bias, the knob of the thesis for how much the paraphraser copies (§5.2.2)."""


@dataclass(frozen=True)
class Condition:
    """A tuning condition: how many human and paraphrased references, whether the paraphrases
    are untargeted (1H+kP, §4.3.2) or targeted to each hypothesis (1H+kT, the thesis's 1H+kP′,
    §5.3), and what the ch. 4–5 variants change (:data:`CONDITION_PATTERN`). Build one with
    :meth:`parse` or :meth:`of`; ``name`` is the canonical name the fields spell."""

    human: int
    paraphrases: int = 0
    targeted: bool = False
    paraphraser: ParaphraserConfig | None = None
    """A 1H+kT condition's own targeted paraphraser; None: the grid search's choice."""
    bias: float | None = None
    """A 1H+kP condition's self-paraphrase bias (Fig. 5.14); None: tuning.paraphraser_bias."""
    reference: int | None = None
    """1-based: the tune set's n-th reference set is every segment's single reference
    (per-translator sets, Fig. 4.10); None: the seeded per-document choice (§4.3.1)."""
    tuning_set: int | None = None
    """n: tune on T<n>, the first rows of a held-out system's tune set that make its base set and
    first n held-out training blocks (Fig. 4.11/4.12, :mod:`circle.experiments.heldout`); None:
    every row."""
    metric: str | None = None
    """The tuning metric (Fig. 4.8/4.9); None: tuning.metric."""
    extra: str | None = None
    """``1H+1X_<extra>``: the one fixed extra reference per segment added to the single
    reference (:data:`EXTRA_PATTERN`, :mod:`circle.experiments.dose_response`); None: none."""

    def __post_init__(self) -> None:
        problem = None
        if self.human < 1 or self.paraphrases < 0:
            problem = "needs at least one human reference"
        elif self.paraphrases and self.human != 1:
            problem = "paraphrases are added to a single human reference (1H+k)"
        elif self.targeted and not self.paraphrases:
            problem = "a targeted condition adds at least one paraphrase"
        elif self.bias is not None and (self.targeted or not self.paraphrases
                                        or not 0 <= self.bias < 1):
            problem = "_b<bias> alone is an untargeted paraphraser's bias in [0, 1) (1H+kP)"
        elif self.paraphraser is not None and not (self.targeted
                                                   and self.paraphraser.targeted):
            problem = "_b<bias>_w<weight> needs a targeted condition and a negative weight"
        elif self.reference is not None and (self.reference < 1 or self.human != 1
                                             or self.targeted):
            problem = "_ref<n> (n >= 1) names the single reference of 1H or 1H+kP"
        elif self.tuning_set is not None and (self.human != 1 or self.targeted):
            problem = "_t<n> names the tuning set of 1H or 1H+kP"
        elif self.extra is not None and (
                not re.fullmatch(EXTRA_PATTERN, self.extra) or self.human != 1
                or self.paraphrases or self.targeted or self.bias is not None
                or self.reference is not None or self.tuning_set is not None):
            problem = "1H+1X_<extra> adds one extra reference of a known kind to 1H alone"
        elif self.extra is not None and self.extra.startswith("noise") and (
                not 0 < int(self.extra[len("noise"):]) <= 100
                or self.extra != f"noise{int(self.extra[len('noise'):])}"):
            problem = "noise<p> replaces p % of the words, 0 < p <= 100 (no leading zero)"
        elif self.metric is not None:
            get_metric(self.metric)
        if problem:
            raise ValueError(f"unknown tuning condition '{self.name}': {problem}")

    @property
    def name(self) -> str:
        if self.extra is not None:
            name = f"1H+1X_{self.extra}"
        elif not self.paraphrases:
            name = f"{self.human}H"
        else:
            name = f"1H+{self.paraphrases}{'T' if self.targeted else 'P'}"
        if self.bias is not None:
            name += f"_b{self.bias:g}"
        if self.paraphraser is not None:
            name += f"_b{self.paraphraser.bias:g}_w{self.paraphraser.targeting_weight:g}"
        if self.reference is not None:
            name += f"_ref{self.reference}"
        if self.tuning_set is not None:
            name += f"_t{self.tuning_set}"
        return name + (f"_{self.metric}" if self.metric is not None else "")

    @classmethod
    def parse(cls, name: str) -> Condition:
        """The condition a name spells; names that are not canonical (``1H+1P_b0.50``) are
        refused with the canonical one, so that one run never has two names."""
        match = _CONDITION.match(name)
        if not match:
            raise ValueError(f"unknown tuning condition '{name}': use kH (k >= 1), 1H+kP, "
                             "1H+kT or 1H+1X_<extra>, optionally followed by _b<bias> (1H+kP), "
                             "_b<bias>_w<weight> (1H+kT), _ref<n>, _t<n> and _bleu, _ter or "
                             "_terbleu")
        parts = match.groupdict()
        targeted = parts["kind"] == "T"
        bias = None if parts["bias"] is None else float(parts["bias"])
        paraphraser = None
        if parts["weight"] is not None:
            paraphraser, bias = ParaphraserConfig(bias, float(parts["weight"])), None
        elif targeted and bias is not None:
            raise ValueError(f"unknown tuning condition '{name}': a targeted condition's "
                             "paraphraser is _b<bias>_w<weight>")
        condition = cls(
            human=int(parts["human"] or 1), paraphrases=int(parts["paraphrases"] or 0),
            targeted=targeted, paraphraser=paraphraser, bias=bias,
            reference=None if parts["reference"] is None else int(parts["reference"]),
            tuning_set=None if parts["tuning_set"] is None else int(parts["tuning_set"]),
            metric=parts["metric"], extra=parts["extra"])
        if condition.name != name:
            raise ValueError(f"tuning condition '{name}' is spelt '{condition.name}'")
        return condition

    @classmethod
    def targeted_at(cls, paraphrases: int, paraphraser: ParaphraserConfig) -> Condition:
        """1H+kT with its own paraphraser configuration (a targeting weight < 0)."""
        if not paraphraser.targeted:
            raise ValueError(f"a targeted condition needs a negative targeting weight, got "
                             f"{paraphraser}")
        return cls(1, paraphrases, targeted=True, paraphraser=paraphraser)

    @property
    def baseline(self) -> Condition:
        """What the condition is compared with: 1H with the same single reference, tuning set
        and tuning metric (1H for every condition of Fig. 4.3 and 5.10). 1H itself on an
        enlarged tuning set T<n> (n > 0) is compared with 1H on the base set T0: whether a
        larger single-reference tuning set helps is the other question of Fig. 4.12. A 1H+1X
        condition is compared with 1H (the dose-response,
        :mod:`circle.experiments.dose_response`)."""
        single = Condition(1, reference=self.reference, tuning_set=self.tuning_set,
                           metric=self.metric)
        return replace(single, tuning_set=0) if self == single and self.tuning_set else single

    @property
    def added_references(self) -> int:
        """How many references are added to the human ones: k paraphrases, or a 1H+1X
        condition's one extra reference (the evaluation table's ``paraphrase_references``)."""
        return self.paraphrases + (self.extra is not None)

    @property
    def reference_type(self) -> str:
        """The kind of the added references: ``human``, ``paraphrase`` (untargeted),
        ``paraphrase_b<bias>`` (untargeted at its own bias), ``targeted`` or
        ``extra_<extra>`` (1H+1X)."""
        if self.extra is not None:
            return f"extra_{self.extra}"
        if self.targeted:
            return "targeted"
        if not self.paraphrases:
            return "human"
        return "paraphrase" if self.bias is None else f"paraphrase_b{self.bias:g}"


@dataclass(frozen=True)
class TuningRun:
    """One tuning run of the MT system: a reference condition and a replicate. Its name,
    ``<condition>.rep<replicate>`` (e.g. ``1H+2P.rep0``), names its weight file, tuning log,
    decodes and seed."""

    condition: Condition
    replicate: int

    SEPARATOR = ".rep"

    def __post_init__(self) -> None:
        if self.replicate < 0:
            raise ValueError(f"replicate numbers start at 0, got {self.replicate}")

    @property
    def name(self) -> str:
        return f"{self.condition.name}{self.SEPARATOR}{self.replicate}"

    @classmethod
    def of(cls, condition: str, replicate: int | str) -> TuningRun:
        return cls(Condition.parse(condition), int(replicate))

    @classmethod
    def parse(cls, name: str) -> TuningRun:
        condition, separator, replicate = name.rpartition(cls.SEPARATOR)
        if not separator or not replicate.isdigit():
            raise ValueError(f"tuning run name '{name}' is not <condition>.rep<replicate>")
        return cls.of(condition, replicate)

    def seed(self, base: int) -> int:
        return run_seed(base, self.name)

    @property
    def start(self) -> str:
        """The weights the run starts from, as a weights file's name: the untuned weights, or
        for 1H+kT the 1H-tuned weights of the same replicate (thesis §5.3: the decoder "whose
        weights have been tuned with just the original human reference")."""
        if self.condition.targeted:
            return TuningRun(Condition(1), self.replicate).name
        return UNTUNED_TRANSLATION

    def tuning_settings(self, tuning: Mapping, seed: int) -> TuningSettings:
        """The run's :class:`~circle.tune.loop.TuningSettings` from the config's ``tuning``
        section and the run's ``seed``.

        A run that starts from the untuned weights keeps ``tuning.replicate_pool``: its first
        iteration also decodes that many perturbations of them drawn from its own seed and
        optimises from the first (:mod:`circle.tune.loop`), so that the replicates of a
        condition take different paths and sample the optimiser, as the test over replicates
        assumes (Clark et al. 2011). The seed alone draws MERT's restarts, and when none beats
        the continuing point a run is a function of its start: every replicate would be the
        same run. The thesis reports single runs; this goes beyond it. A 1H+kT run starts from
        its replicate's 1H weights (§5.3), which differ by construction, and draws none: each
        perturbation would cost a targeted paraphrase of every new hypothesis."""
        settings = TuningSettings.from_config(tuning, seed)
        if self.start == UNTUNED_TRANSLATION:
            return settings
        return replace(settings, replicate_pool=0)


UNTUNED = "untuned"
"""The condition (and reference type) of the evaluation row of the untuned system
(:func:`evaluate_runs`): the MT system with the config's untuned weights, before any tuning."""
UNTUNED_TRANSLATION = "untuned-translation"
"""The weights file of the MT system's untuned weights (``weights/untuned-translation.txt``)."""

RUN_KEYS: tuple[str, ...] = ("conditions", "replicates", "fan_out")
"""Keys of the config's ``tuning`` section that name the runs or say how they are executed:
no run's settings, so adding a condition or a replicate leaves every finished run as it is."""


def tuning_params(tuning: Mapping, condition: Condition | None = None) -> dict[str, Any]:
    """The config's ``tuning`` section as a tuning job's params: without :data:`RUN_KEYS`; for
    an MT run (``condition``) with the condition's own tuning metric where it names one (Fig.
    4.8) instead of ``tuning.metric``; for the paraphraser's run (None) without
    ``replicate_pool``, which only MT runs draw (:meth:`TuningRun.tuning_settings`)."""
    params = {key: value for key, value in tuning.items() if key not in RUN_KEYS}
    if condition is None:
        params.pop("replicate_pool", None)
    elif condition.metric is not None:
        params["metric"] = condition.metric
    return params


def run_seed(base: int, run: str) -> int:
    """The seed of tuning run ``run`` (e.g. ``1H.rep0``) derived from the config seed ``base``:
    every condition and replicate draws its own MERT restarts (SHA-256, stable across Python
    versions and platforms)."""
    digest = hashlib.sha256(f"{base}:{run}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def select_segments(evalset_path: str | os.PathLike, max_segments: int | None,
                    out_path: str | os.PathLike,
                    provenance: Mapping[str, str] | None = None) -> int:
    """Keep the first whole documents of a set, up to ``max_segments`` segments (None: all).

    Whole documents keep the per-document single-reference simulation intact; a limit below the
    first document's size is refused, as it would keep nothing. A held-out system's tune set
    (:mod:`circle.experiments.heldout`) is kept whole, its tuning sets with it.
    """
    table = read_table(evalset_path, EVALSET)
    source_metadata = read_metadata(evalset_path)
    if max_segments is not None and TUNING_SETS not in source_metadata:
        sizes = table.groupby("document", sort=False).size()
        if sizes.iloc[0] > max_segments:
            raise ValueError(
                f"{evalset_path}: its first document '{sizes.index[0]}' has {sizes.iloc[0]} "
                f"segments, more than the sets.max_segments limit {max_segments} of this set; "
                "only whole documents are kept: raise the limit or set it to null")
        table = table[table["document"].isin(sizes.index[sizes.cumsum() <= max_segments])]
    metadata = {key: value for key, value in source_metadata.items()
                if key in ("reference_names", TUNING_SETS)}
    metadata["max_segments"] = str(max_segments)
    write_table(table, out_path, EVALSET, provenance, metadata)
    return len(table)


def tune_paraphraser(paratune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                     lm_path: str | os.PathLike, weights_path: str | os.PathLike,
                     settings: DecoderSettings, tuning: TuningSettings, workers: int,
                     out_weights: str | os.PathLike, out_log: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None,
                     checkpoint: Checkpoint | None = None) -> dict[str, float]:
    """MERT of the English-to-English model (§3.2.3): input = the first reference in the seeded
    order, references = the others. ``checkpoint``: see :func:`write_tuning_run`."""
    table = read_table(paratune_path, EVALSET)
    if min(len(refs) for refs in table["references"]) < 2:
        raise ValueError(f"{paratune_path}: paraphraser tuning needs at least two references "
                         "per segment (one is the input)")
    ordered = ordered_references(table)
    sources, references = [refs[0] for refs in ordered], [refs[1:] for refs in ordered]
    result = tune(sources, references, grammar_path, lm_path, read_weights(weights_path),
                  settings, tuning, workers, fixed=TUNING_FIXED, checkpoint=checkpoint)
    return write_tuning_run(result, out_weights, out_log, provenance, checkpoint)


def write_tuning_run(result: TuningResult, out_weights: str | os.PathLike,
                     out_log: str | os.PathLike, provenance: Mapping[str, str] | None,
                     checkpoint: Checkpoint | None) -> dict[str, float]:
    """Write a finished run's weights and log, then remove the checkpoint it resumed from or
    saved its iterations to (:mod:`circle.tune.checkpoint`)."""
    write_weights(out_weights, result.weights)
    write_tuning_log(result, out_log, provenance)
    if checkpoint is not None:
        checkpoint.remove()
    return result.weights


REFERENCE_TAG_PATTERN = r"(?:\.ref\d+)?"
"""File-name part naming a single reference (Snakemake wildcard constraint): empty for the
seeded per-document choice, ``.ref<n>`` for reference set n (:func:`reference_tag`)."""


def reference_tag(reference: int | None) -> str:
    """The file-name part of a single reference (:data:`REFERENCE_TAG_PATTERN`)."""
    return "" if reference is None else f".ref{reference}"


def tagged_reference(tag: str) -> int | None:
    """The single reference a :func:`reference_tag` names."""
    if not re.fullmatch(REFERENCE_TAG_PATTERN, tag):
        raise ValueError(f"'{tag}' is not a reference tag ('' or .ref<n>)")
    return int(tag[len(".ref"):]) if tag else None


def paraphrase_references(tune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                          lm_path: str | os.PathLike, weights_path: str | os.PathLike, k: int,
                          settings: DecoderSettings, workers: int, out_path: str | os.PathLike,
                          provenance: Mapping[str, str] | None = None,
                          reference: int | None = None) -> None:
    """The k-best untargeted paraphrases of each segment's single reference (§4.3.2; which
    one: :func:`single_references`)."""
    table = read_table(tune_path, EVALSET)
    singles = single_references(table, reference)
    paraphraser = Paraphraser(grammar_path, lm_path, read_weights(weights_path), settings,
                              workers)
    outputs = paraphraser.paraphrase(singles, k=k)
    names = Model(paraphraser.grammar.feature_names, paraphraser.weights).names
    write_nbest(table["segment_id"].tolist(), outputs, names, out_path, provenance,
                {"weights": json.dumps(paraphraser.weights, sort_keys=True),
                 "input": "single reference" if reference is None
                 else f"reference set {reference}"})


def paraphraser_report(log_path: str | os.PathLike, nbest_path: str | os.PathLike,
                       tune_path: str | os.PathLike, out_path: str | os.PathLike,
                       html_path: str | os.PathLike, samples: int = 10, seed: int = 0) -> str:
    """A Markdown page (and its HTML) on the tuned paraphraser: its tune score per iteration
    against the untuned start, and ``samples`` seeded random single references of the tune set
    with their 1-best untargeted paraphrase, so a reader sees what the paraphrases look like."""
    log = read_table(log_path, TUNING_LOG)
    metric = str(log["metric"].iloc[0])
    chosen_row = log[log["returned"]].iloc[0]
    start, returned = log["decode_score"].iloc[0], chosen_row["decode_score"]
    curve = ", ".join(f"{100 * value:.2f}" for value in log["decode_score"])
    table = read_table(tune_path, EVALSET)
    singles = dict(zip(table["segment_id"], single_references(table), strict=True))
    nbest = read_table(nbest_path, NBEST)
    best = nbest[nbest["rank"] == 0].set_index("segment_id")["hypothesis"]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(best.index.to_numpy(), size=min(samples, len(best)),
                               replace=False))
    lines = ["# The tuned paraphraser (thesis §3.2.3)", "",
             f"Tune {metric.upper()} (%) of the decoded 1-best per iteration, on the "
             f"paraphraser-tuning set: {curve}. Returned: iteration "
             f"{int(chosen_row['iteration'])} "
             f"({100 * returned:.2f} against {100 * start:.2f} untuned).", ""]
    if not get_metric(metric).better(returned, start):
        lines += ["**Warning: tuning did not improve on the untuned weights; the paraphraser "
                  "runs with its untuned start.**", ""]
    lines += [f"{len(chosen)} random tune-set references (seed {seed}) and their 1-best "
              "untargeted paraphrase:", "", "| segment | single reference | 1-best paraphrase |",
              "|---|---|---|"]
    lines += [f"| {segment} | {singles[segment]} | {best[segment]} |" for segment in chosen]
    text = "\n".join(lines) + "\n"
    write_page(text, out_path, html_path, "The tuned paraphraser")
    return text


def condition_references(table: pd.DataFrame, condition: Condition,
                         paraphrases: pd.DataFrame | None,
                         extra: pd.DataFrame | None = None) -> list[list[str]]:
    """Each tune segment's reference set under ``condition`` (for 1H+kT the single reference:
    the targeted paraphrases are per hypothesis,
    :class:`circle.paraphrase.targeted.TargetedReferences`; for 1H+1X the single reference and the
    segment's row of ``extra``, an :data:`~circle.core.schemas.EXTRA_REFERENCE` table)."""
    if condition.extra is not None:
        if extra is None:
            raise ValueError(f"condition {condition.name} needs its extra reference table")
        by_segment = dict(zip(extra["segment_id"], extra["reference"], strict=True))
        missing = [s for s in table["segment_id"] if s not in by_segment]
        if missing:
            raise ValueError(f"condition {condition.name}: no extra reference for segments "
                             f"{missing[:5]}")
        return [[single, by_segment[segment]] for single, segment
                in zip(single_references(table), table["segment_id"], strict=True)]
    if condition.reference is None:
        references = ordered_references(table, condition.human)
    else:
        references = [[single] for single in single_references(table, condition.reference)]
    if condition.paraphrases and not condition.targeted:
        if paraphrases is None:
            raise ValueError(f"condition {condition.name} needs the paraphrased references")
        best = paraphrases[paraphrases["rank"] < condition.paraphrases]
        by_segment = best.groupby("segment_id")["hypothesis"].apply(list)
        references = [refs + by_segment.get(segment, [])
                      for refs, segment in zip(references, table["segment_id"], strict=True)]
    return references


@dataclass(frozen=True)
class ConditionTuning:
    """One MT tuning run of a condition (thesis ch. 4; for 1H+kT, §5.3) and what it reads: the
    tune set, its filtered grammar, the LM, the start weights (for 1H+kT the pipeline gives the
    1H-tuned ones), the untargeted paraphrases (1H+kP) or the targeted set-up (1H+kT), and the
    decoder and tuning settings; for :meth:`tune`, optionally the decode stage's n-best lists
    of the tune set at the start weights (``start_decode_path``), which stand in for iteration
    1's decode. :meth:`tune` runs it in one process; :meth:`decode_shard`,
    :meth:`optimise_iteration` and :meth:`finish` are the jobs of the same run fanned out
    (:mod:`circle.tune.fanout`)."""

    run: TuningRun
    tune_path: str | os.PathLike
    grammar_path: str | os.PathLike
    lm_path: str | os.PathLike
    weights_path: str | os.PathLike
    paraphrases_path: str | os.PathLike | None
    settings: DecoderSettings
    tuning: TuningSettings
    targeted: TargetedSetup | None = None
    start_decode_path: str | os.PathLike | None = None
    extra_path: str | os.PathLike | None = None
    """1H+1X: the :data:`~circle.core.schemas.EXTRA_REFERENCE` table of the extra references."""

    @classmethod
    def from_job(cls, job: Any) -> ConditionTuning:
        """The run of a Snakemake tuning job (``snakemake`` in its script): wildcards
        ``condition`` and ``replicate``, the inputs of ``tuning_inputs`` (and
        ``start_decode`` of ``fanned_out_tuning_inputs``) and the params
        ``settings``, ``tuning``, ``seed`` and ``targeted`` (workflow/rules/tune.smk)."""
        settings = DecoderSettings(**job.params.settings)
        targeted = None
        if job.params.targeted is not None:
            targeted = targeted_setup(job.params.targeted, job.input.get("choice"),
                                      job.input.paraphrase_grammars, job.input.lm,
                                      job.input.paraphraser_weights, job.input.reranking_lm,
                                      settings)
        run = TuningRun.of(job.wildcards.condition, job.wildcards.replicate)
        return cls(run, job.input.evalset, job.input.grammar, job.input.lm, job.input.weights,
                   job.input.get("paraphrases"), settings,
                   run.tuning_settings(job.params.tuning, job.params.seed), targeted,
                   job.input.get("start_decode"), job.input.get("extra"))

    def __post_init__(self) -> None:
        if self.run.condition.targeted and self.targeted is None:
            raise ValueError(f"condition {self.run.condition.name} needs the targeted "
                             "paraphraser set-up")

    def _inputs(self) -> tuple[list[str], list[list[str]], RecordedDecode | None]:
        """The tune sentences, each one's references, and the recorded start decode if any."""
        table = tuning_set_rows(read_table(self.tune_path, EVALSET), self.run.condition.tuning_set,
                                self.tune_path)
        paraphrases = (None if self.paraphrases_path is None
                       else read_table(self.paraphrases_path, NBEST))
        recorded = (None if self.start_decode_path is None
                    else RecordedDecode.read(self.start_decode_path, table["segment_id"].tolist()))
        extra = (None if self.extra_path is None
                 else read_table(self.extra_path, EXTRA_REFERENCE))
        return (list(table["source"]),
                condition_references(table, self.run.condition, paraphrases, extra), recorded)

    def _problem(self, feature_names: Sequence[str]) -> TuningProblem:
        return TuningProblem(feature_names, read_weights(self.weights_path), self.tuning,
                             TUNING_FIXED)

    def _hook(self, stack: contextlib.ExitStack, references: Sequence[Sequence[str]],
              writer: str, workers: int) -> TargetedReferences | None:
        if not self.run.condition.targeted:
            return None
        return stack.enter_context(self.targeted.references(
            [refs[0] for refs in references], self.run.condition.paraphrases, writer, workers))

    def tune(self, workers: int, out_weights: str | os.PathLike, out_log: str | os.PathLike,
             provenance: Mapping[str, str] | None = None,
             checkpoint: Checkpoint | None = None) -> dict[str, float]:
        """The whole run in this process (``workers`` decoding processes), resuming from and
        saving to ``checkpoint``; writes the weights and the tuning log."""
        sentences, references, recorded = self._inputs()
        with contextlib.ExitStack() as stack:
            hook = self._hook(stack, references, self.run.name, workers)
            result = tune(sentences, references, self.grammar_path, self.lm_path,
                          read_weights(self.weights_path), self.settings, self.tuning, workers,
                          fixed=TUNING_FIXED, references_for=hook, checkpoint=checkpoint,
                          recorded=recorded)
        return write_tuning_run(result, out_weights, out_log, provenance, checkpoint)

    def iterations(self, directory: str | os.PathLike) -> Checkpoint:
        """The iteration files of this run fanned out, in ``directory``: keyed by its grammar,
        LM and targeted set-up (Snakemake reruns the iterations when an input changes)."""
        targeted = None if self.targeted is None else self.targeted.key
        return Checkpoint(directory, json.dumps([str(self.grammar_path), str(self.lm_path),
                                                 targeted]))

    def _job_state(self, directory: str | os.PathLike, feature_names: Sequence[str],
                   previous: Sequence[str | os.PathLike]) -> _JobState:
        problem = self._problem(feature_names)
        sentences, references, _ = self._inputs()
        iterations = self.iterations(directory)
        fingerprint = iterations.fingerprint(
            problem.run_arguments(sentences, references, self.settings))
        return _JobState(problem, sentences, references, iterations, fingerprint,
                         [read_iteration(path, fingerprint) for path in previous])

    def decode_shard(self, directory: str | os.PathLike,
                     previous: Sequence[str | os.PathLike], shard: int, shards: int,
                     workers: int, out_path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
        """Shard ``shard`` of ``shards`` of iteration ``len(previous) + 1``, whose earlier
        iterations are the files ``previous`` in ``directory``: decoded, its new pairs scored
        (for 1H+kT paraphrased here, flushed to the cache as this shard's part)."""
        grammar = load_grammar(self.grammar_path)
        state = self._job_state(directory, grammar.feature_names, previous)
        with contextlib.ExitStack() as stack:
            hook = self._hook(stack, state.references,
                              f"{self.run.name}.it{len(previous) + 1}.shard{shard}", workers)
            builder = PoolBuilder(state.problem, hook or default_hook(state.references))

            def decode(sources: list[str], weights: dict[str, float]) -> list:
                return decode_corpus(sources, grammar, self.lm_path, weights, self.settings,
                                     workers)

            found = fanout.decode_shard(builder, state.saved, state.sentences,
                                        fanout.shard_sentences(state.references, shards, shard),
                                        decode)
        fanout.write_shard(found, out_path, state.problem.names, state.fingerprint, provenance)

    def optimise_iteration(self, directory: str | os.PathLike,
                           previous: Sequence[str | os.PathLike],
                           shard_paths: Sequence[str | os.PathLike],
                           provenance: Mapping[str, str] | None = None) -> SavedIteration:
        """Iteration ``len(previous) + 1`` from its shards, saved in ``directory`` (its stop
        reason says whether another iteration follows)."""
        state = self._job_state(directory, grammar_features(self.grammar_path), previous)
        shards = [fanout.read_shard(path, state.fingerprint, state.problem.metric.n_stats)
                  for path in shard_paths]
        finished = fanout.optimise_iteration(
            PoolBuilder(state.problem, default_hook(state.references)), state.saved,
            shards)
        state.iterations.save(state.fingerprint, finished, provenance)
        return finished

    def finish(self, directory: str | os.PathLike, paths: Sequence[str | os.PathLike],
               out_weights: str | os.PathLike, out_log: str | os.PathLike,
               provenance: Mapping[str, str] | None = None) -> dict[str, float]:
        """The weights and tuning log of the run whose iteration files in ``directory`` are
        ``paths``, the last one having ended it."""
        state = self._job_state(directory, grammar_features(self.grammar_path), paths)
        return write_tuning_run(fanout.finish(state.problem, state.saved), out_weights, out_log,
                                provenance, None)


class _JobState(NamedTuple):
    """What a job of a fanned-out run starts from: the run's problem, sentences and
    references, its iteration files' checkpoint and fingerprint, and the iterations read."""

    problem: TuningProblem
    sentences: list[str]
    references: list[list[str]]
    iterations: Checkpoint
    fingerprint: str
    saved: list[SavedIteration]


def length_matched(nbest: pd.DataFrame, metadata: Mapping[str, str],
                   segment_ids: Sequence[int], target: float,
                   path: str | os.PathLike) -> tuple[float, list[str]]:
    """A run's test output at a common length (:mod:`circle.experiments.length_matching`, a
    diagnostic): the word-penalty shift and the re-ranked 1-best of each of ``segment_ids`` from its
    n-best table (model scores, word counts = −``word_penalty``), nearest ``target`` words in
    all."""
    position = json.loads(metadata["feature_names"]).index("word_penalty")
    lists = dict(iter(nbest.sort_values(["segment_id", "rank"]).groupby("segment_id")))
    missing = [s for s in segment_ids if s not in lists]
    if missing:
        raise ValueError(f"{path}: no n-best list for test segments {list(missing)[:5]}")
    ordered = [lists[s] for s in segment_ids]
    match = match_length([rows["score"].to_numpy() for rows in ordered],
                         [[-features[position] for features in rows["features"]]
                          for rows in ordered], target)
    return match.delta, [rows["hypothesis"].iloc[choice]
                         for rows, choice in zip(ordered, match.choices, strict=True)]


def write_reference_texts(evalset_path: str | os.PathLike,
                          tokenised_paths: Sequence[str | os.PathLike],
                          detokenised_paths: Sequence[str | os.PathLike], lang: str) -> None:
    """An evaluation set's references as plain text, one file per reference stream (stream k
    holds every segment's k-th reference in the set's order, an empty line where a segment has
    fewer), tokenised as the pipeline scores them and detokenised (Moses), so that any tool
    scores the decoder's ``<set>.1best.txt`` / ``.1best.detok.txt`` against them, e.g. with the
    ``sacrebleu`` command. As many paths as the set's most references per segment."""
    table = read_table(evalset_path, EVALSET)
    references = [list(refs) for refs in table["references"]]
    width = max((len(refs) for refs in references), default=0)
    if len(tokenised_paths) != width or len(detokenised_paths) != width:
        raise ValueError(f"{evalset_path}: {width} reference streams, but "
                         f"{len(tokenised_paths)} tokenised and {len(detokenised_paths)} "
                         "detokenised paths to write them to")
    for k, (tokenised, detokenised) in enumerate(zip(tokenised_paths, detokenised_paths,
                                                     strict=True)):
        stream = [refs[k] if k < len(refs) else "" for refs in references]
        for path, lines in ((tokenised, stream),
                            (detokenised, [detokenize(r, lang) if r else "" for r in stream])):
            text = "".join(f"{line}\n" for line in lines)
            with atomic_path(path) as tmp:
                tmp.write_text(text, encoding="utf-8")


def evaluate_runs(experiment: str, test_path: str | os.PathLike,
                  runs: Sequence[tuple[TuningRun, int, str, str]],
                  samples: int, seed: int, out_path: str | os.PathLike,
                  provenance: Mapping[str, str] | None = None, *,
                  conditions_path: str | os.PathLike | None = None,
                  shuffles: int = AR_SHUFFLES,
                  significance_level: float = SIGNIFICANCE_LEVEL,
                  lowercased: bool = False, untuned: str | os.PathLike | None = None,
                  untuned_seed: int = 0, lang: str | None = None) -> pd.DataFrame:
    """BLEU/TER/chrF of every tuning run's test output against all test references (sacrebleu),
    with a paired bootstrap p-value against the same replicate of its condition's baseline
    (:attr:`Condition.baseline`: 1H with the same single reference and tuning metric);
    ``lowercased``: the text was lowercased (the signatures say ``case:lc``).

    ``untuned``: the test n-best table of the untuned weights, scored as one more row, condition
    :data:`UNTUNED` (replicate 0, no tuning log, ``untuned_seed``), which no test and no
    condition summary includes. ``lang``: the target language, with which every output and
    reference is also detokenised and scored as papers do (``detok_bleu``, ``detok_chrf``:
    :func:`circle.experiments.evaluate.detokenised_scores`); without it those columns are null.

    ``runs`` holds (run, seed, test n-best table, tuning log) per run. Every
    tuning log is checked first (:func:`circle.experiments.evaluate.check_tuning_log`): a run that
    returned weights scoring worse on the tune set than its untuned start is refused before anything
    is scored. With ``conditions_path``, the per-condition summary over replicates
    (:func:`circle.experiments.evaluate.condition_summary`: mean, standard deviation, approximate
    randomisation against the baseline with ``shuffles`` shuffles from ``seed``, significance
    at ``significance_level``) is written there too.
    """
    logs = {}
    for run, _, _, log_path in runs:
        log = read_table(log_path, TUNING_LOG)
        check_tuning_log(log, log_path, run.name)
        logs[run.condition.name, run.replicate] = log
    baselines = {run.condition.name: run.condition.baseline.name for run, *_ in runs}
    if conditions_path is not None:
        for missing in sorted(set(baselines.values()) - set(baselines)):
            raise ValueError(f"the baseline condition {missing} is not among the evaluated runs")
    table = read_table(test_path, EVALSET)
    references = [list(refs) for refs in table["references"]]
    target = reference_length(references)
    outputs, matched = {}, {}

    def decoded(nbest_path: str | os.PathLike) -> tuple[list[str], tuple[float, list[str]]]:
        """A decode's 1-best test output and its output at the common length."""
        nbest = read_table(nbest_path, NBEST)
        best = nbest[nbest["rank"] == 0].set_index("segment_id")["hypothesis"]
        return ([best.get(s, "") for s in table["segment_id"]],
                length_matched(nbest, read_metadata(nbest_path), table["segment_id"], target,
                               nbest_path))

    def at_common_length(shift: float, hypotheses: Sequence[str]) -> dict:
        score = corpus_bleu(hypotheses, references, lowercased)
        return {"matched_bleu": score.value, "matched_length_ratio": score.length_ratio,
                "matched_shift": shift}

    for run, _, nbest_path, _ in runs:
        key = run.condition.name, run.replicate
        outputs[key], matched[key] = decoded(nbest_path)
    stats = {metric: {run: get_metric(metric).stats(hypotheses, references)
                      for run, hypotheses in outputs.items()} for metric in SUMMARY_METRICS}
    stats[MATCHED_BLEU] = {run: get_metric("bleu").stats(hypotheses, references)
                           for run, (_, hypotheses) in matched.items()}
    stats[CHRF_METRIC] = {run: chrf_statistics(hypotheses, references, lowercased)
                          for run, hypotheses in outputs.items()}
    plain_references = None if lang is None else [[detokenize(r, lang) for r in refs]
                                                   for refs in references]

    def detokenised(hypotheses: Sequence[str]) -> dict:
        if plain_references is None:
            return {}
        return detokenised_scores([detokenize(h, lang) for h in hypotheses], plain_references,
                                  lowercased)

    rows = []
    for run, tuning_seed, _, _ in runs:
        parsed, condition, replicate = run.condition, run.condition.name, run.replicate
        baseline = baselines[condition]
        base = outputs.get((baseline, replicate)) if condition != baseline else None
        log = logs[condition, replicate]
        row = evaluate_system(outputs[condition, replicate], references, base, samples,
                              seed + replicate, stats["ter"][condition, replicate], lowercased)
        row.update(at_common_length(*matched[condition, replicate]))
        row.update(experiment=experiment, condition=condition,
                   reference_type=parsed.reference_type, human_references=parsed.human,
                   paraphrase_references=parsed.added_references,
                   references_used=parsed.human + parsed.added_references, replicate=replicate,
                   seed=tuning_seed, tune_metric=str(log["metric"].iloc[0]),
                   tune_iterations=len(log), eval_set="test",
                   baseline_condition=None if base is None else baseline)
        row.update(detokenised(outputs[condition, replicate]))
        rows.append(row)
    if untuned is not None:
        hypotheses, at_length = decoded(untuned)
        row = evaluate_system(hypotheses, references, lowercased=lowercased)
        row.update(at_common_length(*at_length))
        row.update(experiment=experiment, condition=UNTUNED,
                   reference_type=UNTUNED, human_references=0, paraphrase_references=0,
                   references_used=0, replicate=0, seed=untuned_seed, tune_metric="none",
                   tune_iterations=0, eval_set="test", baseline_condition=None)
        row.update(detokenised(hypotheses))
        rows.append(row)
    frame = pd.DataFrame(rows)
    write_evaluation(frame, out_path, provenance)
    if conditions_path is not None:
        tuned = frame[frame["condition"] != UNTUNED]
        summary = condition_summary(tuned, stats, baselines, shuffles, significance_level, seed)
        write_condition_summary(summary, conditions_path, provenance)
    return frame

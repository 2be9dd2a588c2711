"""Scoring and comparing new outputs on a test set as the tables do (``circle score``,
``circle compare``).

Outputs and references are compared on the pipeline's tokenisation (the Moses tokeniser with
XML escapes, lowercased where the experiment lowercases), the text the report tables score:
:func:`score_output` gives :func:`circle.experiments.evaluate.evaluate_system`'s BLEU, TER and
chrF with their sacrebleu signatures. :func:`compare_outputs` tests systems against a baseline
with the project's tests: approximate randomisation over every given output of a system
(MultEval's, :func:`~circle.experiments.evaluate.approximate_randomisation`; with one output per
system it is what sacrebleu's ``--paired-ar`` does), Koehn's paired bootstrap for one output per
system (the per-run test of the tables), and, when each system has several outputs (tuning
replicates), Welch's t-test over the outputs' scores with Holm's adjustment over all the
comparison's Welch tests (:mod:`circle.experiments.replicates`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.preprocess import normalize
from circle.experiments.evaluate import (
    AR_SHUFFLES,
    BOOTSTRAP_SAMPLES,
    SUMMARY_METRICS,
    approximate_randomisation,
    evaluate_system,
    paired_bootstrap,
)
from circle.experiments.replicates import holm, welch_test
from circle.tune.metrics import get_metric

SCORES: dict[str, str] = {"bleu": "BLEU", "ter": "TER", "chrf": "chrF"}
"""The scores of an output, by key and by name."""


def set_references(path: str | os.PathLike) -> list[list[str]]:
    """The references of each segment of an evaluation set table (``RESULTS/sets/test.parquet``,
    tokenised as the tables score it)."""
    return [list(refs) for refs in read_table(path, EVALSET)["references"]]


def stream_references(streams: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Per-segment references from reference files given as ``{name: lines}``, one file per
    reference stream (line i is segment i, empty where a segment has fewer references, as in
    ``RESULTS/sets/test.ref<k>.txt``). Raises ValueError naming the file or line at fault."""
    if not streams:
        raise ValueError("no reference file given")
    (first, lines), *others = streams.items()
    for name, other in others:
        if len(other) != len(lines):
            raise ValueError(f"{name}: {len(other)} lines, but {first} has {len(lines)}: "
                             "reference files are line-parallel, one line per segment")
    references = [[text[i] for text in streams.values() if text[i].strip()]
                  for i in range(len(lines))]
    for number, refs in enumerate(references, start=1):
        if not refs:
            raise ValueError(f"line {number}: empty in every reference file "
                             f"({', '.join(streams)}); every segment needs a reference")
    return references


def tokenised(lines: Sequence[str], lang: str, lowercase: bool) -> list[str]:
    """Plain text brought to the pipeline's tokenisation (:func:`circle.corpus.preprocess.
    normalize`), e.g. ``circle translate``'s detokenised, recased output."""
    return [normalize(line, lang, lowercase) for line in lines]


def check_output(name: str, lines: Sequence[str], segments: int) -> None:
    """Refuse an output whose line count is not the number of test segments."""
    if len(lines) != segments:
        raise ValueError(f"{name}: {len(lines)} lines, but the references have {segments} "
                         "segments: an output has one line per segment, in the set's order")


def score_output(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                 lowercased: bool) -> dict:
    """BLEU, TER and chrF in percent with their signatures (keys ``<score>`` and
    ``<score>_signature``) as the tables compute them."""
    row = evaluate_system(hypotheses, references, lowercased=lowercased)
    return {key: row[key] for score in SCORES for key in (score, f"{score}_signature")}


def compare_outputs(systems: Mapping[str, Sequence[Sequence[str]]],
                    references: Sequence[Sequence[str]], lowercased: bool,
                    shuffles: int = AR_SHUFFLES, samples: int = BOOTSTRAP_SAMPLES,
                    seed: int = 0) -> pd.DataFrame:
    """Each system against the first (the baseline): ``systems[name]`` holds its outputs (one
    per tuning replicate, paired with the baseline's in the given order), each a list of
    hypotheses. One row per system with ``outputs`` and per score of :data:`SCORES` its mean
    over the outputs and ``<score>_sd`` (two outputs or more); per tested score (BLEU, TER) of
    a system other than the baseline ``<score>_difference`` (pooled score minus the
    baseline's: every output concatenated, as the randomisation test scores),
    ``<score>_ar_p`` (two-sided, ``shuffles``), ``<score>_bootstrap_p`` (one-sided, that the
    system is not better; one output per system only, ``samples``) and, with two outputs or
    more per system, ``<score>_welch_p`` and ``<score>_holm_p``. NaN where a test does not
    apply; every test uses ``seed``."""
    names = list(systems)
    if len(names) < 2:
        raise ValueError("a comparison needs at least two systems")
    counts = {name: len(outputs) for name, outputs in systems.items()}
    baseline = names[0]
    for name, count in counts.items():
        if count == 0:
            raise ValueError(f"system {name} has no output")
        if count != counts[baseline]:
            raise ValueError(f"system {name} has {count} outputs but the baseline {baseline} "
                             f"has {counts[baseline]}: the test pairs output r of one with "
                             "output r of the other")
    scores = {name: [score_output(hypotheses, references, lowercased) for hypotheses in outputs]
              for name, outputs in systems.items()}
    stats = {metric: {name: np.stack([get_metric(metric).stats(list(h), references)
                                      for h in outputs])
                      for name, outputs in systems.items()} for metric in SUMMARY_METRICS}
    rows = []
    for name in names:
        row: dict = {"system": name, "outputs": counts[name]}
        for score in SCORES:
            values = np.array([s[score] for s in scores[name]])
            row[score] = float(values.mean())
            row[f"{score}_sd"] = float(values.std(ddof=1)) if len(values) > 1 else np.nan
        for metric in SUMMARY_METRICS if name != baseline else ():
            row.update(_tests(metric, stats[metric][baseline], stats[metric][name],
                              [s[metric] for s in scores[baseline]],
                              [s[metric] for s in scores[name]], shuffles, samples, seed))
        rows.append(row)
    frame = pd.DataFrame(rows)
    welch = [f"{metric}_welch_p" for metric in SUMMARY_METRICS]
    if set(welch) <= set(frame):
        adjusted = holm(frame[welch].to_numpy(dtype=float).T.ravel())
        for number, metric in enumerate(SUMMARY_METRICS):
            frame[f"{metric}_holm_p"] = adjusted[number * len(frame):(number + 1) * len(frame)]
    return frame


def _tests(metric: str, base_stats: np.ndarray, stats: np.ndarray, base_scores: list[float],
           scores: list[float], shuffles: int, samples: int, seed: int) -> dict:
    """The tests of one system against the baseline in ``metric`` (see :func:`compare_outputs`)."""
    scorer = get_metric(metric)

    def pooled(values: np.ndarray) -> float:
        return 100.0 * float(scorer.value(values.reshape(-1, scorer.n_stats).sum(axis=0)))

    row = {f"{metric}_difference": pooled(stats) - pooled(base_stats),
           f"{metric}_ar_p": approximate_randomisation(base_stats, stats, metric, shuffles,
                                                       seed),
           f"{metric}_bootstrap_p": paired_bootstrap(base_stats[0], stats[0], metric, samples,
                                                     seed) if len(stats) == 1 else np.nan}
    if len(stats) > 1:
        test = welch_test(base_scores, scores)
        row[f"{metric}_welch_p"] = np.nan if test is None else test.p_value
    return row

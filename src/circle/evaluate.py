"""Test-set evaluation: corpus BLEU and TER with sacrebleu, and paired bootstrap significance.

Inputs are tokenised and lowercased already, so BLEU uses ``BLEU(tokenize="none")`` and TER
sacrebleu's defaults ``TER()``; every score comes with sacrebleu's signature (Post 2018). The
thesis reports BLEU and TER in percent against all references of the test set (§4.3.1, footnote
4) and marks BLEU scores significantly better than the baseline by Koehn (2004)'s paired
bootstrap resampling (p < 0.05), implemented here on the additive BLEU statistics of
:mod:`circle.metrics`, so one resample is a matrix product.

References are given per segment (a list of strings each, as in :mod:`circle.metrics`);
segments may have different numbers of references.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, TER

from circle.metrics import get_metric
from circle.schemas import EVALUATION
from circle.tables import write_table

BOOTSTRAP_SAMPLES = 1000
_CHUNK = 200  # resamples per matrix product


@dataclass(frozen=True)
class Score:
    """A corpus score in percent with sacrebleu's signature."""

    value: float
    signature: str


def reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu's layout: one stream per reference slot, None where a segment has fewer."""
    if isinstance(references, str) or any(isinstance(r, str) for r in references):
        raise ValueError("references must be one list of reference strings per segment")
    if any(len(r) == 0 for r in references):
        raise ValueError("every segment needs at least one reference")
    width = max((len(r) for r in references), default=0)
    return [[r[k] if k < len(r) else None for r in references] for k in range(width)]


def _check(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if isinstance(hypotheses, str):
        raise ValueError("hypotheses must be a list of strings")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} reference lists")
    if len(hypotheses) == 0:
        raise ValueError("nothing to evaluate")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
    """sacrebleu corpus BLEU-4 (percent), ``tokenize="none"``, against all references."""
    _check(hypotheses, references)
    metric = BLEU(tokenize="none")
    score = metric.corpus_score(list(hypotheses), reference_streams(references))
    return Score(float(score.score), str(metric.get_signature()))


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
    """sacrebleu corpus TER (percent, Snover et al. 2006) against all references."""
    _check(hypotheses, references)
    metric = TER()
    score = metric.corpus_score(list(hypotheses), reference_streams(references))
    return Score(float(score.score), str(metric.get_signature()))


def paired_bootstrap(stats_a: np.ndarray, stats_b: np.ndarray, metric: str = "bleu",
                     samples: int = BOOTSTRAP_SAMPLES, seed: int = 0) -> float:
    """Paired bootstrap resampling (Koehn 2004): p-value that system B is not better than A.

    ``stats_a`` and ``stats_b`` are per-segment sufficient statistics (``(n, s)``, from
    :meth:`circle.metrics.Metric.stats`) of the same segments. Each of ``samples`` resamples
    draws n segments with replacement; the p-value is the fraction of resamples where B's
    corpus score is worse than A's, ties counting one half (so identical systems get 0.5).
    One-sided; lower-is-better metrics (TER) are handled by the metric's ``score``.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    scorer = get_metric(metric)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != scorer.n_stats:
        raise ValueError(f"statistics of shapes {a.shape} and {b.shape}; expected equal "
                         f"(n, {scorer.n_stats}) for {scorer.name}")
    if len(a) == 0 or samples < 1:
        raise ValueError("need at least one segment and one resample")
    rng = np.random.default_rng(seed)
    n = len(a)
    both = np.hstack([a, b])
    worse = ties = 0.0
    for start in range(0, samples, _CHUNK):
        size = min(_CHUNK, samples - start)
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
        totals = counts @ both
        score_a = np.asarray(scorer.score(totals[:, :a.shape[1]]))
        score_b = np.asarray(scorer.score(totals[:, a.shape[1]:]))
        worse += np.count_nonzero(score_b < score_a)
        ties += np.count_nonzero(score_b == score_a)
    return float((worse + 0.5 * ties) / samples)


def bootstrap_p_value(hypotheses_a: Sequence[str], hypotheses_b: Sequence[str],
                      references: Sequence[Sequence[str]], metric: str = "bleu",
                      samples: int = BOOTSTRAP_SAMPLES, seed: int = 0) -> float:
    """:func:`paired_bootstrap` of B against baseline A from their outputs."""
    _check(hypotheses_a, references)
    _check(hypotheses_b, references)
    scorer = get_metric(metric)
    return paired_bootstrap(scorer.stats(list(hypotheses_a), references),
                            scorer.stats(list(hypotheses_b), references), metric, samples, seed)


def evaluate_system(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                    baseline: Sequence[str] | None = None, samples: int = BOOTSTRAP_SAMPLES,
                    seed: int = 0) -> dict:
    """BLEU, TER, their signatures and (given a baseline's outputs) the bootstrap p-value.

    The keys are :data:`~circle.schemas.EVALUATION` columns: ``bleu``, ``ter``,
    ``bleu_signature``, ``ter_signature``, ``p_value_vs_baseline``, ``bootstrap_samples``,
    ``segments``, ``eval_references`` (the most references any segment has).
    """
    bleu, ter = corpus_bleu(hypotheses, references), corpus_ter(hypotheses, references)
    p_value = None if baseline is None else bootstrap_p_value(baseline, hypotheses, references,
                                                              "bleu", samples, seed)
    return {"bleu": bleu.value, "ter": ter.value, "bleu_signature": bleu.signature,
            "ter_signature": ter.signature, "p_value_vs_baseline": p_value,
            "bootstrap_samples": None if baseline is None else samples,
            "segments": len(hypotheses), "eval_references": max(len(r) for r in references)}


def write_evaluation(rows: pd.DataFrame | Sequence[Mapping], path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
    """Write rows as :data:`~circle.schemas.EVALUATION` (nullable integers allowed)."""
    frame = pd.DataFrame(rows if isinstance(rows, pd.DataFrame) else list(rows))
    if "bootstrap_samples" in frame:
        frame["bootstrap_samples"] = frame["bootstrap_samples"].astype("Int32")
    write_table(frame, path, EVALUATION, provenance=provenance)

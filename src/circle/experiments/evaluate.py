"""Test-set evaluation: corpus BLEU, TER and chrF with sacrebleu, significance tests, tuning checks.

Inputs are tokenised (and, by default, lowercased) already, so BLEU uses
``BLEU(tokenize="none")``: neither metric changes the tokens, and both agree with the tuning
statistics of :mod:`circle.tune.metrics`, so TER computed once per system serves the corpus score
and the significance test. Every score comes with sacrebleu's signature (Post 2018), which says
``case:lc`` when the pipeline lowercased the text (``lowercased``): sacrebleu then lowercases
again, which changes nothing, so the signature states how the text was compared and the score
is the same as without. The
thesis reports BLEU and TER in percent against all references of the test set (§4.3.1, footnote
4) and marks BLEU scores significantly better than the baseline by Koehn (2004)'s paired
bootstrap resampling (p < 0.05), implemented here on the additive BLEU statistics of
:mod:`circle.tune.metrics`, so one resample is a matrix product. That test sees one tuning run per
system and so ignores the optimiser's own variance; :func:`approximate_randomisation` is the
test over all tuning replicates of Clark et al. (2011), and :func:`condition_summary` applies it
per condition against the baseline (the significance marks of the report), beside a test whose
unit is the tuning run (:mod:`circle.experiments.replicates`).

References are given per segment (a list of strings each, as in :mod:`circle.tune.metrics`);
segments may have different numbers of references.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF, TER

from circle.core.schemas import CONDITION_SUMMARY, EVALUATION
from circle.core.tables import write_table
from circle.experiments.replicates import welch_test
from circle.tune.metrics import get_metric, ter_from_stats, ter_stats

BOOTSTRAP_SAMPLES = 1000
AR_SHUFFLES = 10_000
"""MultEval's default number of shuffles (``--ar-shuffles``)."""
SIGNIFICANCE_LEVEL = 0.05
SUMMARY_METRICS: tuple[str, ...] = ("bleu", "ter")
MATCHED_BLEU = "matched_bleu"
"""BLEU at a common output length (:mod:`circle.experiments.length_matching`): summarised and tested
over replicates like :data:`SUMMARY_METRICS`."""
TESTED_METRICS: tuple[str, ...] = (*SUMMARY_METRICS, MATCHED_BLEU)
CHRF_METRIC = "chrf"
"""chrF (sacrebleu): summarised over replicates (mean, sd, pooled) but not tested: the tables
say so."""
_CHUNK = 200  # resamples or shuffles per matrix product
_TIE = 1e-12  # score differences (fractions) this close count as equal: float sums of TER stats
CLOSE_REPLICATES = 0.01
"""Two tuning replicates whose test BLEU and TER (percent) both differ by less than this are
*close*: the same output, or as good as (:func:`close_replicates`)."""
CLOSE_METRICS: tuple[str, ...] = SUMMARY_METRICS
"""The scores (BLEU, TER) in which two replicates must agree to count as close."""


@dataclass(frozen=True)
class Score:
    """A corpus score in percent with sacrebleu's signature."""

    value: float
    signature: str


@dataclass(frozen=True)
class BleuScore(Score):
    """Corpus BLEU with its two factors (Papineni et al. 2002; thesis Fig. 4.8/4.9):
    ``precision``, the geometric mean of the 1–4-gram precisions in percent, and
    ``brevity_penalty``; ``value`` = their product; ``length_ratio`` the output's length over
    the effective reference length (the closest reference's per segment, as the penalty uses)."""

    precision: float
    brevity_penalty: float
    length_ratio: float


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


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                lowercased: bool = False) -> BleuScore:
    """sacrebleu corpus BLEU-4 (percent), ``tokenize="none"``, against all references;
    ``lowercased``: the text was lowercased (signature ``case:lc``)."""
    _check(hypotheses, references)
    metric = BLEU(tokenize="none", lowercase=lowercased)
    score = metric.corpus_score(list(hypotheses), reference_streams(references))
    precision = float(score.score) / score.bp if score.bp > 0 else 0.0
    return BleuScore(float(score.score), str(metric.get_signature()), precision,
                     float(score.bp), score.sys_len / score.ref_len if score.ref_len else 0.0)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                lowercased: bool = False) -> Score:
    """sacrebleu corpus chrF (percent, Popović 2015: character 6-grams, beta 2) against all
    references; ``lowercased`` as :func:`corpus_bleu`."""
    _check(hypotheses, references)
    metric = CHRF(lowercase=lowercased)
    score = metric.corpus_score(list(hypotheses), reference_streams(references))
    return Score(float(score.score), str(metric.get_signature()))


def chrf_statistics(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                    lowercased: bool = False) -> np.ndarray:
    """sacrebleu's per-segment chrF statistics (character and word n-gram counts of the best
    reference of each segment), shape ``(segments, s)``: additive, so that the chrF of several
    outputs together (a condition's replicates pooled) is :func:`chrf_value` of their sum, as
    sacrebleu's own significance tests compute it."""
    _check(hypotheses, references)
    metric = CHRF(lowercase=lowercased)
    return np.asarray(metric._extract_corpus_statistics(list(hypotheses),
                                                        reference_streams(references)),
                      dtype=np.float64)


def chrf_value(total: np.ndarray) -> float:
    """chrF in percent of summed :func:`chrf_statistics` (case does not enter here)."""
    metric = CHRF()
    return float(metric._compute_score_from_stats(
        [int(round(v)) for v in np.asarray(total, dtype=np.float64)]).score)


DETOKENISED_COLUMNS = ("detok_bleu", "detok_bleu_signature", "detok_chrf",
                       "detok_chrf_signature")


def detokenised_scores(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                       lowercased: bool = False) -> dict:
    """BLEU and chrF of detokenised text as papers report them: sacrebleu's default ``13a``
    tokeniser, lowercased where the pipeline lowercased (the detokenised output stays
    lowercased, so comparing case would penalise every capital of the references): the keys
    ``detok_bleu``, ``detok_bleu_signature``, ``detok_chrf``, ``detok_chrf_signature``."""
    _check(hypotheses, references)
    streams = reference_streams(references)
    bleu, chrf = BLEU(lowercase=lowercased), CHRF(lowercase=lowercased)
    bleu_score = bleu.corpus_score(list(hypotheses), streams)
    chrf_score = chrf.corpus_score(list(hypotheses), streams)
    return {"detok_bleu": float(bleu_score.score),
            "detok_bleu_signature": str(bleu.get_signature()),
            "detok_chrf": float(chrf_score.score),
            "detok_chrf_signature": str(chrf.get_signature())}


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
               lowercased: bool = False) -> Score:
    """sacrebleu corpus TER (percent, Snover et al. 2006) against all references; without
    ``lowercased`` (signature ``case:lc``) case-sensitive, as preprocessing left the text.

    The per-segment edits come from the compiled exact TER (:func:`circle.tune.metrics.ter_stats`,
    checked against sacrebleu in ``tests/unit/test_ter.py``), summed in segment order as
    sacrebleu sums them, so the value is sacrebleu's to the last bit in a small fraction of its
    time; sacrebleu signs it (:func:`ter_signature`)."""
    _check(hypotheses, references)
    signature = ter_signature(references, lowercased)
    if lowercased:  # what case_sensitive=False does to every sentence before scoring
        hypotheses = [h.lower() for h in hypotheses]
        references = [[r.lower() for r in refs] for refs in references]
    summed = np.cumsum(ter_stats(hypotheses, references), axis=0)[-1]
    return Score(100.0 * float(ter_from_stats(summed)), signature)


def ter_signature(references: Sequence[Sequence[str]], lowercased: bool = False) -> str:
    """sacrebleu's TER signature for these references: sacrebleu signs a metric once it has
    scored, so it scores empty hypotheses (no shifts to search) against the reference streams,
    which sets ``nrefs`` as the real score would (``var`` where segments differ)."""
    metric = TER(case_sensitive=not lowercased)
    metric.corpus_score([""] * len(references), reference_streams(references))
    return str(metric.get_signature())


def paired_bootstrap(stats_a: np.ndarray, stats_b: np.ndarray, metric: str = "bleu",
                     samples: int = BOOTSTRAP_SAMPLES, seed: int = 0) -> float:
    """Paired bootstrap resampling (Koehn 2004): p-value that system B is not better than A.

    ``stats_a`` and ``stats_b`` are per-segment sufficient statistics (``(n, s)``, from
    :meth:`circle.tune.metrics.Metric.stats`) of the same segments. Each of ``samples`` resamples
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


def approximate_randomisation(stats_a: np.ndarray, stats_b: np.ndarray, metric: str = "bleu",
                              shuffles: int = AR_SHUFFLES, seed: int = 0) -> float:
    """Two-sided p-value that systems A and B differ in corpus ``metric``, by approximate
    randomisation over all their tuning replicates (Clark et al. 2011, MultEval).

    ``stats_a`` and ``stats_b`` are per-segment sufficient statistics (from
    :meth:`circle.tune.metrics.Metric.stats`) of shape ``(replicates, segments, s)``, one slice per
    tuning run of the system; a 2-D ``(segments, s)`` array is a single run. The procedure is
    MultEval's (jhclark/multeval: ``significance/StratifiedApproximateRandomizationTest.java``,
    which ``MultEvalModule`` hands every optimisation run's statistics appended one run after
    the other by ``SuffStatManager.getStatsAllOptForSys``):

    * **Statistic.** A system is scored on its statistics summed over *all* its replicates,
      i.e. the corpus score of every run's output concatenated (not the mean of the runs'
      scores); the statistic is ``|score(A) - score(B)|``.
    * **What is shuffled.** The data points are the (replicate, segment) pairs, A's point
      (r, j) paired with B's point (r, j). A shuffle exchanges each pair's two outputs
      independently with probability 1/2 and scores the two pseudo-systems in the same way.
      Shuffle i exchanges point ``r * segments + j`` iff that entry of row i of
      ``numpy.random.default_rng(seed).random((shuffles, replicates * segments))`` is below
      0.5 (drawn in chunks of rows, which gives the same numbers). Vectorised: pseudo-system
      X = sum(A) + S (B - A) for the 0/1 matrix S of a chunk, Y = sum(A) + sum(B) - X.
    * **p-value.** ``(c + 1) / (shuffles + 1)`` where c counts the shuffles whose difference is
      at least the observed one: the add-one convention of MultEval (and sacrebleu), which
      keeps the rate of false rejections at most the test level. Two-sided. MultEval's
      default is 10,000 shuffles.
    * **Replicates.** Both systems need the same numbers of replicates and segments (MultEval
      refuses "non-parallel" numbers of optimisation runs); runs are paired in the given order.

    Two deliberate differences from MultEval's current code, each where it misbehaves:

    1. It counts shuffles with a strictly *greater* difference, so that a system compared with
       itself gets p = 1/(shuffles + 1), "significant" (jhclark/multeval issue #5 reports
       exactly that). Here ties count, as in an earlier version of the same file and in the
       usual randomisation test (Noreen 1989; Riezler & Maxwell 2005): identical systems get
       p = 1. Differences within 1e-12 (fractions) count as ties, against float rounding in
       summed TER statistics. The two conventions differ only when a shuffle reproduces the
       observed difference exactly, e.g. when it exchanges nothing or everything.
    2. Its current shuffle also permutes each segment's outputs among the replicates, reading
       pseudo-system X through the permutation and Y through its inverse. With three or more
       replicates the pseudo-systems then no longer share the data out between them (an output
       can land in both, or in neither), which narrows the null distribution and lowers
       p-values. As the score sums over all replicates, one permutation applied to both
       pseudo-systems would change nothing, so none is drawn here; for one or two replicates,
       where every permutation is its own inverse, both procedures have the same distribution.
    """
    scorer = get_metric(metric)
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.ndim == 2 and b.ndim == 2:
        a, b = a[None], b[None]
    if a.shape != b.shape or a.ndim != 3 or a.shape[2] != scorer.n_stats:
        raise ValueError(f"statistics of shapes {a.shape} and {b.shape}; expected equal "
                         f"(replicates, segments, {scorer.n_stats}) for {scorer.name}: both "
                         "systems need the same numbers of replicates and segments")
    if a.shape[0] == 0 or a.shape[1] == 0 or shuffles < 1:
        raise ValueError("need at least one replicate, one segment and one shuffle")
    a, b = a.reshape(-1, scorer.n_stats), b.reshape(-1, scorer.n_stats)
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    observed = abs(float(scorer.value(total_a)) - float(scorer.value(total_b)))
    delta = b - a
    differs = np.flatnonzero(delta.any(axis=1))  # exchanging equal outputs changes nothing
    delta = delta[differs]
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, shuffles, _CHUNK):
        size = min(_CHUNK, shuffles - start)
        exchange = rng.random((size, len(a)))[:, differs] < 0.5
        moved = exchange.astype(np.float64) @ delta
        x = np.asarray(scorer.value(total_a + moved))
        y = np.asarray(scorer.value(total_b - moved))
        extreme += int(np.count_nonzero(np.abs(x - y) >= observed - _TIE))
    return (extreme + 1) / (shuffles + 1)


def evaluate_system(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                    baseline: Sequence[str] | None = None, samples: int = BOOTSTRAP_SAMPLES,
                    seed: int = 0, ter_statistics: np.ndarray | None = None,
                    lowercased: bool = False) -> dict:
    """BLEU, TER, chrF, their signatures and (given a baseline's outputs) the bootstrap p-value.

    The keys are :data:`~circle.core.schemas.EVALUATION` columns: ``bleu``, ``ter``, ``chrf``,
    ``bleu_signature``, ``ter_signature``, ``chrf_signature``, ``p_value_vs_baseline``,
    ``bootstrap_samples``,
    ``segments``, ``eval_references`` (the most references any segment has), and BLEU's
    factors ``bleu_precision``, ``brevity_penalty`` and ``length_ratio`` (:class:`BleuScore`).
    ``ter_statistics`` (the hypotheses' :meth:`circle.tune.metrics.Ter.stats`, if the caller has
    them) spares recomputing TER, the slow part: the score is the same as :func:`corpus_ter`'s.
    ``lowercased`` says that the text was lowercased (signatures ``case:lc``).
    """
    bleu = corpus_bleu(hypotheses, references, lowercased)
    if ter_statistics is None:
        ter = corpus_ter(hypotheses, references, lowercased)
    else:
        _check(hypotheses, references)
        ter = Score(100.0 * float(get_metric("ter").value(np.sum(ter_statistics, axis=0))),
                    ter_signature(references, lowercased))
    chrf = corpus_chrf(hypotheses, references, lowercased)
    p_value = None if baseline is None else bootstrap_p_value(baseline, hypotheses, references,
                                                              "bleu", samples, seed)
    return {"bleu": bleu.value, "ter": ter.value, "chrf": chrf.value,
            "bleu_signature": bleu.signature, "ter_signature": ter.signature,
            "chrf_signature": chrf.signature, "p_value_vs_baseline": p_value,
            "bootstrap_samples": None if baseline is None else samples,
            "segments": len(hypotheses), "eval_references": max(len(r) for r in references),
            "bleu_precision": bleu.precision, "brevity_penalty": bleu.brevity_penalty,
            "length_ratio": bleu.length_ratio}


def write_evaluation(rows: pd.DataFrame | Sequence[Mapping], path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
    """Write rows as :data:`~circle.core.schemas.EVALUATION` (nullable integers allowed; the
    :data:`DETOKENISED_COLUMNS` null where the rows lack them)."""
    frame = pd.DataFrame(rows if isinstance(rows, pd.DataFrame) else list(rows))
    for column in DETOKENISED_COLUMNS:  # null without detokenised text
        if column not in frame:
            frame[column] = None
    if "bootstrap_samples" in frame:
        frame["bootstrap_samples"] = frame["bootstrap_samples"].astype("Int32")
    write_table(frame, path, EVALUATION, provenance=provenance)


def check_tuning_log(log: pd.DataFrame, path: str | os.PathLike, run: str) -> None:
    """Refuse a tuning run whose returned weights scored worse than its untuned start.

    ``log`` is the run's :data:`~circle.core.schemas.TUNING_LOG`: iteration 1 decoded the tune set
    with the start weights, ``returned`` marks the one iteration whose weights the run returned
    and ``decode_score`` is the tuning ``metric`` of each decode (BLEU higher is better, TER and
    TERBLEU lower). Raises ``ValueError`` naming ``path`` and ``run``; ties pass.
    """
    where = f"{path}: tuning run {run}"
    if log.empty:
        raise ValueError(f"{where}: the tuning log has no iterations")
    metrics = sorted(log["metric"].unique())
    if len(metrics) != 1:
        raise ValueError(f"{where}: the tuning log mixes metrics {metrics}")
    scorer = get_metric(metrics[0])
    start = log[log["iteration"] == 1]
    returned = log[log["returned"].astype(bool)]
    if len(start) != 1:
        raise ValueError(f"{where}: the tuning log has {len(start)} rows for iteration 1, the "
                         "untuned start; expected one")
    if len(returned) != 1:
        raise ValueError(f"{where}: {len(returned)} iterations are marked as returned; "
                         "expected one")
    initial = float(start["decode_score"].iloc[0])
    final = float(returned["decode_score"].iloc[0])
    if scorer.better(initial, final):
        direction = "higher" if scorer.higher_is_better else "lower"
        raise ValueError(
            f"{where} returned the weights of iteration {int(returned['iteration'].iloc[0])}, "
            f"whose tune {scorer.name} {final:.6f} is worse than the untuned start's "
            f"{initial:.6f} (iteration 1; {direction} is better): the tuning run failed, so its "
            "test scores would be meaningless")


def tested_metric(metric: str):
    """The tuning metric that scores a summary metric (``matched_bleu``: BLEU)."""
    return get_metric("bleu" if metric == MATCHED_BLEU else metric)


def close_replicates(scores: np.ndarray, tolerance: float = CLOSE_REPLICATES) -> bool:
    """Whether two of a condition's replicates scored alike: ``scores`` is (replicates,
    metrics), e.g. test BLEU and TER in percent, and some pair differs by less than
    ``tolerance`` in every metric.

    The approximate randomisation test over replicates (Clark et al. 2011) treats them as
    independent draws of the optimiser; two replicates that reached the same output add no
    draw, so the cell's sd understates the optimiser's spread and its test is over-confident.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"scores of shape {values.shape}; expected (replicates, metrics)")
    differences = np.abs(values[:, None, :] - values[None, :, :]).max(axis=2)
    pairs = np.triu_indices(len(values), k=1)
    return bool(np.any(differences[pairs] < tolerance))


def condition_summary(evaluation: pd.DataFrame,
                      stats: Mapping[str, Mapping[tuple[str, int], np.ndarray]],
                      baseline: str | Mapping[str, str], shuffles: int = AR_SHUFFLES,
                      significance_level: float = SIGNIFICANCE_LEVEL, seed: int = 0
                      ) -> pd.DataFrame:
    """Per condition: replicates, mean and sample standard deviation of BLEU, TER and BLEU at a
    common length (:data:`TESTED_METRICS`) and of chrF (its pooled score too, untested), the
    mean length ratio, whether two replicates scored
    alike (:func:`close_replicates`), and two tests against its baseline: ``baseline``, or
    ``baseline[condition]`` for a mapping
    (:attr:`circle.experiments.conditions.Condition.baseline`). The approximate randomisation
    test pools the segments of all replicates (MultEval's); Welch's t-test over the replicates'
    scores (:func:`circle.experiments.replicates.welch_test`, ``<metric>_welch_p_value`` beside
    ``<metric>_mean_difference``) takes each run as one observation (Clark et al. 2011).

    ``evaluation`` holds the :data:`~circle.core.schemas.EVALUATION` rows of one experiment;
    ``stats[metric][(condition, replicate)]`` the per-segment statistics of that run's test
    output for each metric of :data:`TESTED_METRICS` (``matched_bleu``: BLEU statistics of the
    length-matched output) and ``stats["chrf"]`` its :func:`chrf_statistics`. Rows follow the
    order in which conditions first appear; columns are those of
    :data:`~circle.core.schemas.CONDITION_SUMMARY`.
    Every comparison uses the same ``seed``. A condition must have the baseline's replicate
    numbers (the test pairs replicate r with replicate r).
    """
    if not 0 < significance_level < 1:
        raise ValueError(f"significance level {significance_level} is not in (0, 1)")
    if evaluation.empty:
        raise ValueError("no evaluated runs to summarise")
    experiments = evaluation["experiment"].unique()
    if len(experiments) != 1:
        raise ValueError(f"the runs come from several experiments {sorted(experiments)}")
    conditions = list(evaluation["condition"].unique())
    baselines = ({condition: baseline for condition in conditions} if isinstance(baseline, str)
                 else {condition: baseline[condition] for condition in conditions})
    for missing in sorted(set(baselines.values()) - set(conditions)):
        raise ValueError(f"the baseline condition {missing} has no evaluated runs")
    pooled: dict[tuple[str, str], tuple[list[int], np.ndarray, float]] = {}
    for condition, rows in evaluation.groupby("condition", sort=False):
        replicates = sorted(int(r) for r in rows["replicate"])
        if len(set(replicates)) != len(replicates):
            raise ValueError(f"condition {condition}: replicate numbers repeat: {replicates}")
        for metric in TESTED_METRICS:
            scorer = tested_metric(metric)
            stacked = np.stack([np.asarray(stats[metric][condition, r], dtype=np.float64)
                                for r in replicates])
            score = 100.0 * float(scorer.value(stacked.reshape(-1, scorer.n_stats).sum(axis=0)))
            pooled[condition, metric] = replicates, stacked, score
    runs = dict(iter(evaluation.groupby("condition", sort=False)))
    summary = []
    for condition, rows in runs.items():
        first, base = rows.iloc[0], baselines[condition]
        row = {"experiment": first["experiment"], "condition": condition,
               "reference_type": first["reference_type"],
               "human_references": int(first["human_references"]),
               "paraphrase_references": int(first["paraphrase_references"]),
               "references_used": int(first["references_used"]), "replicates": len(rows),
               "length_ratio_mean": float(rows["length_ratio"].mean()),
               "close_replicates": close_replicates(
                   rows[list(CLOSE_METRICS)].to_numpy(dtype=np.float64)),
               "baseline_condition": None if condition == base else base,
               "significance_level": float(significance_level), "shuffles": int(shuffles),
               "shuffle_seed": int(seed)}
        values = rows[CHRF_METRIC].to_numpy(dtype=np.float64)
        chrf_stats = np.stack([np.asarray(stats[CHRF_METRIC][condition, r], dtype=np.float64)
                               for r in sorted(int(r) for r in rows["replicate"])])
        row.update(chrf_mean=float(values.mean()),
                   chrf_sd=float(values.std(ddof=1)) if len(values) > 1 else None,
                   chrf_pooled=chrf_value(chrf_stats.reshape(-1, chrf_stats.shape[-1])
                                          .sum(axis=0)))
        for metric in TESTED_METRICS:
            values = rows[metric].to_numpy(dtype=np.float64)
            replicates, stacked, score = pooled[condition, metric]
            row[f"{metric}_mean"] = float(values.mean())
            row[f"{metric}_sd"] = float(values.std(ddof=1)) if len(values) > 1 else None
            row[f"{metric}_pooled"] = score
            if condition == base:
                row.update({f"{metric}_difference": None, f"{metric}_p_value": None,
                            f"{metric}_significant": None, f"{metric}_mean_difference": None,
                            f"{metric}_welch_p_value": None})
                continue
            base_values = runs[base][metric].to_numpy(dtype=np.float64)
            welch = welch_test(base_values, values)
            row.update({f"{metric}_mean_difference": float(values.mean() - base_values.mean()),
                        f"{metric}_welch_p_value": None if welch is None else welch.p_value})
            base_replicates, base_stacked, base_score = pooled[base, metric]
            if replicates != base_replicates:
                raise ValueError(f"condition {condition} has replicates {replicates} but the "
                                 f"baseline {base} has {base_replicates}: the test pairs "
                                 "replicate r of one with replicate r of the other")
            p_value = approximate_randomisation(base_stacked, stacked, tested_metric(metric).name,
                                                shuffles, seed)
            row.update({f"{metric}_difference": score - base_score,
                        f"{metric}_p_value": p_value,
                        f"{metric}_significant": p_value < significance_level})
        summary.append(row)
    return pd.DataFrame(summary)


def write_condition_summary(summary: pd.DataFrame, path: str | os.PathLike,
                            provenance: Mapping[str, str] | None = None) -> None:
    """Write a :func:`condition_summary` as :data:`~circle.core.schemas.CONDITION_SUMMARY`."""
    frame = summary.copy()
    for metric in TESTED_METRICS:
        frame[f"{metric}_significant"] = frame[f"{metric}_significant"].astype("boolean")
    write_table(frame, path, CONDITION_SUMMARY, provenance=provenance)


BETTER, WORSE = "*", "†"


def significance_mark(metric: str, significant, difference: float) -> str:
    """``*`` for significantly better than the baseline, ``†`` for significantly worse, else
    nothing (also for the baseline itself, whose flag is null)."""
    if significant is None or significant is pd.NA or not bool(significant) \
            or difference is None or math.isnan(difference) or difference == 0:
        return ""
    return BETTER if (difference > 0) == tested_metric(metric).higher_is_better else WORSE


def summary_test(summary: pd.Series | None, metric: str) -> tuple[float, str]:
    """The p-value and :func:`significance_mark` of one :data:`~circle.core.schemas.
    CONDITION_SUMMARY` row for ``metric``; NaN and no mark for a baseline or a missing row."""
    if summary is None or pd.isna(summary[f"{metric}_p_value"]):
        return np.nan, ""
    return float(summary[f"{metric}_p_value"]), significance_mark(
        metric, summary[f"{metric}_significant"], float(summary[f"{metric}_difference"]))

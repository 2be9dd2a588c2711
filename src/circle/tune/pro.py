"""Pairwise ranking optimisation, PRO (Hopkins & May 2011, "Tuning as Ranking").

PRO replaces MERT's line searches over the n-best pool by a binary classifier: it samples pairs
of hypotheses of the same segment whose sentence-level metric scores differ clearly, and learns
weights under which the model score of the better hypothesis of a pair exceeds the worse one's.
The steps, each as in Moses' ``mert/`` PRO (the ``pro`` extractor, then MegaM run by
``mert-moses.pl --pairwise-ranked`` with ``-fvals -maxi 30 -nobias binary``), except where said:

1. **Sentence scores** (:func:`sentence_scores`), from each hypothesis' own statistics row:
   BLEU+1 for BLEU (the variant is spelt out there), -TER for TER, and minus the TERBLEU loss
   with BLEU+1 in place of BLEU for TERBLEU.
2. **Sampling** (:func:`sample_pairs`), per segment: ``candidates`` (Hopkins & May's Gamma =
   5000) pairs drawn uniformly with replacement from the segment's hypotheses; pairs whose score
   difference is below ``min_difference`` (alpha = 0.05; their step function keeps a pair when
   the difference is at least alpha, as Moses' ``pro`` does) or zero are dropped; the ``samples``
   (Xi = 50) with the largest differences are kept.  Each kept pair gives the two training
   examples ``(f_better - f_worse, +1)`` and ``(f_worse - f_better, -1)``.
3. **Classifier** (:func:`fit_ranker`): L2-regularised logistic regression without a bias term
   (MegaM's ``-nobias binary``), fitted by projected Newton steps inside the weight bounds.
4. **Interpolation** (:func:`pro_optimise`): ``w = psi * w_pro + (1 - psi) * w_prev`` with
   ``psi = 0.1`` (Hopkins & May; ``mert-moses.pl --historic-interpolation``), after rescaling
   ``w_pro`` to the L1 norm of ``w_prev``; then clipped to the bounds.

PRO works from ``pool.stats`` and ``pool.features`` only: every hypothesis carries statistics
against its own references, so segments need not share a reference set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circle.tune.mert import FlatPool, score_weights
from circle.tune.metrics import BLEU_STATS, MAX_ORDER, Metric, ter_from_stats

PAIR_BUDGET = 1 << 20  # candidate pairs drawn per block of segments (bounds the memory used)


@dataclass(frozen=True)
class ProSettings:
    """PRO options; defaults are Hopkins & May's (2011) constants, as in Moses' ``pro``."""

    candidates: int = 5000
    """Gamma: candidate pairs drawn per segment, uniformly with replacement (Hopkins & May)."""
    samples: int = 50
    """Xi: pairs kept per segment, those with the largest sentence-score differences."""
    min_difference: float = 0.05
    """alpha: smallest sentence-score difference of a kept pair (Hopkins & May's step
    function: pairs closer than alpha are dropped)."""
    interpolation: float = 0.1
    """Psi: weight of the new classifier solution against the previous iteration's weights
    (Hopkins & May interpolate with Psi = 0.1; 1 keeps the classifier solution, 0 the start)."""
    l2: float = 1.0
    """Precision of the Gaussian prior on the weights: the objective is the summed logistic loss
    of all training examples plus ``l2 / 2 * ||w||^2``; weak next to thousands of examples."""
    max_iterations: int = 100
    """Cap on projected Newton iterations of the classifier."""
    tolerance: float = 1e-8
    """The classifier stops when the projected gradient's largest entry is at most
    ``tolerance`` times (1 + the largest entry of the gradient at the starting point)."""
    smooth_unigrams: bool = False
    """Add one to unigram matches and counts too, as Moses' ``smoothedSentenceBleu`` does
    (off: Lin & Och's BLEU+1 smooths orders n > 1 only)."""

    def __post_init__(self):
        if self.candidates < 1 or self.samples < 1:
            raise ValueError("candidates and samples must be positive")
        if self.min_difference < 0:
            raise ValueError("min_difference must be non-negative")
        if not 0.0 <= self.interpolation <= 1.0:
            raise ValueError("interpolation must lie in [0, 1]")
        if self.l2 <= 0:
            raise ValueError("l2 must be positive (it keeps separable pairs' weights finite)")
        if self.max_iterations < 1 or self.tolerance <= 0:
            raise ValueError("max_iterations and tolerance must be positive")


def bleu_plus_one(stats: np.ndarray, smooth_unigrams: bool = False) -> np.ndarray:
    """Sentence-level BLEU+1 of each row of BLEU statistics ``(..., 10)``.

    Lin & Och (2004) add-one smoothing, used for PRO by Hopkins & May (2011): the precision of
    order n = 2..4 is ``(matches_n + 1) / (total_n + 1)``; the unigram precision
    ``matches_1 / total_1`` is left unsmoothed (``smooth_unigrams=True`` adds one to it as well,
    which is what Moses' ``smoothedSentenceBleu`` does).  The score is
    ``BP * exp(mean_n log p_n)`` with brevity penalty ``BP = exp(min(0, 1 - r / c))`` for
    hypothesis length ``c`` and the row's (closest) reference length ``r``.  It is 0 for an
    empty hypothesis and, unsmoothed, when no unigram matches.
    """
    s = np.asarray(stats, dtype=np.float64)
    matches, totals = s[..., :MAX_ORDER], s[..., MAX_ORDER:2 * MAX_ORDER]
    hyp_len, ref_len = s[..., 8], s[..., 9]
    add = np.ones(MAX_ORDER)
    if not smooth_unigrams:
        add[0] = 0.0
    numerator, denominator = matches + add, totals + add
    usable = (hyp_len > 0) & np.all(numerator > 0, axis=-1) & np.all(denominator > 0, axis=-1)
    safe = usable[..., None]
    log_precision = np.log(np.where(safe, numerator, 1.0)) - np.log(np.where(safe, denominator,
                                                                                1.0))
    brevity = np.minimum(0.0, 1.0 - ref_len / np.where(hyp_len > 0, hyp_len, 1.0))
    return np.where(usable, np.exp(log_precision.mean(axis=-1) + brevity), 0.0)


def sentence_scores(metric: Metric, stats: np.ndarray, smooth_unigrams: bool = False
                    ) -> np.ndarray:
    """Sentence-level score of each statistics row, ``(N, s) -> (N,)``; higher is better.

    BLEU: BLEU+1 (:func:`bleu_plus_one`).  TER: ``-edits / reference length`` of the row
    (:func:`circle.tune.metrics.ter_from_stats`).  TERBLEU: ``-(0.5 * TER + 0.5 * (1 - BLEU+1))``,
    the thesis' TERBLEU loss with BLEU+1 as its sentence-level BLEU.
    """
    s = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    if s.shape[-1] != metric.n_stats:
        raise ValueError(f"{metric.name} needs {metric.n_stats} statistics per row; "
                         f"got {s.shape[-1]}")
    if metric.name == "bleu":
        return bleu_plus_one(s, smooth_unigrams)
    if metric.name == "ter":
        return -np.asarray(ter_from_stats(s), dtype=np.float64)
    if metric.name == "terbleu":
        ter = np.asarray(ter_from_stats(s[..., BLEU_STATS:]), dtype=np.float64)
        return -(0.5 * ter + 0.5 * (1.0 - bleu_plus_one(s[..., :BLEU_STATS], smooth_unigrams)))
    raise ValueError(f"no sentence-level score for metric {metric.name!r}")


def sample_pairs(pool: FlatPool, scores: np.ndarray, settings: ProSettings,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Hopkins & May's sampler: rows ``(better, worse)`` of the kept pairs, all segments.

    Per segment with two or more hypotheses, ``settings.candidates`` ordered pairs of rows are
    drawn uniformly with replacement (a pair may repeat, or pair a row with itself, as in
    Moses' ``pro``); pairs whose score difference is zero or below ``settings.min_difference``
    are dropped and the ``settings.samples`` with the largest differences kept, earlier draws
    first among equal differences (Moses keeps the pairs at or above the Xi-th largest
    difference, so its ties may resolve differently).  Each pair is oriented so that
    ``scores[better] > scores[worse]``.  Segments are visited in pool order and ``rng`` is
    consumed in that order.
    """
    sizes = np.diff(np.append(pool.starts, len(pool.segment)))
    segments = np.flatnonzero(sizes >= 2)
    block = max(1, PAIR_BUDGET // settings.candidates)
    keep_n = min(settings.samples, settings.candidates)
    better, worse = [], []
    for lo in range(0, len(segments), block):
        seg = segments[lo:lo + block]
        n = sizes[seg][:, None]
        first = pool.starts[seg][:, None]
        draws = rng.random((2, len(seg), settings.candidates))
        i = first + np.minimum((draws[0] * n).astype(np.int64), n - 1)
        j = first + np.minimum((draws[1] * n).astype(np.int64), n - 1)
        diff = scores[i] - scores[j]
        gap = np.abs(diff)
        gap = np.where((gap >= settings.min_difference) & (gap > 0), gap, -np.inf)
        top = np.argsort(-gap, axis=1, kind="stable")[:, :keep_n]
        kept = np.isfinite(np.take_along_axis(gap, top, axis=1))
        i, j = np.take_along_axis(i, top, axis=1)[kept], np.take_along_axis(j, top, axis=1)[kept]
        first_better = np.take_along_axis(diff, top, axis=1)[kept] > 0
        better.append(np.where(first_better, i, j))
        worse.append(np.where(first_better, j, i))
    if not better:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(better), np.concatenate(worse)


def ranking_objective(differences: np.ndarray, weights: np.ndarray, l2: float) -> float:
    """The classifier's objective at ``weights``: summed logistic loss plus the L2 penalty.

    ``differences`` holds one row ``f_better - f_worse`` per pair; the mirrored example
    ``(f_worse - f_better, -1)`` has the same loss, so each row counts twice.
    """
    margins = differences @ weights
    return float(2.0 * np.logaddexp(0.0, -margins).sum() + 0.5 * l2 * weights @ weights)


def fit_ranker(differences: np.ndarray, lower: np.ndarray, upper: np.ndarray,
               settings: ProSettings) -> np.ndarray:
    """Bound-constrained L2-regularised logistic regression without bias, by projected Newton.

    Minimises :func:`ranking_objective` over ``lower <= w <= upper``, starting from 0 clipped
    to the bounds (MegaM also starts from zero).  Each iteration fixes the weights held at a
    bound by the gradient (at the lower bound with a positive gradient, at the upper bound with a
    negative one), takes the Newton step of the others, projects ``w + t * step`` onto the box
    and halves ``t`` until the objective falls by an Armijo fraction of the gradient's
    prediction; should that fail, a projected gradient step with the same backtracking is tried.
    The objective is strictly convex (``l2 > 0``), so the result does not depend on the start.
    It stops when the projected gradient ``w - clip(w - g)`` is below ``settings.tolerance``
    (relative to the initial gradient), when no step decreases the objective any more, or after
    ``settings.max_iterations`` iterations.  Deterministic: no randomness is involved.
    """
    x = np.asarray(differences, dtype=np.float64)
    d = x.shape[1]
    w = np.clip(np.zeros(d), lower, upper)
    f = ranking_objective(x, w, settings.l2)
    scale = None
    for _ in range(settings.max_iterations):
        margins = x @ w
        wrong = 0.5 * (1.0 - np.tanh(0.5 * margins))  # sigmoid(-margin), overflow-free
        gradient = -2.0 * (x.T @ wrong) + settings.l2 * w
        projected = w - np.clip(w - gradient, lower, upper)
        if scale is None:
            scale = 1.0 + np.abs(gradient).max()
        if np.abs(projected).max() <= settings.tolerance * scale:
            break
        held = ((w <= lower) & (gradient > 0)) | ((w >= upper) & (gradient < 0))
        free = ~held
        step = np.zeros(d)
        if free.any():
            xf = x[:, free]
            curvature = wrong * (1.0 - wrong)
            hessian = 2.0 * (xf.T * curvature) @ xf + settings.l2 * np.eye(int(free.sum()))
            step[free] = -np.linalg.solve(hessian, gradient[free])
        moved = False
        for direction in (step, -gradient):
            t = 1.0
            while t > 1e-12:
                candidate = np.clip(w + t * direction, lower, upper)
                f_new = ranking_objective(x, candidate, settings.l2)
                if f_new < f and f_new <= f + 1e-4 * gradient @ (candidate - w):
                    w, f, moved = candidate, f_new, True
                    break
                t *= 0.5
            if moved:
                break
        if not moved:
            break
    return w


def pro_optimise(pool: FlatPool, metric: Metric, start: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, settings: ProSettings,
                 rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One PRO optimisation over the pool: ``(weights, pool score)``.

    ``start`` are the previous iteration's weights ``(d,)`` and ``lower``/``upper`` bounds on
    each weight (may be infinite).  The sampled pairs (:func:`sample_pairs`) train the bounded
    ranker (:func:`fit_ranker`); its solution ``w_pro`` is rescaled to the L1 norm of ``start``
    (the ranking of a pool is invariant to positive rescaling, but an interpolation is not:
    ``w_pro``'s scale is set by the regulariser, and Moses interpolates MegaM's weights
    L1-normalised with L1-normalised previous weights), unless either norm is zero, then
    interpolated as ``settings.interpolation * w_pro + (1 - settings.interpolation) * start``
    and clipped to the bounds.  Moses applies its interpolation only from the fourth run on;
    here it is applied at every call (the caller decides).  With no pair kept anywhere (a flat
    pool) ``start`` is returned unchanged.  The score is the metric's higher-is-better corpus
    score of the pool's 1-best under the returned weights
    (:func:`circle.tune.mert.score_weights`).
    """
    start = np.asarray(start, dtype=np.float64)
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    d = pool.features.shape[1]
    if start.shape != (d,):
        raise ValueError(f"{start.shape} start weights for {d} features")
    if lower.shape != (d,) or upper.shape != (d,):
        raise ValueError(f"bounds of shapes {lower.shape} and {upper.shape} for {d} features")
    if pool.stats.shape[1] != metric.n_stats:
        raise ValueError(f"pool has {pool.stats.shape[1]} statistics per hypothesis; "
                         f"{metric.name} needs {metric.n_stats}")
    if np.any(lower > upper):
        raise ValueError("every lower bound must be at most its upper bound")
    if not np.all(np.isfinite(start)):
        raise ValueError("start weights must be finite")
    scores = sentence_scores(metric, pool.stats, settings.smooth_unigrams)
    better, worse = sample_pairs(pool, scores, settings, rng)
    if len(better) == 0:
        return start.copy(), score_weights(pool, metric, start)
    w_pro = fit_ranker(pool.features[better] - pool.features[worse], lower, upper, settings)
    norm_pro, norm_start = np.abs(w_pro).sum(), np.abs(start).sum()
    if norm_pro > 0 and norm_start > 0:
        w_pro = w_pro * (norm_start / norm_pro)
    psi = settings.interpolation
    weights = np.clip(psi * w_pro + (1.0 - psi) * start, lower, upper)
    return weights, score_weights(pool, metric, weights)

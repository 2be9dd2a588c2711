"""The MERT outer loop (Och 2003; thesis §3.2.3 and §4.2): decode, pool, optimise, repeat.

Each iteration decodes the tune set to k-best lists with the current weights, computes each new
hypothesis' metric statistics against *its own* references, adds the lists to an
:class:`~circle.tune.mert.NBestPool` accumulated over iterations, and re-optimises the weights
on the whole pool (:func:`circle.tune.mert.optimise`). It stops by
:func:`circle.tune.mert.stopping_reason`: no new hypotheses, weights stopped moving, or the
iteration limit.

References per hypothesis: by default every hypothesis of sentence ``i`` is scored against
``references_per_sentence[i]``. Targeted tuning (thesis §5.3, Fig. 5.9) attaches to each
hypothesis its own paraphrased reference: pass ``references_for(i, hypothesis) -> references``.
It is called once per new (sentence, hypothesis) pair, whose statistics are then frozen like its
features (a hypothesis seen again in a later iteration keeps them). If the hook has a callable
attribute ``prepare``, it is first called once per iteration with the list of new
``(i, hypothesis)`` pairs, so that an implementation can paraphrase them in one batch.

Fixed features: the weights of the features named in ``fixed`` (by default the targeting
feature ``target`` of thesis eq. 5.1) keep their initial values. When all fixed weights are zero
they do not affect the ranking, and MERT runs on the other columns with Moses' L1 normalisation.
When some fixed weight is nonzero it anchors the scale: the free weights are searched along
free directions only and are not renormalised (:func:`optimise_with_fixed`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from circle.decoder import DecoderSettings, Grammar, decode_corpus, load_grammar
from circle.decoder.model import Model
from circle.metrics import Metric, get_metric
from circle.schemas import TUNING_LOG
from circle.tables import write_table
from circle.tune.mert import (
    FlatPool,
    MertSettings,
    NBestPool,
    iteration_rng,
    line_search,
    one_best,
    optimise,
    score_weights,
    stopping_reason,
)

logger = logging.getLogger(__name__)

ReferenceHook = Callable[[int, str], Sequence[str]]
"""``references_for(sentence_index, hypothesis_text) -> references`` of that hypothesis."""

DEFAULT_FIXED: tuple[str, ...] = ("target",)


@dataclass(frozen=True)
class IterationLog:
    """One MERT iteration. Scores are the metric's usual values (fractions; TER lower-better).

    ``decode_score``: the 1-best of this iteration's decode (at the weights it started with);
    ``pool_score``: the pool's 1-best at the new ``weights`` (feature-name order).
    """

    iteration: int
    weights: tuple[float, ...]
    pool_score: float
    decode_score: float
    new_hypotheses: int
    pool_size: int
    decode_seconds: float
    references_seconds: float
    optimise_seconds: float
    stop_reason: str | None = None


@dataclass
class TuningResult:
    """Final weights, the per-iteration log and the accumulated n-best pool."""

    weights: dict[str, float]
    feature_names: tuple[str, ...]
    fixed: tuple[str, ...]
    metric: str
    log: list[IterationLog] = field(default_factory=list)
    pool: NBestPool | None = None

    @property
    def stop_reason(self) -> str | None:
        return self.log[-1].stop_reason if self.log else None

    def log_frame(self) -> pd.DataFrame:
        """The log as rows of :data:`~circle.schemas.TUNING_LOG`."""
        rows = [{**asdict(entry), "weights": list(entry.weights), "metric": self.metric}
                for entry in self.log]
        return pd.DataFrame(rows, columns=list(TUNING_LOG.arrow.names))


def select_references(references: Sequence[str], ref_order: Sequence[int],
                      count: int) -> list[str]:
    """The first ``count`` references in the seeded order (1H, 2H, ...; thesis §4.3.1)."""
    if not 1 <= count <= len(ref_order):
        raise ValueError(f"cannot take {count} of {len(ref_order)} references")
    return [references[int(k)] for k in ref_order[:count]]


def optimise_with_fixed(pool: FlatPool, metric: Metric, start: np.ndarray, free: np.ndarray,
                        settings: MertSettings, rng: np.random.Generator
                        ) -> tuple[np.ndarray, float]:
    """MERT (Och 2003) moving only the ``free`` coordinates; the others keep ``start``'s values.

    Coordinate ascent along each free axis and ``settings.random_directions`` random unit
    directions within the free subspace, from ``start`` and ``settings.restarts`` points whose
    free weights are uniform in [-1, 1]. No normalisation: the fixed weights set the scale.
    """
    start = np.asarray(start, dtype=np.float64)
    free_index = np.flatnonzero(free)
    d = len(start)
    axes = np.eye(d)[free_index]
    points = [start]
    for _ in range(settings.restarts):
        point = start.copy()
        point[free_index] = rng.uniform(-1.0, 1.0, size=len(free_index))
        points.append(point)
    best_w, best_score = start, -np.inf
    for point in points:
        w, score = point.copy(), score_weights(pool, metric, point)
        for _ in range(settings.max_sweeps):
            randoms = np.zeros((settings.random_directions, d))
            draws = rng.standard_normal((settings.random_directions, len(free_index)))
            randoms[:, free_index] = draws / np.linalg.norm(draws, axis=1, keepdims=True)
            before = score
            for u in np.vstack([axes, randoms]):
                gamma, new = line_search(pool, metric, w, u)
                if new > score:
                    w, score = w + gamma * u, new
            if score - before < settings.epsilon:
                break
        if score > best_score:  # first start point wins ties
            best_w, best_score = w, score
    best_w = best_w.copy()
    best_w[~free] = start[~free]  # exact, whatever rounding the moves left
    return best_w, score_weights(pool, metric, best_w)


def _metric_value(metric: Metric, stats: np.ndarray) -> float:
    return float(metric.value(np.asarray(stats, dtype=np.float64).sum(axis=0)))


def tune(sentences: Sequence[str], references_per_sentence: Sequence[Sequence[str]],
         grammar: Grammar | str | os.PathLike, lm_path: str | os.PathLike,
         initial_weights: Mapping[str, float], decoder_settings: DecoderSettings | None = None,
         mert_settings: MertSettings | None = None, workers: int = 1, *,
         fixed: Sequence[str] = DEFAULT_FIXED,
         references_for: ReferenceHook | None = None) -> TuningResult:
    """Tune decoder weights by MERT on a tune set (Och 2003; thesis §3.2.3, §4.2).

    ``initial_weights`` must name the decoder's features (grammar features then
    :data:`~circle.decoder.DECODER_FEATURES`; ``target`` may be left out, = 0). Features in
    ``fixed`` keep their initial weights. Deterministic given ``mert_settings.seed``.
    """
    decoder_settings = decoder_settings or DecoderSettings()
    mert_settings = mert_settings or MertSettings()
    if len(sentences) == 0:
        raise ValueError("the tune set is empty")
    if len(references_per_sentence) != len(sentences):
        raise ValueError(f"{len(references_per_sentence)} reference lists for "
                         f"{len(sentences)} sentences")
    if not isinstance(grammar, Grammar):
        grammar = load_grammar(grammar)
    model = Model(grammar.feature_names, initial_weights)  # checks the names
    names = model.names
    weights = np.array(model.weights, dtype=np.float64)
    fixed = tuple(dict.fromkeys(fixed))
    unknown = [name for name in fixed if name not in names]
    if unknown:
        raise ValueError(f"fixed features {unknown} are not among the features {list(names)}")
    free = np.array([name not in fixed for name in names])
    if not free.any():
        raise ValueError("every feature is fixed: nothing to tune")
    anchored = bool(np.any(weights[~free] != 0.0))
    metric = get_metric(mert_settings.metric)

    def default_references(index: int, _hypothesis: str) -> Sequence[str]:
        return references_per_sentence[index]

    hook = references_for or default_references
    prepare = getattr(references_for, "prepare", None)
    pool = NBestPool(len(names), metric.n_stats)
    stats_of: dict[tuple[int, str], np.ndarray] = {}
    result = TuningResult({}, names, fixed, metric.name, [], pool)
    iteration = 0
    while True:
        iteration += 1
        started = time.perf_counter()
        current = dict(zip(names, weights.tolist(), strict=True))
        nbest = decode_corpus(sentences, grammar, lm_path, current, decoder_settings, workers)
        decoded = time.perf_counter()
        new_keys: list[tuple[int, str]] = []
        new_set: set[tuple[int, str]] = set()
        new_features: list[list[float]] = []
        for index, hypotheses in enumerate(nbest):
            if not hypotheses:
                raise ValueError(f"sentence {index} has no translation: {sentences[index]!r}")
            for hypothesis in hypotheses:
                key = (index, hypothesis.text)
                if key in stats_of or key in new_set:
                    continue
                if tuple(hypothesis.features) != names:
                    raise ValueError(f"decoder features {list(hypothesis.features)} differ "
                                     f"from {list(names)}")
                new_keys.append(key)
                new_set.add(key)
                new_features.append(list(hypothesis.features.values()))
        if new_keys and callable(prepare):
            prepare(list(new_keys))
        if new_keys:
            references = [list(hook(index, text)) for index, text in new_keys]
            new_stats = np.asarray(metric.stats([text for _, text in new_keys], references))
            stats_of.update(zip(new_keys, new_stats, strict=True))
            n_new = pool.add([index for index, _ in new_keys], [text for _, text in new_keys],
                             np.array(new_features), new_stats)
        else:
            n_new = 0
        scored = time.perf_counter()
        decode_score = _metric_value(
            metric, np.array([stats_of[(i, hs[0].text)] for i, hs in enumerate(nbest)]))
        previous = weights
        flat = pool.flat()
        if n_new:
            rng = iteration_rng(mert_settings, iteration)
            if anchored:
                weights, _ = optimise_with_fixed(flat, metric, previous, free, mert_settings, rng)
            else:
                sub = FlatPool(flat.features[:, free], flat.stats, flat.starts, flat.segment,
                               flat.segment_ids)
                free_weights, _ = optimise(sub, metric, previous[free], mert_settings, rng)
                weights = previous.copy()
                weights[free] = free_weights
        optimised = time.perf_counter()
        pool_score = _metric_value(metric, flat.stats[one_best(flat, weights)])
        reason = stopping_reason(iteration, n_new, previous, weights, mert_settings)
        entry = IterationLog(iteration, tuple(weights.tolist()), pool_score, decode_score, n_new,
                             len(pool), decoded - started, scored - decoded, optimised - scored,
                             reason)
        result.log.append(entry)
        logger.info("MERT iteration %d: %s of the decode %.4f, of the pool %.4f; %d new "
                    "hypotheses, pool %d; decode %.1f s, references %.1f s, optimise %.1f s",
                    iteration, metric.name, decode_score, pool_score, n_new, len(pool),
                    entry.decode_seconds, entry.references_seconds, entry.optimise_seconds)
        if reason is not None:
            logger.info("MERT stops: %s", reason)
            break
    result.weights = dict(zip(names, weights.tolist(), strict=True))
    return result


def write_tuning_log(result: TuningResult, path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
    """Write the log as :data:`~circle.schemas.TUNING_LOG` (metadata: feature names, fixed)."""
    metadata = {"feature_names": json.dumps(list(result.feature_names)),
                "fixed_features": json.dumps(list(result.fixed)),
                "metric": result.metric,
                "final_weights": json.dumps(result.weights)}
    write_table(result.log_frame(), path, TUNING_LOG, provenance=provenance, metadata=metadata)

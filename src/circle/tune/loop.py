"""The tuning outer loop (Och 2003; thesis §3.2.3 and §4.2): decode, pool, optimise, repeat.

Each iteration decodes the tune set to k-best lists with the current weights, computes each new
hypothesis' metric statistics against *its own* references, adds the lists to an
:class:`~circle.tune.mert.NBestPool` accumulated over iterations, and re-optimises the weights
on the whole pool with MERT (:func:`circle.tune.mert.optimise`) or PRO
(:func:`circle.tune.pro.pro_optimise`), as ``TuningSettings.optimizer`` says.

What the loop does as careful toolkits do (Moses ``mert-moses.pl``, Z-MERT):

* **Best decoded weights are returned** (Moses ``--return-best-dev``): every iteration's weights
  are decoded and scored on the tune set, and the run returns the weights whose decode scored
  best. After the last optimisation its weights are decoded once more before they may be
  returned, so a returned weight vector is always one whose tune score was measured; the
  untuned start is iteration 1, so a run never returns weights worse than where it started.
* **Fixed features are out of the search**: features named in ``fixed`` (``oov``; ``target``
  when untargeted) keep their weights and enter the pool only as a per-row score offset. Where
  that offset is constant within every segment (a zero weight, or a pass-through count that
  every hypothesis of a sentence shares) it cannot change a 1-best, so the tuned weights are
  L1-normalised as Moses does; otherwise they keep the scale the fixed weights set.
* **Bounds and restart ranges** per feature (``TuningSettings.bounds``, fnmatch patterns):
  log-probabilities and the LM are non-negative by default, so MERT cannot reward improbable
  rules or word salad on a pool where that wins by a hair.
* **A first pool that is not flat**: iteration 1 also decodes ``first_pool`` perturbations of
  the start weights, so the first optimisation sees hypotheses from more than one point.
* **Seeds**: one generator per iteration from ``TuningSettings.seed``; the pipeline derives a
  different seed per (condition, replicate).
* **Replicates that differ by construction**: with ``replicate_pool`` > 0, iteration 1 also
  decodes that many perturbations of the start drawn from the seed, and its optimisation
  continues from the first of them instead of the start (Z-MERT's random initial points,
  Zaidan 2009), so that runs with different seeds take different paths even when no MERT
  restart beats the continuing point; the start itself is still decoded and scored first.
* **No decode twice**: a run given ``recorded`` (:class:`~circle.decoder.sets.RecordedDecode`, the
  decode stage's n-best lists of the tune set) takes iteration 1's lists from it when it was
  decoded with the start weights, exactly: every run that starts from the same weights would
  otherwise decode the same lists again (the decoder is deterministic, so the run is the same).
* **Forest MERT** (``line_search`` forest; Kumar et al. 2009, :mod:`circle.tune.forest`): each
  iteration keeps the hypergraph of every sentence's decode with its weights (in memory, one
  iteration's at a time) and the optimisation's line searches take, per sentence, the union of
  its forest's envelope and its pooled rows. That decode needs the search itself, so recorded
  lists do not stand in for it; the n-best reranking feature, which no forest scores, a
  fanned-out run, whose jobs keep no forests, and a hook with ``prepare`` (1H+kT), which
  cannot paraphrase inside the optimisation, refuse it.

References per hypothesis: by default every hypothesis of sentence ``i`` is scored against
``references_per_sentence[i]``. Targeted tuning (thesis §5.3, Fig. 5.9) attaches to each
hypothesis its own paraphrased reference: pass ``references_for(i, hypothesis) -> references``.
It is called once per new (sentence, hypothesis) pair, whose statistics are then frozen like its
features (a hypothesis seen again in a later iteration keeps them). If the hook has a callable
attribute ``prepare``, it is first called once per iteration with the list of new
``(i, hypothesis)`` pairs, so that an implementation can paraphrase them in one batch; if it has
a callable attribute ``restore``, a resumed run calls it with the pairs of each iteration it does
not repeat, in order (the targeted hook keeps what it saw in a run's first iteration).

Checkpoints: with ``checkpoint`` (:class:`~circle.tune.checkpoint.Checkpoint`) every iteration
is saved, the last one included, and a run whose checkpoint holds iterations 1..n of the same
inputs and settings continues at iteration n + 1 with the saved pool (the hook is not called
again for the pairs already in it) and gives the weights and log of an uninterrupted run.

An iteration is three steps that the jobs of a fanned-out run (:mod:`circle.tune.fanout`) also
take, one job each: decode a shard of the sentences and score its new pairs
(:meth:`PoolBuilder.score`), add the shards to the pool (:meth:`PoolBuilder.merge`), optimise or
stop (:meth:`TuningProblem.step`). In this loop the one shard is every sentence.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import logging
import os
import time
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from circle.core.schemas import TUNING_LOG
from circle.core.tables import write_table
from circle.decoder import (
    DecoderSettings,
    Grammar,
    Hypothesis,
    LanguageModel,
    decode_corpus,
    load_grammar,
    write_weights,
)
from circle.decoder.corpus import decode_corpus_hypergraphs
from circle.decoder.hypergraph import Hypergraph
from circle.decoder.model import RERANK_FEATURE, Model
from circle.decoder.sets import RecordedDecode
from circle.tune.checkpoint import Checkpoint, SavedIteration
from circle.tune.forest import ForestPool
from circle.tune.mert import Box, FlatPool, MertSettings, NBestPool, normalise, optimise
from circle.tune.metrics import Metric, get_metric
from circle.tune.pro import ProSettings, pro_optimise

logger = logging.getLogger(__name__)

ReferenceHook = Callable[[int, str], Sequence[str]]
"""``references_for(sentence_index, hypothesis_text) -> references`` of that hypothesis."""

DEFAULT_FIXED: tuple[str, ...] = ("target",)
OPTIMIZERS: tuple[str, ...] = ("mert", "pro")
LINE_SEARCHES: tuple[str, ...] = ("forest",)
"""Values of ``TuningSettings.line_search`` besides None (MERT over the n-best pool)."""

DEFAULT_BOUNDS: tuple[tuple[str, float | None, float | None], ...] = (
    ("log_*", 0.0, None), ("lm", 0.0, None))
"""(feature-name pattern, lower, upper); None = unbounded. A log-probability feature or the LM
with a negative weight rewards improbable rules and word salad: such weights win on a pool by
a hair and collapse when decoded."""

FALLBACK_BOUNDS: tuple[tuple[str, float | None, float | None], ...] = (
    (RERANK_FEATURE, 0.0, None),)
"""Bounds of features that no pattern of the settings' bounds matches: the n-best reranking
LM's weight is non-negative as the decoder LM's is (the config's ``tuning.bounds`` predate that
feature, and adding it there would change the settings, and so the checkpoints, of every run)."""


@dataclass(frozen=True)
class TuningSettings:
    """Options of a tuning run; defaults follow Moses ``mert-moses.pl`` (25 iterations,
    stop when no weight moves by 1e-5) and its MERT (20 restarts)."""

    metric: str = "bleu"
    optimizer: str = "mert"
    max_iterations: int = 25  # optimisations; the weights of the last one are decoded too
    patience: int | None = None  # stop after this many decodes without a better tune score
    epsilon: float = 1e-5  # stop when no (normalised) tuned weight moves by this much
    seed: int = 0
    bounds: tuple[tuple[str, float | None, float | None], ...] = DEFAULT_BOUNDS
    first_pool: int = 0  # perturbed weight vectors also decoded in iteration 1
    first_pool_spread: float = 1.0  # their noise, in units of the mean |start weight|
    replicate_pool: int = 0  # seeded start perturbations decoded in iteration 1 (module doc)
    line_search: str | None = None  # "forest": MERT over the decode's forests too (module doc)
    mert: MertSettings = field(default_factory=MertSettings)
    pro: ProSettings = field(default_factory=ProSettings)

    def __post_init__(self):
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be at least 1 decode, not {self.patience}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; choose one of "
                             f"{list(OPTIMIZERS)}")
        if self.line_search is not None and self.line_search not in LINE_SEARCHES:
            raise ValueError(f"unknown line search {self.line_search!r}; choose one of "
                             f"{list(LINE_SEARCHES)} or None (the n-best pool's)")
        if self.line_search is not None and self.optimizer != "mert":
            raise ValueError(f"line_search {self.line_search} is MERT's; optimizer "
                             f"{self.optimizer} has no line search")
        get_metric(self.metric)

    @classmethod
    def from_config(cls, tuning: Mapping, seed: int) -> TuningSettings:
        """Settings from the config's ``tuning`` section (keys not named here are ignored)."""
        def pick(settings_type, section):
            names = {f.name for f in fields(settings_type)}
            return settings_type(**{k: v for k, v in (section or {}).items() if k in names})

        bounds = tuple((pattern, low, high) for pattern, (low, high)
                       in tuning.get("bounds", {p: [lo, hi] for p, lo, hi in DEFAULT_BOUNDS}
                                     ).items())
        simple = {k: tuning[k] for k in ("metric", "optimizer", "max_iterations", "patience",
                                         "first_pool", "first_pool_spread", "replicate_pool",
                                         "line_search") if k in tuning}
        return cls(**simple, seed=seed, bounds=bounds, mert=pick(MertSettings, tuning),
                   pro=pick(ProSettings, tuning.get("pro")))

    def box(self, names: Sequence[str]) -> Box:
        """Bounds and restart ranges of the features ``names`` (first matching pattern of the
        bounds, then of :data:`FALLBACK_BOUNDS`, wins; restarts from [-1, 1] cut by the
        bounds)."""
        lower, upper = np.full(len(names), -np.inf), np.full(len(names), np.inf)
        for i, name in enumerate(names):
            for pattern, low, high in (*self.bounds, *FALLBACK_BOUNDS):
                if fnmatch.fnmatchcase(name, pattern):
                    lower[i] = -np.inf if low is None else low
                    upper[i] = np.inf if high is None else high
                    break
        return Box(lower, upper, np.maximum(lower, -1.0), np.minimum(upper, 1.0))

    def iteration_rng(self, iteration: int) -> np.random.Generator:
        """The generator for outer iteration ``iteration``, from ``seed`` alone."""
        return np.random.default_rng([self.seed, iteration])


@dataclass(frozen=True)
class IterationLog:
    """One tuning iteration. Scores are the metric's usual values (fractions; TER lower-better).

    ``weights`` were decoded in this iteration; ``decode_score`` is that decode's 1-best;
    ``pool_score`` the pool's 1-best at the weights the optimiser chose next (None when the
    iteration did not optimise).
    """

    iteration: int
    weights: tuple[float, ...]
    decode_score: float
    pool_score: float | None
    new_hypotheses: int
    pool_size: int
    returned: bool = False
    stop_reason: str | None = None
    decoded_sentences: int = 0  # sentences the decoder decoded (recorded lists not counted)


@dataclass
class TuningResult:
    """Returned weights, the per-iteration log and the accumulated n-best pool."""

    weights: dict[str, float]
    feature_names: tuple[str, ...]
    fixed: tuple[str, ...]
    metric: str
    log: list[IterationLog] = field(default_factory=list)
    pool: NBestPool | None = None

    @property
    def stop_reason(self) -> str | None:
        return self.log[-1].stop_reason if self.log else None

    @property
    def returned(self) -> IterationLog:
        """The iteration whose weights were returned."""
        return next(entry for entry in self.log if entry.returned)

    def log_frame(self) -> pd.DataFrame:
        """The log as rows of :data:`~circle.core.schemas.TUNING_LOG`."""
        rows = [{**asdict(entry), "weights": list(entry.weights), "metric": self.metric}
                for entry in self.log]
        return pd.DataFrame(rows, columns=list(TUNING_LOG.arrow.names))


def _metric_value(metric: Metric, stats: np.ndarray) -> float:
    return float(metric.value(np.asarray(stats, dtype=np.float64).sum(axis=0)))


def perturbed_weights(start: np.ndarray, count: int, spread: float, box: Box,
                      rng: np.random.Generator) -> np.ndarray:
    """``count`` perturbations of the tuned weights ``start``: Gaussian noise of standard
    deviation ``spread`` times their mean absolute value, kept in ``box``."""
    unit = float(np.abs(start).mean()) or 1.0
    return box.clip(start + spread * unit * rng.standard_normal((count, len(start))))


def constant_within_segments(pool: FlatPool, values: np.ndarray) -> bool:
    """Whether ``values`` (one per pool row) is the same for every row of each segment."""
    return bool(np.all(np.maximum.reduceat(values, pool.starts)
                       == np.minimum.reduceat(values, pool.starts)))


class TuningProblem:
    """What stays fixed over one tuning run: the features in decoder order, the start weights,
    which features are tuned and their box, the metric and the settings. :func:`tune` and the
    jobs of a fanned-out run (:mod:`circle.tune.fanout`) both build one, so they run the same
    iterations. With ``rerank`` the features end with the n-best reranking feature
    (:mod:`circle.decoder.rerank`), tuned with the others. The constructor refuses bad names, an
    all-fixed model and start weights outside the bounds."""

    def __init__(self, feature_names: Sequence[str], initial_weights: Mapping[str, float],
                 settings: TuningSettings, fixed: Sequence[str] = DEFAULT_FIXED,
                 rerank: bool = False):
        model = Model(feature_names, initial_weights, rerank)  # checks the names
        self.names: tuple[str, ...] = tuple(model.names)
        self.start = np.array(model.weights, dtype=np.float64)
        self.settings = settings
        self.fixed = tuple(dict.fromkeys(fixed))
        unknown = [name for name in self.fixed if name not in self.names]
        if unknown:
            raise ValueError(f"fixed features {unknown} are not among the features "
                             f"{list(self.names)}")
        self.free = np.array([name not in self.fixed for name in self.names])
        if not self.free.any():
            raise ValueError("every feature is fixed: nothing to tune")
        free_names = [name for name, tuned in zip(self.names, self.free, strict=True) if tuned]
        self.box = settings.box(free_names)
        outside = [f"{name}={value}" for name, value, low, high
                   in zip(free_names, self.start[self.free], self.box.lower, self.box.upper,
                          strict=True)
                   if not low <= value <= high]
        if outside:
            raise ValueError(f"initial weights {outside} lie outside the tuning bounds "
                             f"{[list(b) for b in settings.bounds]}")
        self.metric = get_metric(settings.metric)

    def weights_of(self, vector: np.ndarray) -> dict[str, float]:
        """A weight vector as the decoder's mapping."""
        return dict(zip(self.names, vector.tolist(), strict=True))

    def decoded_vectors(self, iteration: int, weights: np.ndarray) -> list[np.ndarray]:
        """The weight vectors iteration ``iteration`` decodes: ``weights``, and in iteration 1
        also ``settings.first_pool`` perturbations of the start weights, then the
        :meth:`replicate_starts`."""
        vectors = [weights]
        if iteration == 1:
            settings = self.settings
            vectors += self._with_free(weights, perturbed_weights(
                self.start[self.free], settings.first_pool, settings.first_pool_spread, self.box,
                settings.iteration_rng(0)))
            vectors += self.replicate_starts(weights)
        return vectors

    def replicate_starts(self, weights: np.ndarray) -> list[np.ndarray]:
        """``settings.replicate_pool`` perturbations of the start weights (the free ones; the
        fixed ones as in ``weights``), from a generator of the seed apart from the iterations'
        and the first pool's: iteration 1 decodes them and continues its optimisation from the
        first (module doc)."""
        settings = self.settings
        return self._with_free(weights, perturbed_weights(
            self.start[self.free], settings.replicate_pool, settings.first_pool_spread, self.box,
            np.random.default_rng([settings.seed, 0, 1])))

    def _with_free(self, weights: np.ndarray, free_vectors: np.ndarray) -> list[np.ndarray]:
        vectors = []
        for vector in free_vectors:
            full = weights.copy()
            full[self.free] = vector
            vectors.append(full)
        return vectors

    def run_arguments(self, sentences: Sequence[str],
                      references: Sequence[Sequence[str]],
                      decoder_settings: DecoderSettings) -> dict[str, Any]:
        """What a run's saved iterations depend on besides its files
        (:meth:`~circle.tune.checkpoint.Checkpoint.fingerprint`)."""
        settings = asdict(self.settings)
        if settings["line_search"] is None:  # the fingerprints of runs from before the option
            del settings["line_search"]
        return {"sentences": list(sentences), "references": [list(refs) for refs in references],
                "weights": self.weights_of(self.start), "fixed": self.fixed,
                "settings": settings, "decoder": asdict(decoder_settings)}

    def step(self, pool: PoolBuilder, earlier: Sequence[IterationLog], weights: np.ndarray,
             new_rows: int, decode_score: float, workers: int = 1,
             forests: Sequence[Hypergraph] | None = None) -> tuple[IterationLog, np.ndarray]:
        """End the iteration after the ``earlier`` ones, which decoded ``weights`` and added
        ``new_rows`` to the pool: optimise on the pool (seeded by the iteration; MERT's start
        points side by side in ``workers`` processes), and with ``settings.line_search``
        forest on the decode's ``forests`` (one per sentence) too, or stop. Returns its log
        entry and the weights the next iteration decodes (``weights`` when it stops)."""
        settings = self.settings
        if (settings.line_search == "forest") != (forests is not None):
            raise ValueError("line_search forest optimises over the forests of the iteration's "
                             "decode, which only the tuning loop keeps (a fanned-out run has "
                             "none)" if forests is None else
                             "forests given to a run that searches its n-best pool only")
        iteration = len(earlier) + 1
        reason, pool_score, new = None, None, weights
        if new_rows == 0:
            reason = "no new hypotheses in the n-best lists"
        elif iteration > settings.max_iterations:
            reason = f"reached {settings.max_iterations} optimisations (the last one decoded)"
        elif (waited := self.decodes_without_gain(earlier, decode_score)) is not None:
            reason = (f"the tune score of iteration {iteration - waited} was not beaten in "
                      f"{waited} decodes (patience {settings.patience})")
        else:
            starts = self.replicate_starts(weights) if iteration == 1 else []
            space = None if forests is None else functools.partial(
                ForestPool, forests=forests, weights=weights, free=self.free,
                statistics=pool.statistics, known=pool.known)
            new, pool_score = _optimise(pool.pool.flat(), self.metric,
                                        starts[0] if starts else weights, self.free,
                                        self.box, settings, settings.iteration_rng(iteration),
                                        workers, space)
            if not _moved(weights[self.free], new[self.free], settings.epsilon):
                reason = f"weights moved less than {settings.epsilon}"
        entry = IterationLog(iteration, tuple(weights.tolist()), decode_score, pool_score,
                             new_rows, len(pool.pool), False, reason)
        return entry, new

    def decodes_without_gain(self, earlier: Sequence[IterationLog],
                             decode_score: float) -> int | None:
        """With ``settings.patience`` p: p when the best tune score so far (the earliest of
        equals, the one a run returns) was decoded p iterations before the latest decode
        (``decode_score``) and is not the start's, else None. Later decodes then only cost time
        unless one beats it: the run returns its best decoded weights (Moses
        ``--return-best-dev``) and would end with them. The start's score does not count as a
        best: the first optimisation's weights often decode far worse than the pool promised,
        and the next ones recover (Z-MERT likewise starts its early-stopping count only after
        ``minIt`` iterations)."""
        patience = self.settings.patience
        if patience is None:
            return None
        scores = [entry.decode_score for entry in earlier] + [decode_score]
        best = self.best_decode(scores)
        waited = len(scores) - 1 - best
        return waited if best > 0 and waited >= patience else None

    def best_decode(self, scores: Sequence[float]) -> int:
        """The index of the best of the decodes' tune ``scores``, the earliest of equals: the
        iteration a run returns (Moses ``--return-best-dev``)."""
        best = 0
        for index, score in enumerate(scores):
            if self.metric.better(score, scores[best]):
                best = index
        return best

    def result(self, log: Sequence[IterationLog], pool: NBestPool | None) -> TuningResult:
        """The finished run: the weights of its best decoded iteration (the earliest of equals)
        marked as returned."""
        best = log[self.best_decode([entry.decode_score for entry in log])]
        logger.info("tuning stops: %s; returning the weights of iteration %d (%s %.4f)",
                    log[-1].stop_reason, best.iteration, self.metric.name, best.decode_score)
        entries = [replace(entry, returned=entry is best) for entry in log]
        return TuningResult(self.weights_of(np.array(best.weights)), self.names, self.fixed,
                            self.metric.name, entries, pool)


@dataclass
class IterationShard:
    """What decoding a shard of the tune set adds to one iteration: the new (sentence,
    hypothesis) pool rows, each with the decode it came from (0 = the iteration's weights,
    then the first pool's perturbations), its features and frozen metric statistics; and the
    statistics of each of the shard's sentences' 1-best under the iteration's weights."""

    decodes: list[int]
    sentences: list[int]
    hypotheses: list[str]
    features: np.ndarray
    stats: np.ndarray
    one_best_sentences: list[int]
    one_best_stats: np.ndarray
    decoded_sentences: int = 0
    """Sentences the decoder decoded for the shard (recorded lists stand in uncounted)."""


class PoolBuilder:
    """The n-best pool of a run, each new (sentence, hypothesis) scored once against the
    references ``hook`` gives it (after the hook's ``prepare``, if it has one, saw the
    iteration's new pairs; see the module doc)."""

    def __init__(self, problem: TuningProblem, hook: ReferenceHook):
        self.problem, self.hook = problem, hook
        self.pool = NBestPool(len(problem.names), problem.metric.n_stats)
        self.stats_of: dict[tuple[int, str], np.ndarray] = {}
        self.outside: dict[tuple[int, str], np.ndarray] = {}
        """Statistics of forest envelopes' outputs (forest MERT) that the pool may lack."""

    @property
    def known(self) -> ChainMap[tuple[int, str], np.ndarray]:
        """Every (sentence, hypothesis) scored so far, pooled or not; new ones join
        :attr:`outside`."""
        return ChainMap(self.outside, self.stats_of)

    def statistics(self, keys: Sequence[tuple[int, str]]) -> np.ndarray:
        """The metric statistics of each (sentence, hypothesis) of ``keys`` against its
        references (after the hook's ``prepare``, if it has one, saw them)."""
        if callable(prepare := getattr(self.hook, "prepare", None)):
            prepare(list(keys))
        references = [list(self.hook(index, text)) for index, text in keys]
        return np.asarray(self.problem.metric.stats([text for _, text in keys], references),
                          dtype=np.float64)

    def score(self, indices: Sequence[int], sources: Sequence[str],
              nbests: Sequence[list[list[Hypothesis]]]) -> IterationShard:
        """The pairs of decodes of sentences ``indices`` (each decode's lists in that order,
        ``sources`` their source sentences) that the pool lacks, scored; the pool is not
        changed (:meth:`merge` adds shards)."""
        names = self.problem.names
        decodes, keys, features = [], [], []
        seen = set()
        for decode, nbest in enumerate(nbests):
            for index, source, hypotheses in zip(indices, sources, nbest, strict=True):
                if not hypotheses:
                    raise ValueError(f"sentence {index} has no translation: {source!r}")
                for hypothesis in hypotheses:
                    key = (index, hypothesis.text)
                    if key in seen or key in self.stats_of:
                        continue
                    if tuple(hypothesis.features) != names:
                        raise ValueError(f"decoder features {list(hypothesis.features)} differ "
                                         f"from {list(names)}")
                    seen.add(key)
                    decodes.append(decode)
                    keys.append(key)
                    features.append(list(hypothesis.features.values()))
        n_stats = self.problem.metric.n_stats
        stats = np.zeros((0, n_stats))
        if keys:
            stats = self.statistics(keys)
        new_stats = dict(zip(keys, stats, strict=True))
        firsts = [(index, hypotheses[0].text)
                  for index, hypotheses in zip(indices, nbests[0], strict=True)]
        return IterationShard(
            decodes, [index for index, _ in keys], [text for _, text in keys],
            np.array(features, dtype=np.float64).reshape(len(keys), len(names)), stats,
            [index for index, _ in firsts],
            np.array([new_stats[key] if key in new_stats else self.stats_of[key]
                      for key in firsts], dtype=np.float64).reshape(len(firsts), n_stats))

    def merge(self, shards: Sequence[IterationShard]) -> tuple[int, float]:
        """Add the shards of one iteration in the order a single shard of every sentence has
        (by decode, then sentence, then rank); returns the new rows and the metric of the
        iteration's 1-best output."""
        decodes = np.concatenate([np.asarray(s.decodes, dtype=np.int64) for s in shards])
        sentences = np.concatenate([np.asarray(s.sentences, dtype=np.int64) for s in shards])
        order = np.lexsort((sentences, decodes))  # stable: ranks keep their order
        hypotheses = [h for shard in shards for h in shard.hypotheses]
        new = self._extend(sentences[order].tolist(), [hypotheses[i] for i in order],
                           np.vstack([s.features for s in shards])[order],
                           np.vstack([s.stats for s in shards])[order])
        firsts = np.concatenate([np.asarray(s.one_best_sentences, dtype=np.int64)
                                 for s in shards])
        stats = np.vstack([s.one_best_stats for s in shards])[np.argsort(firsts, kind="stable")]
        return new, _metric_value(self.problem.metric, stats)

    def restore(self, saved: SavedIteration) -> None:
        """Add the pool rows of a saved iteration, statistics as frozen, and show its pairs to
        the hook's ``restore`` if it has one."""
        if callable(restore := getattr(self.hook, "restore", None)):
            restore(list(zip(saved.sentences, saved.hypotheses, strict=True)))
        if saved.sentences:
            self._extend(saved.sentences, saved.hypotheses, saved.features, saved.stats)

    def _extend(self, indices: list[int], texts: list[str], features: np.ndarray,
                stats: np.ndarray) -> int:
        self.stats_of.update(zip(zip(indices, texts, strict=True), stats, strict=True))
        return self.pool.add(indices, texts, features, stats)

    def saved(self, entry: IterationLog, next_weights: np.ndarray) -> SavedIteration:
        """The iteration ``entry`` as its checkpoint file holds it: its log row, the weights
        the next iteration decodes, and the pool rows it added."""
        return SavedIteration(asdict(entry), next_weights,
                              *self.pool.rows(len(self.pool) - entry.new_hypotheses))


def _optimise(flat: FlatPool, metric: Metric, weights: np.ndarray, free: np.ndarray, box: Box,
              settings: TuningSettings, rng: np.random.Generator, workers: int = 1,
              space: Callable[[FlatPool], ForestPool] | None = None
              ) -> tuple[np.ndarray, float]:
    """New weights from the pool: the free ones optimised, the fixed ones unchanged; with
    ``space`` MERT searches what it makes of the pool (forest MERT).

    Returns the weights and the metric value of the searched candidates' 1-best at them.
    """
    offset = flat.features[:, ~free] @ weights[~free]
    sub = FlatPool(flat.features[:, free], flat.stats, flat.starts, flat.segment,
                   flat.segment_ids, offset)
    searched = sub if space is None else space(flat)
    per_segment = constant_within_segments(sub, offset) and (
        space is None or searched.fixed_term_constant())
    if settings.optimizer == "pro":
        if not per_segment:  # PRO ranks pairs of one sentence: only such offsets cancel
            raise ValueError("PRO cannot tune with fixed features whose weighted values differ "
                             "between hypotheses of a sentence; use optimizer: mert")
        tuned, _ = pro_optimise(sub, metric, weights[free], box.lower, box.upper, settings.pro,
                                rng)
    else:
        tuned, _ = optimise(searched, metric, weights[free], settings.mert, rng, box, workers)
    if per_segment:
        tuned = normalise(tuned)  # cannot change any 1-best: the fixed terms are per-segment
    new = weights.copy()
    new[free] = tuned
    return new, _metric_value(metric, searched.one_best_stats(tuned))


def _moved(previous: np.ndarray, new: np.ndarray, epsilon: float) -> bool:
    return bool(np.max(np.abs(normalise(new) - normalise(previous))) >= epsilon)


def default_hook(references_per_sentence: Sequence[Sequence[str]]) -> ReferenceHook:
    """The hook scoring every hypothesis of sentence i against the references of sentence i."""
    def references_for(index: int, _hypothesis: str) -> Sequence[str]:
        return references_per_sentence[index]
    return references_for


def restored_entry(saved: SavedIteration) -> IterationLog:
    """The log entry of a saved iteration."""
    return IterationLog(**{**saved.log, "weights": tuple(saved.log["weights"])})


def tune(sentences: Sequence[str], references_per_sentence: Sequence[Sequence[str]],
         grammar: Grammar | str | os.PathLike, lm_path: str | os.PathLike,
         initial_weights: Mapping[str, float], decoder_settings: DecoderSettings | None = None,
         settings: TuningSettings | None = None, workers: int = 1, *,
         fixed: Sequence[str] = DEFAULT_FIXED,
         references_for: ReferenceHook | None = None,
         checkpoint: Checkpoint | None = None,
         recorded: RecordedDecode | None = None,
         rerank_lm: str | os.PathLike | None = None) -> TuningResult:
    """Tune decoder weights on a tune set (Och 2003; thesis §3.2.3, §4.2); see the module doc.

    ``initial_weights`` must name the decoder's features (grammar features then
    :data:`~circle.decoder.DECODER_FEATURES`; ``target`` may be left out, = 0) and lie within
    the settings' bounds. Features in ``fixed`` keep their initial weights. Deterministic
    given ``settings.seed``; ``checkpoint`` saves each iteration and resumes from one;
    ``recorded`` lists of the tune set stand in for decoding the weights they were decoded with.
    With ``rerank_lm`` every decode's lists are reranked with that LM and its feature is tuned
    too (:mod:`circle.decoder.rerank`; ``initial_weights`` may leave it out, = 0).
    """
    decoder_settings = decoder_settings or DecoderSettings()
    settings = settings or TuningSettings()
    forest_mode = settings.line_search == "forest"
    if len(sentences) == 0:
        raise ValueError("the tune set is empty")
    if forest_mode and rerank_lm is not None:
        raise ValueError("line_search forest cannot tune the n-best reranking feature: the "
                         "search's forests do not score it")
    if forest_mode and callable(getattr(references_for, "prepare", None)):
        raise ValueError("line_search forest scores its envelopes' outputs inside the "
                         "optimisation (in its worker processes), where a reference hook that "
                         "prepares batches (1H+kT's targeted paraphrases) cannot run")
    if len(references_per_sentence) != len(sentences):
        raise ValueError(f"{len(references_per_sentence)} reference lists for "
                         f"{len(sentences)} sentences")
    if not isinstance(grammar, Grammar):
        grammar = load_grammar(grammar)
    problem = TuningProblem(grammar.feature_names, initial_weights, settings, fixed,
                            rerank=rerank_lm is not None)
    reranking = None if rerank_lm is None else LanguageModel(rerank_lm)  # loaded once
    builder = PoolBuilder(problem, references_for or default_hook(references_per_sentence))
    log: list[IterationLog] = []
    weights = problem.start
    fingerprint = None
    if checkpoint is not None:
        fingerprint = checkpoint.fingerprint(
            problem.run_arguments(sentences, references_per_sentence, decoder_settings))
        for saved in checkpoint.load(fingerprint):
            builder.restore(saved)
            log.append(restored_entry(saved))
            weights = saved.next_weights
    if recorded is not None and len(recorded.lists) != len(sentences):
        raise ValueError(f"{recorded.path}: {len(recorded.lists)} n-best lists for "
                         f"{len(sentences)} tune sentences")

    sentence_decodes = 0  # sentences decoded in this iteration
    forests: list[Hypergraph] | None = None  # of the iteration's decode, with line_search forest

    def decode(vector: np.ndarray, keep_forests: bool = False) -> list[list[Hypothesis]]:
        nonlocal sentence_decodes, forests
        weights_map = problem.weights_of(vector)
        if keep_forests:
            sentence_decodes += len(sentences)
            lists, forests = decode_corpus_hypergraphs(sentences, grammar, lm_path, weights_map,
                                                       decoder_settings, workers)
            return lists
        if recorded is not None and (lists := recorded.lists_for(weights_map)) is not None:
            logger.info("the n-best lists of %s stand in for decoding its weights", recorded.path)
            return lists
        sentence_decodes += len(sentences)
        return decode_corpus(sentences, grammar, lm_path, weights_map, decoder_settings, workers,
                             rerank_lm=reranking)

    everyone = list(range(len(sentences)))
    while not log or log[-1].stop_reason is None:
        iteration = len(log) + 1
        started, sentence_decodes = time.perf_counter(), 0
        nbests = [decode(vector, forest_mode and number == 0) for number, vector
                  in enumerate(problem.decoded_vectors(iteration, weights))]
        decoded = time.perf_counter()
        n_new, decode_score = builder.merge([builder.score(everyone, sentences, nbests)])
        scored = time.perf_counter()
        entry, new = problem.step(builder, log, weights, n_new, decode_score, workers, forests)
        entry = replace(entry, decoded_sentences=sentence_decodes)
        log.append(entry)
        logger.info("iteration %d of at most %d: %s of the decode %.4f%s; %d new hypotheses, "
                    "pool %d; decode %.1f s, references %.1f s, optimise %.1f s", iteration,
                    settings.max_iterations + 1, problem.metric.name, decode_score,
                    "" if entry.pool_score is None else f", of the pool at the new weights "
                                                        f"{entry.pool_score:.4f}",
                    n_new, len(builder.pool), decoded - started, scored - decoded,
                    time.perf_counter() - scored)
        if checkpoint is not None:
            checkpoint.save(fingerprint, builder.saved(entry, new))
        weights = new
    return problem.result(log, builder.pool)


def write_tuning_log(result: TuningResult, path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
    """Write the log as :data:`~circle.core.schemas.TUNING_LOG` (metadata: feature names, fixed)."""
    metadata = {"feature_names": json.dumps(list(result.feature_names)),
                "fixed_features": json.dumps(list(result.fixed)),
                "metric": result.metric,
                "final_weights": json.dumps(result.weights)}
    write_table(result.log_frame(), path, TUNING_LOG, provenance=provenance, metadata=metadata)


TUNING_FIXED: tuple[str, ...] = ("target", "oov")
"""Weights MERT leaves at their initial values in circle's tuning runs: the targeting feature
(untargeted here) and the pass-through penalty. Passing a word through is the decoder's fallback,
not a choice to tune (Moses' ``UnknownWordPenalty`` is not tuneable either): left free, MERT
gave the paraphraser a positive ``oov`` weight, a reward for copying that would compete with the
self-paraphrase bias, the knob of the thesis for how much the paraphraser copies (§5.2.2)."""


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

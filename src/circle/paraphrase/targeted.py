"""Targeted references inside the tuning loop (thesis §5.3, Fig. 5.9).

In every tuning iteration each new hypothesis of a tune sentence gets its own references: the
sentence's original reference and the top k of a paraphrase n-best list of that reference
*targeted to the hypothesis* (eq. 5.1), reranked (:class:`Reranker`). :class:`TargetedReferences`
is the tuning loop's reference hook (``circle.tune.loop.tune(references_for=...)``): its
``prepare`` paraphrases, once per distinct (reference, hypothesis), every pair the iteration
added, in one batch over the workers of a :class:`TargetedParaphraser`, which holds the grammar,
both LMs and a decoder per worker for the whole run.

Two search modes (:data:`SEARCH_MODES`) make the lists:

* ``exact``: one targeted search per distinct target (the thesis's way);
* ``forest``: one search per reference and run builds its hypergraph, targeted to the union
  of the words of the hypotheses of the run's first n-best list of that sentence (its *forest
  words*; the first iteration decodes with the start weights) so that rule selection and
  pruning keep what they need, with a wider beam (``forest_beam`` × the pop and options
  limits). Each hypothesis of every iteration then re-weights the hyperedges with its own
  targeting values (the feature is rule-local) and reads the k-best again
  (:meth:`circle.decoder.Decoder.decode_forest`), without a new search. The forest stays, as
  arrays, in the worker that owns its reference for the whole run
  (:meth:`circle.decoder.corpus.DecoderPool.imap` with owners).

Either way a targeted list depends on its target only through the target's set of words, so
hypotheses that reorder the same words share one decode. A forest-mode list also depends on its
forest words, so it is cached under (reference, hypothesis, forest words): what a run computes
never depends on what other runs left in the cache, and runs from the same start weights (the
1H+kP′ of one replicate) share every list they have in common. :class:`ParaphraseCache` keeps
the reranked lists on disk, so the 1H+kP′ conditions (the top k of one list serve every k),
reruns and exact-mode runs share them, and a killed run resumes without paraphrasing again what
it had.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import kenlm
import numpy as np
import pandas as pd

from circle.core.schemas import TARGETED_CACHE
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import (
    Decoder,
    DecoderSettings,
    Grammar,
    Hypothesis,
    load_grammar,
    read_weights,
)
from circle.decoder.corpus import DecoderPool
from circle.decoder.lm import LN10, LanguageModel
from circle.decoder.rerank import split_rerank_weight
from circle.decoder.search import Forest, without_gc
from circle.paraphrase.config import ParaphraserConfig, bias_name, read_grid_choice
from circle.tune.metrics import WordIds, ter_from_stats

SEARCH_MODES: tuple[str, ...] = ("exact", "forest")
"""How targeted lists are decoded (see the module docstring)."""

Ranked = list[tuple[str, float]]
"""A reranked list: (paraphrase, reranking score), best first."""


class TargetedTask(NamedTuple):
    """One reference to paraphrase towards each of ``hypotheses``; in forest mode its forest is
    targeted to ``forest_words`` (sorted; empty in exact mode)."""

    reference: str
    hypotheses: Sequence[str]
    forest_words: tuple[str, ...]


class Candidates(NamedTuple):
    """A paraphrase n-best list as the reranker reads it, prepared once however many
    hypotheses it serves (:meth:`ParaphraseMemo.prepare`): texts, the paraphraser's scores, the
    reranking LM's fluencies, and the word ids of all texts (:meth:`WordIds.pack`)."""

    texts: list[str]
    model_scores: np.ndarray
    fluencies: np.ndarray
    ids: np.ndarray
    offsets: np.ndarray


class ParaphraseMemo:
    """What reranking the lists of one reference computes once per distinct paraphrase (its
    lists share most entries) or target: fluencies under the reranking ``model``, word ids."""

    def __init__(self, model: kenlm.Model):
        self.model = model
        self.words = WordIds()
        self.known: dict[str, tuple[float, np.ndarray]] = {}  # text: (fluency, word ids)
        self.targets: dict[str, np.ndarray] = {}

    def prepare(self, paraphrases: Sequence[Hypothesis]) -> Candidates:
        """The :class:`Candidates` of a list: each text's fluency, its LM log-probability per
        word (natural log, ``</s>`` counted as a word), and its word ids."""
        known = self.known
        for h in paraphrases:
            if h.text not in known:
                known[h.text] = (LN10 * self.model.score(h.text, bos=True, eos=True)
                                 / (len(h.text.split()) + 1), self.words.of(h.text))
        texts = [h.text for h in paraphrases]
        entries = [known[text] for text in texts]
        return Candidates(texts, np.array([h.score for h in paraphrases]),
                          np.array([fluency for fluency, _ in entries]),
                          *self.words.pack([ids for _, ids in entries]))

    def wer(self, candidates: Candidates, target: str) -> np.ndarray:
        """WER(text, target) of each candidate, the target as WER's reference."""
        if target not in self.targets:
            self.targets[target] = self.words.of(target)
        target_ids = self.targets[target]
        edits = self.words.distances(candidates.ids, candidates.offsets, target_ids)
        return ter_from_stats(np.column_stack([edits, np.full(len(edits), len(target_ids))]))


@dataclass(frozen=True)
class Reranker:
    """Reranks a targeted paraphrase n-best list (thesis §5.3): score = ``lm`` × the reranking
    LM's log-probability per word (natural log, ``</s>`` included) − ``distance`` ×
    WER(paraphrase, target) + ``paraphraser`` × the paraphraser's model score. WER is the
    thesis's distance (TER "would be more useful" but too slow for its 90 M pairs, footnote 7);
    the target is WER's reference. The per-word LM keeps length out of the fluency term; the
    weights are not tuned."""

    lm: float = 1.0
    distance: float = 1.0
    paraphraser: float = 0.0

    def scores(self, candidates: Candidates, target: str, memo: ParaphraseMemo) -> np.ndarray:
        """The reranking score of each candidate (higher is better); ``memo`` holds the
        reranking LM and what earlier lists of the same reference computed."""
        return (self.lm * candidates.fluencies - self.distance * memo.wer(candidates, target)
                + self.paraphraser * candidates.model_scores)

    def rank(self, candidates: Candidates, target: str, memo: ParaphraseMemo) -> Ranked:
        """(paraphrase, score), best first; ties keep the paraphraser's order."""
        scores = self.scores(candidates, target, memo)
        order = np.argsort(-scores, kind="stable")
        texts = candidates.texts
        return list(zip([texts[i] for i in order.tolist()], scores[order].tolist(), strict=True))


@functools.cache
def _reranking_model(path: str) -> kenlm.Model:
    """The reranking LM, loaded once per process (forked workers inherit the parent's)."""
    return LanguageModel(path).model


_kept_forests: weakref.WeakKeyDictionary[Decoder, dict[str, tuple[tuple[str, ...], Forest]]] = \
    weakref.WeakKeyDictionary()
"""Per decoder (one per worker), the forest of each reference it owns and its forest words."""


def kept_forest(decoder: Decoder, reference: str, forest_words: tuple[str, ...]) -> Forest:
    """The forest of ``reference`` targeted to ``forest_words``: built once, then kept (one per
    reference, the last asked for) for as long as ``decoder`` lives."""
    kept = _kept_forests.setdefault(decoder, {})
    if reference not in kept or kept[reference][0] != forest_words:
        kept[reference] = (forest_words, decoder.forest(reference, forest_words))
    return kept[reference][1]


@without_gc
def targeted_lists(decoder: Decoder, task: TargetedTask, mode: str,
                   reranker: Reranker | None, reranking_lm: str, depth: int) -> list[Ranked]:
    """For one reference and its hypotheses (``task``), each hypothesis's paraphrase n-best
    list of the reference targeted to it, searched in ``mode`` (:data:`SEARCH_MODES`), reranked
    (None: the paraphraser's order) and cut to ``depth`` entries. Runs in a worker, with the
    cyclic garbage collector paused: its passes over the forest cost ~20 % of the task."""
    reference, hypotheses, forest_words = task
    word_sets = [frozenset(hypothesis.split()) for hypothesis in hypotheses]
    if mode == "forest":
        forest = kept_forest(decoder, reference, forest_words)
        decoded = {words: decoder.decode_forest(forest, sorted(words), features=False)
                   for words in dict.fromkeys(word_sets)}
    elif mode == "exact":
        plan = decoder.prepare(reference)
        decoded = {words: decoder.decode(plan, sorted(words))
                   for words in dict.fromkeys(word_sets)}
    else:
        raise ValueError(f"targeted search mode must be one of {SEARCH_MODES}, got {mode!r}")
    if reranker is None:
        return [[(h.text, h.score) for h in decoded[words][:depth]] for words in word_sets]
    memo = ParaphraseMemo(_reranking_model(reranking_lm))
    candidates = {words: memo.prepare(paraphrases) for words, paraphrases in decoded.items()}
    return [reranker.rank(candidates[words], hypothesis, memo)[:depth]
            for words, hypothesis in zip(word_sets, hypotheses, strict=True)]


class TargetedParaphraser:
    """The targeted paraphraser of one tuning run, held warm: the grammar (of the
    configuration's bias) is loaded once, here, and a :class:`DecoderPool` whose forked workers
    share it and the decoding LM keeps their decoders, with the configuration's targeting
    weight, for every iteration.

    ``settings.k`` is the paraphrase n-best size; in forest mode the pop and options limits are
    ``forest_beam`` times the settings'. Lists are reranked by ``reranker`` (None: not
    reranked) with the LM at ``reranking_lm`` and cut to ``depth``.
    """

    def __init__(self, grammar: Grammar | str | os.PathLike, lm: str | os.PathLike,
                 weights: Mapping[str, float], config: ParaphraserConfig,
                 settings: DecoderSettings, mode: str, forest_beam: int,
                 reranker: Reranker | None, reranking_lm: str | os.PathLike, depth: int,
                 workers: int = 1):
        if mode not in SEARCH_MODES:
            raise ValueError(f"targeted search mode must be one of {SEARCH_MODES}, got {mode!r}")
        if forest_beam < 1:
            raise ValueError(f"the forest beam factor must be ≥ 1, got {forest_beam}")
        if mode == "forest":
            settings = replace(settings, pop_limit=settings.pop_limit * forest_beam,
                               options_limit=settings.options_limit * forest_beam)
        self.mode = mode
        self.reranking_lm = str(reranking_lm)
        _reranking_model(self.reranking_lm)  # checked before the grammar, inherited by workers
        self.work = functools.partial(targeted_lists, mode=mode, reranker=reranker,
                                      reranking_lm=self.reranking_lm, depth=depth)
        if not isinstance(grammar, Grammar):
            grammar = load_grammar(grammar)
        self.pool = DecoderPool(grammar, lm, dict(weights, target=config.targeting_weight),
                                settings, workers)

    def forest_words(self, hypotheses: Sequence[str]) -> tuple[str, ...]:
        """What a reference's forest is targeted to when ``hypotheses`` are paraphrased
        together: the union of their words in forest mode, nothing in exact mode."""
        if self.mode != "forest":
            return ()
        return tuple(sorted(frozenset().union(*(h.split() for h in hypotheses))))

    def lists(self, tasks: Sequence[TargetedTask]) -> Iterator[list[Ranked]]:
        """Per task, as it is done, the reranked list of each of its hypotheses. The tasks of
        one reference always go to the same worker, which keeps its forest; a reference first
        seen goes to the worker with the least work (hypotheses × reference words)."""
        return self.pool.imap(self.work, list(tasks), unit="references",
                              owners=[task.reference for task in tasks],
                              sizes=[len(task.hypotheses) * len(task.reference.split())
                                     for task in tasks])

    def close(self) -> None:
        self.pool.close()


def cache_key(config: ParaphraserConfig, paraphraser_weights: Mapping[str, float],
              settings: DecoderSettings, mode: str, forest_beam: int,
              reranker: Reranker | None) -> str:
    """What a cached list depends on besides (reference, hypothesis): the configuration, the
    paraphraser's weights, the search (settings, mode and, in forest mode, its beam factor) and
    the reranker (None: not reranked)."""
    described = {"config": asdict(config), "weights": dict(sorted(paraphraser_weights.items())),
                 "settings": asdict(settings), "mode": mode,
                 "forest_beam": forest_beam if mode == "forest" else None,
                 "forest_words": "the run's first n-best" if mode == "forest" else None,
                 "reranker": None if reranker is None else asdict(reranker)}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


CacheKey = tuple[str, str, str]
"""A cached list's (reference, hypothesis, forest words joined by spaces; empty in exact mode)."""


class ParaphraseCache:
    """Reranked targeted paraphrase lists keyed by :data:`CacheKey` for one paraphraser set-up
    (``key``, :func:`cache_key`), persisted as Parquet part files in ``directory``: each
    :meth:`flush` writes the new lists as one more part (atomically), and a new cache reads
    every part of its key, whoever wrote it. ``depth`` entries are kept per list."""

    def __init__(self, directory: str | os.PathLike, key: str, depth: int):
        self.directory, self.key, self.depth = Path(directory), key, depth
        self.lists: dict[CacheKey, list[str]] = {}
        self._new: list[dict] = []
        for part in sorted(self.directory.glob(f"{key}-*.parquet")):
            if read_metadata(part).get("cache_key") != key:
                continue
            table = read_table(part, TARGETED_CACHE)
            ranked: dict[CacheKey, list[tuple[int, str]]] = {}
            for reference, hypothesis, forest_words, rank, paraphrase in zip(
                    *(table[column].tolist() for column in (
                        "reference", "hypothesis", "forest_words", "rank", "paraphrase")),
                    strict=True):
                ranked.setdefault((reference, hypothesis, forest_words), []).append(
                    (rank, paraphrase))
            for pair, entries in ranked.items():  # a later part's list replaces an earlier one
                self.lists[pair] = [paraphrase for _, paraphrase in sorted(entries)]

    def __contains__(self, key: CacheKey) -> bool:
        return key in self.lists

    def get(self, key: CacheKey) -> list[str]:
        return self.lists[key]

    def add(self, key: CacheKey, ranked: Sequence[tuple[str, float]]) -> None:
        kept = list(ranked[:self.depth])
        self.lists[key] = [text for text, _ in kept]
        reference, hypothesis, forest_words = key
        self._new += [{"reference": reference, "hypothesis": hypothesis,
                       "forest_words": forest_words, "rank": rank, "paraphrase": text,
                       "score": score}
                      for rank, (text, score) in enumerate(kept)]

    def flush(self, writer: str, provenance: Mapping[str, str] | None = None) -> Path | None:
        """Write the lists added since the last flush as part ``<key>-<writer>-<n>.parquet``."""
        if not self._new:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        number = len(list(self.directory.glob(f"{self.key}-{writer}-*.parquet")))
        path = self.directory / f"{self.key}-{writer}-{number:04d}.parquet"
        write_table(pd.DataFrame(self._new), path, TARGETED_CACHE, provenance,
                    {"cache_key": self.key})
        self._new = []
        return path


class TargetedReferences:
    """The tuning loop's reference hook for condition 1H+kP′ (thesis §5.3, Fig. 5.9): each
    hypothesis of sentence i gets the original reference ``references[i]`` and the top ``count``
    reranked paraphrases of it targeted to the hypothesis. The lists come from ``cache`` or are
    made by ``prepare`` (called by the loop with each iteration's new pairs) with
    ``paraphraser`` (a :class:`TargetedParaphraser`, closed with the hook)."""

    def __init__(self, references: Sequence[str], paraphraser: TargetedParaphraser,
                 count: int, cache: ParaphraseCache, writer: str):
        if not 1 <= count <= cache.depth:
            raise ValueError(f"{count} targeted references per hypothesis, but the cache keeps "
                             f"{cache.depth}")
        self.references, self.paraphraser = list(references), paraphraser
        self.count, self.cache, self.writer = count, cache, writer
        self.forest_words: dict[str, tuple[str, ...]] = {}  # per reference, from its first batch
        self.paraphrased = 0

    def _batches(self, pairs: Sequence[tuple[int, str]]) -> dict[str, list[str]]:
        """The distinct hypotheses of each reference among (sentence index, hypothesis)
        ``pairs``; a reference seen for the first time gets its forest words from them."""
        batches: dict[str, list[str]] = {}
        for index, hypothesis in pairs:
            hypotheses = batches.setdefault(self.references[index], [])
            if hypothesis not in hypotheses:
                hypotheses.append(hypothesis)
        for reference, hypotheses in batches.items():
            if reference not in self.forest_words:
                self.forest_words[reference] = self.paraphraser.forest_words(hypotheses)
        return batches

    def restore(self, pairs: Sequence[tuple[int, str]]) -> None:
        """Take the pairs of an iteration a resumed run does not repeat (the tuning loop passes
        each saved iteration's, in order), so that every reference keeps the forest words of
        its first batch."""
        self._batches(pairs)

    def prepare(self, pairs: Sequence[tuple[int, str]]) -> None:
        """Paraphrase the reference of each (sentence index, hypothesis) pair towards its
        hypothesis, rerank, cache, and flush the new lists to disk. A reference's forest words
        are those of its first batch, whether its lists were cached or not, so the lists never
        depend on the cache's contents."""
        tasks = []
        for reference, hypotheses in self._batches(pairs).items():
            missing = [h for h in hypotheses if self._key(reference, h) not in self.cache]
            if missing:
                tasks.append(TargetedTask(reference, missing, self.forest_words[reference]))
        if not tasks:
            return
        for task, lists in zip(tasks, self.paraphraser.lists(tasks), strict=True):
            for hypothesis, ranked in zip(task.hypotheses, lists, strict=True):
                self.cache.add(self._key(task.reference, hypothesis), ranked)
            self.paraphrased += len(task.hypotheses)
        self.cache.flush(self.writer)

    def __call__(self, index: int, hypothesis: str) -> list[str]:
        """The references of a hypothesis of a batch ``prepare`` was given (one made alone if
        it was not in one)."""
        reference = self.references[index]
        if reference not in self.forest_words or \
                self._key(reference, hypothesis) not in self.cache:
            self.prepare([(index, hypothesis)])
        return [reference, *self.cache.get(self._key(reference, hypothesis))[:self.count]]

    def _key(self, reference: str, hypothesis: str) -> CacheKey:
        return reference, hypothesis, " ".join(self.forest_words[reference])

    def close(self) -> None:
        self.paraphraser.close()

    def __enter__(self) -> TargetedReferences:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@dataclass(frozen=True)
class TargetedSetup:
    """What the 1H+kT tuning runs share (thesis §5.3): the targeted paraphraser's configuration
    and grammar (of that bias), the decoding LM, the tuned paraphraser's weights, its search
    settings (``settings.k``: the paraphrase n-best size), search ``mode`` and forest beam
    factor, the reranker (None: the ablation without reranking) and its LM, the cache directory
    and the entries kept per list (``depth``: the largest k of the targeted conditions, so one
    list serves every k)."""

    config: ParaphraserConfig
    grammar_path: str | os.PathLike
    lm_path: str | os.PathLike
    paraphraser_weights: Mapping[str, float]
    settings: DecoderSettings
    mode: str
    forest_beam: int
    reranker: Reranker | None
    reranking_lm_path: str | os.PathLike
    cache_directory: str | os.PathLike
    depth: int

    def __post_init__(self) -> None:
        if not self.config.targeted:
            raise ValueError("targeted references need a negative targeting weight, got the "
                             f"configuration {self.config}")

    @classmethod
    def from_job(cls, job: Any, decoder: DecoderSettings,
                 settings: TargetedSettings | None = None) -> TargetedSetup:
        """The set-up of a Snakemake job (``snakemake`` in its script) at ``settings``, by
        default its params' ``targeted`` (:meth:`TargetedSettings.from_config`), whose inputs
        are the workflow's targeted paraphraser inputs: ``paraphrase_grammars``,
        ``paraphraser_lm``, ``paraphraser_weights``, ``paraphraser_reranking_lm`` and, unless
        a configuration is given, the grid's ``choice`` (:func:`targeted_setup`)."""
        if settings is None:
            settings = TargetedSettings.from_config(job.params.targeted)
        return targeted_setup(settings, job.input.get("choice"), job.input.paraphrase_grammars,
                              job.input.paraphraser_lm, job.input.paraphraser_weights,
                              job.input.paraphraser_reranking_lm, decoder)

    @property
    def key(self) -> str:
        """The cache key of this set-up's lists (:func:`cache_key`)."""
        return cache_key(self.config, self.paraphraser_weights, self.settings, self.mode,
                         self.forest_beam, self.reranker)

    def cache(self) -> ParaphraseCache:
        """Every list this set-up has cached so far, by any run."""
        return ParaphraseCache(self.cache_directory, self.key, self.depth)

    def references(self, references: Sequence[str], count: int, writer: str,
                   workers: int) -> TargetedReferences:
        """The reference hook of one run: ``count`` targeted paraphrases per hypothesis."""
        cache = self.cache()
        paraphraser = TargetedParaphraser(
            self.grammar_path, self.lm_path, self.paraphraser_weights, self.config,
            self.settings, self.mode, self.forest_beam, self.reranker, self.reranking_lm_path,
            self.depth, workers)
        return TargetedReferences(references, paraphraser, count, cache, writer)


@dataclass(frozen=True)
class TargetedSettings:
    """The targeted paraphraser's settings besides its inputs, as the workflow's params carry
    them (config ``targeted``, ``paraphrase.biases``, ``grid_search.point``): the biases of the
    paraphrase grammars in their order, the configuration that overrides the grid's choice
    (None: the grid's choice), the paraphrase n-best size, the search mode
    (:data:`SEARCH_MODES`) and forest beam factor, the reranker (None: not reranked), the
    entries kept per cached list (``depth``) and the cache directory."""

    biases: tuple[float, ...]
    point: ParaphraserConfig | None
    nbest: int
    search: str
    forest_beam: int
    rerank: Reranker | None
    depth: int
    cache: str | os.PathLike

    def __post_init__(self) -> None:
        if self.search not in SEARCH_MODES:
            raise ValueError(f"targeted search must be one of {SEARCH_MODES}, got "
                             f"{self.search!r}")

    @classmethod
    def from_config(cls, params: Mapping[str, Any]) -> TargetedSettings:
        """The settings of a job's ``targeted`` params
        (:meth:`circle.pipeline.plan.Plan.targeted_settings`): keys ``biases``, ``point`` (the
        configuration the plan decided, :meth:`ParaphraserConfig.to_point`, or None: the grid's
        choice), ``nbest``, ``search``, ``forest_beam``, ``rerank`` (the Reranker's weights, or
        None), ``depth`` and ``cache``."""
        point, rerank = params["point"], params["rerank"]
        return cls(tuple(float(b) for b in params["biases"]),
                   None if point is None else ParaphraserConfig.from_point(point),
                   int(params["nbest"]), params["search"], int(params["forest_beam"]),
                   None if rerank is None else Reranker(**rerank), int(params["depth"]),
                   params["cache"])


def targeted_setup(settings: TargetedSettings, choice_path: str | os.PathLike | None,
                   grammar_paths: Sequence[str | os.PathLike], lm_path: str | os.PathLike,
                   paraphraser_weights_path: str | os.PathLike,
                   reranking_lm_path: str | os.PathLike,
                   decoder: DecoderSettings) -> TargetedSetup:
    """The set-up of the pipeline's 1H+kT runs: the paraphrase grammars ``grammar_paths`` in
    the order of ``settings.biases``; the configuration is ``settings.point`` if given, else
    the grid's choice (``choice_path``).

    The paraphraser's weights are its search's: with lm.rerank_nbest the tuned paraphraser's
    weight of the n-best reranking feature (:mod:`circle.decoder.rerank`) is dropped
    (:func:`~circle.decoder.rerank.split_rerank_weight`). The targeted lists have their own
    reranker, :class:`Reranker`, whose features are the thesis's (§5.3): the same reranking
    LM's log-probability and WER to the target. Adding the tuned weight as well would count
    that LM twice with a weight tuned for untargeted paraphrases, and with ``paraphraser`` 0
    (the default) the Reranker's order does not read the paraphraser's scores at all; a
    forest-mode list (``decode_forest(features=False)``) has no features to rescore either."""
    config = settings.point or read_grid_choice(choice_path)
    grammars = {bias_name(bias): path
                for bias, path in zip(settings.biases, grammar_paths, strict=True)}
    if bias_name(config.bias) not in grammars:
        raise ValueError(f"the targeted paraphraser's bias {config.bias:g} has no grammar "
                         f"(paraphrase.biases {sorted(grammars, key=float)})")
    search_weights, _ = split_rerank_weight(read_weights(paraphraser_weights_path))
    return TargetedSetup(config, grammars[bias_name(config.bias)], lm_path, search_weights,
                         replace(decoder, k=settings.nbest), settings.search,
                         settings.forest_beam, settings.rerank, reranking_lm_path,
                         settings.cache, settings.depth)


def sample_triples(cache: ParaphraseCache, count: int, seed: int) -> pd.DataFrame:
    """``count`` (hypothesis, original reference, top targeted paraphrase) triples drawn with
    ``seed`` from the cached lists (sorted first, so the draw does not depend on which run wrote
    which part), for reading what targeting does (thesis Fig. 5.9)."""
    pairs = sorted(key for key, paraphrases in cache.lists.items() if paraphrases)
    if not pairs:
        raise ValueError(f"the targeted cache {cache.directory} holds no lists of set-up "
                         f"{cache.key}")
    chosen = np.random.default_rng(seed).choice(len(pairs), min(count, len(pairs)),
                                                replace=False)
    rows = [{"hypothesis": pairs[i][1], "reference": pairs[i][0],
             "paraphrase": cache.get(pairs[i])[0]} for i in sorted(chosen)]
    return pd.DataFrame(rows, columns=["hypothesis", "reference", "paraphrase"])

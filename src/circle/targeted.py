"""Targeted references inside the tuning loop (thesis §5.3, Fig. 5.9), exact mode.

In every tuning iteration each new hypothesis of a tune sentence gets its own references: the
sentence's original reference and the top k of a paraphrase n-best list of that reference
*targeted to the hypothesis* (eq. 5.1), reranked (:class:`Reranker`). :class:`TargetedReferences`
is the tuning loop's reference hook (``circle.tune.loop.tune(references_for=...)``): its
``prepare`` paraphrases, once per distinct (reference, hypothesis), every pair the iteration
added, in one batch over the paraphraser's workers ("exact" mode: one targeted decode per pair).
:class:`ParaphraseCache` keeps the reranked lists on disk, so iterations, the 1H+kP′ conditions
(the top k of one list serve every k), replicates and reruns share them, and a killed run resumes
without paraphrasing again what it had.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import kenlm
import numpy as np
import pandas as pd

from circle.decoder import DecoderSettings, Hypothesis, read_weights
from circle.decoder.lm import LN10, LanguageModel
from circle.grid_search import paraphraser_configuration
from circle.metrics import ter_from_stats, ter_stats
from circle.paraphraser import Paraphraser, ParaphraserConfig
from circle.schemas import TARGETED_CACHE
from circle.tables import read_metadata, read_table, write_table


@dataclass(frozen=True)
class Reranker:
    """Reranks a targeted paraphrase n-best list (thesis §5.3): score = ``lm`` × the reranking
    LM's log-probability per word (natural log, ``</s>`` included) − ``distance`` × TER(paraphrase,
    target) + ``paraphraser`` × the paraphraser's model score. The thesis used WER(target,
    paraphrase) because TER was too slow for its 90 M pairs (footnote 7); TER here is compiled
    (:func:`circle.metrics.ter_stats`). The per-word LM keeps length out of the fluency term;
    the weights are not tuned."""

    lm: float = 1.0
    distance: float = 1.0
    paraphraser: float = 0.0

    def scores(self, paraphrases: Sequence[Hypothesis], target: str,
               model: kenlm.Model) -> np.ndarray:
        """The reranking score of each paraphrase (higher is better)."""
        texts = [h.text for h in paraphrases]
        fluency = np.array([LN10 * model.score(text, bos=True, eos=True)
                            / (len(text.split()) + 1) for text in texts])
        distance = ter_from_stats(ter_stats(texts, [[target]] * len(texts)))
        model_scores = np.array([h.score for h in paraphrases])
        return self.lm * fluency - self.distance * distance + self.paraphraser * model_scores

    def rank(self, paraphrases: Sequence[Hypothesis], target: str,
             model: kenlm.Model) -> list[tuple[str, float]]:
        """(paraphrase, score), best first; ties keep the paraphraser's order."""
        scores = self.scores(paraphrases, target, model)
        order = np.argsort(-scores, kind="stable")
        return [(paraphrases[i].text, float(scores[i])) for i in order]


def cache_key(config: ParaphraserConfig, paraphraser_weights: Mapping[str, float], k: int,
              reranker: Reranker | None) -> str:
    """What a cached list depends on besides (reference, hypothesis): the configuration, the
    paraphraser's weights, the n-best size and the reranker (None: not reranked)."""
    described = {"config": asdict(config), "weights": dict(sorted(paraphraser_weights.items())),
                 "k": k, "reranker": None if reranker is None else asdict(reranker)}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


class ParaphraseCache:
    """Reranked targeted paraphrase lists keyed by (reference, hypothesis) for one paraphraser
    set-up (``key``, :func:`cache_key`), persisted as Parquet part files in ``directory``: each
    :meth:`flush` writes the new lists as one more part (atomically), and a new cache reads
    every part of its key, whoever wrote it. ``depth`` entries are kept per list."""

    def __init__(self, directory: str | os.PathLike, key: str, depth: int):
        self.directory, self.key, self.depth = Path(directory), key, depth
        self.lists: dict[tuple[str, str], list[str]] = {}
        self._new: list[dict] = []
        for part in sorted(self.directory.glob(f"{key}-*.parquet")):
            if read_metadata(part).get("cache_key") != key:
                continue
            table = read_table(part, TARGETED_CACHE)
            for (reference, hypothesis), group in table.groupby(["reference", "hypothesis"],
                                                                sort=False):
                self.lists[reference, hypothesis] = \
                    group.sort_values("rank")["paraphrase"].tolist()

    def __contains__(self, pair: tuple[str, str]) -> bool:
        return pair in self.lists

    def get(self, reference: str, hypothesis: str) -> list[str]:
        return self.lists[reference, hypothesis]

    def add(self, reference: str, hypothesis: str, ranked: Sequence[tuple[str, float]]) -> None:
        kept = list(ranked[:self.depth])
        self.lists[reference, hypothesis] = [text for text, _ in kept]
        self._new += [{"reference": reference, "hypothesis": hypothesis, "rank": rank,
                       "paraphrase": text, "score": score}
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
    made by ``prepare`` (called by the loop with each iteration's new pairs)."""

    def __init__(self, references: Sequence[str], paraphraser: Paraphraser,
                 config: ParaphraserConfig, count: int, cache: ParaphraseCache,
                 reranker: Reranker | None, reranking_lm: kenlm.Model | str | os.PathLike,
                 writer: str):
        if not config.targeted:
            raise ValueError("targeted references need a negative targeting weight")
        if not 1 <= count <= cache.depth:
            raise ValueError(f"{count} targeted references per hypothesis, but the cache keeps "
                             f"{cache.depth}")
        self.references, self.paraphraser, self.config = list(references), paraphraser, config
        self.count, self.cache, self.reranker, self.writer = count, cache, reranker, writer
        self.model = LanguageModel(reranking_lm).model
        self.paraphrased = 0

    def prepare(self, pairs: Sequence[tuple[int, str]]) -> None:
        """Paraphrase the reference of each (sentence index, hypothesis) pair not yet cached
        towards its hypothesis, rerank, cache, and flush the new lists to disk."""
        missing = list(dict.fromkeys((self.references[index], hypothesis)
                                     for index, hypothesis in pairs
                                     if (self.references[index], hypothesis) not in self.cache))
        if not missing:
            return
        lists = self.paraphraser.paraphrase([reference for reference, _ in missing],
                                            [hypothesis for _, hypothesis in missing],
                                            self.config.targeting_weight)
        for (reference, hypothesis), paraphrases in zip(missing, lists, strict=True):
            if self.reranker is None:
                ranked = [(h.text, h.score) for h in paraphrases]
            else:
                ranked = self.reranker.rank(paraphrases, hypothesis, self.model)
            self.cache.add(reference, hypothesis, ranked)
        self.paraphrased += len(missing)
        self.cache.flush(self.writer)

    def __call__(self, index: int, hypothesis: str) -> list[str]:
        reference = self.references[index]
        if (reference, hypothesis) not in self.cache:
            self.prepare([(index, hypothesis)])
        return [reference, *self.cache.get(reference, hypothesis)[:self.count]]


@dataclass(frozen=True)
class TargetedSetup:
    """What the 1H+kT tuning runs share (thesis §5.3): the targeted paraphraser's configuration
    and grammar (of that bias), the decoding LM, the tuned paraphraser's weights, its search
    settings (``settings.k``: the paraphrase n-best size), the reranker (None: the ablation
    without reranking) and its LM, the cache directory and the entries kept per list
    (``depth``: the largest k of the targeted conditions, so one list serves every k)."""

    config: ParaphraserConfig
    grammar_path: str | os.PathLike
    lm_path: str | os.PathLike
    paraphraser_weights: Mapping[str, float]
    settings: DecoderSettings
    reranker: Reranker | None
    reranking_lm_path: str | os.PathLike
    cache_directory: str | os.PathLike
    depth: int

    def references(self, references: Sequence[str], count: int, writer: str,
                   workers: int) -> TargetedReferences:
        """The reference hook of one run: ``count`` targeted paraphrases per hypothesis."""
        paraphraser = Paraphraser(self.grammar_path, self.lm_path, self.paraphraser_weights,
                                  self.settings, workers)
        key = cache_key(self.config, self.paraphraser_weights, self.settings.k, self.reranker)
        return TargetedReferences(references, paraphraser, self.config, count,
                                  ParaphraseCache(self.cache_directory, key, self.depth),
                                  self.reranker, self.reranking_lm_path, writer)


def targeted_setup(params: Mapping, choice_path: str | os.PathLike | None,
                   grammar_paths: Sequence[str | os.PathLike], lm_path: str | os.PathLike,
                   paraphraser_weights_path: str | os.PathLike,
                   reranking_lm_path: str | os.PathLike,
                   settings: DecoderSettings) -> TargetedSetup:
    """The set-up of the pipeline's 1H+kT runs: ``params`` holds the config's biases (in the
    order of ``grammar_paths``), ``point`` (grid_search.point or None), ``nbest``, ``rerank``
    (weights or None), ``depth`` and the ``cache`` directory; the configuration is the grid's
    choice (``choice_path``) unless ``point`` overrides it."""
    config = paraphraser_configuration(choice_path, params["point"])
    grammars = dict(zip(params["biases"], grammar_paths, strict=True))
    if config.bias not in grammars:
        raise ValueError(f"the targeted paraphraser's bias {config.bias} has no grammar "
                         f"(paraphrase.biases {sorted(grammars)})")
    rerank = params["rerank"]
    return TargetedSetup(config, grammars[config.bias], lm_path,
                         read_weights(paraphraser_weights_path),
                         replace(settings, k=params["nbest"]),
                         None if rerank is None else Reranker(**rerank), reranking_lm_path,
                         params["cache"], params["depth"])

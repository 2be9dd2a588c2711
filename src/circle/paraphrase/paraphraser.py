"""The sentential paraphraser (thesis ch. 3 and 5) and its reference-space distances (§5.2.3).

Paraphrasing is decoding with an English-to-English grammar. A :class:`Paraphraser` holds one
loaded paraphrase grammar (the grammar of one self-paraphrase bias, eq. 5.3–5.10), the language
model and the tuned paraphraser weights, and decodes untargeted or targeted k-best lists with
any targeting weight (eq. 5.1) without loading anything again; a :class:`ParaphraserConfig`
names one (bias, targeting weight) configuration. Weights tuned with n-best reranking
(lm.rerank_nbest: they weight ``lm_rerank``) rerank its lists with the reranking LM, as the
thesis's set-ups rerank "both the SMT and the paraphraser n-best lists" with the 5-gram
(:mod:`circle.decoder.rerank`).

Distances in the space of references are TER (Snover et al. 2006, sacrebleu's definition,
:func:`circle.tune.metrics.ter_stats`): ``d_ref`` = TER(paraphrase, original reference) and ``d_mt``
= TER(paraphrase, MT output), the second string being TER's reference each time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from circle.decoder import (
    DecoderSettings,
    Grammar,
    Hypothesis,
    LanguageModel,
    decode_corpus,
    load_grammar,
)
from circle.decoder.rerank import rerank_depth
from circle.tune.metrics import ter_from_stats, ter_stats


class Paraphraser:
    """Untargeted and targeted k-best paraphrases with one paraphrase grammar, loaded once.

    ``weights`` are the tuned paraphraser's (§3.2.3); their ``target`` entry is replaced by the
    targeting weight of each call. The language model is loaded (and checked) before the
    grammar. With ``workers`` > 1, each call decodes in that many forked processes that share
    the loaded grammar and language model. With ``rerank_lm`` every list is reranked with it
    (the weights' ``lm_rerank``), and lists of at least ``rerank_nbest`` hypotheses, the n-best
    size that weight was tuned on (the config's decoder.k), are decoded to rerank before a
    k-best answer is cut from them (:func:`circle.decoder.rerank.rerank_depth`).
    """

    def __init__(self, grammar: Grammar | str | os.PathLike,
                 lm: LanguageModel | str | os.PathLike, weights: Mapping[str, float],
                 settings: DecoderSettings | None = None, workers: int = 1,
                 rerank_lm: LanguageModel | str | os.PathLike | None = None,
                 rerank_nbest: int = 1):
        self.lm = lm if isinstance(lm, LanguageModel) else LanguageModel(lm)
        self.reranking = (rerank_lm if rerank_lm is None or isinstance(rerank_lm, LanguageModel)
                          else LanguageModel(rerank_lm))
        self.grammar = grammar if isinstance(grammar, Grammar) else load_grammar(grammar)
        self.weights = dict(weights)
        self.settings = settings or DecoderSettings()
        self.workers = workers
        self.rerank_nbest = rerank_nbest

    def paraphrase(self, inputs: Sequence[str], targets: Sequence[str] | None = None,
                   targeting_weight: float = 0.0, k: int | None = None
                   ) -> list[list[Hypothesis]]:
        """The unique k-best paraphrases of each input, targeted to ``targets`` (one per
        input) with ``targeting_weight`` (thesis eq. 5.1), or untargeted."""
        if targets is None and targeting_weight != 0.0:
            raise ValueError("a targeting weight needs targets")
        weights = dict(self.weights, target=targeting_weight)
        k = self.settings.k if k is None else k
        depth = rerank_depth(k, self.rerank_nbest, self.reranking is not None)
        outputs = decode_corpus(inputs, self.grammar, self.lm, weights, self.settings,
                                workers=self.workers, k=depth, targets=targets,
                                rerank_lm=self.reranking)
        return [hypotheses[:k] for hypotheses in outputs]


DISTANCE_COLUMNS: tuple[str, ...] = (
    "paraphrases", "reference_length", "mt_length", "reference_edits_mt", "best_edits_ref",
    "best_edits_mt", "nbest_edits_ref", "nbest_edits_mt")
"""Per-segment TER statistics of one paraphrase n-best list (:func:`segment_distances`)."""


def segment_distances(nbest: Sequence[Sequence[str]], references: Sequence[str],
                      mt_outputs: Sequence[str]) -> pd.DataFrame:
    """TER edit counts of each segment's paraphrase n-best list against its original reference
    and its MT output (thesis §5.2.3), one row per segment, columns :data:`DISTANCE_COLUMNS`.

    ``best_edits_*`` are the 1-best paraphrase's edits, ``nbest_edits_*`` the mean over the
    whole list (each listed paraphrase counts once), ``reference_edits_mt`` the original
    reference's own edits against the MT output (its ``d_mt``; its ``d_ref`` is 0). The
    lengths are TER's reference lengths: of the original reference for ``d_ref``, of the MT
    output for ``d_mt``. An empty list (no paraphrase) is an error.
    """
    if not len(nbest) == len(references) == len(mt_outputs):
        raise ValueError(f"{len(nbest)} n-best lists, {len(references)} references and "
                         f"{len(mt_outputs)} MT outputs")
    empty = [i for i, paraphrases in enumerate(nbest) if not paraphrases]
    if empty:
        raise ValueError(f"no paraphrase for segment(s) at position {empty[:5]}")
    sizes = np.array([len(paraphrases) for paraphrases in nbest])
    flat = [p for paraphrases in nbest for p in paraphrases]
    owner = np.repeat(np.arange(len(nbest)), sizes)
    to_ref = ter_stats(flat, [[references[i]] for i in owner])
    to_mt = ter_stats(flat, [[mt_outputs[i]] for i in owner])
    own = ter_stats(list(references), [[m] for m in mt_outputs])
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return pd.DataFrame({
        "paraphrases": sizes,
        "reference_length": to_ref[first, 1],
        "mt_length": own[:, 1],
        "reference_edits_mt": own[:, 0],
        "best_edits_ref": to_ref[first, 0],
        "best_edits_mt": to_mt[first, 0],
        "nbest_edits_ref": np.bincount(owner, to_ref[:, 0]) / sizes,
        "nbest_edits_mt": np.bincount(owner, to_mt[:, 0]) / sizes,
    })


@dataclass(frozen=True)
class ReferenceMove:
    """Where a paraphraser moved the references (thesis §5.2.3), in TER points (percent).

    ``d_ref`` and ``d_mt`` are corpus TER (summed edits / summed reference lengths) of the
    paraphrases against the original references and against the MT output; ``reference_d_mt``
    is the original references' own ``d_mt`` (their ``d_ref`` is 0). Δd_ref = d_ref(paraphrase)
    − d_ref(reference) is the movement away from the reference; Δd_mt = d_mt(reference) −
    d_mt(paraphrase) the movement towards the MT output; the thesis's criterion is
    D = |Δd_mt − Δd_ref| (Fig. 5.8).
    """

    d_ref: float
    d_mt: float
    reference_d_mt: float

    @property
    def delta_ref(self) -> float:
        return self.d_ref

    @property
    def delta_mt(self) -> float:
        return self.reference_d_mt - self.d_mt

    @property
    def balance(self) -> float:
        """D = |Δd_mt − Δd_ref|."""
        return abs(self.delta_mt - self.delta_ref)

    @classmethod
    def of(cls, distances: pd.DataFrame, over: str = "nbest") -> ReferenceMove:
        """The move of the paraphrases in ``distances`` (rows of :func:`segment_distances`),
        of their whole n-best lists (``over="nbest"``) or of their 1-best (``"best"``)."""
        if over not in ("nbest", "best"):
            raise ValueError(f"over must be 'nbest' or 'best', got {over!r}")
        ref_length = float(distances["reference_length"].sum())
        mt_length = float(distances["mt_length"].sum())
        return cls(_percent(distances[f"{over}_edits_ref"].sum(), ref_length),
                   _percent(distances[f"{over}_edits_mt"].sum(), mt_length),
                   _percent(distances["reference_edits_mt"].sum(), mt_length))


def _percent(edits: float, length: float) -> float:
    """Corpus TER in percent (:func:`circle.tune.metrics.ter_from_stats`)."""
    return 100.0 * float(ter_from_stats(np.array([edits, length])))

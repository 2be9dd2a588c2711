"""Reranking n-best lists with the reranking LM (thesis §4.3 and ch. 5 set-ups: "a trigram LM
used in decoding, and an unpruned 5-gram LM used in reranking both the SMT and the paraphraser
n-best lists").

Each hypothesis of a finished n-best list gets one more feature, :data:`RERANK_FEATURE`: the
reranking LM's natural-log probability of its words given ``<s>``, ``</s>`` included (KenLM's
log10 sentence score × ln 10), the convention of the decoder's own ``lm`` feature
(:mod:`circle.decoder.model`). Its weight times that value is added to the hypothesis' model
score and the list is sorted again, best first (ties keep the decoder's order): n-best
rescoring as in cdec and Joshua, so the search never sees the feature and the decoder's 1-best
is the argmax of the reranked list under all the weights. MERT tunes the weight with the others
on the pool; it starts at 0 (:data:`~circle.decoder.model.OPTIONAL_WEIGHTS`), where the first
decode's lists are the decoder's own order, and is free: MERT's line search (Och 2003) moves a
weight along its direction from wherever it starts, 0 included.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from circle.decoder.lm import LN10, LanguageModel
from circle.decoder.model import RERANK_FEATURE
from circle.decoder.nbest import Hypothesis


class NBestReranker:
    """Adds :data:`RERANK_FEATURE` to n-best lists and reorders them under ``weight``."""

    def __init__(self, lm: LanguageModel | str | os.PathLike, weight: float):
        self.lm = lm if isinstance(lm, LanguageModel) else LanguageModel(lm)
        self.weight = float(weight)

    def value(self, text: str) -> float:
        """The feature's value for an output string (space-separated words)."""
        return self.lm.model.score(text, bos=True, eos=True) * LN10

    def rerank(self, hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]:
        """The list with the feature appended to each hypothesis' features and its weighted
        value to its score, best first (a stable sort: ties keep the decoder's order)."""
        scored = []
        for h in hypotheses:
            value = self.value(h.text)
            scored.append(Hypothesis(h.text, h.score + self.weight * value,
                                     {**h.features, RERANK_FEATURE: value}))
        return sorted(scored, key=lambda h: -h.score)


def split_rerank_weight(weights: Mapping[str, float]) -> tuple[dict[str, float], float]:
    """The search's weights (all but :data:`RERANK_FEATURE`) and the reranking weight (0 when
    ``weights`` leave it out)."""
    search = {name: value for name, value in weights.items() if name != RERANK_FEATURE}
    return search, float(weights.get(RERANK_FEATURE, 0.0))


def rerank_depth(k: int, nbest: int, reranking: bool) -> int:
    """How many hypotheses to decode for a ``k``-best answer: with reranking at least
    ``nbest``, the n-best size the reranking weight was tuned on (the config's decoder.k), as
    the reranked 1-best may be any entry of the decoder's list; else ``k``."""
    return max(k, nbest) if reranking else k

"""Distributional paraphrases of source phrases from monolingual text (Marton, Callison-Burch &
Resnik 2009, "MCR" below).

A distributional profile (MCR eq. 1) maps each collocate w of a phrase u (a word within
``window`` = MaxPos = 6 tokens before or after an occurrence of u, in the same sentence; flat,
not positional, MCR §3) to its strength of association SoA(u, w), here Dunning's (1993)
log-likelihood ratio; two profiles are compared by their cosine (MCR eq. 3). A phrase's profile
counts the single words around its occurrences, exactly as a word's (MCR §3, "phrasal
distributional profiles"); above ``sample`` = t occurrences, t of them are drawn uniformly and
the counts scaled by count(u)/t (MCR §4).

The LLR's 2×2 table is that of the co-occurrence matrix: k11 = C(u, w), its row total R(u) is
the number of window tokens around u, its column total C(w) the number of window slots w fills
around any word of the corpus, and N the sum of all window slots. Only positive associations
(k11·N > R·C, more often than chance) enter a profile: G² is also large for words that avoid u.

The paraphrase search is MCR §4: the contexts L _ R of an OOV phrase's occurrences, each side
grown over stoplisted words; every X (at most ``max_phrase_length`` tokens) such that "L X R"
occurs; the candidates ranked by cos(DP_phr, DP_X), the ``k`` best kept if at least
``min_score``. Occurrences are found with a suffix array truncated to :data:`INDEX_DEPTH` tokens
(the corpus positions sorted by their next four tokens), which answers exactly every lookup the
search makes: contexts have at most three tokens a side and phrases at most four.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

BOUNDARY = "<s>"
"""The token between sentences (id 0): windows stop there, and a context may end on it."""

INDEX_DEPTH = 4
"""Tokens by which the suffix array is sorted: the longest pattern looked up."""


@dataclass(frozen=True)
class DistributionalSettings:
    """The parameters of MCR §3-4 (defaults: the seed's Spanish-English setting).

    ``stoplist_threshold`` (StoplistThreshold) is not given by the seed: a word with more
    distinct collocates than this is "promiscuous" and never a context on its own.
    """

    window: int = 6
    sample: int = 10_000
    max_phrase_length: int = 4
    k: int = 20
    min_score: float = 0.3
    stoplist_threshold: int = 2_000
    seed: int = 13

    @classmethod
    def search_keys(cls, section: Mapping[str, Any]) -> dict[str, Any]:
        """The search settings of a config's ``oov_paraphrase`` section, in its order (its
        other keys say which runs translate with the paraphrases; the seed is the config's)."""
        names = {f.name for f in fields(cls)} - {"seed"}
        return {key: value for key, value in section.items() if key in names}

    @classmethod
    def from_config(cls, section: Mapping[str, Any], seed: int) -> DistributionalSettings:
        """The settings of a config's ``oov_paraphrase`` section and the config seed."""
        return cls(**cls.search_keys(section), seed=seed)

    def __post_init__(self) -> None:
        if not 1 <= self.max_phrase_length <= INDEX_DEPTH:
            raise ValueError(f"max_phrase_length must be in 1..{INDEX_DEPTH}")
        for name in ("window", "sample", "k", "stoplist_threshold"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


@dataclass(frozen=True)
class Profile:
    """A distributional profile: collocate ids (sorted) and their positive LLR (eq. 1)."""

    ids: np.ndarray
    weights: np.ndarray
    norm: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "norm", float(np.sqrt(np.dot(self.weights, self.weights))))


@dataclass(frozen=True)
class Paraphrase:
    """A paraphrase X of a phrase and psim(DP_phrase, DP_X)."""

    phrase: str
    paraphrase: str
    similarity: float


def xlogx(x: np.ndarray | float) -> np.ndarray:
    """x ln x, 0 at 0."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def log_likelihood_ratio(k11: np.ndarray, row: float, columns: np.ndarray,
                         total: float) -> np.ndarray:
    """Dunning's (1993) G² of 2×2 tables with cell k11, row total ``row``, column totals
    ``columns`` and grand total ``total``: 2 (Σ k ln k − Σ rows ln rows − Σ cols ln cols +
    N ln N)."""
    k11 = np.asarray(k11, dtype=np.float64)
    columns = np.asarray(columns, dtype=np.float64)
    k12, k21 = row - k11, columns - k11
    k22 = total - row - columns + k11
    cells = xlogx(k11) + xlogx(k12) + xlogx(k21) + xlogx(k22)
    margins = xlogx(row) + xlogx(total - row) + xlogx(columns) + xlogx(total - columns)
    return np.maximum(2.0 * (cells - margins + xlogx(total)), 0.0)


def cosine(a: Profile, b: Profile) -> float:
    """psim(DP_a, DP_b) = cos(DP_a, DP_b) (MCR eq. 3); 0 for an empty profile."""
    if a.norm == 0.0 or b.norm == 0.0:
        return 0.0
    _, ia, ib = np.intersect1d(a.ids, b.ids, assume_unique=True, return_indices=True)
    return float(np.dot(a.weights[ia], b.weights[ib]) / (a.norm * b.norm))


class MonolingualCorpus:
    """Tokenised sentences as one id array with :data:`BOUNDARY` before, between and after them,
    the window marginals of the LLR, the stoplist and the truncated suffix array."""

    def __init__(self, sentences: Iterable[str], settings: DistributionalSettings):
        self.settings = settings
        ids: dict[str, int] = {BOUNDARY: 0}
        tokens = [0]
        for sentence in sentences:
            tokens.extend(ids.setdefault(word, len(ids)) for word in sentence.split())
            tokens.append(0)
        self.vocabulary: tuple[str, ...] = tuple(ids)
        self.index = ids
        self.tokens = np.array(tokens, dtype=np.int32)
        n = len(self.tokens)
        boundaries = np.flatnonzero(self.tokens == 0)
        self.sentence = np.cumsum(self.tokens == 0) - 1  # a boundary starts its sentence
        # Room to the sentence's ends: tokens before/after a position within its sentence.
        left = np.arange(n) - boundaries[self.sentence] - 1
        nxt = boundaries[np.minimum(self.sentence + 1, len(boundaries) - 1)]
        right = nxt - np.arange(n) - 1
        w = settings.window
        slots = np.where(self.tokens > 0, np.minimum(left, w) + np.minimum(right, w), 0)
        self.column_totals = np.bincount(self.tokens, weights=slots,
                                         minlength=len(ids)).astype(np.float64)
        self.total = float(self.column_totals.sum())
        self.words = n - len(boundaries)
        padded = np.concatenate([self.tokens, np.zeros(INDEX_DEPTH, dtype=np.int32)])
        keys = [padded[j:j + n] for j in range(INDEX_DEPTH)]  # each position's next 4 ids
        self.suffixes = np.lexsort(keys[::-1]).astype(np.int64)
        self._sorted = [key[self.suffixes] for key in keys]
        self.stopwords, self.stop_bigrams = self._stoplist()
        self._profiles: dict[tuple[int, ...], Profile] = {}

    def ids(self, phrase: str) -> tuple[int, ...] | None:
        """A phrase's token ids, None if a word is not in the corpus."""
        found = tuple(self.index.get(word, -1) for word in phrase.split())
        return None if -1 in found else found

    def text(self, ids: Sequence[int]) -> str:
        """The words of token ids."""
        return " ".join(self.vocabulary[i] for i in ids)

    def occurrences(self, pattern: Sequence[int]) -> np.ndarray:
        """Start positions of ``pattern`` (at most :data:`INDEX_DEPTH` ids), in suffix order."""
        lo, hi = 0, len(self.suffixes)
        for key, value in zip(self._sorted, pattern, strict=False):
            column = key[lo:hi]
            lo, hi = lo + np.searchsorted(column, value, "left"), \
                lo + np.searchsorted(column, value, "right")
        return self.suffixes[lo:hi]

    def _sample(self, positions: np.ndarray, pattern: Sequence[int]) -> np.ndarray:
        """At most t positions, drawn uniformly with a seed of the config seed and the pattern
        (the draw does not depend on what was looked up before)."""
        if len(positions) <= self.settings.sample:
            return positions
        key = zlib.crc32(np.asarray(pattern, dtype=np.int32).tobytes())
        rng = np.random.default_rng([self.settings.seed, key])
        return np.sort(rng.choice(positions, self.settings.sample, replace=False))

    def window_tokens(self, starts: np.ndarray, length: int) -> np.ndarray:
        """The ids within ``window`` tokens before or after each occurrence (same sentence)."""
        w = self.settings.window
        offsets = np.concatenate([-np.arange(1, w + 1), length - 1 + np.arange(1, w + 1)])
        positions = np.clip(starts[:, None] + offsets[None, :], 0, len(self.tokens) - 1)
        ids = self.tokens[positions]
        valid = (ids > 0) & (self.sentence[positions] == self.sentence[starts][:, None])
        return ids[valid]

    def profile(self, pattern: Sequence[int]) -> Profile:
        """DP of a phrase (MCR eq. 1, §3-4): LLR of its window collocates, sampled above t."""
        pattern = tuple(pattern)
        cached = self._profiles.get(pattern)
        if cached is not None:
            return cached
        positions = self.occurrences(pattern)
        sampled = self._sample(positions, pattern)
        ids, counts = np.unique(self.window_tokens(sampled, len(pattern)), return_counts=True)
        k11 = counts * (len(positions) / max(len(sampled), 1))
        columns = self.column_totals[ids]
        llr = log_likelihood_ratio(k11, float(k11.sum()), columns, self.total)
        positive = (llr > 0) & (k11 * self.total > k11.sum() * columns)
        profile = Profile(ids[positive].astype(np.int32), llr[positive])
        self._profiles[pattern] = profile
        return profile

    def _stoplist(self) -> tuple[np.ndarray, set[tuple[int, int]]]:
        """Promiscuous words (more than StoplistThreshold distinct collocates within the
        window) as a boolean array over ids, and the bigrams of such words seen more than t
        times (MCR §4)."""
        v = len(self.vocabulary)
        pairs = []
        for d in range(1, self.settings.window + 1):
            a, b = self.tokens[:-d], self.tokens[d:]
            same = (a > 0) & (b > 0) & (self.sentence[:-d] == self.sentence[d:])
            a, b = a[same].astype(np.int64), b[same].astype(np.int64)
            pairs.append(np.unique(np.concatenate([a * v + b, b * v + a])))
        distinct = np.unique(np.concatenate(pairs))
        collocates = np.bincount(distinct // v, minlength=v)
        stopwords = collocates > self.settings.stoplist_threshold
        a, b = self.tokens[:-1].astype(np.int64), self.tokens[1:].astype(np.int64)
        both = stopwords[a] & stopwords[b] & (a > 0) & (b > 0)
        codes, counts = np.unique(a[both] * v + b[both], return_counts=True)
        frequent = codes[counts > self.settings.sample]
        return stopwords, {(int(c // v), int(c % v)) for c in frequent}

    def _stopped(self, context: tuple[int, ...]) -> bool:
        if len(context) == 1:
            return bool(self.stopwords[context[0]])
        return len(context) == 2 and context in self.stop_bigrams

    def contexts(self, pattern: Sequence[int]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """The distinct contexts L _ R of a phrase's occurrences (MCR §4, "gather context"):
        each side starts with the adjacent token and grows outwards while it is stoplisted,
        stopping at a sentence boundary, which it then includes."""
        found: dict[tuple[tuple[int, ...], tuple[int, ...]], None] = {}
        tokens = self.tokens
        for start in self.occurrences(pattern).tolist():
            sides = []
            for step, first in ((-1, start - 1), (1, start + len(pattern))):
                side = (int(tokens[first]),)
                position = first
                while side[-1 if step > 0 else 0] != 0 and self._stopped(side):
                    position += step
                    word = int(tokens[position])
                    side = (*side, word) if step > 0 else (word, *side)
                sides.append(side)
            found[(sides[0], sides[1])] = None
        return list(found)

    def candidates(self, pattern: Sequence[int]) -> set[tuple[int, ...]]:
        """Every X of at most MaxPhraseLen tokens, with no boundary in it and not containing
        the phrase (no paraphrase of it), such that "L X R" occurs for a context L _ R of the
        phrase (MCR §4, "gather candidates"); a context's occurrences are sampled above t."""
        longest = self.settings.max_phrase_length
        found: set[tuple[int, ...]] = set()
        for left, right in self.contexts(pattern):
            starts = self._sample(self.occurrences(left), left) + len(left)
            span = np.arange(longest + len(right))
            following = self.tokens[np.clip(starts[:, None] + span, 0, len(self.tokens) - 1)]
            for m in range(1, longest + 1):
                inside = following[:, :m]
                keep = (inside > 0).all(axis=1) & (following[:, m:m + len(right)]
                                                    == np.array(right)).all(axis=1)
                found.update(map(tuple, np.unique(inside[keep], axis=0).tolist()))
        return {x for x in found if not _contains(x, tuple(pattern))}

    def paraphrases(self, phrase: str) -> list[Paraphrase]:
        """The k best paraphrases of a phrase with psim ≥ minScore, best first (ties in
        alphabetical order); none for a phrase the corpus lacks."""
        pattern = self.ids(phrase)
        if pattern is None or not len(self.occurrences(pattern)):
            return []
        own = self.profile(pattern)
        scored = [(cosine(own, self.profile(x)), self.text(x)) for x in self.candidates(pattern)]
        scored = sorted((s for s in scored if s[0] >= self.settings.min_score),
                        key=lambda s: (-s[0], s[1]))
        return [Paraphrase(phrase, text, score) for score, text in scored[:self.settings.k]]


def _contains(sequence: tuple[int, ...], part: tuple[int, ...]) -> bool:
    return any(sequence[i:i + len(part)] == part for i in range(len(sequence) - len(part) + 1))


def oov_phrases(sentences: Iterable[str], known: set[str], max_length: int) -> list[str]:
    """The distinct n-grams (n ≤ ``max_length``) of the input that contain a word not in
    ``known`` (the MCR "OOV phrases": no rule of the grammar can cover them), in order of
    first appearance."""
    found: dict[str, None] = {}
    for sentence in sentences:
        words = sentence.split()
        for i, word in enumerate(words):
            if word in known:
                continue
            for start in range(max(0, i - max_length + 1), i + 1):
                for end in range(i + 1, min(len(words), start + max_length) + 1):
                    found[" ".join(words[start:end])] = None
    return list(found)

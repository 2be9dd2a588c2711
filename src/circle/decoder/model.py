"""The decoder's log-linear model: feature names, weights, weight files and search settings.

A derivation's score is the dot product of its feature vector and the weights (Och & Ney 2002;
Chiang 2007 §2). The features are the grammar table's feature columns (in the table schema's
order, natural-log values as stored) followed by :data:`DECODER_FEATURES`, whose sign
conventions follow Moses and the thesis:

``lm``
    Natural-log language-model probability of the output given ``<s>``, including ``</s>``
    (KenLM's log10 score × ln 10); ≤ 0, so its weight is positive.
``word_penalty``
    −1 per output word (Moses' ``WordPenalty``): the value is −|e|.
``phrase_penalty``
    +1 per application of a grammar rule (glue rules and pass-through words excluded).
``glue``
    +1 per application of S → ⟨S X, S X⟩, i.e. the number of top-level chunks − 1.
``oov``
    +1 per source word passed through untranslated (no one-word rule covers it); its weight
    is negative.
``target``
    The targeting feature of thesis eq. 5.1: the number of output words not in the target
    string T (0 when decoding without a target); its weight must be negative to target.

With n-best reranking (config ``lm.rerank_nbest``) one more feature follows them,
:data:`RERANK_FEATURE`: the reranking LM's score of the finished hypothesis, which the search
never sees (:mod:`circle.decoder.rerank`).

Weight files are plain text, one ``name value`` pair per line; blank lines and lines starting
with ``#`` are ignored (see :func:`read_weights`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from circle.core.schemas import IDENTITY_FEATURE

DECODER_FEATURES: tuple[str, ...] = ("lm", "word_penalty", "phrase_penalty", "glue", "oov",
                                     "target")
"""Features the decoder adds to the grammar's own, in output order."""

RERANK_FEATURE = "lm_rerank"
"""The n-best reranking feature (:mod:`circle.decoder.rerank`): natural-log probability of a
finished hypothesis under the reranking LM (lm.reranking_order), added after the search."""

OPTIONAL_WEIGHTS: dict[str, float] = {"target": 0.0, IDENTITY_FEATURE: 0.0, RERANK_FEATURE: 0.0}
"""Weights that may be left out of a weight file, with the value they then take: the targeting
feature's, that of a paraphrase grammar's φ_ident (Ganitkevitch & Callison-Burch, draft
§4.1), which starts neutral for MERT to tune, and the n-best reranking feature's, which starts
neutral too (:mod:`circle.decoder.rerank`)."""

MAX_SEARCH_SIZE = 10_000
"""The largest n-best size, pop limit and options limit a user may ask for (the config schema
and the circle command's options): the k-best extraction enumerates derivations until it has
k distinct ones and cube pruning keeps up to the pop limit per cell, so a mistyped size would
exhaust the memory instead of searching better (Moses and Joshua use n-best lists of 100 to
1000; the thesis's largest is 300). :class:`DecoderSettings` itself takes any size, for the
exhaustive searches of the tests."""

ENGINES: tuple[str, ...] = ("cython", "python")
"""Implementations of the search loop (:attr:`DecoderSettings.engine`)."""

SEARCH_SETTINGS: tuple[str, ...] = ("pop_limit", "span_limit", "options_limit", "k")
"""The keys of the config's ``decoder`` section that are search settings (the others are the
untuned weights)."""


@dataclass(frozen=True)
class DecoderSettings:
    """Search limits (defaults from Joshua and cdec, design notes §3).

    ``pop_limit``: cube-pruning pops per chart cell, i.e. per (span, label) (Chiang 2007 §5.2;
    Joshua 100, cdec 200). ``span_limit``: longest source span a non-glue rule may cover
    (cdec 10). ``options_limit``: rules kept per source side matched in a sentence, ranked by
    rule score plus an LM estimate of their target words and the targeting feature (Joshua's
    ``num_translation_options``, Moses' ``table-limit``; for phrase rules this is the number of
    translation options per source span). ``k``: size of the unique n-best list.
    ``engine``: the cube-pruning loop, ``"cython"`` (compiled at install time,
    :mod:`circle.decoder._cube`) or ``"python"`` (the reference, :mod:`circle.decoder.cube`);
    both give identical results.
    """

    pop_limit: int = 100
    span_limit: int = 10
    options_limit: int = 20
    k: int = 100
    engine: str = "cython"

    def __post_init__(self) -> None:
        for name in SEARCH_SETTINGS:
            if getattr(self, name) < 1:
                raise ValueError(f"decoder setting {name} must be ≥ 1, got {getattr(self, name)}")
        if self.engine not in ENGINES:
            raise ValueError(f"decoder engine must be one of {ENGINES}, got {self.engine!r}")

    @classmethod
    def from_config(cls, decoder: Mapping[str, object], **overrides: object) -> DecoderSettings:
        """The search settings of the config's ``decoder`` section, or of a job's params made
        from it: its :data:`SEARCH_SETTINGS` (defaults where it lacks one), then
        ``overrides`` (None leaves a setting as it is)."""
        given = {key: decoder[key] for key in SEARCH_SETTINGS if key in decoder}
        given.update((key, value) for key, value in overrides.items() if value is not None)
        return cls(**given)


class Model:
    """Feature names and their weights, aligned as vectors; scores are dot products. With
    ``rerank`` the names end with :data:`RERANK_FEATURE` (the n-best lists are reranked)."""

    def __init__(self, grammar_features: Sequence[str], weights: Mapping[str, float],
                 rerank: bool = False):
        clash = set(grammar_features) & {*DECODER_FEATURES, RERANK_FEATURE}
        if clash:
            raise ValueError(f"grammar features {sorted(clash)} clash with decoder features")
        self.names: tuple[str, ...] = (tuple(grammar_features) + DECODER_FEATURES
                                       + ((RERANK_FEATURE,) if rerank else ()))
        if not rerank and RERANK_FEATURE in weights:
            raise ValueError(f"the weights name {RERANK_FEATURE}, the n-best reranking "
                             "feature (lm.rerank_nbest), but this decode has no reranking LM")
        unknown = sorted(set(weights) - set(self.names))
        missing = [n for n in self.names if n not in weights and n not in OPTIONAL_WEIGHTS]
        if unknown or missing:
            raise ValueError(f"weights do not fit the features {list(self.names)}: "
                             f"unknown {unknown}, missing {missing}")
        self.weights: tuple[float, ...] = tuple(
            float(weights.get(n, OPTIONAL_WEIGHTS.get(n, 0.0))) for n in self.names)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.lm_weight = self.weights[self.index["lm"]]
        self.target_weight = self.weights[self.index["target"]]

    def dot(self, values: Sequence[float]) -> float:
        """Score of a feature vector."""
        return math.fsum(w * v for w, v in zip(self.weights, values, strict=True))

    def vector(self, **decoder_values: float) -> tuple[float, ...]:
        """A feature vector that is zero except for the named decoder features."""
        values = [0.0] * len(self.names)
        for name, value in decoder_values.items():
            values[self.index[name]] = value
        return tuple(values)


def read_weights(path: str | os.PathLike) -> dict[str, float]:
    """Read a weight file: ``name value`` per line, ``#`` comments and blank lines ignored, every
    value a finite number; a byte-order mark at the start is dropped."""
    weights: dict[str, float] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8-sig").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"{path}:{number}: expected 'name value', got {line!r}")
        name, value = fields
        if name in weights:
            raise ValueError(f"{path}:{number}: weight '{name}' given twice")
        weights[name] = finite_weight(value, f"{path}:{number}: weight '{name}'")
    return weights


def finite_weight(value: str | float, where: str) -> float:
    """``value`` as a float; a ValueError naming ``where`` if it is not a finite number (a NaN
    or infinite weight would make every score NaN or infinite)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"{where} is not a finite number: {value!r}")
    return number


def write_weights(path: str | os.PathLike, weights: Mapping[str, float]) -> None:
    """Write ``weights`` in the format of :func:`read_weights` (values round-trip exactly)."""
    Path(path).write_text("".join(f"{name} {float(value)!r}\n" for name, value in weights.items()),
                          encoding="utf-8")

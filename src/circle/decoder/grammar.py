"""The in-memory Hiero rule index of the decoder (Chiang 2007 §3).

Rules are grouped by source side. Source sides are stored in a trie over source symbols (a
terminal, or :data:`NT` for any nonterminal) that the CKY+ matcher of :mod:`circle.decoder.chart`
walks; a trie node that ends a source side holds that side's key. A key's rules are parsed from
the table only when a sentence first matches it, so loading a grammar of a million rules costs
one pass over its distinct source sides.

Nonterminals are ``[X,1]`` / ``[X,2]`` as in :mod:`circle.schemas`. Within a parsed :class:`Rule`
a target nonterminal is the position (0 or 1) of the co-indexed nonterminal on the source side,
so a source side written ``[X,2] de [X,1]`` matches the same key as ``[X,1] de [X,2]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from circle.decoder.model import DECODER_FEATURES
from circle.tables import read_metadata, read_table, schema_by_name

NT = "[X]"
"""The trie symbol of a source nonterminal (terminals never contain ``[``)."""

_NONTERMINAL = re.compile(r"\[X,([12])\]")

Symbol = str | int
"""A target symbol: a terminal word, or the source position (0, 1) of a nonterminal."""


class GrammarError(ValueError):
    """A grammar rule the decoder cannot use; the message quotes the rule."""


class Rule:
    """One synchronous rule: its target side and its full feature vector.

    ``values`` spans all model features (grammar features, then :data:`DECODER_FEATURES`) and
    holds the rule-local ones: the grammar's values, ``word_penalty`` = −|words|,
    ``phrase_penalty`` = 1 (glue and pass-through rules set their own).
    """

    __slots__ = ("target", "words", "values")

    def __init__(self, target: tuple[Symbol, ...], values: tuple[float, ...]):
        self.target = target
        self.words: tuple[str, ...] = tuple(s for s in target if isinstance(s, str))
        self.values = values

    def __repr__(self) -> str:
        return f"Rule({self.target!r})"


def _nonterminal(symbol: str, rule: str) -> int | None:
    """The index of a nonterminal symbol, None for a terminal."""
    if not symbol.startswith("["):
        return None
    match = _NONTERMINAL.fullmatch(symbol)
    if match is None:
        raise GrammarError(f"unsupported nonterminal {symbol!r} in rule {rule!r}")
    return int(match.group(1))


def source_key(source: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A source side's trie key and its nonterminal indices in source order."""
    symbols: list[str] = []
    order: list[int] = []
    for symbol in source.split():
        index = _nonterminal(symbol, source)
        if index is None:
            symbols.append(symbol)
        else:
            symbols.append(NT)
            order.append(index)
    if sorted(order) != list(range(1, len(order) + 1)):
        raise GrammarError(f"source side {source!r}: its nonterminals must be [X,1], "
                           f"or [X,1] and [X,2]")
    if len(order) == len(symbols):
        raise GrammarError(f"source side {source!r} has no terminal")
    return tuple(symbols), tuple(order)


class Grammar:
    """Hiero rules indexed by source side; see the module docstring.

    ``sources`` and ``targets`` are the table's string columns, ``values`` the feature columns
    (rows × ``feature_names``) in natural-log units.
    """

    def __init__(self, sources: Sequence[str], targets: Sequence[str], values: np.ndarray,
                 feature_names: Sequence[str]):
        self.feature_names: tuple[str, ...] = tuple(feature_names)
        self._targets = np.asarray(targets, dtype=object)
        self._values = np.asarray(values, dtype=np.float64)
        if self._values.shape != (len(self._targets), len(self.feature_names)):
            raise GrammarError(f"feature values of shape {self._values.shape} for "
                               f"{len(self._targets)} rules and features {self.feature_names}")
        codes, uniques = pd.factorize(np.asarray(sources, dtype=object))
        self._order = np.argsort(codes, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(uniques)))))
        self.trie: dict = {}
        self._groups: list[list[tuple[int, int, tuple[int, ...]]]] = []
        keys: dict[tuple[str, ...], int] = {}
        for code, source in enumerate(uniques):
            symbols, order = source_key(source)
            key = keys.get(symbols)
            if key is None:
                key = keys[symbols] = len(self._groups)
                self._groups.append([])
                node = self.trie
                for symbol in symbols:
                    node = node.setdefault(symbol, {})
                node[None] = key
            self._groups[key].append((int(bounds[code]), int(bounds[code + 1]), order))
        self._rules: dict[int, tuple[Rule, ...]] = {}
        self._decoder_values = (0.0,) * len(DECODER_FEATURES)
        self._word_penalty = DECODER_FEATURES.index("word_penalty")
        self._phrase_penalty = DECODER_FEATURES.index("phrase_penalty")

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, feature_names: Sequence[str]) -> Grammar:
        """A grammar from a frame with columns ``lhs``, ``source``, ``target`` + features."""
        lhs = set(frame["lhs"].unique())
        if lhs - {"X"}:
            raise GrammarError(f"only the left-hand side X is supported, found {sorted(lhs)}")
        return cls(frame["source"].to_numpy(dtype=object), frame["target"].to_numpy(dtype=object),
                   frame[list(feature_names)].to_numpy(dtype=np.float64), feature_names)

    def __len__(self) -> int:
        return len(self._targets)

    @property
    def num_sources(self) -> int:
        """Number of distinct source sides (trie keys)."""
        return len(self._groups)

    def rules(self, key: int) -> tuple[Rule, ...]:
        """The rules of a source-side key, parsed on first use."""
        rules = self._rules.get(key)
        if rules is None:
            rules = self._rules[key] = tuple(
                self._parse(int(row), order)
                for start, end, order in self._groups[key]
                for row in self._order[start:end])
        return rules

    def _parse(self, row: int, order: tuple[int, ...]) -> Rule:
        text = self._targets[row]
        target: list[Symbol] = []
        for symbol in text.split():
            index = _nonterminal(symbol, text)
            if index is None:
                target.append(symbol)
            elif index in order:
                target.append(order.index(index))
            else:
                raise GrammarError(f"target side {text!r} has {symbol} missing from the source")
        nonterminals = sorted(s for s in target if isinstance(s, int))
        if nonterminals != list(range(len(order))):
            raise GrammarError(f"target side {text!r} does not use each source nonterminal once")
        decoder = list(self._decoder_values)
        decoder[self._word_penalty] = -float(len(target) - len(nonterminals))
        decoder[self._phrase_penalty] = 1.0
        return Rule(tuple(target), tuple(self._values[row].tolist()) + tuple(decoder))


def load_grammar(path: str | os.PathLike) -> Grammar:
    """Load a grammar Parquet table; its schema (table metadata) names the feature columns."""
    schema = schema_by_name(read_metadata(path).get("schema", ""))
    if not schema.features:
        raise GrammarError(f"{path}: table schema '{schema.name}' is not a grammar schema")
    frame = read_table(path, schema, columns=["lhs", "source", "target", *schema.features])
    return Grammar.from_frame(frame, schema.features)

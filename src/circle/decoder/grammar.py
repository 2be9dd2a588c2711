"""The in-memory Hiero rule index of the decoder (Chiang 2007 §3).

Rules are grouped by source side. Source sides are stored in a trie over source symbols (a
terminal, or :data:`NT` for any nonterminal) that the CKY+ matcher of :mod:`circle.decoder.chart`
walks; a trie node that ends a source side holds that side's key. Loading tokenises all target
sides at once (Arrow compute) into symbol ids, so the decoder scores a key's rules as arrays
(:meth:`Grammar.rows`, :meth:`Grammar.features`, :attr:`Grammar.terminal_counts`) and parses
into a :class:`Rule` only the few it keeps (:meth:`Grammar.rules_at`).

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
import pyarrow as pa
import pyarrow.compute as pc

from circle.decoder.model import DECODER_FEATURES
from circle.tables import TableSchema, read_metadata, read_table, schema_by_name

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

    def __init__(self, target: tuple[Symbol, ...], values: tuple[float, ...],
                 words: tuple[str, ...] | None = None):
        self.target = target
        self.words: tuple[str, ...] = (tuple(s for s in target if isinstance(s, str))
                                       if words is None else words)
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


def concatenated_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every range, concatenated."""
    firsts = np.cumsum(lengths) - lengths  # where each range begins in the result
    return np.arange(firsts[-1] + lengths[-1] if len(lengths) else 0) + np.repeat(
        starts - firsts, lengths)


NONTERMINAL_ORDERS: tuple[tuple[int, ...], ...] = ((), (1,), (1, 2), (2, 1))
"""The nonterminal indices of a source side in source order (see :func:`source_key`)."""


class Grammar:
    """Hiero rules indexed by source side; see the module docstring.

    ``sources`` and ``targets`` are the table's string columns, ``values`` the feature columns
    (rows × ``feature_names``) in natural-log units. Rows are grouped by source-side key:
    :meth:`rows` gives a key's rows. Target sides are kept tokenised for scoring without
    parsing: ``target_ids[target_offsets[r]:target_offsets[r + 1]]`` are row r's symbols, an
    index into ``vocabulary`` (``word_index`` inverts it) for a word, −1 − p for the nonterminal
    co-indexed with the p-th nonterminal of the source side (−1, −2 for ``[X,1]``, ``[X,2]``
    unless the source side swaps them); ``terminal_counts`` holds each row's number of target
    words. Every rule is checked when the grammar is built.
    """

    def __init__(self, sources: Sequence[str], targets: Sequence[str], values: np.ndarray,
                 feature_names: Sequence[str]):
        self.feature_names: tuple[str, ...] = tuple(feature_names)
        sources = np.asarray(sources, dtype=object)
        self._targets = np.asarray(targets, dtype=object)
        self._values = np.asarray(values, dtype=np.float64)
        if self._values.shape != (len(self._targets), len(self.feature_names)):
            raise GrammarError(f"feature values of shape {self._values.shape} for "
                               f"{len(self._targets)} rules and features {self.feature_names}")
        codes, uniques = pd.factorize(sources)
        self.trie: dict = {}
        key_of_code = np.empty(len(uniques), dtype=np.int64)
        order_of_code = np.empty(len(uniques), dtype=np.int8)
        keys: dict[tuple[str, ...], int] = {}
        for code, source in enumerate(uniques):
            symbols, order = source_key(source)
            key = keys.get(symbols)
            if key is None:
                key = keys[symbols] = len(keys)
                node = self.trie
                for symbol in symbols:
                    node = node.setdefault(symbol, {})
                node[None] = key
            key_of_code[code] = key
            order_of_code[code] = NONTERMINAL_ORDERS.index(order)
        row_keys = key_of_code[codes]
        self._key_rows = np.argsort(row_keys, kind="stable")
        self._key_starts = np.concatenate(([0], np.cumsum(np.bincount(row_keys,
                                                                      minlength=len(keys)))))
        self.target_ids, self.target_offsets, self.vocabulary = _tokenise(self._targets)
        self.word_index = {word: i for i, word in enumerate(self.vocabulary)}
        self.terminal_counts = self._count(self.target_ids >= 0)
        row_orders = order_of_code[codes]
        self._check_nonterminals(sources, row_orders)
        self._to_source_positions(row_orders)
        self._rules: dict[int, Rule] = {}
        self._word_penalty = DECODER_FEATURES.index("word_penalty")
        self._phrase_penalty = DECODER_FEATURES.index("phrase_penalty")

    def _count(self, flags: np.ndarray) -> np.ndarray:
        """Per row, how many of its target symbols are flagged."""
        cumulative = np.concatenate(([0], np.cumsum(flags)))
        return cumulative[self.target_offsets[1:]] - cumulative[self.target_offsets[:-1]]

    def _check_nonterminals(self, sources: np.ndarray, row_orders: np.ndarray) -> None:
        """Every target side uses each of its source side's nonterminals exactly once.

        ``row_orders`` holds each row's index into :data:`NONTERMINAL_ORDERS`.
        """
        arity = np.array([len(order) for order in NONTERMINAL_ORDERS])[row_orders]
        valid = ((self._count(self.target_ids == -1) == (arity >= 1))
                 & (self._count(self.target_ids == -2) == (arity == 2)))
        if not valid.all():
            row = int(np.flatnonzero(~valid)[0])
            raise GrammarError(f"rule {sources[row]!r} → {self._targets[row]!r}: the target "
                               f"side must use each source nonterminal exactly once")

    def _to_source_positions(self, row_orders: np.ndarray) -> None:
        """Renumber target nonterminals from co-indices to source positions (−1 − p)."""
        swapped = row_orders == NONTERMINAL_ORDERS.index((2, 1))
        symbols = np.repeat(swapped, np.diff(self.target_offsets)) & (self.target_ids < 0)
        self.target_ids[symbols] = -3 - self.target_ids[symbols]  # −1 ↔ −2

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
        return len(self._key_starts) - 1

    def rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of source-side ``keys``, concatenated key by key (table order within a
        key), and each key's number of rows."""
        starts = self._key_starts[keys]
        counts = self._key_starts[np.asarray(keys) + 1] - starts
        return self._key_rows[concatenated_ranges(starts, counts)], counts

    def features(self, rows: np.ndarray) -> np.ndarray:
        """The grammar's feature values of ``rows`` (rows × ``feature_names``)."""
        return self._values[rows]

    def target_symbols(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The target symbols of ``rows`` concatenated row by row (ids as in
        ``target_ids``), and each row's number of symbols."""
        starts = self.target_offsets[rows]
        lengths = self.target_offsets[rows + 1] - starts
        return self.target_ids[concatenated_ranges(starts, lengths)], lengths

    def rules_at(self, rows: Sequence[int]) -> list[Rule]:
        """Rows as :class:`Rule` objects (each parsed on first use)."""
        cache = self._rules
        new = [row for row in dict.fromkeys(rows) if row not in cache]
        if new:
            cache.update(zip(new, self._parse(np.array(new, dtype=np.int64)), strict=True))
        return [cache[row] for row in rows]

    def rules(self, key: int) -> list[Rule]:
        """All rules of a source-side key, in table order."""
        return self.rules_at(self.rows(np.array([key]))[0].tolist())

    def _parse(self, rows: np.ndarray) -> list[Rule]:
        """Rules for ``rows``, with array operations done once for all of them."""
        symbols, lengths = self.target_symbols(rows)
        symbols = symbols.tolist()
        firsts = np.cumsum(lengths) - lengths
        vocabulary = self.vocabulary
        decoder = [0.0] * len(DECODER_FEATURES)
        decoder[self._phrase_penalty] = 1.0
        word_penalty = len(self.feature_names) + self._word_penalty
        rules = []
        for values, first, length in zip(self._values[rows].tolist(), firsts.tolist(),
                                         lengths.tolist(), strict=True):
            target = symbols[first:first + length]
            words = tuple([vocabulary[i] for i in target if i >= 0])
            values += decoder
            values[word_penalty] = -float(len(words))
            if len(words) < length:
                rules.append(Rule(tuple([vocabulary[i] if i >= 0 else -1 - i for i in target]),
                                  tuple(values), words))
            else:
                rules.append(Rule(words, tuple(values), words))
        return rules


def _tokenise(targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Target sides as (symbol ids, row offsets, vocabulary); see :class:`Grammar`."""
    tokens = pc.utf8_split_whitespace(pa.array(targets, type=pa.large_string()))
    encoded = pc.dictionary_encode(pc.list_flatten(tokens))
    symbols = encoded.dictionary.to_pylist()
    remap = np.empty(len(symbols), dtype=np.int32)
    vocabulary: list[str] = []
    for i, symbol in enumerate(symbols):
        if symbol.startswith("["):
            match = _NONTERMINAL.fullmatch(symbol)
            if match is None:
                row = next(r for r, text in enumerate(targets) if symbol in text.split())
                raise GrammarError(f"unsupported nonterminal {symbol!r} in rule "
                                   f"{targets[row]!r}")
            remap[i] = -int(match.group(1))
        else:
            remap[i] = len(vocabulary)
            vocabulary.append(symbol)
    ids = remap[encoded.indices.to_numpy(zero_copy_only=False)]
    return ids, tokens.offsets.to_numpy().astype(np.int64), tuple(vocabulary)


def _grammar_schema(path: str | os.PathLike) -> TableSchema:
    schema = schema_by_name(read_metadata(path).get("schema", ""))
    if not schema.features:
        raise GrammarError(f"{path}: table schema '{schema.name}' is not a grammar schema")
    return schema


def grammar_features(path: str | os.PathLike) -> tuple[str, ...]:
    """The feature names of a grammar table, from its metadata (the rules are not read)."""
    return tuple(_grammar_schema(path).features)


def load_grammar(path: str | os.PathLike) -> Grammar:
    """Load a grammar Parquet table; its schema (table metadata) names the feature columns,
    whose values must all be finite."""
    schema = _grammar_schema(path)
    frame = read_table(path, schema, columns=["lhs", "source", "target", *schema.features])
    non_finite = (~np.isfinite(frame[list(schema.features)].to_numpy(np.float64))).sum(axis=0)
    problems = [f"column {name} has {count} non-finite values"
                for name, count in zip(schema.features, non_finite, strict=True) if count]
    if problems:
        raise GrammarError(f"{path}: " + "; ".join(problems))
    return Grammar.from_frame(frame, schema.features)

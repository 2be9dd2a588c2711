"""The in-memory Hiero rule index of the decoder (Chiang 2007 §3).

Rules are grouped by source side. Source sides are stored in a trie over source symbols (a
terminal, or :data:`NT` for any nonterminal) that the CKY+ matcher of :mod:`circle.decoder.chart`
walks; a trie node that ends a source side holds that side's key. Loading tokenises all target
sides at once (Arrow compute) into symbol ids, so the decoder scores a key's rules as arrays
(:meth:`Grammar.rows`, :meth:`Grammar.features`, :attr:`Grammar.terminal_counts`) and parses
into a :class:`Rule` only the few it keeps (:meth:`Grammar.rules_at`).

Nonterminals are ``[X,1]`` / ``[X,2]`` as in :mod:`circle.core.schemas`. Within a parsed
:class:`Rule` a target nonterminal is the position (0 or 1) of the co-indexed nonterminal on the
source side, so a source side written ``[X,2] de [X,1]`` matches the same key as ``[X,1] de [X,2]``.

A labelled (SAMT) grammar (Zollmann & Venugopal 2006; :data:`LABELLED_GRAMMARS`) has
nonterminals ``[LABEL,k]`` and a left-hand side per rule. Its keys group rules by (left-hand
side, source side), each key's label in :attr:`Grammar.key_labels`; a source nonterminal's trie
symbol is ``[LABEL]`` (:func:`nonterminal_symbol`), and a trie node that ends a source side holds
the list of its keys, one per left-hand side. Target nonterminals are read as co-indices only:
the source side's labels decide which chart cells a rule combines
(:func:`circle.decoder.chart.match`). Hiero's grammar is the labelled grammar whose
only label is X.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from circle.core.schemas import (
    ALL_SCHEMAS,
    LABELLED_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR,
    TableSchema,
)
from circle.core.tables import parquet_rows, read_batches, read_metadata
from circle.decoder.model import DECODER_FEATURES

UNLABELLED = "X"
"""Hiero's one nonterminal label, also the label of a pass-through word in a labelled chart."""


def nonterminal_symbol(label: str) -> str:
    """The trie symbol of a source nonterminal labelled ``label`` (terminals never contain
    ``[``)."""
    return f"[{label}]"


NT = nonterminal_symbol(UNLABELLED)
"""The trie symbol of Hiero's source nonterminal."""

_NONTERMINAL = re.compile(r"\[([^\[\],\s]+),([12])\]")

LABELLED_GRAMMARS = {LABELLED_GRAMMAR.name, LABELLED_PARAPHRASE_GRAMMAR.name}
"""Grammar schemas whose rules carry SAMT labels (see the module docstring)."""

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


def _parse_nonterminal(symbol: str, labelled: bool) -> tuple[str, int] | None:
    """The label and index of a nonterminal symbol, None if it is not one this grammar may have
    (an unlabelled grammar's nonterminals must be X's)."""
    match = _NONTERMINAL.fullmatch(symbol)
    if match is None or not (labelled or match.group(1) == UNLABELLED):
        return None
    return match.group(1), int(match.group(2))


def _nonterminal(symbol: str, rule: str, labelled: bool) -> tuple[str, int] | None:
    """The label and index of a nonterminal symbol, None for a terminal."""
    if not symbol.startswith("["):
        return None
    parsed = _parse_nonterminal(symbol, labelled)
    if parsed is None:
        raise GrammarError(f"unsupported nonterminal {symbol!r} in rule {rule!r}")
    return parsed


def source_key(source: str, labelled: bool = False) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A source side's trie key and its nonterminal indices in source order; ``labelled``
    allows nonterminal labels other than X."""
    symbols: list[str] = []
    order: list[int] = []
    for symbol in source.split():
        nonterminal = _nonterminal(symbol, source, labelled)
        if nonterminal is None:
            symbols.append(symbol)
        else:
            symbols.append(nonterminal_symbol(nonterminal[0]))
            order.append(nonterminal[1])
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

    def __init__(self, sources: Sequence[str] | pa.Array, targets: Sequence[str] | pa.Array,
                 values: np.ndarray, feature_names: Sequence[str],
                 lhs: Sequence[str] | pa.Array | None = None):
        values = np.asarray(values, dtype=np.float64)
        sides = _strings(sources) if lhs is None else _labelled_sides(_strings(lhs),
                                                                      _strings(sources))
        self._build([(sides, _strings(targets), values)], len(values), feature_names,
                    labelled=lhs is not None)

    @classmethod
    def from_batches(cls, batches: Iterable[tuple[pa.Array, pa.Array, np.ndarray]], rows: int,
                     feature_names: Sequence[str], labelled: bool = False) -> Grammar:
        """A grammar of ``rows`` rules given as batches of (sources, targets, values), so that
        the strings of only one batch are held at a time (:func:`load_grammar`); a
        ``labelled`` grammar's sources are given as ``lhs`` tab ``source``
        (:func:`_labelled_sides`)."""
        grammar = cls.__new__(cls)
        grammar._build(batches, rows, feature_names, labelled)
        return grammar

    def _build(self, batches: Iterable[tuple[pa.Array, pa.Array, np.ndarray]], rows: int,
               feature_names: Sequence[str], labelled: bool = False) -> None:
        self.feature_names: tuple[str, ...] = tuple(feature_names)
        self.labelled = labelled
        self._values = np.empty((rows, len(self.feature_names)), dtype=np.float64)
        codes = np.empty(rows, dtype=np.int32)  # each row's source side, numbered as it appears
        code_of: dict[str, int] = {}
        symbols = _Symbols(labelled)
        lengths = np.empty(rows, dtype=np.int32)
        ids: list[np.ndarray] = []
        done = 0
        for sources, targets, values in batches:
            end = done + len(values)
            if values.shape[1:] != (len(self.feature_names),) or end > rows \
                    or not len(sources) == len(targets) == len(values):
                raise GrammarError(f"a batch of {len(sources)} source sides, {len(targets)} "
                                   f"target sides and feature values of shape {values.shape} "
                                   f"after {done} of {rows} rules with features "
                                   f"{self.feature_names}")
            self._values[done:end] = values
            encoded = pc.dictionary_encode(sources)
            batch_codes = np.array([code_of.setdefault(source, len(code_of))
                                    for source in encoded.dictionary.to_pylist()], dtype=np.int32)
            codes[done:end] = batch_codes[encoded.indices.to_numpy(zero_copy_only=False)]
            batch_ids, lengths[done:end] = symbols.tokenise(targets)
            ids.append(batch_ids)
            done = end
        if done != rows:
            raise GrammarError(f"{done} rules given for a grammar of {rows}")
        self.target_ids = np.concatenate(ids) if ids else np.empty(0, dtype=np.int32)
        del ids
        self.target_offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
        del lengths
        self.vocabulary = tuple(symbols.vocabulary)
        self.word_index = {word: i for i, word in enumerate(self.vocabulary)}
        uniques = list(code_of)
        del code_of
        self.trie: dict = {}
        key_of_code = np.empty(len(uniques), dtype=np.int64)
        order_of_code = np.empty(len(uniques), dtype=np.int8)
        keys: dict[tuple, int] = {}  # by source side, or (left-hand side, source side)
        key_labels: list[str] = []
        for code, side in enumerate(uniques):
            label, source = side.split("\t", 1) if labelled else (UNLABELLED, side)
            key_symbols, order = source_key(source, labelled)
            group = (label, key_symbols) if labelled else key_symbols
            key = keys.get(group)
            if key is None:
                key = keys[group] = len(keys)
                key_labels.append(label)
                node = self.trie
                for symbol in key_symbols:
                    node = node.setdefault(symbol, {})
                if labelled:
                    node.setdefault(None, []).append(key)
                else:
                    node[None] = key
            key_of_code[code] = key
            order_of_code[code] = NONTERMINAL_ORDERS.index(order)
        self.key_labels: tuple[str, ...] = tuple(key_labels)
        """Each key's left-hand side label (all X in an unlabelled grammar)."""
        row_keys = key_of_code[codes]
        self._key_rows = np.argsort(row_keys, kind="stable")
        self._key_starts = np.concatenate(([0], np.cumsum(np.bincount(row_keys,
                                                                      minlength=len(keys)))))
        del row_keys
        self.terminal_counts = self._count(self.target_ids >= 0)
        row_orders = order_of_code[codes]
        self._check_nonterminals(uniques, codes, row_orders)
        del codes
        self._to_source_positions(row_orders)
        self._rules: dict[int, Rule] = {}
        self._word_penalty = DECODER_FEATURES.index("word_penalty")
        self._phrase_penalty = DECODER_FEATURES.index("phrase_penalty")

    def _count(self, flags: np.ndarray) -> np.ndarray:
        """Per row, how many of its target symbols are flagged."""
        cumulative = np.zeros(len(flags) + 1, dtype=np.int32 if len(flags) < 2**31 else np.int64)
        np.cumsum(flags, out=cumulative[1:])
        return (cumulative[self.target_offsets[1:]]
                - cumulative[self.target_offsets[:-1]]).astype(np.int64)

    def _check_nonterminals(self, sources: Sequence[str], codes: np.ndarray,
                            row_orders: np.ndarray) -> None:
        """Every target side uses each of its source side's nonterminals exactly once.

        Row r's source side is ``sources[codes[r]]``; ``row_orders`` holds each row's index
        into :data:`NONTERMINAL_ORDERS`. Target nonterminals are still co-indices here.
        """
        arity = np.array([len(order) for order in NONTERMINAL_ORDERS], dtype=np.int8)[row_orders]
        valid = ((self._count(self.target_ids == -1) == (arity >= 1))
                 & (self._count(self.target_ids == -2) == (arity == 2)))
        if not valid.all():
            row = int(np.flatnonzero(~valid)[0])
            target = " ".join(self.vocabulary[i] if i >= 0 else f"[X,{-i}]"
                              for i in self.target_symbols(np.array([row]))[0].tolist())
            raise GrammarError(f"rule {sources[codes[row]]!r} → {target!r}: the target side "
                               f"must use each source nonterminal exactly once")

    def _to_source_positions(self, row_orders: np.ndarray) -> None:
        """Renumber target nonterminals from co-indices to source positions (−1 − p)."""
        swapped = row_orders == NONTERMINAL_ORDERS.index((2, 1))
        symbols = np.repeat(swapped, np.diff(self.target_offsets)) & (self.target_ids < 0)
        self.target_ids[symbols] = -3 - self.target_ids[symbols]  # −1 ↔ −2

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, feature_names: Sequence[str],
                   labelled: bool = False) -> Grammar:
        """A grammar from a frame with columns ``lhs``, ``source``, ``target`` + features;
        unless ``labelled``, every left-hand side must be X."""
        other = set(frame["lhs"].unique()) - {UNLABELLED}
        if other and not labelled:
            raise GrammarError(f"only the left-hand side X is supported, found {sorted(other)}")
        return cls(frame["source"].tolist(), frame["target"].tolist(),
                   frame[list(feature_names)].to_numpy(dtype=np.float64), feature_names,
                   frame["lhs"].tolist() if labelled else None)

    def __len__(self) -> int:
        return len(self._values)

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


def _strings(texts: Sequence[str] | pa.Array) -> pa.Array:
    """Texts as an Arrow string array."""
    return texts if isinstance(texts, pa.Array) else pa.array(texts, type=pa.large_string())


def _labelled_sides(lhs: pa.Array, sources: pa.Array) -> pa.Array:
    """A labelled grammar's (left-hand side, source side) pairs as the strings ``lhs`` tab
    ``source``, which :class:`Grammar` groups its keys by (labels and sources have no tab)."""
    return pc.binary_join_element_wise(lhs.cast(pa.large_string()),
                                       sources.cast(pa.large_string()),
                                       pa.scalar("\t", pa.large_string()))


class _Symbols:
    """The target symbols of a grammar's batches: words numbered as they first appear (the
    ``vocabulary``), nonterminals ``[X,n]`` (a labelled grammar's ``[LABEL,n]``) as −n."""

    def __init__(self, labelled: bool = False) -> None:
        self.vocabulary: list[str] = []
        self._ids: dict[str, int] = {}
        self._labelled = labelled

    def tokenise(self, targets: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """The symbol ids of a batch's target sides, concatenated, and each side's length."""
        tokens = pc.utf8_split_whitespace(targets)
        encoded = pc.dictionary_encode(pc.list_flatten(tokens))
        remap = np.array([self._id(symbol, targets)
                          for symbol in encoded.dictionary.to_pylist()], dtype=np.int32)
        return (remap[encoded.indices.to_numpy(zero_copy_only=False)],
                pc.list_value_length(tokens).to_numpy(zero_copy_only=False))

    def _id(self, symbol: str, targets: pa.Array) -> int:
        known = self._ids.get(symbol)
        if known is not None:
            return known
        if symbol.startswith("["):
            parsed = _parse_nonterminal(symbol, self._labelled)
            if parsed is None:
                rule = next(text for text in targets.to_pylist() if symbol in text.split())
                raise GrammarError(f"unsupported nonterminal {symbol!r} in rule {rule!r}")
            self._ids[symbol] = -parsed[1]
        else:
            self._ids[symbol] = len(self.vocabulary)
            self.vocabulary.append(symbol)
        return self._ids[symbol]


def _grammar_schema(path: str | os.PathLike) -> TableSchema:
    name = read_metadata(path).get("schema", "")
    schema = ALL_SCHEMAS.get(name)
    if schema is None or not schema.features:
        grammars = sorted(known for known, schema in ALL_SCHEMAS.items() if schema.features)
        raise GrammarError(f"{path}: table schema '{name}' is not a grammar schema "
                           f"{grammars}")
    return schema


def grammar_features(path: str | os.PathLike) -> tuple[str, ...]:
    """The feature names of a grammar table, from its metadata (the rules are not read)."""
    return tuple(_grammar_schema(path).features)


LOAD_BATCH_ROWS = 1 << 20
"""Rules whose strings :func:`load_grammar` holds at a time."""


def load_grammar(path: str | os.PathLike) -> Grammar:
    """Load a grammar Parquet table; its schema (table metadata) names the feature columns,
    whose values must all be finite, and whether its rules are labelled
    (:data:`LABELLED_GRAMMARS`; an unlabelled table's left-hand sides must all be X). The
    table is read in batches of :data:`LOAD_BATCH_ROWS` rules, whose strings are dropped once
    tokenised and numbered."""
    schema = _grammar_schema(path)
    features = list(schema.features)
    labelled = schema.name in LABELLED_GRAMMARS

    def batches() -> Iterator[tuple[pa.Array, pa.Array, np.ndarray]]:
        for batch in read_batches(path, schema, ["lhs", "source", "target", *features],
                                  LOAD_BATCH_ROWS):
            other = set(pc.unique(batch["lhs"]).to_pylist()) - {UNLABELLED}
            if other and not labelled:
                raise GrammarError(f"{path}: only the left-hand side X is supported, found "
                                   f"{sorted(other)}")
            values = np.column_stack([batch[name].to_numpy(zero_copy_only=False)
                                      for name in features]).astype(np.float64, copy=False)
            sources = (_labelled_sides(batch["lhs"], batch["source"]) if labelled
                       else batch["source"])
            yield sources, batch["target"], values

    grammar = Grammar.from_batches(batches(), parquet_rows(path), features, labelled)
    pa.default_memory_pool().release_unused()  # Arrow's allocator keeps what loading freed
    non_finite = (~np.isfinite(grammar.features(slice(None)))).sum(axis=0)
    problems = [f"column {name} has {count} non-finite values"
                for name, count in zip(features, non_finite, strict=True) if count]
    if problems:
        raise GrammarError(f"{path}: " + "; ".join(problems))
    return grammar

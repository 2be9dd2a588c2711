"""Filtering a grammar to the rules a set of input sentences can use.

A rule is kept when its source side matches some span of some input sentence: its terminal
chunks occur in order as contiguous word sequences, each nonterminal covers at least one word
between (or around) them, and the whole span has at most ``span_limit`` words (the decoder's limit
on non-glue rules; Chiang 2007 used 10). Each distinct source side is checked once: first DuckDB
drops those with a terminal chunk that is no n-gram of the sentences (most of them), then the
sentences that contain all chunks of a remaining one are searched, greedily taking the earliest
position of each next chunk, which gives the shortest span for a given start. The kept rules are
streamed to the output, so memory stays bounded for grammars of any size (:func:`filter_grammar`,
the workflow's ``filter_grammar``).

New text (``circle translate``) needs the rules of a full grammar that can apply to a few
sentences at a time (tens of millions of rules on the default experiment: loading them all does
not fit in memory). :func:`rules_for` reads them in bounded memory: the grammar table is sorted
by source side and each of its Parquet row groups records the least and greatest source side it
holds, and a rule can only match a sentence if the first terminal of its source side is a word of
the sentence, so only the row groups holding the source sides that begin with an input word (or
with a nonterminal and then an input word) are read, one at a time (:class:`RowGroups`, which may
keep them for the next sentences), and within them only the rows in those key ranges
(:func:`key_ranges`) get the exact check that :func:`filter_grammar` applies
(:meth:`SentenceIndex.matches`).
"""

from __future__ import annotations

import bisect
import os
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from circle.core.schemas import GRAMMAR, PARAPHRASE_GRAMMARS
from circle.core.tables import scratch_directory
from circle.grammar.io import (
    carried_metadata,
    checked_parquet,
    connect,
    grammar_schema,
    write_relation,
)

GRAMMAR_SCHEMAS = (GRAMMAR, *PARAPHRASE_GRAMMARS)

LAST_KEY = "\U0010ffff"
"""A character after every other: ``f"{prefix} {LAST_KEY}"`` bounds the keys that start with
``prefix`` (:func:`key_ranges`)."""


@dataclass(frozen=True)
class SourcePattern:
    """A rule's source side: terminal chunks and the nonterminals before, between and after."""

    chunks: tuple[str, ...]
    lengths: tuple[int, ...]
    """Words per chunk."""
    gaps: tuple[int, ...]
    """Nonterminal count before the first chunk, between consecutive chunks, after the last."""

    @classmethod
    def parse(cls, source: str) -> SourcePattern:
        chunks: list[str] = []
        lengths: list[int] = []
        gaps = [0]
        words: list[str] = []
        for symbol in [*source.split(), "[end]"]:
            if symbol[0] != "[":
                words.append(symbol)
                continue
            if words:
                chunks.append(" ".join(words))
                lengths.append(len(words))
                gaps.append(0)
                words = []
            gaps[-1] += symbol != "[end]"
        return cls(tuple(chunks), tuple(lengths), tuple(gaps))


class SentenceIndex:
    """Where each n-gram (up to ``span_limit`` words) occurs in a set of tokenised sentences."""

    def __init__(self, sentences: Iterable[str], span_limit: int):
        self.span_limit = span_limit
        self.lengths: list[int] = []
        self.positions: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        for number, sentence in enumerate(sentences):
            words = sentence.split()
            self.lengths.append(len(words))
            for start in range(len(words)):
                for end in range(start + 1, min(len(words), start + span_limit) + 1):
                    self.positions[" ".join(words[start:end])][number].append(start)
        self.positions = {ngram: dict(where) for ngram, where in self.positions.items()}

    def matches(self, pattern: SourcePattern) -> bool:
        """Whether ``pattern`` matches a span of at most ``span_limit`` words in some sentence."""
        minimum = sum(pattern.lengths) + sum(pattern.gaps)
        if minimum > self.span_limit:
            return False
        if not pattern.chunks:
            return any(length >= minimum for length in self.lengths)
        occurrences = [self.positions.get(chunk) for chunk in pattern.chunks]
        if None in occurrences:
            return False
        if len(occurrences) == 1 and minimum == pattern.lengths[0]:
            return True  # a purely lexical rule: the n-gram occurs
        together = occurrences[0].keys()  # the sentences with every chunk
        for where in occurrences[1:]:
            together = together & where.keys()
        return any(self._fits(pattern.gaps, pattern.lengths,
                              [where[number] for where in occurrences], self.lengths[number])
                   for number in together)

    def _fits(self, gaps: Sequence[int], chunk_lengths: Sequence[int],
              starts: Sequence[Sequence[int]], sentence_length: int) -> bool:
        for first in starts[0]:
            begin = first - gaps[0]
            if begin < 0:
                continue
            end = first + chunk_lengths[0]
            for k in range(1, len(starts)):
                following = [s for s in starts[k] if s >= end + gaps[k]]
                if not following:
                    return False  # later starts of the first chunk cannot do better
                end = following[0] + chunk_lengths[k]
            end += gaps[-1]
            if end <= sentence_length and end - begin <= self.span_limit:
                return True
            if end > sentence_length:
                return False
        return False


def matching_phrases(con: duckdb.DuckDBPyConnection, phrases_query: str,
                     sentences: Iterable[str], span_limit: int) -> pa.Table:
    """The distinct phrases of ``phrases_query`` (a SQL query with a column ``phrase``) that
    match some input sentence, as a one-column table ``phrase``.

    DuckDB first drops the phrases with a terminal chunk that is no n-gram of the sentences;
    the few that remain get the exact check of :meth:`SentenceIndex.matches`.
    """
    index = SentenceIndex(sentences, span_limit)
    con.register("sentence_ngrams", pa.table({"ngram": pa.array(list(index.positions),
                                                                pa.string())}))
    candidates = con.execute(f"""
        WITH phrases AS (SELECT DISTINCT phrase FROM ({phrases_query})),
        chunks AS (
            SELECT phrase, trim(unnest(regexp_split_to_array(phrase, '\\[[^] ]*,[0-9]\\]')))
                   AS chunk
            FROM phrases),
        missing AS (
            SELECT DISTINCT phrase FROM chunks c ANTI JOIN sentence_ngrams n ON c.chunk = n.ngram
            WHERE c.chunk <> '')
        SELECT phrase FROM phrases ANTI JOIN missing USING (phrase) ORDER BY phrase""").fetchall()
    con.unregister("sentence_ngrams")
    kept = [phrase for phrase, in candidates if index.matches(SourcePattern.parse(phrase))]
    return pa.table({"phrase": pa.array(kept, pa.string())})


def filter_grammar(grammar_path: str | os.PathLike, sentences: Iterable[str],
                   out_path: str | os.PathLike, span_limit: int = 10, threads: int = 1,
                   memory_limit: str | None = None,
                   provenance: Mapping[str, str] | None = None) -> int:
    """Write the rules of a grammar table usable on ``sentences``; returns how many were kept.

    ``sentences`` are tokenised, lowercased, space-separated input sentences (Spanish for a
    bilingual grammar, English for a paraphrase grammar). The output has the input's schema
    and table metadata.
    """
    if span_limit < 1:
        raise ValueError("span_limit must be at least 1")
    schema = grammar_schema(grammar_path, GRAMMAR_SCHEMAS)
    metadata = carried_metadata(grammar_path)
    metadata["filter_span_limit"] = str(span_limit)
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        grammar = checked_parquet(grammar_path)
        kept = matching_phrases(con, f"SELECT source AS phrase FROM {grammar}", sentences,
                                span_limit)
        con.register("kept", kept)
        return write_relation(con.sql(f"""
            SELECT g.* FROM {grammar} g SEMI JOIN kept k ON g.source = k.phrase
            ORDER BY g.source, g.target"""), out_path, schema, provenance, metadata)


def key_ranges(sentences: Iterable[str], max_leading_nonterminals: int = 2,
               span_limit: int | None = None) -> list[tuple[str, str]]:
    """Sorted, merged ranges [low, high] of the source sides that can match ``sentences``: a
    source side begins with up to ``max_leading_nonterminals`` nonterminals, then a word of the
    input (the rule's first terminal), then nothing, the word that follows it in the input
    (terminals side by side in a rule match words side by side), or a nonterminal and then
    nothing, a nonterminal or a later word of the input (within ``span_limit`` words of the
    first; None: any)."""
    found = set()
    for sentence in sentences:
        words = sentence.split()
        for position, word in enumerate(words):
            end = len(words) if span_limit is None else position + span_limit
            for count in range(max_leading_nonterminals + 1):
                first = " ".join([*(f"[X,{k}]" for k in range(1, count + 1)), word])
                gap = f"{first} [X,{count + 1}]"
                found.update([(first, first), (gap, gap), (f"{gap} [", f"{gap} [{LAST_KEY}")])
                follows = [(first, next_word) for next_word in words[position + 1:position + 2]]
                follows += [(gap, later) for later in words[position + 2:end]]
                found.update((f"{key} {after}", f"{key} {after} {LAST_KEY}")
                             for key, after in follows)
    merged: list[tuple[str, str]] = []
    for low, high in sorted(found):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


@dataclass
class RuleReadStats:
    """What one :func:`rules_for` read cost: the table's row groups, those read, the rows
    checked against the input sentences and the rules kept."""

    row_groups: int = 0
    row_groups_read: int = 0
    rows_checked: int = 0
    rules: int = 0


class RowGroups:
    """A grammar table's row groups, read as they are asked for; with ``max_bytes`` > 0 those
    read are kept in memory, the least recently used dropped beyond ``max_bytes``, so that a
    warm translator (``circle translate --stream``) reads the groups holding the rules of
    frequent words once, not for every line."""

    def __init__(self, grammar_path: str | os.PathLike, max_bytes: int = 0):
        self.parquet = pq.ParquetFile(grammar_path)
        self.max_bytes = max_bytes
        self.kept: OrderedDict[int, pa.Table] = OrderedDict()
        self.kept_bytes = 0

    def read(self, group: int, columns: Sequence[str] | None = None) -> pa.Table:
        """Row group ``group``: its ``columns`` (None: all) where groups are not kept, else
        all its columns, from memory where it was read before."""
        table = self.kept.get(group)
        if table is not None:
            self.kept.move_to_end(group)
            return table
        if self.max_bytes <= 0:
            return self.parquet.read_row_group(group, columns=columns)
        table = self.kept[group] = self.parquet.read_row_group(group)
        self.kept_bytes += table.nbytes
        while self.kept_bytes > self.max_bytes and len(self.kept) > 1:
            self.kept_bytes -= self.kept.popitem(last=False)[1].nbytes
        return table


def _within(ranges: Sequence[tuple[str, str]], low: str, high: str) -> list[tuple[str, str]]:
    """The sorted, disjoint ``ranges`` that meet [low, high]."""
    at = bisect.bisect_left(ranges, (low,))
    if at > 0 and ranges[at - 1][1] >= low:
        at -= 1
    end = at
    while end < len(ranges) and ranges[end][0] <= high:
        end += 1
    return list(ranges[at:end])


def _bisect(values: pa.StringArray, key: str, right: bool = False) -> int:
    """Where ``key`` goes in the sorted ``values`` (bisect's left or right end), probing
    O(log n) of them rather than converting them all."""
    find = bisect.bisect_right if right else bisect.bisect_left
    return find(values, key, key=lambda value: value.as_py())


def rules_for(grammar_path: str | os.PathLike, sentences: Sequence[str], span_limit: int = 10,
              stats: RuleReadStats | None = None, groups: RowGroups | None = None
              ) -> pa.Table:
    """The rules of a grammar table (sorted by source side, as the workflow writes them) that
    can apply to ``sentences`` (tokenised), read in bounded memory (module doc); ``groups``
    reads its row groups (and may keep them)."""
    groups = groups if groups is not None else RowGroups(grammar_path)
    parquet = groups.parquet
    names = parquet.schema_arrow.names
    source_column = names.index("source")
    ranges = key_ranges(sentences, span_limit=span_limit)
    index = SentenceIndex(sentences, span_limit)
    vocabulary = pa.array(sorted({word for sentence in sentences for word in sentence.split()}
                                 | {f"[X,{k}]" for k in range(1, 10)}), pa.string())
    verdicts: dict[str, bool] = {}
    stats = stats if stats is not None else RuleReadStats()
    stats.row_groups = parquet.metadata.num_row_groups
    kept: list[pa.Table] = []
    previous_high = None
    for group in range(parquet.metadata.num_row_groups):
        column = parquet.metadata.row_group(group).column(source_column).statistics
        bounded = column is not None and column.has_min_max
        if bounded:
            if previous_high is not None and column.min < previous_high:
                raise ValueError(f"{grammar_path}: the rules are not sorted by source side")
            previous_high = column.max
            inside = _within(ranges, column.min, column.max)
            if not inside:
                continue
        stats.row_groups_read += 1
        sources = groups.read(group, ["source"])["source"].combine_chunks()
        if bounded:  # sorted: the rows in the key ranges, by binary search
            found = [np.arange(_bisect(sources, low), _bisect(sources, high, right=True))
                     for low, high in inside]
            rows = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        else:  # no statistics to rely on: every row is checked
            rows = np.arange(len(sources))
        if not len(rows):
            continue
        stats.rows_checked += len(rows)
        selected = sources.take(pa.array(rows))
        matching = _matching_sources(pc.unique(selected), vocabulary, index, verdicts)
        if len(matching):
            keep = np.asarray(pc.is_in(selected, value_set=matching).to_numpy(
                zero_copy_only=False), dtype=bool)
            table = groups.read(group)
            kept.append(table.take(pa.array(rows[keep])))
    schema = parquet.schema_arrow
    result = pa.concat_tables(kept) if kept else schema.empty_table()
    stats.rules = result.num_rows
    return result


def _matching_sources(unique: pa.Array, vocabulary: pa.Array, index: SentenceIndex,
                      verdicts: dict[str, bool]) -> pa.Array:
    """The source sides among ``unique`` that match an input sentence: those with a symbol that
    is neither an input word nor a nonterminal are dropped at once (Arrow), the rest get the
    exact check (``verdicts`` caches it across row groups)."""
    symbols = pc.split_pattern(unique, " ")
    outside = pc.invert(pc.is_in(pc.list_flatten(symbols), value_set=vocabulary))
    parents = pc.list_parent_indices(symbols).to_numpy()
    bad = np.bincount(parents[np.asarray(outside.to_numpy(zero_copy_only=False), dtype=bool)],
                      minlength=len(unique))
    kept = []
    for source in unique.filter(pa.array(bad == 0)).to_pylist():
        verdict = verdicts.get(source)
        if verdict is None:
            verdict = verdicts[source] = index.matches(SourcePattern.parse(source))
        if verdict:
            kept.append(source)
    return pa.array(kept, unique.type)

"""Filtering a grammar to the rules a set of input sentences can use.

A rule is kept when its source side matches some span of some input sentence: its terminal
chunks occur in order as contiguous word sequences, each nonterminal covers at least one word
between (or around) them, and the whole span has at most ``span_limit`` words (the decoder's limit
on non-glue rules; Chiang 2007 used 10). Each distinct source side is checked once: first DuckDB
drops those with a terminal chunk that is no n-gram of the sentences (most of them), then the
sentences that contain all chunks of a remaining one are searched, greedily taking the earliest
position of each next chunk, which gives the shortest span for a given start. The kept rules are
streamed to the output, so memory stays bounded for grammars of any size.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

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

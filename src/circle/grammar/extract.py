"""Hiero rule extraction (Chiang 2007, §3.2) with the fractional counts of thesis eq. 3.3.

For each aligned sentence pair:

1. *Initial phrase pairs* are the phrase pairs consistent with the word alignment (no link leaves
   the pair) with at most ``max_initial_source``/``max_initial_target`` words. They are *tight*:
   the first and last word on both sides is aligned. Chiang (2007) keeps only the smallest of the
   phrase pairs that contain the same alignment points, as Thrax (``loose false``) and cdec do; so
   an unaligned word never begins or ends an initial phrase (or a nonterminal's span). It is kept
   as a terminal inside rules, and an unaligned word at the edge of a sentence is in no rule.
   Being tight, each pair contains at least one link.
2. *Rules* are an initial phrase pair with up to ``max_nonterminals`` smaller initial phrase pairs
   inside it replaced by co-indexed nonterminals: at most ``max_source_symbols`` source symbols
   (for every rule, as in Chiang 2007 and cdec; Thrax allows longer purely lexical rules), source
   nonterminals not adjacent, and at least ``min_aligned_terminals`` aligned source terminals
   (whose partners are then target terminals, so the rule has an aligned terminal pair).
   Source nonterminals are numbered left to right, ``[X,1]`` then ``[X,2]``.
3. *Counts*: each initial phrase pair gives count 1, shared evenly by the rules it yields, and a
   rule's count sums these shares over the corpus: c = sum_j 1/n_j (eq. 3.3).

Features: p(e|f) = c(f,e)/c(f) and p(f|e) = c(f,e)/c(e) where c(e) pools the English sides that
differ only in nonterminal numbering (as Moses scores target sides with nonterminal alignment
kept apart). The lexical weights lex(e|f), lex(f|e) are Koehn et al. (2003)'s
(:mod:`circle.grammar.lexical`), computed for every occurrence from its own internal alignment;
a rule seen with several internal alignments keeps the highest weight, as Koehn et al. (2003)
prescribe (Moses keeps the most frequent alignment instead). Everything is stored as natural logs.

**Labelled extraction** (SAMT, Zollmann & Venugopal 2006; Ganitkevitch & Callison-Burch, draft
§"SCFGs in Translation"): given a parse of each English side (a
:class:`~circle.grammar.samt.Bracketing` over the sentence's target tokens), the same phrase
pairs and holes give the same rules, but a rule's left-hand side is the SAMT label of its target
span and each nonterminal the label of its hole's target span (:func:`circle.grammar.samt.
samt_label`), written ``[NP,1]`` with the label escaped (:func:`circle.grammar.samt.
nonterminal`); the source side's nonterminal carries the label of the target span it is
co-indexed with, so "the foreign side" of a labelled rule includes its nonterminals' labels, as
in SAMT. The draft's rule C → ⟨γ, α, ∼⟩ is (``lhs``, ``source``, ``target``) with ∼ the
co-indexing. Counts and features are today's, per labelled rule: a phrase pair's eq. 3.3 count is
shared by its rules as before (its labels do not multiply them), and the relative frequencies
condition on the left-hand side as well, p(e|f) = c(C, f, e)/c(C, f) and p(f|e) =
c(C, f, e)/c(C, e), the distributions that pivoting keyed on (C, f) sums over; the lexical
weights do not depend on labels. With one label X (no parses) every table is today's, byte for
byte.

Extraction is three steps, which the workflow runs as jobs (scatter/gather) and
:func:`extract_grammar` in one process: :func:`split_for_counting` checks the aligned bitext,
writes its lexical table and cuts it into parts of whole batches; :func:`count_part` counts a
part's rules batch by batch (aggregated by Arrow), so its memory follows the batch size, not the
corpus; :func:`merge_counts` adds the batches' counts up in DuckDB, out of core within a memory
limit. Counts are added as exact decimals, so the grammar depends neither on thread scheduling
nor on the number of parts. On the default Bible training set (27.6 k pairs) there are 3.8 M
initial phrases, 75 M rule occurrences and 20.6 M rules.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from circle.align import AlignmentError, check_bitext_digest, parse_links
from circle.core.jobs import die_with_parent
from circle.core.progress import progress
from circle.core.schemas import (
    ALIGNED_BITEXT,
    ALIGNMENT,
    BITEXT,
    GRAMMAR,
    LABELLED_GRAMMAR,
    LABELLED_RULE_COUNTS,
    LEXICAL,
    RULE_COUNTS,
)
from circle.core.tables import (
    parquet_rows,
    read_metadata,
    read_table,
    scratch_directory,
    write_table,
)
from circle.grammar.io import (
    GrammarInputError,
    RelationWriter,
    checked_parquet,
    connect,
    write_relation,
)
from circle.grammar.lexical import (
    LexicalTable,
    Link,
    lexical_frame,
    lexical_table,
    table_from_frame,
    word_factors,
)
from circle.grammar.samt import Bracketing, escape_label, nonterminal, samt_label

logger = logging.getLogger(__name__)

Phrase = tuple[int, int, int, int]
"""An initial phrase pair: first and last source index, first and last target index (inclusive)."""
Rule = tuple[str, str, float, float, float]
"""One rule occurrence: source, target, fractional count, ln lex(e|f), ln lex(f|e)."""
LabelledRule = tuple[str, str, str, float, float, float]
"""One labelled rule occurrence: left-hand side (escaped SAMT label), then a :data:`Rule`."""

LHS = "X"
X1, X2 = [f"[{LHS},1]"], [f"[{LHS},2]"]
"""The two nonterminals of a Hiero rule, as one-word lists for splicing into word lists."""
DECIMAL = "DECIMAL(38, 18)"
"""Exact type for adding counts: the sum does not depend on the order of the addends."""


@dataclass(frozen=True)
class ExtractionLimits:
    """Rule extraction limits; the defaults are Chiang's (2007, §3.2)."""

    max_initial_source: int = 10
    max_initial_target: int = 10
    max_source_symbols: int = 5
    max_nonterminals: int = 2
    allow_adjacent_nonterminals: bool = False
    min_aligned_terminals: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.max_nonterminals <= 2:
            raise ValueError("max_nonterminals must be 0, 1 or 2 (Hiero rules have at most two)")
        for name in ("max_initial_source", "max_initial_target", "max_source_symbols",
                     "min_aligned_terminals"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


def extraction_limits(options: Mapping[str, Any]) -> ExtractionLimits:
    """The limits in a config's ``grammar`` section (its other keys say how the work is split)."""
    return ExtractionLimits(**{field.name: options[field.name] for field in fields(ExtractionLimits)
                               if field.name in options})


@dataclass(frozen=True)
class ExtractionStats:
    """What :func:`extract_grammar` did: corpus size, work done, distinct rules written."""

    sentences: int
    initial_phrases: int
    rule_occurrences: int
    rules: int
    seconds: float


def initial_phrases(source_len: int, target_len: int, links: Sequence[Link],
                    limits: ExtractionLimits) -> list[Phrase]:
    """All tight initial phrase pairs consistent with ``links``, ordered by source span."""
    target_min = [target_len] * source_len
    target_max = [-1] * source_len
    source_min = [source_len] * target_len
    source_max = [-1] * target_len
    for i, j in links:
        target_min[i] = min(target_min[i], j)
        target_max[i] = max(target_max[i], j)
        source_min[j] = min(source_min[j], i)
        source_max[j] = max(source_max[j], i)
    phrases = []
    for i1 in range(source_len):
        if target_max[i1] < 0:
            continue
        j1, j2 = target_len, -1
        for i2 in range(i1, min(source_len, i1 + limits.max_initial_source)):
            if target_max[i2] < 0:
                continue
            j1, j2 = min(j1, target_min[i2]), max(j2, target_max[i2])
            if j2 - j1 >= limits.max_initial_target:
                break
            if all(source_min[j] >= i1 and source_max[j] <= i2
                   for j in range(j1, j2 + 1) if source_max[j] >= 0):
                phrases.append((i1, i2, j1, j2))
    return phrases


def _hole_sets(phrase: Phrase, by_start: Sequence[Sequence[Phrase]], aligned_prefix: Sequence[int],
               limits: ExtractionLimits) -> list[tuple[Phrase, ...]]:
    """The nonterminal spans (in source order) that make ``phrase`` a valid rule; ``()`` = none.

    ``by_start[i]`` lists the initial phrases starting at source word i, longest first.
    """
    i1, i2 = phrase[0], phrase[1]
    length = i2 - i1 + 1
    aligned = aligned_prefix[i2 + 1] - aligned_prefix[i1]
    max_symbols, max_holes = limits.max_source_symbols, limits.max_nonterminals
    min_aligned = limits.min_aligned_terminals
    gap = 0 if limits.allow_adjacent_nonterminals else 1
    results: list[tuple[Phrase, ...]] = []
    if length <= max_symbols and aligned >= min_aligned:
        results.append(())

    def extend(chosen: tuple[Phrase, ...], start: int, covered: int, covered_aligned: int) -> None:
        count = len(chosen) + 1
        last = count == max_holes
        for s in range(start, i2 + 1):
            for hole in by_start[s]:
                end = hole[1]
                if end > i2 or (s == i1 and end == i2):
                    continue
                now_covered = covered + end - s + 1
                symbols = length - now_covered + count
                if last and symbols > max_symbols:
                    break  # shorter holes starting here leave even more symbols
                now_aligned = covered_aligned + aligned_prefix[end + 1] - aligned_prefix[s]
                if aligned - now_aligned < min_aligned:
                    continue  # more holes cannot bring aligned terminals back
                holes = chosen + (hole,)
                if symbols <= max_symbols:
                    results.append(holes)
                if not last:
                    extend(holes, end + 1 + gap, now_covered, now_aligned)

    if max_holes:
        extend((), i1, 0, 0)
    return results


def _with_holes(words: Sequence[str], first: int, last: int,
                holes: Sequence[tuple[int, int]], labels: Sequence[list[str]]) -> str:
    """``words[first:last+1]`` with the (start, end) spans ``holes`` (in order) replaced by
    the nonterminals ``labels``; one or two holes."""
    if len(holes) == 1:
        return " ".join(words[first:holes[0][0]] + labels[0] + words[holes[0][1] + 1:last + 1])
    (start1, end1), (start2, end2) = holes
    return " ".join(words[first:start1] + labels[0] + words[end1 + 1:start2] + labels[1]
                    + words[end2 + 1:last + 1])


def sentence_rules(source: Sequence[str], target: Sequence[str], links: Sequence[Link],
                   limits: ExtractionLimits, target_factors: Sequence[float],
                   source_factors: Sequence[float],
                   phrases: Sequence[Phrase] | None = None,
                   parse: Bracketing | None = None) -> Iterator[Rule] | Iterator[LabelledRule]:
    """Every rule occurrence of one aligned sentence pair, with its eq. 3.3 share of count.

    ``target_factors``/``source_factors`` are the per-word log lexical factors of
    :func:`circle.grammar.lexical.word_factors`; ``phrases`` the sentence's
    :func:`initial_phrases` if already computed. Without ``parse`` the rules are Hiero's
    (:data:`Rule`, label X); with the parse of ``target`` they are labelled
    (:data:`LabelledRule`, module docstring), the same rules with the same shares.
    """
    if parse is not None and parse.words != tuple(target):
        raise GrammarInputError(f"the parse's words {' '.join(parse.words)!r} are not the "
                                f"target side {' '.join(target)!r}")
    if phrases is None:
        phrases = initial_phrases(len(source), len(target), links, limits)
    by_start: list[list[Phrase]] = [[] for _ in range(len(source) + 1)]
    for phrase in phrases:
        by_start[phrase[0]].append(phrase)
    for starting in by_start:
        starting.reverse()  # longest first
    aligned_words = {i for i, _ in links}
    aligned_prefix = [0]
    for i in range(len(source)):
        aligned_prefix.append(aligned_prefix[-1] + (i in aligned_words))
    target_prefix, source_prefix = [0.0], [0.0]
    for value in target_factors:
        target_prefix.append(target_prefix[-1] + value)
    for value in source_factors:
        source_prefix.append(source_prefix[-1] + value)

    for phrase in phrases:
        i1, i2, j1, j2 = phrase
        hole_sets = _hole_sets(phrase, by_start, aligned_prefix, limits)
        if not hole_sets:
            continue
        share = 1.0 / len(hole_sets)
        phrase_lex_ef = target_prefix[j2 + 1] - target_prefix[j1]
        phrase_lex_fe = source_prefix[i2 + 1] - source_prefix[i1]
        lhs = None if parse is None else _label(parse, j1, j2)
        for holes in hole_sets:
            if not holes:
                rule = (" ".join(source[i1:i2 + 1]), " ".join(target[j1:j2 + 1]), share,
                        phrase_lex_ef, phrase_lex_fe)
                yield rule if lhs is None else (lhs, *rule)
                continue
            lex_ef, lex_fe = phrase_lex_ef, phrase_lex_fe
            for h1, h2, g1, g2 in holes:
                lex_ef -= target_prefix[g2 + 1] - target_prefix[g1]
                lex_fe -= source_prefix[h2 + 1] - source_prefix[h1]
            source_holes = [(h[0], h[1]) for h in holes]
            target_holes = [(h[2], h[3]) for h in holes]
            if lhs is None:
                first, second = X1, X2
            else:  # each nonterminal is labelled by its hole's target span
                first, second = X1, X2  # (an unused second of a one-hole rule stays X)
                for k, (_, _, g1, g2) in enumerate(holes, 1):
                    labelled = [nonterminal(samt_label(parse, (g1, g2 + 1)), k)]
                    first, second = (labelled, second) if k == 1 else (first, labelled)
            if len(holes) == 2 and target_holes[1] < target_holes[0]:
                target_side = _with_holes(target, j1, j2, target_holes[::-1], (second, first))
            else:
                target_side = _with_holes(target, j1, j2, target_holes, (first, second))
            rule = (_with_holes(source, i1, i2, source_holes, (first, second)), target_side,
                    share, lex_ef, lex_fe)
            yield rule if lhs is None else (lhs, *rule)


def _label(parse: Bracketing, first: int, last: int) -> str:
    """The escaped SAMT label of the target words ``first`` to ``last`` (inclusive)."""
    return escape_label(samt_label(parse, (first, last + 1)))


Sentence = tuple[list[str], list[str], list[Link]]
"""Source words, target words and alignment links of one sentence pair."""

OCCURRENCES = pa.schema([("source", pa.string()), ("target", pa.string()), ("count", pa.float64()),
                         ("lex_ef", pa.float64()), ("lex_fe", pa.float64())])
LABELLED_OCCURRENCES = pa.schema([("lhs", pa.string()), *OCCURRENCES])
OCCURRENCE_BATCH = 1 << 18
"""Rule occurrences collected as Python objects before they become Arrow columns: a batch of
1000 Bible verses has 2.7 M occurrences, which as Python strings and floats took 1.8 GB."""


def count_rules(sentences: Sequence[Sentence], limits: ExtractionLimits,
                table: LexicalTable, parses: Sequence[Bracketing] | None = None
                ) -> tuple[pa.Table, int, int]:
    """Rule counts of a batch of sentences, and its numbers of initial phrases and occurrences.

    The table (``RULE_COUNTS`` columns) has source, target, count (eq. 3.3 summed over the batch)
    and the best ln lex(e|f) and ln lex(f|e) seen (``lex_ef``, ``lex_fe``). Occurrences are
    collected in Arrow columns and aggregated by Arrow, single-threaded, so sums are added in
    occurrence order (the same sums whatever the columns' chunking; the rows' order may differ).
    With ``parses`` (one per sentence, over its target words) the rules are labelled and the
    table has ``LABELLED_RULE_COUNTS`` columns, a rule being (lhs, source, target).
    """
    if parses is not None and len(parses) != len(sentences):
        raise ValueError(f"{len(parses)} parses for {len(sentences)} sentence pairs")
    schema = OCCURRENCES if parses is None else LABELLED_OCCURRENCES
    lhss: list[str] = []
    sources: list[str] = []
    targets: list[str] = []
    shares: list[float] = []
    lex_efs: list[float] = []
    lex_fes: list[float] = []
    lists = (sources, targets, shares, lex_efs, lex_fes)
    if parses is not None:
        lists = (lhss, *lists)
    batches: list[pa.RecordBatch] = []

    def to_arrow() -> None:
        batches.append(pa.record_batch([pa.array(values, field.type) for values, field
                                        in zip(lists, schema, strict=True)], schema))
        for values in lists:
            values.clear()

    phrase_total = 0
    for k, (source, target, links) in enumerate(sentences):
        phrases = initial_phrases(len(source), len(target), links, limits)
        if not phrases:
            continue
        phrase_total += len(phrases)
        target_factors, source_factors = word_factors(source, target, links, table)
        rules = sentence_rules(source, target, links, limits, target_factors, source_factors,
                               phrases, None if parses is None else parses[k])
        if parses is not None:
            rules = _lhs_recorded(rules, lhss)
        for rule_source, rule_target, share, lex_ef, lex_fe in rules:
            sources.append(rule_source)
            targets.append(rule_target)
            shares.append(share)
            lex_efs.append(lex_ef)
            lex_fes.append(lex_fe)
        if len(sources) >= OCCURRENCE_BATCH:
            to_arrow()
    to_arrow()
    occurrences = pa.Table.from_batches(batches, schema)
    keys = schema.names[:-3]  # [lhs,] source, target
    counts = occurrences.group_by(keys, use_threads=False).aggregate(
        [("count", "sum"), ("lex_ef", "max"), ("lex_fe", "max")])
    counts = counts.select([*keys, "count_sum", "lex_ef_max", "lex_fe_max"])
    counts = counts.rename_columns(schema.names)
    return counts, phrase_total, occurrences.num_rows


def _lhs_recorded(rules: Iterator[LabelledRule], lhss: list[str]) -> Iterator[Rule]:
    """The labelled ``rules`` without their left-hand sides, which are appended to ``lhss``."""
    for lhs, *rule in rules:
        lhss.append(lhs)
        yield rule


def _checked_sentences(frame: pd.DataFrame, alignment_path: str | os.PathLike) -> list[Sentence]:
    """The rows (segment_id, source, target, links) as sentence pairs; a link that does not fit
    its sentence pair raises :class:`GrammarInputError` naming ``alignment_path`` and segment."""
    sentences = []
    for segment, source_text, target_text, link_text in zip(
            frame["segment_id"], frame["source"], frame["target"], frame["links"], strict=True):
        source, target = source_text.split(), target_text.split()
        try:
            links = sorted(parse_links(link_text, len(source), len(target),
                                       f"{alignment_path}: segment {segment}"))
        except AlignmentError as error:
            raise GrammarInputError(str(error)) from None
        sentences.append((source, target, links))
    return sentences


def load_aligned_bitext(bitext_path: str | os.PathLike, alignment_path: str | os.PathLike
                        ) -> pd.DataFrame:
    """The bitext's rows with their symmetrised links (``ALIGNED_BITEXT`` columns), in segment
    order, checked.

    Raises :class:`~circle.align.AlignmentError` when the alignment was made for another
    bitext (:func:`circle.align.check_bitext_digest`), :class:`GrammarInputError` naming the
    file and segment when the two tables do not hold the same segments or a link does not fit
    its sentence pair.
    """
    bitext = read_table(bitext_path, BITEXT, columns=["segment_id", "source", "target"])
    check_bitext_digest(alignment_path, bitext, bitext_path)
    alignment = read_table(alignment_path, ALIGNMENT, columns=["segment_id", "links"])
    for path, frame in ((bitext_path, bitext), (alignment_path, alignment)):
        duplicated = frame["segment_id"][frame["segment_id"].duplicated()]
        if len(duplicated):
            raise GrammarInputError(f"{path}: segment {duplicated.iloc[0]} occurs more than once")
    merged = bitext.merge(alignment, on="segment_id", how="outer", indicator=True)
    for side, path, other in (("left_only", bitext_path, alignment_path),
                              ("right_only", alignment_path, bitext_path)):
        unmatched = merged["segment_id"][merged["_merge"] == side]
        if len(unmatched):
            raise GrammarInputError(
                f"{path}: {len(unmatched)} segment(s) have no row in {other} (first: segment "
                f"{unmatched.min()}); bitext has {len(bitext)} rows, alignment {len(alignment)}")
    merged = merged.sort_values("segment_id", ignore_index=True)
    return merged[ALIGNED_BITEXT.arrow.names]


def split_for_counting(bitext_path: str | os.PathLike, alignment_path: str | os.PathLike,
                       lexical_path: str | os.PathLike, part_paths: Sequence[str | os.PathLike],
                       batch_size: int, provenance: Mapping[str, str] | None = None) -> int:
    """Check the aligned bitext, write its lexical table and cut it into ``part_paths``, the
    inputs of the counting jobs; returns the number of sentence pairs.

    The pairs are counted in batches of ``batch_size`` in segment order; each part holds
    consecutive whole batches, as evenly as the batches allow (a part may be empty), so the
    counts do not depend on how many parts there are.
    """
    rows = load_aligned_bitext(bitext_path, alignment_path)
    batches = _batch_count(len(rows), batch_size)
    sentences = (sentence for batch in range(batches) for sentence in _checked_sentences(
        rows.iloc[batch * batch_size:(batch + 1) * batch_size], alignment_path))
    write_table(lexical_frame(lexical_table(sentences)), lexical_path, LEXICAL, provenance)
    for part, path in enumerate(part_paths):
        first = batches * part // len(part_paths) * batch_size
        last = batches * (part + 1) // len(part_paths) * batch_size
        write_table(rows.iloc[first:last], path, ALIGNED_BITEXT, provenance,
                    {"batch_size": str(batch_size)})
    logger.info("%d aligned sentence pairs and their lexical table; %d batches of %d pairs in "
                "%d parts", len(rows), batches, batch_size, len(part_paths))
    return len(rows)


def count_part(part_path: str | os.PathLike, lexical_path: str | os.PathLike,
               out_path: str | os.PathLike, limits: ExtractionLimits,
               provenance: Mapping[str, str] | None = None,
               parses: Mapping[int, Bracketing] | None = None) -> tuple[int, int, int]:
    """Count the rules of one part (:func:`split_for_counting`) batch by batch, in the batches
    the split cut it into, into a ``RULE_COUNTS`` table; memory follows the batch, not the part.
    With ``parses`` (the parse of each segment's target side, by segment id) the rules are
    labelled, into a ``LABELLED_RULE_COUNTS`` table. Returns the numbers of sentence pairs,
    initial phrases and rule occurrences."""
    frame = read_table(part_path, ALIGNED_BITEXT)
    sentences = _checked_sentences(frame, part_path)
    sentence_parses = None
    if parses is not None:
        missing = [int(segment) for segment in frame["segment_id"] if segment not in parses]
        if missing:
            raise GrammarInputError(f"{part_path}: {len(missing)} segment(s) have no parse "
                                    f"(first: segment {missing[0]})")
        sentence_parses = [parses[segment] for segment in frame["segment_id"]]
    batch_size = int(read_metadata(part_path)["batch_size"])
    table = table_from_frame(read_table(lexical_path, LEXICAL))
    phrases = occurrences = 0
    metadata = {"limits": json.dumps(asdict(limits), sort_keys=True),
                "batch_size": str(batch_size)}
    schema = RULE_COUNTS if parses is None else LABELLED_RULE_COUNTS
    with RelationWriter(out_path, schema, provenance, metadata) as writer:
        starts = range(0, len(sentences), batch_size)
        for start in progress(starts, logger, f"counting rules of {part_path}", len(starts),
                              "batches"):
            counts, batch_phrases, batch_occurrences = count_rules(
                sentences[start:start + batch_size], limits, table,
                None if sentence_parses is None else sentence_parses[start:start + batch_size])
            writer.write(counts)
            phrases += batch_phrases
            occurrences += batch_occurrences
    logger.info("%d sentence pairs: %d initial phrases, %d rule occurrences, %d rows of counts",
                len(sentences), phrases, occurrences, writer.rows)
    return len(sentences), phrases, occurrences


MERGE_DISK_PER_COUNT_BYTE = 9.0
"""Free disk the merge needs next to its output per byte of rule counts (DuckDB's spill and the
grammar being written): the es-english rung's merge of 2,925 MiB of counts into 71.1 M rules
peaked at 26,348 MiB of scratch and output, 9.0 bytes per byte (docs/measurements.md). A
lower bound where other jobs write to the same disk."""


def merge_counts(count_paths: Sequence[str | os.PathLike], out_path: str | os.PathLike,
                 threads: int, provenance: Mapping[str, str] | None,
                 memory_limit: str | None = None) -> int:
    """Add up the counting jobs' rule counts and write the bilingual grammar with its features
    (p(e|f), p(f|e) of eq. 3.3's counts); returns the number of rules.

    Out of core: DuckDB aggregates, joins and sorts within ``memory_limit`` and spills the rest
    next to ``out_path``; a disk with less free space than :data:`MERGE_DISK_PER_COUNT_BYTE`
    times the counts' size is refused before the merge starts. Counts are added as exact
    decimals, so the result does not depend on the order in which DuckDB's threads meet the
    batches; max() is order-independent anyway.
    """
    metadata = {}
    kind = read_metadata(count_paths[0]).get("schema") if count_paths else None
    if kind not in (RULE_COUNTS.name, LABELLED_RULE_COUNTS.name):
        raise GrammarInputError(f"{count_paths[0] if count_paths else out_path}: not a "
                                f"'{RULE_COUNTS.name}' table")
    labelled = kind == LABELLED_RULE_COUNTS.name
    for path in count_paths:
        meta = read_metadata(path)
        if meta.get("schema") != kind:
            raise GrammarInputError(f"{path}: not a '{kind}' table like {count_paths[0]}")
        metadata.setdefault("limits", meta.get("limits"))
        if meta.get("limits") != metadata["limits"]:
            raise GrammarInputError(f"{path}: counted with extraction limits {meta.get('limits')}"
                                    f", but {count_paths[0]} with {metadata['limits']}")
    if not sum(parquet_rows(path) for path in count_paths):
        raise GrammarInputError(f"{out_path}: no rule could be extracted (no aligned sentences)")
    # a labelled rule is (lhs, source, target), its relative frequencies condition on lhs too
    lhs, by = ("lhs, ", "lhs, ") if labelled else ("", "")
    counts_bytes = sum(os.path.getsize(path) for path in count_paths)
    with scratch_directory(out_path, int(MERGE_DISK_PER_COUNT_BYTE * counts_bytes),
                           f"merging {counts_bytes / 2**20:,.0f} MB of rule counts") as spill:
        con = connect(threads, memory_limit, spill)
        con.execute(f"""
            CREATE TEMP TABLE merged AS
            SELECT {lhs}source, target, canonical(target) AS english,
                   sum(count::{DECIMAL}) AS count, max(lex_ef) AS lex_ef, max(lex_fe) AS lex_fe
            FROM {checked_parquet(count_paths)} GROUP BY {by}source, target""")
        relation = con.sql(f"""
            WITH source_totals AS (SELECT {lhs}source, sum(count) AS total FROM merged
                                   GROUP BY {by}source),
                 english_totals AS (SELECT {lhs}english, sum(count) AS total FROM merged
                                    GROUP BY {by}english)
            SELECT {"m.lhs" if labelled else f"'{LHS}'"} AS lhs, m.source, m.target,
                   ln(m.count::DOUBLE / s.total::DOUBLE) AS log_p_e_given_f,
                   ln(m.count::DOUBLE / e.total::DOUBLE) AS log_p_f_given_e,
                   m.lex_ef AS log_lex_e_given_f, m.lex_fe AS log_lex_f_given_e,
                   m.count::DOUBLE AS count
            FROM merged m JOIN source_totals s USING ({by}source)
                 JOIN english_totals e USING ({by}english)
            ORDER BY m.source, m.target{", m.lhs" if labelled else ""}""")
        rules = write_relation(relation, out_path, LABELLED_GRAMMAR if labelled else GRAMMAR,
                               provenance, metadata)
        con.close()
    return rules


def _batch_count(pairs: int, batch_size: int) -> int:
    """How many batches of ``batch_size`` sentence pairs ``pairs`` make (the last may be short)."""
    return -(-pairs // batch_size)


CountTask = tuple[str, str, str, ExtractionLimits, None, dict[int, Bracketing] | None]


def _count_task(task: CountTask) -> tuple[int, int, int]:
    return count_part(*task)


def extract_grammar(bitext_path: str | os.PathLike, alignment_path: str | os.PathLike,
                    out_path: str | os.PathLike, limits: ExtractionLimits = ExtractionLimits(),
                    workers: int = 1, provenance: Mapping[str, str] | None = None,
                    batch_size: int = 1000, memory_limit: str | None = None,
                    parses: Mapping[int, Bracketing] | None = None) -> ExtractionStats:
    """Extract the bilingual Hiero grammar of an aligned bitext into a ``GRAMMAR`` table, in one
    process with ``workers`` counting processes: :func:`split_for_counting` into one part per
    batch, :func:`count_part` for each, :func:`merge_counts` (``memory_limit`` e.g. ``"4GB"``).
    The workflow runs the same three steps as Snakemake jobs. With ``parses`` (by segment id,
    each over its segment's target tokens) the grammar is labelled, a ``LABELLED_GRAMMAR``
    table (module docstring)."""
    started = time.perf_counter()
    out_path = Path(out_path)
    with scratch_directory(out_path.with_name(f"{out_path.name}.parts")) as scratch:
        parts = [str(scratch / f"part-{k:06d}.parquet")
                 for k in range(max(1, _batch_count(parquet_rows(bitext_path), batch_size)))]
        lexical = str(scratch / "lexical.parquet")
        sentences = split_for_counting(bitext_path, alignment_path, lexical, parts, batch_size)
        tasks: list[CountTask] = [
            (part, lexical, part.replace("part-", "counts-"), limits, None,
             None if parses is None else {
                 segment: parses[segment] for segment in
                 read_table(part, ALIGNED_BITEXT, columns=["segment_id"])["segment_id"]
                 if segment in parses})
            for part in parts]
        if workers > 1:
            # fork, not spawn/forkserver: those re-import __main__, which for a Snakemake
            # script wrapper refers to the injected `snakemake` object and fails
            context = multiprocessing.get_context(
                "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
            with context.Pool(workers, die_with_parent, (os.getpid(),)) as pool:
                results = pool.map(_count_task, tasks, chunksize=1)
        else:
            results = list(map(_count_task, tasks))
        logger.info("merging %d parts' counts into %s", len(tasks), out_path)
        rules = merge_counts([task[2] for task in tasks], out_path, workers, provenance,
                             memory_limit)
    stats = ExtractionStats(
        sentences=sentences, initial_phrases=sum(r[1] for r in results),
        rule_occurrences=sum(r[2] for r in results), rules=rules,
        seconds=time.perf_counter() - started)
    logger.info("extracted %d rules (%d occurrences, %d initial phrases) from %d sentences "
                "in %.1f s", stats.rules, stats.rule_occurrences, stats.initial_phrases,
                stats.sentences, stats.seconds)
    return stats

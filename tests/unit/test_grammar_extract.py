"""Hiero extraction against hand-enumerated rule sets, a brute-force reference, and bad input."""

from __future__ import annotations

import itertools
import logging
import math
import random
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from circle.align import BITEXT_DIGEST, AlignmentError, bitext_digest
from circle.core.schemas import ALIGNED_BITEXT, ALIGNMENT, BITEXT, GRAMMAR, LEXICAL
from circle.core.tables import ScratchSpaceError, read_table, write_table
from circle.corpus.preprocess import tokenize_bitext
from circle.grammar.extract import (
    MERGE_DISK_PER_COUNT_BYTE,
    ExtractionLimits,
    count_part,
    count_rules,
    extract_grammar,
    initial_phrases,
    load_aligned_bitext,
    merge_counts,
    sentence_rules,
    split_for_counting,
)
from circle.grammar.io import GrammarInputError
from circle.grammar.lexical import lexical_frame, lexical_table, table_from_frame, word_factors


def rule_counts(source: str, target: str, links: list[tuple[int, int]],
                limits: ExtractionLimits | None = None) -> dict[tuple[str, str], float]:
    """Fractional counts of the rules of one sentence pair, via the public per-sentence API."""
    limits = limits or ExtractionLimits()
    src, tgt = source.split(), target.split()
    table = lexical_table([(src, tgt, links)])
    target_factors, source_factors = word_factors(src, tgt, links, table)
    counts: dict[tuple[str, str], float] = defaultdict(float)
    for rule_source, rule_target, share, _, _ in sentence_rules(
            src, tgt, links, limits, target_factors, source_factors):
        counts[rule_source, rule_target] += share
    return dict(counts)


def assert_counts(found: dict, expected: dict) -> None:
    assert set(found) == set(expected)
    for rule, count in expected.items():
        assert found[rule] == pytest.approx(count), rule


def test_monotone_pair_no_adjacent_nonterminals():
    found = rule_counts("a b", "x y", [(0, 0), (1, 1)])
    # "[X,1] [X,2]" would need adjacent source nonterminals: not a rule.
    assert_counts(found, {
        ("a", "x"): 1, ("b", "y"): 1,
        ("a b", "x y"): 1 / 3, ("[X,1] b", "[X,1] y"): 1 / 3, ("a [X,1]", "x [X,1]"): 1 / 3,
    })


def test_unaligned_words_stay_inside_and_rules_need_an_aligned_terminal():
    # b and n are unaligned: no tight phrase starts or ends on them, and "[X,1] b [X,2]" has
    # no aligned terminal left.
    found = rule_counts("a b c", "z n x", [(0, 2), (2, 0)])
    assert_counts(found, {
        ("a", "x"): 1, ("c", "z"): 1,
        ("a b c", "z n x"): 1 / 3, ("[X,1] b c", "z n [X,1]"): 1 / 3,
        ("a b [X,1]", "[X,1] n x"): 1 / 3,
    })


def test_unaligned_sentence_edge_word_is_in_no_rule():
    found = rule_counts("a b", "x y", [(0, 0)])
    assert_counts(found, {("a", "x"): 1})


INVERTED = ("a m b", "q n p", [(0, 2), (1, 1), (2, 0)])


def test_inverted_pair_with_two_reordered_nonterminals():
    found = rule_counts(*INVERTED)
    assert_counts(found, {
        ("a", "p"): 1, ("m", "n"): 1, ("b", "q"): 1,
        ("a m", "n p"): 1 / 3, ("[X,1] m", "n [X,1]"): 1 / 3,
        ("m b", "q n"): 1 / 3, ("m [X,1]", "[X,1] n"): 1 / 3,
        ("a m b", "q n p"): 1 / 7, ("[X,1] m b", "q n [X,1]"): 1 / 7,
        ("a [X,1] b", "q [X,1] p"): 1 / 7, ("a m [X,1]", "[X,1] n p"): 1 / 7,
        ("[X,1] m [X,2]", "[X,2] n [X,1]"): 1 / 7,
        # from both "a m b" (1/7) and "a m" (1/3), or "m b" (1/3):
        ("a [X,1]", "[X,1] p"): 1 / 7 + 1 / 3, ("[X,1] b", "q [X,1]"): 1 / 7 + 1 / 3,
    })


def test_limits_initial_phrase_length_symbols_and_arity():
    short = rule_counts(*INVERTED, limits=ExtractionLimits(max_initial_source=2))
    assert_counts(short, {
        ("a", "p"): 1, ("m", "n"): 1, ("b", "q"): 1,
        ("a m", "n p"): 1 / 3, ("[X,1] m", "n [X,1]"): 1 / 3, ("a [X,1]", "[X,1] p"): 1 / 3,
        ("m b", "q n"): 1 / 3, ("m [X,1]", "[X,1] n"): 1 / 3, ("[X,1] b", "q [X,1]"): 1 / 3,
    })
    two_symbols = rule_counts(*INVERTED, limits=ExtractionLimits(max_source_symbols=2))
    assert ("[X,1] m b", "q n [X,1]") not in two_symbols
    # "a m b" now yields only "a [X,1]" and "[X,1] b"; "a m" still yields 3 rules.
    assert two_symbols[("a [X,1]", "[X,1] p")] == pytest.approx(1 / 2 + 1 / 3)
    assert all(len(source.split()) <= 2 for source, _ in two_symbols)
    one_nonterminal = rule_counts(*INVERTED, limits=ExtractionLimits(max_nonterminals=1))
    assert ("[X,1] m [X,2]", "[X,2] n [X,1]") not in one_nonterminal
    assert one_nonterminal[("a m b", "q n p")] == pytest.approx(1 / 6)
    adjacent = rule_counts("a b", "x y", [(0, 0), (1, 1)],
                           ExtractionLimits(allow_adjacent_nonterminals=True))
    assert ("[X,1] [X,2]", "[X,1] [X,2]") not in adjacent  # still no aligned terminal


def test_target_length_limit():
    phrases = initial_phrases(2, 4, [(0, 0), (1, 3)], ExtractionLimits(max_initial_target=3))
    assert phrases == [(0, 0, 0, 0), (1, 1, 3, 3)]


def brute_force(n: int, m: int, links: set, limits: ExtractionLimits) -> dict:
    """Rules as (source holes, target holes) per initial phrase, by exhaustive enumeration."""
    def consistent(i1, i2, j1, j2):
        inside = [(i, j) for i, j in links if i1 <= i <= i2 or j1 <= j <= j2]
        return inside and all(i1 <= i <= i2 and j1 <= j <= j2 for i, j in inside)

    def tight(i1, i2, j1, j2):
        return ({i1, i2} <= {i for i, _ in links} and {j1, j2} <= {j for _, j in links})

    phrases = [(i1, i2, j1, j2)
               for i1 in range(n) for i2 in range(i1, min(n, i1 + limits.max_initial_source))
               for j1 in range(m) for j2 in range(j1, min(m, j1 + limits.max_initial_target))
               if consistent(i1, i2, j1, j2) and tight(i1, i2, j1, j2)]
    aligned = {i for i, _ in links}
    result = {}
    for p in phrases:
        inner = [h for h in phrases if p[0] <= h[0] and h[1] <= p[1] and h != p]
        valid = []
        for k in range(limits.max_nonterminals + 1):
            for holes in itertools.combinations(inner, k):
                holes = tuple(sorted(holes))
                if any(b[0] <= a[1] + 1 for a, b in zip(holes, holes[1:], strict=False)):
                    continue  # overlapping or adjacent on the source side
                covered = {i for h in holes for i in range(h[0], h[1] + 1)}
                terminals = [i for i in range(p[0], p[1] + 1) if i not in covered]
                if len(terminals) + k > limits.max_source_symbols:
                    continue
                if not aligned & set(terminals):
                    continue
                valid.append(holes)
        if valid:
            result[p] = valid
    return result


@pytest.mark.parametrize("seed", range(30))
def test_matches_brute_force_on_random_alignments(seed):
    rng = random.Random(seed)
    n, m = rng.randint(1, 9), rng.randint(1, 9)
    links = {(i, j) for i in range(n) for j in range(m) if rng.random() < 1.6 / max(n, m)}
    limits = ExtractionLimits(max_initial_source=rng.choice([4, 10]),
                              max_initial_target=rng.choice([5, 10]))
    source = [f"s{i}" for i in range(n)]
    target = [f"t{j}" for j in range(m)]
    expected = defaultdict(float)
    for phrase, hole_sets in brute_force(n, m, links, limits).items():
        for holes in hole_sets:
            expected[holes_key(source, target, phrase, holes)] += 1 / len(hole_sets)
    found = rule_counts(" ".join(source), " ".join(target), sorted(links), limits)
    assert_counts(found, dict(expected))


def holes_key(source, target, phrase, holes):
    def side(words, first, last, spans):
        out, k = [], first
        while k <= last:
            label = next((lab for start, end, lab in spans if start == k), None)
            if label is None:
                out.append(words[k])
                k += 1
            else:
                out.append(f"[X,{label}]")
                k = next(end for start, end, lab in spans if start == k) + 1
        return " ".join(out)
    source_spans = [(h[0], h[1], n + 1) for n, h in enumerate(holes)]
    target_spans = [(h[2], h[3], n + 1) for n, h in enumerate(holes)]
    return (side(source, phrase[0], phrase[1], source_spans),
            side(target, phrase[2], phrase[3], target_spans))


def test_lexical_weights_with_null_and_best_internal_alignment():
    corpus = [("a b".split(), "x z y".split(), [(0, 0), (1, 2)]),  # z unaligned
              ("a b".split(), "x y".split(), [(0, 0), (0, 1), (1, 1)]),
              ("a b".split(), "x y".split(), [(0, 0), (1, 1)])]
    table = lexical_table(corpus)
    # links: a-x 3, a-y 1, b-y 3; z is linked to NULL once.
    assert table.e_given_f["a", "x"] == pytest.approx(3 / 4)
    assert table.e_given_f["b", "y"] == pytest.approx(1.0)
    assert table.e_given_f[None, "z"] == pytest.approx(1.0)
    assert table.f_given_e["a", "y"] == pytest.approx(1 / 4)
    assert table.f_given_e["b", "y"] == pytest.approx(3 / 4)
    rules, phrases, occurrences = count_rules(corpus, ExtractionLimits(), table)
    rows = rules.to_pandas().set_index(["source", "target"])
    assert rows.loc[("a b", "x z y"), "lex_ef"] == pytest.approx(math.log(3 / 4 * 1 * 1))
    assert rows.loc[("a b", "x z y"), "lex_fe"] == pytest.approx(math.log(1 * 3 / 4))
    assert rows.loc[("a [X,1]", "x z [X,1]"), "lex_ef"] == pytest.approx(math.log(3 / 4))
    # "a b" -> "x y" occurs with two internal alignments; sentence 2 would give
    # lex(e|f) = 3/4 * (1/4 + 1)/2 and lex(f|e) = (1 + 1/4)/2 * 3/4, sentence 3 gives
    # 3/4 * 1 and 1 * 3/4: the higher weight is kept (Koehn et al. 2003).
    assert rows.loc[("a b", "x y"), "lex_ef"] == pytest.approx(math.log(3 / 4))
    assert rows.loc[("a b", "x y"), "lex_fe"] == pytest.approx(math.log(3 / 4))
    assert rows.loc[("a b", "x y"), "count"] == pytest.approx(1 + 1 / 3)
    # sentence 2 has a single initial phrase (y is linked to both words).
    assert (phrases, occurrences) == (3 + 1 + 3, 5 + 1 + 5)



CORPUS = [(1, "a m b", "q n p", "0-2 1-1 2-0"), (2, "a b", "x y", "0-0 1-1"),
          (3, "a b c", "z n x", "0-2 2-0"), (4, "m a", "n p", "0-0 1-1")]


def test_extract_grammar_features(tmp_path, write_aligned_bitext):
    bitext, alignment = write_aligned_bitext(CORPUS)
    stats = extract_grammar(bitext, alignment, tmp_path / "g.parquet")
    grammar = read_table(tmp_path / "g.parquet", GRAMMAR)
    assert stats.rules == len(grammar) and stats.sentences == 4
    rows = grammar.set_index(["source", "target"])
    counts = rows["count"]
    assert counts[("a", "p")] == pytest.approx(2.0)  # sentences 1 and 4
    assert counts[("a [X,1]", "[X,1] p")] == pytest.approx(1 / 7 + 1 / 3)
    a_total = counts[counts.index.get_level_values(0) == "a"].sum()
    assert math.exp(rows.loc[("a", "p"), "log_p_e_given_f"]) == pytest.approx(2 / a_total)
    p_total = counts[counts.index.get_level_values(1) == "p"].sum()
    assert math.exp(rows.loc[("a", "p"), "log_p_f_given_e"]) == pytest.approx(2 / p_total)
    # English sides that differ only in nonterminal numbering share one marginal c(e):
    # "[X,2] n [X,1]" (from "[X,1] m [X,2]") is "[X,1] n [X,2]" renumbered.
    swapped = rows.loc[("[X,1] m [X,2]", "[X,2] n [X,1]")]
    assert math.exp(swapped["log_p_f_given_e"]) == pytest.approx(1.0)
    for _, group in grammar.groupby("source"):
        assert sum(map(math.exp, group["log_p_e_given_f"])) == pytest.approx(1.0)
    assert (grammar["lhs"] == "X").all()
    assert list(grammar["source"]) == sorted(grammar["source"])


@pytest.mark.parametrize("workers", [1, 2])
def test_extraction_logs_its_batches_and_the_merge(tmp_path, caplog, workers, write_aligned_bitext):
    caplog.set_level(logging.INFO, logger="circle.grammar.extract")
    bitext, alignment = write_aligned_bitext(CORPUS)
    extract_grammar(bitext, alignment, tmp_path / "g.parquet", workers=workers, batch_size=3)
    lines = [record.getMessage() for record in caplog.records]
    assert "4 aligned sentence pairs and their lexical table; 2 batches of 3 pairs in 2 parts" \
        in lines
    assert f"merging 2 parts' counts into {tmp_path / 'g.parquet'}" in lines
    if workers == 1:  # the workers' own records do not reach caplog
        # the second batch is "m a" / "n p" (0-0 1-1): phrases m-n, a-p, m a-n p; rules those
        # three, [X,1] a-[X,1] p and m [X,1]-n [X,1]
        assert "1 sentence pairs: 3 initial phrases, 5 rule occurrences, 5 rows of counts" \
            in lines


def test_extraction_removes_what_a_killed_extraction_left_and_only_that(tmp_path,
                                                                        write_aligned_bitext):
    bitext, alignment = write_aligned_bitext(CORPUS)
    out = tmp_path / "grammar" / "bilingual.parquet"
    out.parent.mkdir()
    stale_table = out.parent / ".bilingual.parquet.x1y2z3w4"
    stale_table.write_bytes(b"PAR1 half a grammar")
    stale_scratch = out.parent / ".bilingual.parquet.scratch-x1y2z3w4"
    stale_scratch.mkdir()
    (stale_scratch / "shard-000000.parquet").write_bytes(b"PAR1")
    other = out.parent / ".other.parquet.scratch-x1y2z3w4"
    other.mkdir()
    extract_grammar(bitext, alignment, out, workers=2, batch_size=2)
    assert sorted(p.name for p in out.parent.iterdir()) == [other.name, out.name]
    assert len(read_table(out, GRAMMAR)) > 0


def random_corpus(sentences: int, seed: int = 7) -> list[tuple[int, str, str, str]]:
    rng = random.Random(seed)
    rows = []
    for k in range(sentences):
        n = rng.randint(2, 12)
        links = " ".join(f"{i}-{min(n - 1, max(0, i + rng.choice([-1, 0, 0, 1])))}"
                         for i in range(n) if rng.random() < 0.85)
        rows.append((k, " ".join(rng.choice("abcdefgh") for _ in range(n)),
                     " ".join(rng.choice("stuvwxyz") for _ in range(n)), links))
    return rows


def test_workers_and_batches_give_the_same_table(tmp_path, write_aligned_bitext):
    bitext, alignment = write_aligned_bitext(random_corpus(60))
    extract_grammar(bitext, alignment, tmp_path / "one.parquet")
    extract_grammar(bitext, alignment, tmp_path / "two.parquet", workers=2, batch_size=7)
    one = read_table(tmp_path / "one.parquet", GRAMMAR)
    two = read_table(tmp_path / "two.parquet", GRAMMAR)
    pd.testing.assert_frame_equal(one, two, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("parts", [1, 3, 11])
def test_counting_jobs_give_the_grammar_bit_for_bit(tmp_path, parts, write_aligned_bitext):
    """The workflow's split / count per part / merge gives exactly the in-process grammar,
    whatever the number of counting jobs (11 parts of 9 batches: two are empty)."""
    bitext, alignment = write_aligned_bitext(random_corpus(60))
    extract_grammar(bitext, alignment, tmp_path / "whole.parquet", batch_size=7)
    lexical = tmp_path / "lexical.parquet"
    part_paths = [tmp_path / f"part{k}.parquet" for k in range(parts)]
    assert split_for_counting(bitext, alignment, lexical, part_paths, 7) == 60
    sizes = [len(read_table(path, ALIGNED_BITEXT)) for path in part_paths]
    assert sum(sizes) == 60 and all(size % 7 == 0 for size in sizes[:-1])
    counts = [tmp_path / f"counts{k}.parquet" for k in range(parts)]
    for part, out in zip(part_paths, counts, strict=True):
        count_part(part, lexical, out, ExtractionLimits())
    assert merge_counts(counts, tmp_path / "jobs.parquet", 2, None) > 0
    pd.testing.assert_frame_equal(read_table(tmp_path / "whole.parquet", GRAMMAR),
                                  read_table(tmp_path / "jobs.parquet", GRAMMAR), check_exact=True)


def test_occurrence_columns_in_pieces_count_bit_for_bit(monkeypatch):
    sentences = [(source.split(), target.split(),
                  sorted(tuple(map(int, link.split("-"))) for link in links.split()))
                 for _, source, target, links in random_corpus(40, seed=3)]
    table = lexical_table(sentences)
    whole, phrases, occurrences = count_rules(sentences, ExtractionLimits(), table)
    monkeypatch.setattr("circle.grammar.extract.OCCURRENCE_BATCH", 5)
    pieces, *numbers = count_rules(sentences, ExtractionLimits(), table)
    assert numbers == [phrases, occurrences] and occurrences > 100
    order = [("source", "ascending"), ("target", "ascending")]
    assert pieces.sort_by(order).equals(whole.sort_by(order))  # the rows' order may differ


def test_merge_refuses_counts_of_other_limits(tmp_path, write_aligned_bitext):
    bitext, alignment = write_aligned_bitext(CORPUS)
    lexical, part = tmp_path / "lexical.parquet", tmp_path / "part.parquet"
    split_for_counting(bitext, alignment, lexical, [part], 10)
    count_part(part, lexical, tmp_path / "a.parquet", ExtractionLimits())
    count_part(part, lexical, tmp_path / "b.parquet", ExtractionLimits(max_source_symbols=4))
    with pytest.raises(GrammarInputError, match=r"b.parquet: counted with extraction limits "
                                                r".*max_source_symbols\": 4.*a.parquet"):
        merge_counts([tmp_path / "a.parquet", tmp_path / "b.parquet"], tmp_path / "g.parquet",
                     1, None)
    with pytest.raises(GrammarInputError, match=r"part.parquet: not a 'rule_counts' table"):
        merge_counts([part], tmp_path / "g.parquet", 1, None)


def test_merge_refuses_a_disk_too_small_for_its_spill_before_it_starts(tmp_path, monkeypatch,
                                                                         write_aligned_bitext):
    """The merge needs about MERGE_DISK_PER_COUNT_BYTE times its counts' size free next to its
    output; with less it stops before DuckDB starts, naming the output, the need and what is
    free, and leaves nothing behind. With enough it merges as before."""
    bitext, alignment = write_aligned_bitext(CORPUS)
    lexical, part = tmp_path / "lexical.parquet", tmp_path / "part.parquet"
    split_for_counting(bitext, alignment, lexical, [part], 10)
    counts = tmp_path / "counts.parquet"
    count_part(part, lexical, counts, ExtractionLimits())
    needed = int(MERGE_DISK_PER_COUNT_BYTE * counts.stat().st_size)
    out = tmp_path / "out" / "grammar.parquet"
    real_usage = shutil.disk_usage

    def disk_with(free: int):
        return lambda path: real_usage(path)._replace(free=free)

    monkeypatch.setattr("circle.core.tables.shutil.disk_usage", disk_with(needed - 1))
    with pytest.raises(ScratchSpaceError, match=re.escape(str(out)) + r": merging .* MB of rule "
                       r"counts need about .* GB of free disk in .*out, which has .* GB"):
        merge_counts([counts], out, 1, None)
    assert list(out.parent.iterdir()) == []
    monkeypatch.setattr("circle.core.tables.shutil.disk_usage", disk_with(needed))
    assert merge_counts([counts], out, 1, None) == len(read_table(out, GRAMMAR)) > 0
    assert [path.name for path in out.parent.iterdir()] == [out.name]


def test_lexical_table_round_trips_through_parquet(tmp_path):
    sentences = [(source.split(), target.split(),
                  sorted(tuple(map(int, link.split("-"))) for link in links.split()))
                 for _, source, target, links in CORPUS]
    table = lexical_table(sentences)
    write_table(lexical_frame(table), tmp_path / "lex.parquet", LEXICAL)
    assert table_from_frame(read_table(tmp_path / "lex.parquet", LEXICAL)) == table


@pytest.mark.parametrize("links, message", [
    ("0-0 2-1", "segment 2: link 2-1 is out of range"),
    ("0-0 1-x", "segment 2: '1-x' is not an 'i-j' link"),
])
def test_bad_links_name_file_and_segment(tmp_path, links, message, write_aligned_bitext):
    bitext, alignment = write_aligned_bitext([(1, "a b", "x y", "0-0"),
                                                (2, "a b", "x y", links)])
    with pytest.raises(GrammarInputError, match=message) as error:
        extract_grammar(bitext, alignment, tmp_path / "g.parquet")
    assert "alignment.parquet" in str(error.value)


def test_segment_mismatch_is_reported(tmp_path, write_aligned_bitext):
    bitext, alignment = write_aligned_bitext([(1, "a", "x", "0-0"), (2, "b", "y", "0-0")])
    write_table(pd.DataFrame({"segment_id": [1], "forward": "", "reverse": "", "links": "0-0"}),
                alignment, ALIGNMENT)
    with pytest.raises(AlignmentError, match=r"alignment.parquet: its 1 segments are not the "
                                             r"2 of .*bitext.parquet \(first in one only: "
                                             r"segment 2\)"):
        extract_grammar(bitext, alignment, tmp_path / "g.parquet")


def test_limits_are_validated():
    with pytest.raises(ValueError, match="max_source_symbols"):
        ExtractionLimits(max_source_symbols=0)


TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def tiny_aligned(tmp_path: Path, digest: bool) -> tuple[Path, Path, pd.DataFrame]:
    """The tiny training bitext, tokenised as the tiny config does, and its frozen alignment,
    with or without the digest of the bitext that alignments made now record."""
    source, target = ((TINY / f"train.{side}.txt").read_text(encoding="utf-8").splitlines()
                      for side in ("es", "en"))
    bitext = tokenize_bitext(pd.DataFrame({"segment_id": range(len(source)), "document": "train",
                                           "source": source, "target": target}), "es", "en")
    write_table(bitext, tmp_path / "train.parquet", BITEXT)
    alignment = tmp_path / "alignment.parquet"
    write_table(read_table(TINY / "alignment.parquet", ALIGNMENT), alignment, ALIGNMENT,
                metadata={BITEXT_DIGEST: bitext_digest(bitext)} if digest else None)
    return tmp_path / "train.parquet", alignment, bitext


def test_a_frozen_alignment_is_replayed_only_onto_the_bitext_it_was_made_for(tmp_path):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=True)
    assert len(load_aligned_bitext(bitext_path, alignment)) == len(bitext)
    changed = bitext.copy()
    changed.loc[7, "target"] = changed.loc[8, "target"]  # one training line replaced
    write_table(changed, bitext_path, BITEXT)
    with pytest.raises(AlignmentError, match=re.escape(
            f"{alignment}: made for another training bitext than {bitext_path} (bitext digest ")
            + ".*rebuild it with `snakemake refreeze_alignment`"):
        load_aligned_bitext(bitext_path, alignment)


def test_an_alignment_that_records_no_digest_is_replayed_with_a_warning(tmp_path, caplog):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=False)
    with caplog.at_level(logging.WARNING):
        assert len(load_aligned_bitext(bitext_path, alignment)) == len(bitext)
    assert f"{alignment} records no digest of the bitext it was made for" in caplog.text

"""Symmetrisation heuristics on hand-made link sets (Koehn et al. 2003; Moses symal)."""

import pandas as pd
import pytest

from circle.align import AlignmentError, parse_links, symmetrize, symmetrize_corpus

# Two directional alignments of a 4x4 sentence pair, both as (source, target):
# they agree on 0-0 and 1-1; only the forward one has 3-3, only the reverse one has 3-2.
FORWARD = {(0, 0), (1, 1), (3, 3)}
REVERSE = {(0, 0), (1, 1), (3, 2)}


@pytest.mark.parametrize("method, expected", [
    ("intersect", {(0, 0), (1, 1)}),
    ("union", {(0, 0), (1, 1), (3, 3), (3, 2)}),
    # (3,3) and (3,2) are not neighbours of the intersection: grow-diag adds nothing.
    ("grow-diag", {(0, 0), (1, 1)}),
    # FINAL adds a directional point if either word is unaligned: both get in.
    ("grow-diag-final", {(0, 0), (1, 1), (3, 3), (3, 2)}),
    # FINAL-AND needs both words unaligned: after 3-3, source word 3 is aligned, so 3-2 stays out.
    ("grow-diag-final-and", {(0, 0), (1, 1), (3, 3)}),
])
def test_heuristics_on_hand_made_links(method, expected):
    assert symmetrize(FORWARD, REVERSE, method) == expected


def test_grow_diag_follows_diagonal_neighbours_from_the_intersection():
    forward = {(0, 0), (1, 1), (2, 2), (3, 3)}
    reverse = {(0, 0), (1, 1), (3, 2)}
    # (2,2) is a diagonal neighbour of (1,1) covering unaligned words; from (2,2), both (3,2)
    # and (3,3) neighbour the alignment and each covers a still-unaligned word when visited.
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0), (1, 1), (2, 2), (3, 2), (3, 3)}


def test_grow_diag_never_adds_points_between_already_aligned_words():
    forward = {(0, 0), (1, 1), (0, 1)}
    reverse = {(0, 0), (1, 1)}
    # 0-1 neighbours the alignment but both words are already aligned.
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (1, 1)}


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="unknown symmetrization"):
        symmetrize(FORWARD, REVERSE, "grow")


def test_parse_links_rejects_out_of_range_index_naming_the_place():
    with pytest.raises(AlignmentError, match=r"line 7.*link 2-5 is out of range .* 3 source and 4"):
        parse_links("0-0 2-5", 3, 4, "line 7")


def test_parse_links_rejects_malformed_link():
    with pytest.raises(AlignmentError, match="'0:1' is not an 'i-j' link"):
        parse_links("0:1", 3, 4, "here")


def test_symmetrize_corpus_checks_line_counts_and_reports_statistics():
    bitext = pd.DataFrame({"segment_id": [10, 11], "document": ["d", "d"],
                           "source": ["a b c d", "e f"], "target": ["w x y z", "u v"]})
    with pytest.raises(AlignmentError, match="1 forward and 2 reverse link lines for 2"):
        symmetrize_corpus(bitext, ["0-0"], ["0-0", "0-0"], "union", "files")
    table, stats = symmetrize_corpus(bitext, ["0-0 1-1 3-3", "0-0"], ["0-0 1-1 3-2", "1-1"],
                                     "grow-diag-final-and", "files")
    assert list(table["links"]) == ["0-0 1-1 3-3", "0-0 1-1"]
    assert stats.links == 5 and stats.source_words == 6
    assert stats.agreement == pytest.approx(2 / 6)  # |F∩R| = 2, |F∪R| = 4 + 2
    assert stats.unaligned_source == pytest.approx(1 / 6)  # source word c
    with pytest.raises(AlignmentError, match=r"files line 2 \(segment 11\)"):
        symmetrize_corpus(bitext, ["0-0", "2-0"], ["0-0", "0-0"], "union", "files")

"""circle.figures.lattice: the verse a report draws, its page and its Graphviz drawing, on the
seed's Fig. 5 trees and on the seed's Fig. 1 group of six translations as spaCy parses them."""

import pytest

from circle.figures.lattice import MAX_DRAWN_STATES, draw, drawn_group, lattice_page, pick_group
from circle.grammar.parse import load_parser, parse_sentences
from circle.grammar.tree import parse_tree
from circle.lattice.evaluate import FIG1_GROUP

FIG5_TREE1 = "(S (NP (CD 12) (NNS people)) (VP (VBD were) (VP (VBN killed))))"
FIG5_TREE2 = "(S (NP (CD twelve) (NNS persons)) (VP (VBD died)))"
APART1 = "(S (NP (NNP God)) (VP (VBD saw)))"
APART2 = "(FRAG (INTJ (UH behold)))"


@pytest.fixture(scope="module")
def fig1_trees():
    """The seed's Fig. 1 sentences, parsed."""
    return parse_sentences(list(FIG1_GROUP), load_parser())


def test_the_fig5_group_has_the_sentences_no_one_wrote():
    group = drawn_group(7, [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)])
    # the seed's Fig. 5 lattice: {12, twelve} x {people, persons} x {were killed, died}
    assert group.distinct_sentences == 8 and group.segment == 7
    assert len(group.new_sentences) == 6 and ("twelve", "people", "died") in group.new_sentences
    assert not {("12", "people", "were", "killed"), ("twelve", "persons", "died")} & set(
        group.new_sentences)


def test_the_group_drawn_has_the_most_sentences_among_those_with_a_new_one(fig1_trees):
    groups = {3: [parse_tree(APART1), parse_tree(APART2)],  # nothing merges: no new sentence
              5: [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)],
              9: [fig1_trees[0], fig1_trees[5]],  # "people were killed"/"persons died": 4
              11: fig1_trees}  # all six: 62 states, too wide to draw
    group, fitting, total = pick_group(groups)
    assert (fitting, total) == (2, 4)
    assert group.segment == 5 and group.distinct_sentences == 8  # Fig. 5 beats the pair's 4
    pair = drawn_group(9, groups[9])
    assert pair.lattice.states <= MAX_DRAWN_STATES < drawn_group(11, fig1_trees).lattice.states
    written = {tuple(word.lower() for word in tree.words()) for tree in fig1_trees}
    assert pair.distinct_sentences == 4 and len(pair.new_sentences) == 2
    assert not set(pair.new_sentences) & written
    assert pick_group({3: groups[3]}) == (None, 0, 1)


def test_the_page_lists_the_translations_the_drawing_and_the_new_sentences(tmp_path):
    group = drawn_group(7, [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)])
    page = lattice_page(group, 1, 2, ["web", "dar"], "lattice.png")
    assert "- web: 12 people were killed" in page and "- dar: twelve persons died" in page
    assert "![the lattice of test verse 7](lattice.png)" in page
    assert "| 5 | 7 | 8 | 8 | 6 |" in page  # states, edges, paths, distinct, new
    assert "- twelve people were killed" in page and "1 of 2 test verses" in page
    assert "None of the 2 verses" in lattice_page(None, 0, 2, ["web"], "lattice.png")
    draw(group.lattice, tmp_path / "lattice.dot", tmp_path / "lattice.png")
    assert (tmp_path / "lattice.dot").read_text().startswith('digraph "lattice" {')
    assert (tmp_path / "lattice.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    draw(None, tmp_path / "none.dot", tmp_path / "none.png")  # no verse: BEGIN and END alone
    assert "->" not in (tmp_path / "none.dot").read_text()
    assert (tmp_path / "none.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

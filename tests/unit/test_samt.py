"""SAMT labels of target spans (Zollmann & Venugopal 2006) on hand-built parses, on a hand-built
dependency tree projected by the parser stage, and on a real spaCy parse of a verse."""

import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from circle.grammar.parse import load_parser, project
from circle.grammar.samt import FALLBACK, Bracketing, Constituent, samt_label, samt_labels
from circle.grammar.tree import parse_tree

# Moses0 gave1 him2 a3 ring4 in5 Egypt6 .7
GAVE = Bracketing.of_tree(parse_tree(
    "(S (NP (NNP Moses)) (VP (VBD gave) (NP (PRP him)) (NP (DT a) (NN ring))"
    " (PP (IN in) (NP (NNP Egypt)))) (. .))"))


def test_a_tree_reads_as_its_words_and_every_node_outermost_first():
    assert GAVE.words == ("Moses", "gave", "him", "a", "ring", "in", "Egypt", ".")
    assert GAVE.constituents[:4] == (Constituent(0, 8, "S"), Constituent(0, 1, "NP"),
                                     Constituent(0, 1, "NNP"), Constituent(1, 7, "VP"))
    assert len(GAVE.constituents) == 15


def test_a_constituent_is_labelled_by_its_node_and_a_unary_chain_by_its_top():
    assert samt_label(GAVE, (1, 7)) == "VP"
    assert samt_label(GAVE, (5, 7)) == "PP"
    assert samt_label(GAVE, (0, 8)) == "S"
    assert samt_label(GAVE, (2, 3)) == "NP"  # (NP (PRP him)): the phrase, not the tag
    assert samt_label(GAVE, (4, 5)) == "NN"  # a bare preterminal


def test_two_adjacent_constituents_are_a_concatenation():
    assert samt_label(GAVE, (0, 2)) == "NP+VBD"
    assert samt_label(GAVE, (3, 7)) == "NP+PP"


def test_a_span_completed_by_a_constituent_on_its_right_is_a_forward_slash():
    # "gave him a ring in" + "Egypt" (NP) is the VP
    assert samt_label(GAVE, (1, 6)) == "VP/NP"


def test_a_span_completed_by_a_constituent_on_its_left_is_a_backward_slash():
    # "gave" (VBD) + "him a ring in Egypt" is the VP; the span is no A+B (NP+NP+PP)
    assert samt_label(GAVE, (2, 7)) == "VP\\VBD"


def test_a_span_no_category_covers_gets_the_fallback():
    # "Moses gave him": no A+B, and no constituent after it or before it completes a phrase
    assert samt_label(GAVE, (0, 3)) == FALLBACK == "X"
    # "gave him a": "ring" would complete "gave him a ring", which is not the VP
    assert samt_label(GAVE, (1, 4)) == FALLBACK


def test_constituent_comes_before_concatenation_and_concatenation_before_slash():
    # "a ring" is NP and DT+NN; "Moses ... Egypt" is NP+VP and S/. ("." completes the S);
    # "gave ... ." is VP+. and S\NP
    assert samt_label(GAVE, (3, 5)) == "NP"
    assert samt_label(GAVE, (0, 7)) == "NP+VP"
    assert samt_label(GAVE, (1, 8)) == "VP+."
    # without the preferred reading each span falls to the next one
    fewer = Bracketing(GAVE.words, tuple(node for node in GAVE.constituents
                                         if (node.start, node.end) not in {(3, 5), (0, 1)}))
    assert samt_label(fewer, (3, 5)) == "DT+NN"
    assert samt_label(fewer, (0, 7)) == "S/."
    no_stop = Bracketing(GAVE.words, tuple(node for node in GAVE.constituents
                                           if (node.start, node.end) != (7, 8)))
    assert samt_label(no_stop, (1, 8)) == "S\\NP"


def test_every_span_up_to_a_length_is_labelled_as_one_span_at_a_time():
    labels = samt_labels(GAVE, max_length=3)
    assert len(labels) == 8 + 7 + 6
    assert labels == {span: samt_label(GAVE, span) for span in labels}
    assert max(end - start for start, end in labels) == 3
    everything = samt_labels(GAVE)
    assert len(everything) == 8 * 9 // 2
    assert everything[0, 8] == "S"


def test_a_span_outside_the_sentence_is_refused():
    with pytest.raises(ValueError, match="not a non-empty span"):
        samt_label(GAVE, (3, 9))
    with pytest.raises(ValueError, match="not a non-empty span"):
        samt_label(GAVE, (3, 3))
    with pytest.raises(ValueError, match="outside"):
        Bracketing(("a",), (Constituent(0, 2, "NP"),))


def _doc(words, heads, deps, pos, tags):
    return Doc(Vocab(), words=words, heads=heads, deps=deps, pos=pos, tags=tags)


def test_a_hand_built_dependency_tree_projects_to_the_bracketing_samt_reads():
    doc = _doc(["Moses", "gave", "him", "a", "ring", "."], heads=[1, 1, 1, 4, 1, 1],
               deps=["nsubj", "ROOT", "dative", "det", "dobj", "punct"],
               pos=["PROPN", "VERB", "PRON", "DET", "NOUN", "PUNCT"],
               tags=["NNP", "VBD", "PRP", "DT", "NN", "."])
    tree = project(doc)
    assert tree.to_string() == ("(S (NP (NNP Moses)) (VP (VBD gave) (NP (PRP him)) "
                                "(NP (DT a) (NN ring))) (. .))")
    bracketing = Bracketing.of_tree(tree)
    assert bracketing.words == tuple(token.text for token in doc)
    # the subject's subtree, the verb with its objects (a VP inside the clause), the clause
    expected = {(0, 1): "NP", (1, 5): "VP", (0, 6): "S", (3, 5): "NP", (1, 3): "VBD+NP",
                (0, 5): "NP+VP", (2, 4): "NP+DT", (1, 4): "VP/NN", (3, 6): "NP+.",
                (0, 2): "NP+VBD", (0, 3): FALLBACK}
    labels = samt_labels(bracketing)
    assert {span: labels[span] for span in expected} == expected


def test_a_non_projective_parse_is_lifted_and_spans_index_its_words():
    # "yesterday" (of "saw") sits between "man" and its relative clause: the arcs cross, and
    # the projection lifts the clause to "saw" (Nivre & Nilsson 2005)
    doc = _doc(["I", "saw", "a", "man", "yesterday", "who", "laughed"],
               heads=[1, 1, 3, 1, 1, 6, 3],
               deps=["nsubj", "ROOT", "det", "dobj", "npadvmod", "nsubj", "relcl"],
               pos=["PRON", "VERB", "DET", "NOUN", "NOUN", "PRON", "VERB"],
               tags=["PRP", "VBD", "DT", "NN", "NN", "WP", "VBD"])
    bracketing = Bracketing.of_tree(project(doc))
    assert bracketing.words == tuple(token.text for token in doc)
    labels = samt_labels(bracketing)
    assert {span: labels[span] for span in [(2, 4), (5, 7), (1, 7), (2, 7), (4, 7)]} == {
        (2, 4): "NP", (5, 7): "S", (1, 7): "VP", (2, 7): "VP\\VBD", (4, 7): "NP+S"}


def test_a_real_verse_parsed_over_its_own_tokens():
    nlp = load_parser()
    # Gen 1:1, KJV, as the Moses tokeniser splits it
    words = "In the beginning God created the heaven and the earth .".split()
    bracketing = Bracketing.of_tree(project(nlp(Doc(nlp.vocab, words=words))))
    assert bracketing.words == tuple(words)
    labels = samt_labels(bracketing, max_length=11)
    assert {span: labels[span] for span in [
        (0, 3), (1, 3), (3, 4), (4, 10), (0, 11), (0, 4), (3, 10), (5, 8), (6, 10), (2, 5),
        (8, 10)]} == {
        (0, 3): "PP",        # In the beginning
        (1, 3): "NP",        # the beginning
        (3, 4): "NP",        # God, (NP (NNP God))
        (4, 10): "VP",       # created the heaven and the earth
        (0, 11): "S",
        (0, 4): "PP+NP",     # In the beginning God
        (3, 10): "NP+VP",    # God created the heaven and the earth
        (5, 8): "NP/NP",     # the heaven and [the earth]
        (6, 10): "NP\\DT",   # [the] heaven and the earth
        (2, 5): FALLBACK,    # beginning God created
        (8, 10): "NP",       # the earth
    }

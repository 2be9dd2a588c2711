"""Pang, Knight & Marcu (2003)'s merging, lattice, squeezing and path counts (circle.lattice)."""

import math
import random

import kenlm
import pytest

from circle.grammar.tree import Tree, parse_tree
from circle.lattice.evaluate import (
    chain,
    edit_distance,
    entropy_difference,
    group_figures,
    growing_references,
    repetition_ratios,
    repetitions,
)
from circle.lattice.fsa import (
    KenLMModel,
    Lattice,
    best_paths,
    count_paths,
    count_sentences,
    forest_to_lattice,
    paths,
    ranked_sentences,
    squeeze,
    to_dot,
)
from circle.lattice.merge import merge_trees
from circle.lm import estimate_lm

# The two trees of the seed's Fig. 5 (§3): their S and NP nodes expand with the same rules, their
# VPs do not.
FIG5_TREE1 = "(S (NP (CD 12) (NNS people)) (VP (VBD were) (VP (VBN killed))))"
FIG5_TREE2 = "(S (NP (CD twelve) (NNS persons)) (VP (VBD died)))"
# The keyword-checking example of §3: same rules, but "battle" and "people" change sides.
KEYWORD_TREE1 = ("(S (NP (NNS people)) (VP (VBD were) (VP (VBN killed) "
                 "(PP (IN in) (NP (DT this) (NN battle))))))")
KEYWORD_TREE2 = "(S (NP (DT this) (NN battle)) (VP (VBD killed) (NP (NNS people))))"


def lattice_of(*trees: str) -> Lattice:
    forest, _ = merge_trees(parse_tree(tree) for tree in trees)
    return forest_to_lattice(forest)


def sentences(lattice: Lattice) -> set[str]:
    return {" ".join(words) for words in paths(lattice)}


def test_bracket_strings_round_trip_and_escape_brackets():
    text = "(S (NP (-LRB- -LRB-) (NNP God) (-RRB- -RRB-)) (VP (VBD saw)) (: :-RRB-))"
    tree = parse_tree(text)
    assert tree.to_string() == text
    assert tree.words() == ["(", "God", ")", "saw", ":)"]
    assert tree.rule == ("S", "NP", "VP", ":")
    assert tree.keywords() == {"god", "saw"}
    with pytest.raises(ValueError, match="unclosed"):
        parse_tree("(S (NP (NNP God))")
    with pytest.raises(ValueError, match="without spaces"):
        Tree("_SP", word="  ")


def test_fig5_merges_the_nps_down_to_the_words_and_keeps_the_vps_whole():
    forest, stats = merge_trees([parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)])
    lattice = forest_to_lattice(forest)
    # The FSA at the bottom of Fig. 5: 12|twelve, people|persons, then were killed | died.
    assert lattice == Lattice(5, ((0, 1, "12"), (0, 1, "twelve"), (1, 2, "people"),
                                  (1, 2, "persons"), (2, 3, "were"), (2, 4, "died"),
                                  (3, 4, "killed")))
    assert (stats.merged, stats.different_rule, stats.keyword_blocked) == (2, 1, 0)
    assert count_paths(lattice) == 8
    assert "twelve people were killed" in sentences(lattice)  # a sentence nobody wrote


def test_the_keyword_check_keeps_the_seeds_bad_alignment_apart():
    forest, stats = merge_trees([parse_tree(KEYWORD_TREE1), parse_tree(KEYWORD_TREE2)])
    lattice = forest_to_lattice(forest)
    assert stats.keyword_blocked == 1 and stats.merged == 0
    # Without the check the NPs and VPs would merge into "this battle were killed in this
    # battle" and "people killed people".
    assert sentences(lattice) == {"people were killed in this battle",
                                  "this battle killed people"}


def test_synonyms_and_function_words_do_not_block_a_merge():
    # "the" is spanned by both NPs and by the other VP, but only nouns, verbs and adjectives
    # are keywords.
    tree1 = "(S (NP (DT the) (NNS men)) (VP (VBD saw) (NP (DT the) (NN city))))"
    tree2 = "(S (NP (DT the) (NNS people)) (VP (VBD viewed) (NP (DT the) (NN town))))"
    forest, stats = merge_trees([parse_tree(tree1), parse_tree(tree2)])
    assert stats.keyword_blocked == 0 and stats.merged == 4
    assert count_paths(forest_to_lattice(forest)) == 8  # men|people, saw|viewed, city|town


def test_a_merge_is_checked_against_every_tree_already_in_the_slot():
    # The third tree would merge with the second alone, but "battle" is already in the
    # forest's VP slot from the first.
    lattice = lattice_of(KEYWORD_TREE1, FIG5_TREE2, KEYWORD_TREE2)
    assert "this battle killed people" in sentences(lattice)
    assert "this battle died" not in sentences(lattice)


def test_squeezing_merges_equal_words_and_adds_a_path():
    # The third tree's root has another rule, so top-down merging leaves it a separate path;
    # squeezing joins it after "12" and "people" (not at "died": its far end reaches END, and
    # merging it with END would close a cycle).
    third = "(S (NP (CD 12) (NNS people)) (VP (VBD died)) (. .))"
    before = lattice_of(FIG5_TREE1, FIG5_TREE2, third)
    after = squeeze(before)
    assert count_paths(before) == 9 and count_paths(after) == 12
    assert "twelve persons died ." in sentences(after) - sentences(before)
    assert sentences(before) <= sentences(after)
    assert after.states == before.states - 2


def test_squeezing_removes_redundant_edges():
    lattice = Lattice(4, ((0, 1, "a"), (0, 2, "a"), (1, 3, "b"), (2, 3, "b")))
    assert squeeze(lattice) == Lattice(3, ((0, 1, "a"), (1, 2, "b")))


def random_lattice(rng: random.Random) -> Lattice:
    states = rng.randint(2, 9)
    edges = {(i, i + 1, rng.choice("abc")) for i in range(states - 1)}
    for _ in range(rng.randint(0, 12)):
        source = rng.randrange(states - 1)
        edges.add((source, rng.randrange(source + 1, states), rng.choice("abc")))
    return Lattice(states, tuple(sorted(edges)))


def test_path_counts_match_brute_force_enumeration():
    rng = random.Random(39)
    for _ in range(300):
        lattice = random_lattice(rng)
        every = list(paths(lattice))
        assert count_paths(lattice) == len(every)
        assert count_sentences(lattice) == len(set(every))
        squeezed = squeeze(lattice)
        assert set(every) <= set(paths(squeezed))  # squeezing only merges states
        assert count_paths(squeezed) == len(list(paths(squeezed)))


def test_path_counts_do_not_enumerate():
    # 2^200 paths: counting must not walk them.
    lattice = Lattice(201, tuple((i, i + 1, w) for i in range(200) for w in "ab"))
    assert count_paths(lattice) == 2 ** 200
    assert count_sentences(lattice) == 2 ** 200


def test_best_paths_agree_with_scoring_every_sentence(letter_lm):
    rng = random.Random(7)
    lm = letter_lm
    for _ in range(100):
        lattice = random_lattice(rng)
        expected = ranked_sentences(list(paths(lattice)), lm)
        assert best_paths(lattice, lm, k=5, beam=1000) == pytest.approx(expected[:5])


def test_merging_is_deterministic():
    trees = [FIG5_TREE1, KEYWORD_TREE1, FIG5_TREE2, KEYWORD_TREE2]
    first = squeeze(lattice_of(*trees))
    assert all(squeeze(lattice_of(*trees)) == first for _ in range(3))


def test_a_tree_needs_a_word_or_children():
    with pytest.raises(ValueError):
        Tree("NP")
    with pytest.raises(ValueError):
        Tree("NN", (Tree("NN", word="x"),), word="y")


def levenshtein(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def test_edit_distance_to_a_lattice_is_the_least_over_its_paths():
    rng = random.Random(6)
    for _ in range(300):
        lattice = random_lattice(rng)
        words = rng.choices("abcd", k=rng.randint(0, 7))
        expected = min(levenshtein(path, words) for path in paths(lattice))
        assert edit_distance(lattice, words) == expected
    assert edit_distance(chain("the city fell".split()), "the town fell down".split()) == 2


def test_group_figures_of_the_fig5_group():
    figures = group_figures([parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)])
    assert (figures.states, figures.edges, figures.paths, figures.distinct_sentences) == (
        5, 7, 8, 8)
    # Leaving one tree out leaves the other alone: its lattice is the sentence itself.
    assert figures.ed_fsa == figures.ed_input == 4.0  # 12|twelve people|persons were|died killed


def test_best_paths_under_kenlm_rank_the_fig5_sentences_as_kenlm_scores_them(tmp_path):
    text = tmp_path / "lm.txt"
    text.write_text("twelve people were killed\n12 persons died\npeople died\n" * 3)
    binary = tmp_path / "3gram.binary"
    estimate_lm([text], 3, binary, discount_fallback=True, memory="100M",
                log_path=tmp_path / "log")
    lm = KenLMModel(str(binary))
    best = best_paths(lattice_of(FIG5_TREE1, FIG5_TREE2), lm, k=3, beam=10)
    model = kenlm.Model(str(binary))
    every = sorted(paths(lattice_of(FIG5_TREE1, FIG5_TREE2)),
                   key=lambda words: -model.score(" ".join(words), bos=True, eos=True))
    assert [words for words, _ in best] == every[:3]
    assert best[0] == (("12", "persons", "died"), pytest.approx(
        model.score("12 persons died", bos=True, eos=True)))


def test_repetition_counts_match_brute_force():
    rng = random.Random(4)
    for _ in range(300):
        lattice = random_lattice(rng)
        every = list(paths(lattice))
        assert repetitions(lattice, "a") == (sum("a" in p for p in every),
                                             sum(p.count("a") >= 2 for p in every))


def test_repetition_ratios_list_only_words_no_sentence_repeats():
    # "the" is repeated inside a sentence, so it is not listed; "city" is, and one path of the
    # two that contain it repeats it.
    lattice = Lattice(4, ((0, 1, "the"), (1, 2, "city"), (2, 3, "city"), (2, 3, "the")))
    sentences = [["the", "city", "the"], ["the", "city", "city"]]
    assert repetition_ratios(lattice, [["the", "city", "the"], ["city"]]) == [0.5]
    assert repetition_ratios(lattice, sentences) == []
    assert group_figures([parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)]).repetition_ratios == (
        0.0,) * 7  # 12 twelve people persons were killed died


def test_growing_references_follow_table6():
    # The test sentence "twelve persons were killed" is 1 edit from the lattice of the Fig. 5
    # pair (twelve persons | were killed) but 2 from either sentence.
    trees = [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2),
             parse_tree("(S (NP (CD twelve) (NNS persons)) (VP (VBD were) (VP (VBN hurt))))")]
    assert growing_references(trees) == [(3, 3), (1, 2)]


def test_the_fig5_lattice_as_graphviz():
    dot = to_dot(lattice_of(FIG5_TREE1, FIG5_TREE2), name="fig5")
    assert dot.startswith('digraph "fig5" {\n  rankdir=LR;')
    assert '  0 [shape=box, label="BEGIN"];\n  4 [shape=box, label="END"];' in dot
    assert '  0 -> 1 [label="twelve"];' in dot and '  2 -> 4 [label="died"];' in dot
    assert dot.count(" -> ") == 7 and dot.endswith("}\n")
    assert 'label="say \\"hi\\""' in to_dot(Lattice(2, ((0, 1, 'say "hi"'),)))
    assert 'label="week’s"' in to_dot(Lattice(2, ((0, 1, "week’s"),)))


def test_entropy_difference_compares_the_lattices_sentences_with_the_groups(letter_lm):
    lm = letter_lm
    lattice = lattice_of(FIG5_TREE1, FIG5_TREE2)
    written = [("12", "people", "were", "killed"), ("twelve", "persons", "died")]

    def bits(words):
        return -ranked_sentences([words], lm)[0][1] * math.log2(10) / (len(words) + 1)

    generated = set(paths(lattice))
    expected = (sum(map(bits, generated)) / len(generated) - sum(map(bits, written)) / 2)
    assert entropy_difference(lattice, written, lm, max_paths=8) == pytest.approx(expected)
    assert entropy_difference(lattice, written, lm, max_paths=7) is None
    assert entropy_difference(lattice_of(FIG5_TREE1), written[:1], lm, 8) == 0.0


def test_a_language_model_that_does_not_load_is_named_with_its_reason(tmp_path):
    from circle.decoder.lm import LanguageModelError
    from circle.lattice.fsa import KenLMModel

    with pytest.raises(LanguageModelError, match="missing.binary: language model does not exist"):
        KenLMModel(str(tmp_path / "missing.binary"))
    broken = tmp_path / "broken.binary"
    broken.write_text("not a model\n")
    with pytest.raises(LanguageModelError, match="broken.binary: not a KenLM model"):
        KenLMModel(str(broken))

"""Paraphrase pairs read off word lattices, WordNet's synonymy and the seed's Table 2 (Pang,
Knight & Marcu 2003, §4.1; circle.lattice.pairs, circle.lattice.wordnet)."""

import json

import pandas as pd
import pytest

from circle.core.schemas import LATTICE_PARAPHRASES, PARSES
from circle.core.tables import read_metadata, read_table, write_table
from circle.grammar.tree import parse_tree
from circle.lattice.fsa import Lattice
from circle.lattice.pairs import (
    ParaphrasePair,
    asl_range,
    pairs_frame,
    paraphrase_pairs,
    present_synonyms,
    synonym_recall,
    write_paraphrase_pairs,
)
from circle.lattice.pairs_page import lattice_pairs_page, pair_counts
from circle.lattice.wordnet import WORDNET_DIR, WordNet

FIG5_TREE1 = "(S (NP (CD 12) (NNS people)) (VP (VBD were) (VP (VBN killed))))"
FIG5_TREE2 = "(S (NP (CD twelve) (NNS persons)) (VP (VBD died)))"
UNMERGED = "(S (VP (VBD died)) (. .))"
"""A root of another rule than the Fig. 5 trees': merging stops at the root."""

# A WordNet database of four synsets in the files' formats (wndb(5WN)): "kill" and "slay" share
# verb synset 100, "kill" is also a noun (synset 7), "follow" and "be" share verb synset 300.
MINI_WORDNET = {
    "index.noun": "  1 licence line\nkill n 1 1 @ 1 0 00000007  \n",
    "index.verb": ("  1 licence line\nbe v 2 1 @ 2 2 00000200 00000300  \n"
                   "follow v 1 1 @ 1 1 00000300  \nkill v 1 1 @ 1 1 00000100  \n"
                   "slay v 1 1 @ 1 0 00000100  \n"),
    "index.adj": "", "index.adv": "",
    "noun.exc": "", "verb.exc": "slew slay\nwas be\n", "adj.exc": "", "adv.exc": "",
}


@pytest.fixture
def mini_wordnet(tmp_path) -> WordNet:
    for name, text in MINI_WORDNET.items():
        (tmp_path / name).write_text(text)
    return WordNet.read(tmp_path)


def fig5_lattice() -> Lattice:
    # The FSA at the bottom of Fig. 5 (as tests/unit/test_lattice.py builds it).
    return Lattice(5, ((0, 1, "12"), (0, 1, "twelve"), (1, 2, "people"), (1, 2, "persons"),
                       (2, 3, "were"), (2, 4, "died"), (3, 4, "killed")))


def test_fig5_gives_the_seeds_three_paraphrases():
    # §3 on Fig. 5: "12" a paraphrase of "twelve", "people" of "persons", "were killed" of
    # "died"; longer paths between BEGIN and END meet in between and are not listed again.
    assert paraphrase_pairs(fig5_lattice()) == [
        ParaphrasePair(0, 1, ("12",), ("twelve",)),
        ParaphrasePair(1, 2, ("people",), ("persons",)),
        ParaphrasePair(2, 4, ("died",), ("were", "killed"))]


def test_paths_that_meet_in_between_make_no_pair_and_a_pair_is_listed_once():
    # a (b|c) d from 0 to 3, and the same b|c again between 3 and 5: the pair b/c is listed at
    # its first states; "a b d" / "a c d" meet at 1 and 2; "x" / "a b d" and "x" / "a c d"
    # run from 0 to 3 apart.
    lattice = Lattice(6, ((0, 1, "a"), (0, 3, "x"), (1, 2, "b"), (1, 2, "c"), (2, 3, "d"),
                          (3, 4, "b"), (3, 4, "c"), (4, 5, "e")))
    assert paraphrase_pairs(lattice) == [
        ParaphrasePair(0, 3, ("a", "b", "d"), ("x",)),
        ParaphrasePair(0, 3, ("a", "c", "d"), ("x",)),
        ParaphrasePair(1, 2, ("b",), ("c",))]


def test_the_table_marks_pairs_of_whole_sentences(tmp_path):
    # Two trees whose roots expand alike merge (Fig. 5); a third with another rule stays a
    # whole path from BEGIN to END beside them.
    groups = {7: [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)],
              3: [parse_tree(FIG5_TREE2), parse_tree(UNMERGED)]}
    frame = pairs_frame(groups)
    assert list(frame["segment_id"]) == [3, 7, 7, 7]
    assert list(frame["whole"]) == [True, False, False, False]
    assert frame.iloc[0][["phrase1", "phrase2"]].tolist() == ["died .", "twelve persons died"]
    parses = pd.DataFrame({"segment_id": [7, 7], "reference": ["a", "b"],
                           "tree": [FIG5_TREE1, FIG5_TREE2]})
    write_table(parses, tmp_path / "parses.parquet", PARSES,
                metadata={"reference_names": json.dumps(["a", "b"])})
    write_paraphrase_pairs(tmp_path / "parses.parquet", tmp_path / "pairs.parquet")
    written = read_table(tmp_path / "pairs.parquet", LATTICE_PARAPHRASES)
    assert written["phrase2"].tolist() == ["twelve", "persons", "were killed"]
    assert read_metadata(tmp_path / "pairs.parquet")["segments"] == "1"


def test_morphy_reduces_forms_to_lemmas_by_exceptions_and_detachment(mini_wordnet):
    assert mini_wordnet.lemmas("killed", "verb") == {"kill"}  # -ed detached
    assert mini_wordnet.lemmas("kills", "noun") == {"kill"}
    assert mini_wordnet.lemmas("slew", "verb") == {"slay"}  # the exception list
    assert mini_wordnet.lemmas("Was", "verb") == {"be"}
    assert mini_wordnet.lemmas("people", "verb") == set()


def test_synonyms_share_a_synset_of_one_part_of_speech(mini_wordnet):
    assert mini_wordnet.synonyms("killed", "slew")
    assert mini_wordnet.synonyms("followed", "was")  # the seed's "follow/be"
    assert not mini_wordnet.synonyms("kill", "killed")  # one lemma
    assert not mini_wordnet.synonyms("kill", "follow")
    with pytest.raises(FileNotFoundError, match="wordnet-base"):
        WordNet.read("/nonexistent")


def test_debians_wordnet_has_the_seeds_synonyms():
    wordnet = WordNet.read(WORDNET_DIR)
    assert wordnet.synonyms("follow", "be")  # §4.1.2's example of a pair out of context
    assert wordnet.synonyms("12", "twelve")  # Fig. 5's lexical paraphrase
    assert wordnet.synonyms("died", "perished")
    assert not wordnet.synonyms("people", "persons")  # one lemma, "person"


def test_table2_counts_the_synonyms_present_in_a_group_and_those_its_lattice_recovered(
        mini_wordnet):
    killed = [["they", "killed", "him"], ["they", "slew", "him"], ["he", "was", "slain"]]
    assert present_synonyms(killed, mini_wordnet.synonyms) == {("killed", "slew")}
    followed = [["it", "followed"], ["it", "was"]]
    groups = [(killed, [("killed", "slew")]), (followed, [])]
    rows = synonym_recall(groups, mini_wordnet.synonyms)
    assert [(row.asl, row.groups, row.present, row.recovered) for row in rows] == [
        ("1-10", 2, 2, 1)]
    assert rows[0].recall == 0.5
    assert [asl_range(length) for length in (9.9, 10, 44.9, 45, 80)] == [
        "1-10", "10-20", "30-45", "45+", "45+"]


def test_the_page_counts_the_pairs_and_shows_table2(mini_wordnet):
    groups = {"test": {1: [parse_tree(FIG5_TREE1), parse_tree(FIG5_TREE2)],
                       2: [parse_tree(FIG5_TREE2), parse_tree(UNMERGED)]}}
    frames = {"test": pairs_frame(groups["test"])}
    counts = pair_counts(frames["test"], 2, mini_wordnet)
    assert (counts.with_pairs, counts.pairs, counts.whole, counts.lexical) == (2, 4, 1, 2)
    page = lattice_pairs_page(frames, groups, ["a", "b"], mini_wordnet)
    assert page.startswith("# Paraphrase pairs of the word lattices")
    assert "| 12 / twelve | 1 |" in page
    assert "| 1-10 | 2 | 0 | 0 | 0.0 % | 30.7 % |" in page

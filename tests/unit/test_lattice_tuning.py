"""Tuning conditions kH+mL: sentences drawn from the word lattice of k references (Pang, Knight &
Marcu 2003; circle.lattice.references, circle.experiments.lattice_tuning)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate
from snakemake_interface_common.exceptions import WorkflowError

from circle.corpus.preprocess import normalize
from circle.experiments.conditions import CONDITION_PATTERN, Condition
from circle.experiments.lattice_tuning import (
    lattice_conditions,
    lattice_counts,
    lattice_runs,
)
from circle.experiments.mt_tuning import condition_references
from circle.figures.lattice_tuning import coverage
from circle.figures.reference_table import reference_table
from circle.grammar.tree import parse_tree
from circle.lattice.evaluate import group_lattice
from circle.lattice.fsa import paths, ranked_sentences
from circle.lattice.references import (
    PipelineTokensLM,
    lattice_references,
    lattice_sentences,
    reference_text,
    spellings,
)
from circle.pipeline.config import config_problems

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "tiny"

# The seed's Fig. 5 trees (§3): merged, their lattice has 8 paths, 2 of them the inputs.
FIG5 = [parse_tree("(S (NP (CD 12) (NNS people)) (VP (VBD were) (VP (VBN killed))))"),
        parse_tree("(S (NP (CD twelve) (NNS persons)) (VP (VBD died)))")]
INPUTS = {("12", "people", "were", "killed"), ("twelve", "persons", "died")}


@pytest.mark.parametrize(("name", "human", "lattice", "baseline"),
                         [("2H+1L", 2, 1, "2H"), ("2H+2L", 2, 2, "2H"), ("3H+1L", 3, 1, "3H"),
                          ("4H+3L_ter", 4, 3, "4H_ter")])
def test_lattice_conditions_parse_round_trip_and_are_compared_with_kH(name, human, lattice,
                                                                      baseline):
    condition = Condition.parse(name)
    assert (condition.human, condition.lattice, condition.paraphrases) == (human, lattice, 0)
    assert condition.name == name and Condition.parse(condition.name) == condition
    assert condition.baseline.name == baseline
    assert condition.added_references == lattice and condition.reference_type == "lattice"
    assert re.fullmatch(CONDITION_PATTERN, name)


def test_a_lattice_of_one_reference_is_refused_clearly():
    with pytest.raises(ValueError, match=r"1H\+1L.*kH\+mL needs k >= 2 human references"):
        Condition.parse("1H+1L")


@pytest.mark.parametrize("name", ["2H+0L", "2H+01L", "2H+1L_ref1", "2H+1L_b0.5", "2H+1L_t1",
                                  "2H+1P", "1H+1L+1P", "2HL", "2H+L"])
def test_bad_lattice_conditions_are_refused(name):
    with pytest.raises(ValueError):
        Condition.parse(name)


def test_lattice_sentences_are_new_paths_ranked_by_the_lm(letter_lm):
    lm = letter_lm
    chosen, paths_count = lattice_sentences(FIG5, lm, 3)
    _, squeezed, _ = group_lattice(FIG5)
    every = set(paths(squeezed))
    assert paths_count == len(every) == 8
    new = [words for words in every if words not in INPUTS]
    assert chosen == ranked_sentences(new, lm)[:3]  # the LM's best three of the six new ones
    assert all(words in every and words not in INPUTS for words, _ in chosen)
    assert [score for _, score in chosen] == sorted((s for _, s in chosen), reverse=True)
    assert lattice_sentences(FIG5, lm, 3) == (chosen, 8)  # deterministic
    assert len(lattice_sentences(FIG5, lm, 10)[0]) == 6  # no more than the lattice has
    assert lattice_sentences(FIG5[:1] * 2, lm, 2) == ([], 1)  # a lattice of its input alone


def test_pipeline_tokens_lm_scores_a_word_as_the_pipelines_tokens(letter_lm):
    lm = PipelineTokensLM(letter_lm, "en")
    state, score = lm.advance(lm.begin(), "n't")
    assert state == "&apos;t" and score == pytest.approx(-(4 + 8) / 10)  # "n", then "&apos;t"


def test_lattice_paths_are_written_as_the_pipeline_tokenises_the_references():
    reference = normalize("Her daughter-in-law didn't go. She stayed.", "en")
    assert reference == "her daughter-in-law didn &apos;t go . she stayed ."
    parser_words = ["her", "daughter", "-", "in", "-", "law", "did", "n't", "go", ".", "she",
                    "stayed", "."]
    assert reference_text(parser_words, spellings([reference]), "en") == reference
    swapped = ["she", "stayed", ".", "her", "daughter", "-", "in", "-", "law", "did", "n't"]
    assert reference_text(swapped, spellings([reference]), "en") == \
        "she stayed . her daughter-in-law didn &apos;t"


def tune_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "segment_id": [1, 2, 3], "document": ["a", "a", "b"], "source": ["s1", "s2", "s3"],
        "references": [["twelve persons died", "12 people were killed", "people died"],
                       ["they went", "they went", "we went"],
                       ["twelve persons died", "12 people were killed", "people died"]],
        "ref_order": [[1, 0, 2], [0, 1, 2], [1, 0, 2]]})


def test_lattice_references_take_the_first_k_references_in_the_seeded_order(letter_lm):
    died = parse_tree("(S (NP (NNS people)) (VP (VBD died)))")
    groups = {1: [FIG5[1], FIG5[0], died],
              2: [parse_tree("(S (NP (PRP they)) (VP (VBD went)))")] * 2
              + [parse_tree("(S (NP (PRP we)) (VP (VBD went)))")],
              3: [FIG5[1], FIG5[0], died]}
    frame, dropped = lattice_references(tune_frame(), groups, letter_lm, 2, 2, "en")
    assert dropped == 0
    assert list(frame["segment_id"]) == [1, 1, 3, 3] and list(frame["rank"]) == [0, 1, 0, 1]
    expected = lattice_sentences(FIG5, PipelineTokensLM(letter_lm, "en"), 2)[0]
    assert list(frame["words"]) == [" ".join(words) for words, _ in expected] * 2
    assert not set(frame["reference"]) & {"twelve persons died", "12 people were killed"}
    assert set(frame["lattice_paths"]) == {8}
    assert coverage(frame, 3, 2) == [1, 0, 2]
    with pytest.raises(ValueError, match="at least two references"):
        lattice_references(tune_frame(), groups, letter_lm, 1, 1, "en")


def test_a_lattice_condition_tunes_with_kH_and_its_first_m_sentences():
    table = tune_frame()
    lattice = pd.DataFrame({"segment_id": [1, 1, 3], "rank": [0, 1, 0],
                            "reference": ["l1a", "l1b", "l3a"]})
    one = condition_references(table, Condition.parse("2H+1L"), None, lattice=lattice)
    assert one == [["12 people were killed", "twelve persons died", "l1a"],
                   ["they went", "they went"],
                   ["12 people were killed", "twelve persons died", "l3a"]]
    two = condition_references(table, Condition.parse("2H+2L"), None, lattice=lattice)
    assert two[0][2:] == ["l1a", "l1b"] and two[2][2:] == ["l3a"]  # fewer where it has fewer
    with pytest.raises(ValueError, match="needs its lattice references"):
        condition_references(table, Condition.parse("2H+1L"), None)


def tiny_config(**lattice) -> dict:
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    config["lattice"] = lattice
    validate(config, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    return config


def test_the_lattice_conditions_of_a_config_and_their_runs():
    config = tiny_config()
    conditions = lattice_conditions(config)
    assert [c.name for c in conditions] == ["2H+1L", "2H+2L"]  # two tune references, English
    assert lattice_counts(conditions) == {2: 2}
    runs = [run.name for run in lattice_runs(conditions, 2, 2)]
    assert runs == ["1H.rep0", "1H.rep1", "2H.rep0", "2H.rep1", "2H+1L.rep0", "2H+1L.rep1",
                    "2H+2L.rep0", "2H+2L.rep1"]
    assert not config_problems(config)
    config["preprocess"]["target_lang"] = "de"
    assert lattice_conditions(config) == []  # the parser is English


def test_config_problems_name_bad_lattice_conditions():
    config = tiny_config(tuning_conditions=["3H+1L", "1H+1L"])
    config["tuning"]["conditions"].append("2H+1L")
    problems = config_problems(config)
    assert any("3H+1L needs 3 references but the tune set has 2" in p for p in problems)
    assert any("1H+1L" in p and "k >= 2" in p for p in problems)
    assert any("tuning.conditions: 2H+1L" in p and "lattice_tuning" in p for p in problems)
    with pytest.raises(WorkflowError, match="does not match"):
        tiny_config(tuning_conditions=["2H"])


def test_the_reference_table_puts_a_lattice_series_on_its_kH_row():
    rows = []
    for condition, human, added in (("1H", 1, 0), ("2H", 2, 0), ("2H+1L", 2, 1),
                                    ("2H+2L", 2, 2)):
        parsed = Condition.parse(condition)
        for replicate in (0, 1):
            rows.append({"experiment": "x", "condition": condition,
                         "reference_type": parsed.reference_type, "human_references": human,
                         "paraphrase_references": added, "references_used": human + added,
                         "replicate": replicate, "bleu": 10.0 + human + added + replicate,
                         "ter": 50.0, "chrf": 40.0})
    table = reference_table(pd.DataFrame(rows))
    assert list(table["references"]) == [1, 2, 3, 4]
    assert list(table["human_bleu_mean"].fillna(-1)) == [11.5, 12.5, -1, -1]
    assert list(table["lattice_2H_bleu_mean"].fillna(-1)) == [-1, 12.5, 13.5, 14.5]

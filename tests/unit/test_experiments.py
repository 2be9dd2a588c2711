"""Reference conditions and set selection of the ch. 4 experiments (circle.experiments)."""

from __future__ import annotations

import pandas as pd
import pytest

from circle.experiments import Condition, condition_references, select_segments
from circle.schemas import EVALSET
from circle.tables import read_table, write_table


def evalset() -> pd.DataFrame:
    return pd.DataFrame({
        "segment_id": [1, 2, 3, 4, 5],
        "document": ["a", "a", "b", "b", "c"],
        "source": ["s1", "s2", "s3", "s4", "s5"],
        "references": [[f"r{k}-{i}" for k in range(4)] for i in range(1, 6)],
        "ref_order": [[2, 0, 1, 3], [2, 0, 1, 3], [1, 3, 0, 2], [1, 3, 0, 2], [0, 1, 2, 3]],
    })


@pytest.mark.parametrize(("name", "human", "paraphrases"),
                         [("1H", 1, 0), ("4H", 4, 0), ("1H+1P", 1, 1), ("1H+3P", 1, 3)])
def test_condition_names_parse(name, human, paraphrases):
    condition = Condition.parse(name)
    assert (condition.human, condition.paraphrases) == (human, paraphrases)
    assert condition.reference_type == ("paraphrase" if paraphrases else "human")


@pytest.mark.parametrize("name", ["0H", "2H+1P", "1P", "H", "1H+P"])
def test_bad_condition_names_are_refused(name):
    with pytest.raises(ValueError, match="unknown tuning condition"):
        Condition.parse(name)


def test_human_conditions_follow_the_seeded_order():
    references = condition_references(evalset(), Condition.parse("2H"), None)
    assert references[0] == ["r2-1", "r0-1"]
    assert references[2] == ["r1-3", "r3-3"]


def test_paraphrase_conditions_add_the_k_best_paraphrases_of_the_single_reference():
    paraphrases = pd.DataFrame({"segment_id": [1, 1, 1, 3], "rank": [0, 1, 2, 0],
                                "hypothesis": ["p1a", "p1b", "p1c", "p3a"]})
    references = condition_references(evalset(), Condition.parse("1H+2P"), paraphrases)
    assert references[0] == ["r2-1", "p1a", "p1b"]
    assert references[1] == ["r2-2"]  # no paraphrase for segment 2
    assert references[2] == ["r1-3", "p3a"]
    with pytest.raises(ValueError, match="needs the paraphrased references"):
        condition_references(evalset(), Condition.parse("1H+1P"), None)


def test_select_segments_keeps_whole_documents(tmp_path):
    path, out = tmp_path / "set.parquet", tmp_path / "out.parquet"
    write_table(evalset(), path, EVALSET)
    assert select_segments(path, 3, out) == 2  # document b would cross the limit
    assert list(read_table(out, EVALSET)["document"]) == ["a", "a"]
    assert select_segments(path, 4, out) == 4
    assert select_segments(path, None, out) == 5
    assert select_segments(path, 1, out) == 2  # at least the first document

"""The OOV page's parts on hand-made inputs: which verses count as translated now, and the
score table's order (kH before its kH_oov)."""

from __future__ import annotations

import pandas as pd

from circle.core.schemas import EVALSET
from circle.core.tables import write_table
from circle.figures.oov_translation import samples_markdown, score_table


def test_a_verse_counts_when_the_augmented_output_drops_a_word_the_baseline_passes_through(
        tmp_path):
    test = pd.DataFrame({"segment_id": [0, 1, 2], "document": "d",
                         "source": ["el día cuarto .", "el día tercero .", "la casa ."],
                         "references": [["the fourth day ."], ["the third day ."],
                                        ["the house ."]],
                         "ref_order": [[0]] * 3})
    write_table(test, tmp_path / "test.parquet", EVALSET)
    (tmp_path / "base.txt").write_text("the day cuarto .\nthe day tercero .\nthe house .\n")
    # verse 0: cuarto translated; verse 1: tercero still copied; verse 2: no OOV word
    (tmp_path / "oov.txt").write_text("the second day .\nthe day tercero .\nthe home .\n")
    lines = samples_markdown(tmp_path / "test.parquet", tmp_path / "base.txt",
                             tmp_path / "oov.txt", "4H", "4H_oov",
                             known={"el", "día", ".", "la", "casa"})
    assert lines[0].startswith("Replicate 0: of the 2 OOV words (distinct per verse) that 4H "
                               "passes through, 4H_oov's output drops 1, in 1 of 3")
    assert lines[2:] == ["- source: el día cuarto .", "  - translated now: cuarto",
                         "  - 4H: the day cuarto .", "  - 4H_oov: the second day .",
                         "  - reference: the fourth day ."]


def test_the_score_table_puts_each_baseline_before_its_augmented_twin():
    metrics = {f"{m}_{s}": 1.0 for m in ("bleu", "ter", "chrf", "matched_bleu")
               for s in ("mean", "sd")}
    tests = {f"{m}_{s}": None for m in ("bleu", "ter", "matched_bleu")
             for s in ("difference", "p_value", "significant")}
    rows = [{"condition": name, "replicates": 3, "length_ratio_mean": 1.0,
             "baseline_condition": base, **metrics, **tests}
            for name, base in (("4H_oov", "4H"), ("1H", None), ("4H", None), ("1H_oov", "1H"))]
    table = score_table(pd.DataFrame(rows))
    assert list(table["condition"]) == ["1H", "1H_oov", "4H", "4H_oov"]
    assert list(table["grammar"]) == ["filtered", "augmented"] * 2

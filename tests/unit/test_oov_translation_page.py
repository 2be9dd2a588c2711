"""The OOV page's parts on hand-made inputs: which verses count as translated now, and the
score table's order (kH before its kH_oov)."""

from __future__ import annotations

import pandas as pd

from circle.core.schemas import EVALSET
from circle.core.tables import write_table
from circle.figures.oov_translation import samples_markdown, score_table, stoplist_markdown


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
    rows.append({**rows[0], "condition": "4H_oov-split"})
    rows.append({**rows[0], "condition": "4H_oov-unigrams"})
    tune = {"4H_oov": [40.0, 41.0, 42.0], "4H_oov-split": [39.0]}
    table = score_table(pd.DataFrame(rows), tune, {"": "oov_paraphrase",
                                                   "unigrams": "max_phrase_length 1",
                                                   "split": "feature_split 2"})
    assert list(table["condition"]) == ["1H", "1H_oov", "4H", "4H_oov", "4H_oov-unigrams",
                                        "4H_oov-split"]
    assert list(table["grammar"]) == ["filtered", "augmented"] * 2 + ["augmented"] * 2
    assert list(table["settings"])[3:] == ["oov_paraphrase", "max_phrase_length 1",
                                           "feature_split 2"]
    assert pd.isna(table["variant"].iloc[2])  # 4H: no variant
    assert list(table["variant"])[3:] == ["", "unigrams", "split"]
    assert table["tune_mean"].iloc[3] == 41.0 and table["tune_sd"].iloc[3] == 1.0
    assert table["tune_mean"].iloc[5] == 39.0 and pd.isna(table["tune_sd"].iloc[5])
    assert table["tune_mean"].iloc[:3].isna().all()


def test_the_stoplist_threshold_is_the_candidate_whose_runs_tune_best():
    table = pd.DataFrame({
        "condition": ["4H", "4H_oov", "4H_oov-stoplist500", "4H_oov-stoplist8000",
                      "4H_oov-split"],
        "grammar": ["filtered"] + ["augmented"] * 4,
        "variant": [None, "", "stoplist500", "stoplist8000", "split"],
        "tune_mean": [float("nan"), 40.1, 40.4, 39.9, 45.0],
        "tune_sd": [float("nan"), 0.1, 0.2, 0.3, 0.1],
        "bleu_mean": [41.0, 40.0, 39.5, 40.2, 40.0], "bleu_sd": [0.1] * 5})
    candidates = {"": 2000, "stoplist500": 500, "stoplist8000": 8000}
    lines = stoplist_markdown(table, candidates)
    # 40.4 beats 40.1 by 0.3, more than either's sd (0.2, 0.1), and 39.9 by 0.5 (sd 0.3)
    assert lines[0].endswith("Chosen: 500 (4H_oov-stoplist500). The test column is shown, "
                             "never used.")
    assert lines[-3:] == ["| 4H_oov | 2,000 | 40.10 ± 0.10 | 40.00 ± 0.10 |",
                          "| 4H_oov-stoplist500 | 500 | 40.40 ± 0.20 | 39.50 ± 0.10 |",
                          "| 4H_oov-stoplist8000 | 8,000 | 39.90 ± 0.30 | 40.20 ± 0.10 |"]
    assert stoplist_markdown(table, {"": 2000}) == []
    # a margin inside the replicates' sd chooses nothing: the section's threshold stays
    close = table.assign(tune_sd=[float("nan"), 0.1, 0.35, 0.6, 0.1])
    verdict = stoplist_markdown(close, candidates)[0]
    assert ("does not tell them apart: the best mean, 500 (4H_oov-stoplist500, 40.40), is "
            "within the replicates' sd of 2,000 (40.10), 8,000 (39.90); no threshold is "
            "chosen and oov_paraphrase's own, 2,000, stays.") in verdict

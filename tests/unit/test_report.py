"""circle.report: the Fig. 4.3 table (Markdown, CSV) and plot from an EVALUATION table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from circle.evaluate import write_evaluation
from circle.report import markdown_table, reference_table, write_report

CONDITIONS = [  # condition, reference type, human, paraphrase, replicates
    ("1H", "human", 1, 0, 3), ("2H", "human", 2, 0, 3), ("3H", "human", 3, 0, 1),
    ("4H", "human", 4, 0, 2), ("1H+1P", "paraphrase", 1, 1, 3),
    ("1H+2P", "paraphrase", 1, 2, 1), ("1H+3P", "paraphrase", 1, 3, 2),
    ("1H+1P'", "targeted", 1, 1, 2), ("1H+2P'", "targeted", 1, 2, 2)]


def evaluation(seed: int = 0, experiment: str = "default") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for condition, kind, human, paraphrase, replicates in CONDITIONS:
        for replicate in range(replicates):
            rows.append({
                "experiment": experiment, "condition": condition, "reference_type": kind,
                "human_references": human, "paraphrase_references": paraphrase,
                "references_used": human + paraphrase, "replicate": replicate,
                "seed": 100 + replicate, "tune_metric": "bleu", "tune_iterations": 6,
                "eval_set": "test", "eval_references": 4, "segments": 1500,
                "bleu": rng.uniform(20, 40), "ter": rng.uniform(40, 60),
                "bleu_signature": "nrefs:4|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0",
                "ter_signature": "nrefs:4|case:lc|tok:tercom|norm:no|punct:yes|asian:no",
                "baseline_condition": None if condition == "1H" else "1H",
                "p_value_vs_baseline": None if condition == "1H" else rng.uniform(),
                "bootstrap_samples": None if condition == "1H" else 1000})
    return pd.DataFrame(rows)


def cell_values(frame, condition, metric):
    return frame.loc[frame["condition"] == condition, metric].to_numpy()


def test_cells_are_means_and_sample_deviations_of_the_replicates():
    frame = evaluation()
    table = reference_table(frame)
    assert table["references"].tolist() == [1, 2, 3, 4]
    assert table["label"].tolist() == ["1 (1H+0)", "2 (1H+1)", "3 (1H+2)", "4 (1H+3)"]
    expected = {"human": ["1H", "2H", "3H", "4H"], "paraphrase": ["1H", "1H+1P", "1H+2P", "1H+3P"],
                "targeted": ["1H", "1H+1P'", "1H+2P'", None]}
    for series, conditions in expected.items():
        for k, condition in enumerate(conditions):
            row = table.iloc[k]
            for metric in ("bleu", "ter"):
                if condition is None:
                    assert np.isnan(row[f"{series}_{metric}_mean"])
                    assert row[f"{series}_{metric}_n"] == 0
                    continue
                values = cell_values(frame, condition, metric)
                assert row[f"{series}_{metric}_mean"] == pytest.approx(values.mean(), abs=1e-12)
                assert row[f"{series}_{metric}_n"] == len(values)
                if len(values) > 1:
                    assert row[f"{series}_{metric}_sd"] == pytest.approx(values.std(ddof=1))
                else:
                    assert np.isnan(row[f"{series}_{metric}_sd"])
    # the 1-reference row is the shared 1H baseline
    assert table.loc[0, "paraphrase_bleu_mean"] == table.loc[0, "human_bleu_mean"]


def parse_markdown(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in rows]


def test_markdown_and_csv_agree(tmp_path):
    table = write_report(evaluation(), tmp_path / "t.md", tmp_path / "t.csv", tmp_path / "t.png")
    rows = parse_markdown((tmp_path / "t.md").read_text(encoding="utf-8"))
    assert rows[0] == ["# tuning refs", "Human BLEU", "Human TER", "Paraphrased BLEU",
                       "Paraphrased TER", "Targeted BLEU", "Targeted TER"]
    csv = pd.read_csv(tmp_path / "t.csv")
    pd.testing.assert_frame_equal(csv, table, check_dtype=False, rtol=1e-12)
    series = ["human", "paraphrase", "targeted"]
    for body, (_, row) in zip(rows[2:], csv.iterrows(), strict=True):
        assert body[0] == row["label"]
        cells = iter(body[1:])
        for name in series:
            for metric in ("bleu", "ter"):
                cell, mean = next(cells), row[f"{name}_{metric}_mean"]
                sd, n = row[f"{name}_{metric}_sd"], row[f"{name}_{metric}_n"]
                if n == 0:
                    assert cell == "–"
                elif n == 1:
                    assert cell == f"{mean:.2f}"
                else:
                    assert cell == f"{mean:.2f} ± {sd:.2f}"
    assert len(rows) == 2 + len(csv)


def test_outputs_are_deterministic_png_and_read_from_a_table(tmp_path):
    path = tmp_path / "evaluation.parquet"
    write_evaluation(evaluation(), path)
    first = [tmp_path / f"a.{ext}" for ext in ("md", "csv", "png")]
    second = [tmp_path / f"b.{ext}" for ext in ("md", "csv", "png")]
    write_report(path, *first)
    write_report(evaluation(), *second)
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
    png = first[2].read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000


def test_experiments_must_be_chosen_and_replicates_unique():
    both = pd.concat([evaluation(0, "a"), evaluation(1, "b")], ignore_index=True)
    with pytest.raises(ValueError, match="several experiments"):
        reference_table(both)
    only_b = reference_table(both, experiment="b")
    pd.testing.assert_frame_equal(only_b, reference_table(evaluation(1, "b")))
    with pytest.raises(ValueError, match="no rows"):
        reference_table(both, experiment="c")
    frame = evaluation()
    with pytest.raises(ValueError, match="replicate numbers repeat"):
        reference_table(pd.concat([frame, frame.iloc[:1]]))


def test_single_replicate_cells_have_no_deviation():
    frame = evaluation()
    frame = frame[frame["replicate"] == 0]
    rows = parse_markdown(markdown_table(reference_table(frame)))
    assert not any("±" in cell for row in rows for cell in row)
    assert rows[2][1] == f"{cell_values(frame, '1H', 'bleu')[0]:.2f}"

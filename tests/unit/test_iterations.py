"""circle.figures.iterations: the Fig. 5.4 table, page and plot from per-iteration scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from circle.core.schemas import ITERATION_SCORES
from circle.core.tables import write_table
from circle.figures.iterations import curves_markdown, curves_table, write_curves_report


def scores(run: str, tune: list[float], test: list[float], returned: int) -> pd.DataFrame:
    return pd.DataFrame({"run": run, "iteration": np.arange(1, len(tune) + 1, dtype=np.int32),
                         "metric": "bleu", "tune_score": tune, "test_bleu": test,
                         "test_ter": [60.0] * len(tune),
                         "returned": [i + 1 == returned for i in range(len(tune))]})


RUNS = [scores("1H+1T_b0_w-0.5.rep0", [20.0, 22.5, 24.0], [40.0, 39.5, 39.0], 3),
        scores("1H+1T_b0_w-1.5.rep0", [20.0, 25.0], [40.0, 38.0], 2)]
LABELS = {"1H+1T_b0_w-0.5.rep0": "w -0.5", "1H+1T_b0_w-1.5.rep0": "w -1.5"}


def test_curves_table_aligns_the_runs_by_iteration():
    table = curves_table(RUNS)
    assert table["iteration"].tolist() == [1, 2, 3]
    assert table["1H+1T_b0_w-0.5.rep0_tune"].tolist() == [20.0, 22.5, 24.0]
    assert table["1H+1T_b0_w-1.5.rep0_test_bleu"].tolist()[:2] == [40.0, 38.0]
    assert np.isnan(table["1H+1T_b0_w-1.5.rep0_test_bleu"].iloc[2])  # a shorter run


def test_curves_page_marks_the_returned_iteration_and_counts_the_falls():
    text = curves_markdown(RUNS, LABELS)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[0] == "| iteration | w -0.5 tune BLEU | w -0.5 test BLEU | w -1.5 tune BLEU | " \
        "w -1.5 test BLEU |"
    assert rows[1:] == ["| 1 | 20.00 | 40.00 | 20.00 | 40.00 |",
                        "| 2 | 22.50 | 39.50 | **25.00** | **38.00** |",
                        "| 3 | **24.00** | **39.00** | – | – |"]
    assert "- w -0.5: tune 20.00 → 24.00, test BLEU 40.00 → 39.00 over 3 iterations (test " \
        "BLEU fell in 2 of 2 steps); returned iteration 3 at test BLEU 39.00." in text


def test_curves_report_writes_page_table_and_plot(tmp_path):
    paths = []
    for number, frame in enumerate(RUNS):
        paths.append(tmp_path / f"run{number}.parquet")
        write_table(frame, paths[-1], ITERATION_SCORES)
    out = [tmp_path / f"fig5_4.{suffix}" for suffix in ("md", "html", "csv", "png")]
    text = write_curves_report(paths, LABELS, *out)
    assert out[0].read_text() == text and "<table>" in out[1].read_text()
    pd.testing.assert_frame_equal(pd.read_csv(out[2]), curves_table(RUNS), check_dtype=False)
    assert out[3].read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(KeyError):
        write_curves_report(paths, {}, *out)  # every run needs its label

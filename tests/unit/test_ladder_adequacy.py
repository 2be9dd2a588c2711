"""The ladder's reading of adequacy against gain (circle.pipeline.ladder, circle.figures.ladder),
on constructed rungs: each a results directory with its reference-quality table, and its
condition summary, with gains whose correlation with adequacy is known; and its table at a
forge's width."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from circle.core.pages import FORGE_COLUMNS, csv_text
from circle.figures.ladder import (
    LADDER_PARTS,
    adequacy_reading,
    ladder_markdown,
    write_ladder_files,
)
from circle.figures.reference_table import Significance
from circle.pipeline.ladder import adequacy_gains


def rung(root: Path, name: str, adequacy: float, gains: tuple[float, float] | None
         ) -> tuple[Path, pd.DataFrame]:
    """A rung whose P1 scores ``adequacy`` BLEU and whose 1H+1P gains ``gains`` (raw, at a
    common length) over 1H; None: the rung did not tune 1H+1P."""
    results = root / "results" / name
    (results / "report").mkdir(parents=True)
    pd.DataFrame({"candidate": ["R", "P1", "P2"], "bleu": [45.0, adequacy, adequacy - 1.0]}
                 ).to_csv(results / "report" / "reference_quality.csv", index=False)
    conditions = {"1H": (None, None)} | ({} if gains is None else {"1H+1P": gains})
    summary = pd.DataFrame({"condition": list(conditions),
                            "bleu_difference": [g[0] for g in conditions.values()],
                            "matched_bleu_difference": [g[1] for g in conditions.values()]})
    return results, summary


def ladder(root: Path, shift: float = 0.0) -> tuple[list[Path], list[pd.DataFrame]]:
    """Four rungs with 1H+1P, adequacy 10-40 in the order 1, 2, 3, 4, raw gains in the order
    4, 2, 3, 1 (r = −0.8) and gains at a common length 1, 3, 2, 4 (r = +0.8), all ``shift``
    higher; and one rung without 1H+1P. Four pairs: p = 1 − |r| = 0.2."""
    made = [rung(root, name, adequacy, None if raw is None else (raw + shift, matched + shift))
            for name, adequacy, raw, matched in [("a", 10.0, 4.0, 1.0), ("b", 20.0, 2.0, 3.0),
                                                 ("none", 25.0, None, None),
                                                 ("c", 30.0, 3.0, 2.0), ("d", 40.0, 1.0, 4.0)]]
    return [path for path, _ in made], [summary for _, summary in made]


def test_adequacy_gains_are_each_rungs_p1_and_1H_plus_1P(tmp_path):
    gains = adequacy_gains(*ladder(tmp_path))
    assert gains["experiment"].tolist() == ["a", "b", "c", "d"]
    assert gains["adequacy_bleu"].tolist() == [10.0, 20.0, 30.0, 40.0]
    assert gains["bleu"].tolist() == [4.0, 2.0, 3.0, 1.0]
    assert gains["matched_bleu"].tolist() == [1.0, 3.0, 2.0, 4.0]


def test_the_reading_gives_r_n_and_p_raw_and_at_a_common_length(tmp_path):
    reading = adequacy_reading(adequacy_gains(*ladder(tmp_path)))
    assert "raw r = -0.80 (n = 4, p = 0.2)" in reading
    assert "at a common length r = +0.80 (n = 4, p = 0.2)" in reading
    assert "same 1H" in reading and "optimistic" in reading


def test_a_shared_1H_that_is_off_leaves_the_reading(tmp_path):
    """Every gain is over the same 1H: 1H lower by 0.9 raises all gains alike."""
    assert adequacy_reading(adequacy_gains(*ladder(tmp_path / "one"))) \
        == adequacy_reading(adequacy_gains(*ladder(tmp_path / "two", shift=0.9)))


def test_fewer_than_three_rungs_give_no_r(tmp_path):
    paths, summaries = ladder(tmp_path)
    reading = adequacy_reading(adequacy_gains(paths[:3], summaries[:3]))
    assert "2 rung(s) with 1H+1P" in reading and "r =" not in reading


def test_the_ladder_leads_with_what_it_reads_and_drops_no_column(forge_tables):
    """At a forge's width the first table has each rung's P1 adequacy beside the MT system's
    and the tuning gains; the tables under it every other column of the same rungs, as the
    CSV has them all. A column no table places is refused, not dropped."""
    columns = ["experiment", *sorted(name for part in LADDER_PARTS for name in part)]
    table = pd.DataFrame([[f"{rung} {column}" for column in columns] for rung in ("a", "b")],
                         columns=columns)
    tables = forge_tables(ladder_markdown(table))
    assert len(tables[0][0]) <= FORGE_COLUMNS
    assert tables[0][0][:3] == ["experiment", "P1 BLEU / chrF / TER", "MT untuned BLEU"]
    assert {"1H+1P − 1H BLEU", "1H+1T − 1H BLEU"} <= set(tables[0][0])
    assert sorted(name for rows in tables for name in rows[0][1:]) == columns[1:]
    for rows in tables:
        header = rows[0]
        assert [dict(zip(header, row, strict=True)) for row in rows[1:]] == [
            {name: f"{rung} {name}" for name in header} for rung in ("a", "b")]
    assert pd.read_csv(io.StringIO(csv_text(table))).columns.tolist() == columns
    with pytest.raises(ValueError, match="do not split the columns"):
        ladder_markdown(table.assign(**{"new column": "x"}))


def test_the_ladder_files_hold_the_table_the_reading_and_what_no_rung_ran(tmp_path):
    """write_ladder_files: the page (its tables and reading), the ladder's CSV, and for a figure
    no rung ran a line saying so instead of its table and plots."""
    paths, summaries = ladder(tmp_path / "rungs")
    columns = ["experiment", *(name for part in LADDER_PARTS for name in part)]
    table = pd.DataFrame([[f"{path.name} {column}" for column in columns] for path in paths],
                         columns=columns)
    significance = Significance("1H", 0.05, 10_000)
    page = write_ladder_files(table, adequacy_gains(paths, summaries),
                              {"fig4_3": None, "fig5_10": None}, significance,
                              [path.name for path in paths], tmp_path / "out", "a test")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# The ladder of paraphrasers\n") and "made at a test" in text
    assert ladder_markdown(table) in text and "raw r = -0.80 (n = 4, p = 0.2)" in text
    assert "No experiment of the ladder ran the conditions of Fig. 4.3, 1H+kP." in text
    assert (tmp_path / "out/ladder.csv").read_text(encoding="utf-8") == csv_text(table)
    assert (tmp_path / "out/ladder.html").exists()
    assert not (tmp_path / "out/fig4_3.png").exists()

"""`snakemake oov_masking` on the tiny corpus: known test words masked as OOV, searched for in
half and in all of the monolingual text, scored against their own rules, and the page."""

from __future__ import annotations

import pytest
from test_workflow import check_target_report, snakemake, tiny_config

from circle.core.schemas import BITEXT, OOV_MASKING
from circle.core.tables import read_metadata, read_table
from circle.figures.oov_masking import VERDICTS

pytestmark = pytest.mark.workflow


def test_the_masking_target_scores_borrowed_translations_at_two_amounts_of_text(tmp_path):
    """Only the corpus and the bilingual grammar are built (no decode, no tuning). Every
    masked word is scored at both amounts; the larger text is the whole monolingual text and
    holds more words; no word borrows through itself; accuracy@1 is the top borrowed target
    being one of the word's true ones. "mañana" (morning) borrows "even" through "tarde"
    ("y fué la tarde y la mañana"): a neighbour in context, not in meaning. `snakemake --report`
    holds the page with its caption."""
    changes = {"oov_paraphrase.masking": {"min_count": 1, "text_fractions": [0.5, 1.0]}}
    run = snakemake("--cores", "2", "--configfile", str(tiny_config(tmp_path, **changes)),
                    "--directory", str(tmp_path), "oov_masking")
    assert run.returncode == 0, run.stdout + run.stderr
    log = run.stdout + run.stderr
    assert "rule decode_shard:" not in log and "rule tune_translation:" not in log
    results = tmp_path / "results" / "tiny"
    path = results / "evaluation/oov_masking.parquet"
    table = read_table(path, OOV_MASKING)
    metadata = read_metadata(path)
    half, full = (table[table["fraction"] == f].set_index("word") for f in (0.5, 1.0))
    assert list(half.index) == list(full.index) and len(full) == int(metadata["candidates"])
    assert half["text_words"].iloc[0] < full["text_words"].iloc[0]
    tokenized = read_table(results / "tokenized/train.parquet", BITEXT)
    assert (full["train_count"] >= 1).all()
    assert full.loc["mañana", "train_count"] == sum(
        s.split().count("mañana") for s in tokenized["source"])
    covered = table[table["borrowed_targets"] > 0]
    assert len(covered) and (covered["top_paraphrase"] != covered["word"]).all()
    assert (covered["correct_at_1"] == [t in true for t, true in zip(
        covered["top_target"], covered["true_targets"], strict=True)]).all()
    assert not table.loc[table["borrowed_targets"] == 0, "correct_at_1"].any()
    mañana = full.loc["mañana"]
    assert (mañana["top_paraphrase"], mañana["top_target"]) == ("tarde", "even")
    assert "morning" in mañana["true_targets"] and not mañana["correct_at_1"]
    page = (results / "report/oov_masking.md").read_text()
    assert "**Reading**" in page and any(text in page for text in VERDICTS.values())
    assert "| mañana | morning" in page
    csv = (results / "report/oov_masking.csv").read_text().splitlines()
    assert csv[0].startswith("fraction,text_words,masked_words,covered,coverage")
    assert len(csv) == 3
    check_target_report(tmp_path, tiny_config(tmp_path, **changes), "oov_masking",
                        "oov_masking", "OOV paraphrases")

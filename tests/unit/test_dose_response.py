"""circle.experiments.dose_response and its page (circle.figures.dose_response) on real data: the
tiny corpus's tune set (tests/data/tiny) and verses of the shipped Bible table, tokenised and
lowercased as the pipeline does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sacrebleu.metrics import BLEU, CHRF
from snakemake.utils import validate

from circle.core.pages import FORGE_COLUMNS, csv_text
from circle.core.schemas import EVALSET, EXTRA_REFERENCE, VERSES
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.prepare import bible_tables, file_tables
from circle.corpus.preprocess import normalize, tokenize_evalset
from circle.corpus.references import ordered_references, single_references
from circle.experiments.conditions import CONDITION_PATTERN, Condition
from circle.experiments.dose_response import (
    adequacy,
    degraded_references,
    dose_table,
    extra_reference_frame,
    kjv_references,
    mt_references,
    write_extra_references,
)
from circle.experiments.dose_runs import dose_conditions, dose_extras
from circle.experiments.mt_tuning import condition_references
from circle.figures.dose_response import dose_markdown, dose_reading, extra_label
from circle.pipeline.config import config_problems
from circle.tune.metrics import get_metric

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "tiny"
BIBLE = ROOT / "resources" / "bible" / "bible.parquet"
REFERENCES = ["web", "dar", "ylt", "bbe"]


def tiny_tune() -> pd.DataFrame:
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    files = config["corpus"]["files"]
    for spec in files.values():
        for key, value in spec.items():
            spec[key] = [str(TINY / v) for v in value] if isinstance(value, list) \
                else str(TINY / value)
    return tokenize_evalset(file_tables(files, 2000, 13)["tune"], "es", "en")


@pytest.fixture(scope="module")
def bible_tune() -> pd.DataFrame:
    """The first 40 tune verses of the default experiment, tokenised and lowercased."""
    tune = bible_tables(BIBLE, "es", "kjv", REFERENCES, 13)["tune"].head(40)
    return tokenize_evalset(tune.reset_index(drop=True), "es", "en")


@pytest.mark.parametrize("name, extra", [("1H+1X_kjv", "kjv"), ("1H+1X_mt", "mt"),
                                         ("1H+1X_copy", "copy"),
                                         ("1H+1X_noise30", "noise30"),
                                         ("1H+1X_shuffle_ter", "shuffle")])
def test_extra_conditions_parse_and_have_1H_as_baseline(name, extra):
    condition = Condition.parse(name)
    assert condition.extra == extra and condition.name == name
    assert condition.baseline.name == ("1H_ter" if name.endswith("_ter") else "1H")
    assert condition.added_references == 1 and condition.reference_type == f"extra_{extra}"
    assert re.fullmatch(CONDITION_PATTERN, name)


@pytest.mark.parametrize("name", ["1H+2X_kjv", "2H+1X_kjv", "1H+1X_kjv_ref2", "1H+1X_noise0",
                                  "1H+1X_noise101", "1H+1X_noise05", "1H+1X_web",
                                  "1H+1X_mt_t1"])
def test_bad_extra_conditions_are_refused(name):
    with pytest.raises(ValueError):
        Condition.parse(name)


def test_the_wildcard_pattern_is_the_parsers_grammar():
    for name in ["1H", "4H", "1H+3P", "1H+2T_b0.1_w-0.5", "1H_ref2_t1_terbleu", "1H+1X_noise5"]:
        assert re.fullmatch(CONDITION_PATTERN, name) and Condition.parse(name).name == name


def test_degraded_references_are_deterministic_per_seed_and_differ_across_seeds():
    tune = tiny_tune()
    for extra in ("noise30", "shuffle"):
        first = degraded_references(tune, extra, seed=13)
        assert first.equals(degraded_references(tune, extra, seed=13))
        other = degraded_references(tune, extra, seed=14)
        assert (first["reference"] != other["reference"]).sum() > len(tune) // 2
        second = [refs[1] for refs in ordered_references(tune, 2)]
        assert all(sorted(a.split()) == sorted(b.split()) or extra != "shuffle"
                   for a, b in zip(first["reference"], second, strict=True))
        assert all(len(a.split()) == len(b.split())
                   for a, b in zip(first["reference"], second, strict=True))


def test_noise_replaces_its_share_of_words_with_tune_words():
    tune = tiny_tune()
    vocabulary = {w for refs in tune["references"] for ref in refs for w in ref.split()}
    second = [refs[1] for refs in ordered_references(tune, 2)]
    for level in (25, 50, 75):
        noisy = degraded_references(tune, f"noise{level}", seed=13)
        for text, original, share in zip(noisy["reference"], second, noisy["changed"],
                                         strict=True):
            words, before = text.split(), original.split()
            differ = sum(a != b for a, b in zip(words, before, strict=True))
            assert differ == round(share * len(before))
            assert differ == max(1, round(level / 100 * len(before)))
            assert set(words) <= vocabulary
    # the dose goes down with the level: more of H2's words are gone
    changed = [degraded_references(tune, f"noise{level}", 13)["changed"].mean()
               for level in (25, 50, 75)]
    assert changed == sorted(changed) and changed[0] < changed[-1]


def test_kjv_extra_reference_is_the_tokenised_kjv_verse(bible_tune):
    verses = read_table(BIBLE, VERSES)
    frame = kjv_references(bible_tune, verses, "en", True)
    raw = verses.set_index("segment_id").loc[bible_tune["segment_id"]]
    assert list(frame["reference"]) == [normalize(t, "en", True) for t in raw["kjv"]]
    assert list(frame["segment_id"]) == list(bible_tune["segment_id"])
    # a tune verse is never trained on: the KJV reference is not in the training bitext
    assert set(raw["split"]) == {"tune"}
    train = verses[verses["split"] == "train"]
    assert not set(frame["segment_id"]) & set(train["segment_id"])
    trained = verses[verses["split"] == "train"].head(3)
    leaked = pd.concat([bible_tune.head(2), bible_tune.head(1).assign(
        segment_id=int(trained["segment_id"].iloc[0]))])
    with pytest.raises(ValueError, match="training split"):
        kjv_references(leaked, verses, "en", True)


def test_written_extra_reference_tables_keep_schema_and_provenance(tmp_path, bible_tune):
    tune_path = tmp_path / "tune.parquet"
    write_table(bible_tune, tune_path, EVALSET, metadata={"reference_names": '["web"]'})
    out = tmp_path / "noise50.parquet"
    write_extra_references("noise50", tune_path, out, 13, provenance={"rule": "extra_reference"})
    assert read_metadata(out)["extra"] == "noise50"
    assert read_metadata(out)["rule"] == "extra_reference"
    assert len(read_table(out, EXTRA_REFERENCE)) == len(bible_tune)
    out = tmp_path / "kjv.parquet"
    write_extra_references("kjv", tune_path, out, 13, verses_path=BIBLE)
    assert read_table(out, EXTRA_REFERENCE)["changed"].isna().all()
    out = tmp_path / "copy.parquet"
    write_extra_references("copy", tune_path, out, 13)
    copied = read_table(out, EXTRA_REFERENCE)
    assert copied["reference"].tolist() == single_references(bible_tune)
    assert copied["changed"].isna().all() and read_metadata(out)["extra"] == "copy"


def test_the_copy_extra_reference_is_R_and_leaves_every_tuning_statistic_as_1H(bible_tune):
    """1H+1X_copy adds R to itself: the per-sentence BLEU and TER statistics MERT optimises
    (clipped n-gram counts, closest reference length, edits to the closest reference) are 1H's
    on real hypotheses, so the condition is 1H tuned from other seeds."""
    frame = extra_reference_frame(bible_tune, single_references(bible_tune))
    references = condition_references(bible_tune, Condition.parse("1H+1X_copy"), None, frame)
    singles = single_references(bible_tune)
    assert references == [[r, r] for r in singles]
    # hypotheses: other human translations of the verses, so every statistic is non-trivial
    hypotheses = [refs[-1] for refs in ordered_references(bible_tune, 2)]
    for metric in ("bleu", "ter"):
        alone = get_metric(metric).stats(hypotheses, [[r] for r in singles])
        assert np.array_equal(get_metric(metric).stats(hypotheses, references), alone)
        assert alone.any()


def test_a_1H_plus_X_condition_tunes_with_exactly_R_and_X(bible_tune):
    nbest = pd.DataFrame({"segment_id": bible_tune["segment_id"].repeat(2).to_numpy(),
                          "rank": [0, 1] * len(bible_tune),
                          "hypothesis": [f"{kind} {s}" for s in bible_tune["segment_id"]
                                         for kind in ("best", "second")]})
    extra = mt_references(bible_tune, nbest)
    references = condition_references(bible_tune, Condition.parse("1H+1X_mt"), None, extra)
    singles = single_references(bible_tune)
    assert references == [[r, f"best {s}"] for r, s
                          in zip(singles, bible_tune["segment_id"], strict=True)]
    with pytest.raises(ValueError, match="needs its extra reference table"):
        condition_references(bible_tune, Condition.parse("1H+1X_mt"), None, None)


def test_adequacy_is_sacrebleu_against_the_references_held_out_from_R_and_H2(bible_tune):
    verses = read_table(BIBLE, VERSES)
    kjv = list(kjv_references(bible_tune, verses, "en", True)["reference"])
    noisy = list(degraded_references(bible_tune, "noise50", 13)["reference"])
    second = [refs[1] for refs in ordered_references(bible_tune, 2)]
    quality = adequacy(bible_tune, {"kjv": kjv, "H2": second, "noise50": noisy}).set_index(
        "extra")
    heldout = [refs[2:] for refs in ordered_references(bible_tune)]
    streams = [list(s) for s in zip(*heldout, strict=True)]
    for name, texts in (("kjv", kjv), ("H2", second), ("noise50", noisy)):
        assert quality.loc[name, "adequacy_bleu"] == pytest.approx(
            BLEU(tokenize="none").corpus_score(texts, streams).score)
        assert quality.loc[name, "adequacy_chrf"] == pytest.approx(
            CHRF().corpus_score(texts, streams).score)
        assert quality.loc[name, "adequacy_segments"] == len(bible_tune)
        assert quality.loc[name, "heldout_references"] == 2
    # degrading H2 on purpose lowers its adequacy
    assert quality.loc["noise50", "adequacy_bleu"] < quality.loc["H2", "adequacy_bleu"] / 2


def test_adequacy_is_left_empty_without_a_third_reference():
    tune = tiny_tune()
    second = [refs[1] for refs in ordered_references(tune, 2)]
    row = adequacy(tune, {"H2": second}).iloc[0]
    assert row["adequacy_segments"] == 0 and np.isnan(row["adequacy_bleu"])
    assert row["extra_length_ratio"] > 0


def test_the_dose_table_pairs_replicates_with_1H_and_keeps_the_test(forge_tables):
    """The table and its page: at a forge's width the first table has the reading's numbers,
    the one under it the rest of the same rows; the CSV every column."""
    evaluation = pd.DataFrame({
        "condition": ["1H", "1H", "2H", "2H", "1H+1X_mt", "1H+1X_mt"],
        "replicate": [0, 1] * 3, "bleu": [30.0, 31.0, 32.0, 32.5, 29.0, 29.5],
        "matched_bleu": [33.0, 33.0, 33.5, 33.0, 31.0, 32.0],
        "length_ratio": [1.04, 1.02, 1.0, 1.0, 0.95, 0.97]})
    summary = pd.DataFrame({"condition": ["1H", "2H", "1H+1X_mt"],
                            "bleu_difference": [None, 1.75, -1.25],
                            "bleu_p_value": [None, 0.01, 0.2],
                            "bleu_significant": [None, True, False],
                            "matched_bleu_difference": [None, 0.25, -1.5],
                            "matched_bleu_p_value": [None, 0.6, 0.001],
                            "matched_bleu_significant": [None, False, True]})
    quality = pd.DataFrame({"extra": ["H2", "mt"], "adequacy_segments": [3, 3],
                            "heldout_references": [2.0, 2.0], "adequacy_bleu": [40.0, 30.0],
                            "adequacy_chrf": [60.0, 50.0], "adequacy_ter": [50.0, 60.0],
                            "extra_length_ratio": [1.0, 0.9],
                            "lm_decoding": [np.nan, np.nan]})
    table = dose_table(evaluation, summary, quality, {"1H+1X_mt": "mt", "2H": "H2"})
    assert list(table["condition"]) == ["2H", "1H+1X_mt"]  # by adequacy
    assert table["gain_mean"].tolist() == pytest.approx([1.75, -1.25])
    assert table["gain_sd"].iloc[0] == pytest.approx(np.std([2.0, 1.5], ddof=1))
    assert table["matched_gain_mean"].tolist() == pytest.approx([0.25, -1.5])
    assert table["output_length_ratio"].tolist() == pytest.approx([1.0, 0.96])
    page = dose_markdown(table)
    assert "32.25 ± 0.35*" in page and "significantly better than 1H: H2" in page
    assert "-1.50 ± 0.71†" in page
    assert "R again" not in page
    tables = forge_tables(page)
    first = tables[0][0]
    assert len(first) <= FORGE_COLUMNS
    assert first == ["extra reference", "condition", "adequacy BLEU", "test BLEU",
                     "gain over 1H", "p", "gain at common length", "p (common length)"]
    assert tables[0][1][:5] == [extra_label("H2"), "2H", "40.0", "32.25 ± 0.35*",
                                "+1.75 ± 0.35"]
    assert sorted(name for rows in tables for name in rows[0][1:]) == sorted(
        ["condition", "adequacy BLEU", "adequacy chrF", "length / R", "LM (decoder)",
         "test BLEU", "gain over 1H", "p", "output length", "gain at common length",
         "p (common length)"])
    assert [row[:2] for row in tables[1][1:]] == [[extra_label("H2"), "60.0"],
                                                  [extra_label("mt"), "50.0"]]
    assert csv_text(table).splitlines()[0].split(",") == list(table.columns)


def test_the_controls_are_on_the_page_but_not_in_the_correlation():
    """R again and the untuned MT 1-best are controls (1H from other seeds; the untuned
    system): the correlations are over the four other references, and over the three without
    the paraphrase P1. Adequacy 10, 20, 30, 40 in the order P1, noise50, kjv, H2; raw gains in
    the order 4, 2, 3, 1 (r = −0.8, four pairs: p = 1 − |r|), at a common length 1, 3, 2, 4
    (r = +0.8); without P1 the orders 2, 3, 1 (r = −0.5, three pairs: p = 2/3) and 3, 2, 4
    (r = +0.5)."""
    table = pd.DataFrame({"extra": ["H2", "copy", "P1", "kjv", "mt", "noise50"],
                          "adequacy_bleu": [40.0, 41.0, 10.0, 30.0, 25.0, 20.0],
                          "gain_mean": [1.0, 9.0, 4.0, 3.0, -9.0, 2.0],
                          "matched_gain_mean": [4.0, -9.0, 1.0, 2.0, 9.0, 3.0]})
    for metric, column in (("bleu", "gain_mean"), ("matched_bleu", "matched_gain_mean")):
        table[f"{metric}_significant"] = False
        table[f"{metric}_difference"] = table[column]
    reading = dose_reading(table)
    assert ("raw r = -0.80 (n = 4, p = 0.2), at a common length r = +0.80 (n = 4, p = 0.2); "
            "without the paraphrase P1: raw r = -0.50 (n = 3, p = 0.67), at a common length "
            "r = +0.50 (n = 3, p = 0.67)") in reading


def test_dose_conditions_and_extras_follow_the_corpus():
    config = {"corpus": {"kind": "bible", "bible": {"references": REFERENCES}},
              "tuning": {"conditions": ["1H", "1H+1P"]}}
    assert dose_extras(config) == ["kjv", "mt", "noise25", "noise50", "noise75", "shuffle"]
    files = {"kind": "files", "files": {s: {"references": ["a", "b"]}
                                        for s in ("tune", "test", "paratune")}}
    assert dose_extras({"corpus": files}) == ["mt", "noise25", "noise50", "noise75", "shuffle"]
    names = [c.name for c in dose_conditions(["kjv", "noise25"])]
    assert names == ["1H", "2H", "1H+1P", "1H+1X_kjv", "1H+1X_noise25"]


def test_a_kjv_extra_reference_without_the_bible_is_refused():
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    config["dose_response"] = {"extra": ["kjv", "noise0"]}
    validate(config, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    problems = config_problems(config)
    assert any("kjv needs corpus.kind bible" in p for p in problems)
    assert any("noise<p>" in p for p in problems)

"""Pivot bitexts (circle.corpus.pivots): training verses only, languages, the config key."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from circle.align import BITEXT_DIGEST, bitext_digest, join_pivot_language
from circle.core.schemas import ALIGNMENT, BITEXT, FOREIGN_BIBLES, VERSES
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.pivots import (
    PivotBitext,
    paraphraser_lm_bitexts,
    pivot_bitexts,
    pivot_languages,
    pivot_problems,
    write_pivot_bitext,
)
from circle.corpus.validate import CorpusError

ROOT = Path(__file__).resolve().parents[2]
BIBLE = ROOT / "resources" / "bible" / "bible.parquet"
FOREIGN = ROOT / "resources" / "bible" / "foreign_bibles.parquet"
PLANTED = "this planted evaluation verse must never reach a pivot bitext"


@pytest.fixture(scope="module")
def verses() -> pd.DataFrame:
    """Real verses: 40 of the training split and 10 of each evaluation split, the WEB text of
    every evaluation verse replaced by a planted sentence."""
    table = read_table(BIBLE, VERSES)
    picked = pd.concat([table[table["split"] == split].head(40 if split == "train" else 10)
                        for split in ("train", "tune", "test", "paratune", "none")])
    evaluation = picked["split"] != "train"
    picked.loc[evaluation, "web"] = PLANTED
    return picked.reset_index(drop=True)


def test_a_pivot_bitext_holds_training_verses_only(tmp_path, verses):
    table = tmp_path / "verses.parquet"
    write_table(verses, table, VERSES)
    out = tmp_path / "es-web.parquet"
    rows = write_pivot_bitext(table, PivotBitext("es", "web"), out, "es", "en", True)
    bitext = read_table(out, BITEXT)
    assert rows == len(bitext) == 40
    assert not bitext["target"].str.contains("planted").any()
    train = verses[verses["split"] == "train"]
    assert set(bitext["segment_id"]) == set(train["segment_id"])
    assert read_metadata(out)["pivot_bitext"] == "es-web"
    # a training verse whose English is missing, or whose reference sits in a shifted slot, is
    # left out; the KJV (not a reference) keeps the shifted one
    gapped = verses.copy()
    gapped.loc[0, "web"] = None
    gapped.loc[1, "ref_versification_flag"] = True
    write_table(gapped, table, VERSES)
    write_pivot_bitext(table, PivotBitext("es", "web"), out, "es", "en", True)
    assert len(read_table(out, BITEXT)) == 38
    write_pivot_bitext(table, PivotBitext("es", "kjv"), out, "es", "en", True)
    assert len(read_table(out, BITEXT)) == 40


def test_a_foreign_bible_pivots_with_its_own_tokeniser_and_shift_flags(tmp_path, verses):
    """fr-kjv: the French of the shipped foreign Bibles over the training verses only, French
    elisions split as Moses splits them for French, and a verse the French shift flags mark
    left out."""
    table = tmp_path / "verses.parquet"
    write_table(verses, table, VERSES)
    foreign = read_table(FOREIGN, FOREIGN_BIBLES)
    foreign = foreign[foreign["segment_id"].isin(verses["segment_id"])].reset_index(drop=True)
    foreign_path = tmp_path / "foreign.parquet"
    write_table(foreign, foreign_path, FOREIGN_BIBLES)
    out = tmp_path / "fr-kjv.parquet"
    rows = write_pivot_bitext(table, PivotBitext("fr", "kjv"), out, "es", "en", True,
                              foreign_path=foreign_path)
    bitext = read_table(out, BITEXT)
    train = verses[verses["split"] == "train"]
    assert rows == 40 and set(bitext["segment_id"]) == set(train["segment_id"])
    assert bitext["source"].str.contains("d&apos; israël").sum() == 5  # Exodus 1
    assert not bitext["source"].str.contains(" &apos; ").any()  # Spanish rules would split
    first = train["segment_id"].iloc[0]
    foreign.loc[foreign["segment_id"] == first, "shift_fr"] = True
    write_table(foreign, foreign_path, FOREIGN_BIBLES)
    write_pivot_bitext(table, PivotBitext("fr", "kjv"), out, "es", "en", True,
                       foreign_path=foreign_path)
    assert set(read_table(out, BITEXT)["segment_id"]) == set(train["segment_id"]) - {first}
    with pytest.raises(CorpusError, match="foreign_bibles"):
        write_pivot_bitext(table, PivotBitext("fr", "kjv"), out, "es", "en", True)


def test_planted_evaluation_verse_is_caught_if_the_split_filter_goes(tmp_path, verses,
                                                                    monkeypatch):
    """The planted verse is in the table: the training split is what keeps it out."""
    monkeypatch.setattr("circle.corpus.pivots.TRAIN_SPLIT", "tune")
    table = tmp_path / "verses.parquet"
    write_table(verses, table, VERSES)
    write_pivot_bitext(table, PivotBitext("es", "web"), tmp_path / "b.parquet", "es", "en", True)
    assert read_table(tmp_path / "b.parquet", BITEXT)["target"].str.contains("planted").all()


def alignment_of(bitext: pd.DataFrame, aligner="eflomal-model3") -> pd.DataFrame:
    links = ["0-0"] * len(bitext)
    return pd.DataFrame({"segment_id": bitext["segment_id"], "forward": links,
                         "reverse": links, "links": links}), {
        "aligner": aligner, "symmetrization": "grow-diag-final-and",
        BITEXT_DIGEST: bitext_digest(bitext)}


def test_a_language_joins_its_bitexts_with_their_alignments(tmp_path):
    pairs = []
    for name, targets in (("kjv", ["in the beginning", "and god said"]),
                          ("web", ["in the beginning", "god said"])):
        bitext = pd.DataFrame({"segment_id": [7, 3], "document": ["d", "d"],
                               "source": ["en el principio", "y dijo dios"],
                               "target": targets})
        write_table(bitext, tmp_path / f"{name}.parquet", BITEXT)
        links, meta = alignment_of(bitext)
        links["links"] = [f"{name}-7", f"{name}-3"]
        write_table(links, tmp_path / f"{name}-links.parquet", ALIGNMENT, metadata=meta)
        pairs.append((tmp_path / f"{name}.parquet", tmp_path / f"{name}-links.parquet"))
    assert join_pivot_language(pairs, tmp_path / "es.parquet", tmp_path / "es-links.parquet") == 4
    joined = read_table(tmp_path / "es.parquet", BITEXT)
    links = read_table(tmp_path / "es-links.parquet", ALIGNMENT)
    assert list(joined["segment_id"]) == list(links["segment_id"]) == [0, 1, 2, 3]
    assert list(joined["target"]) == ["and god said", "in the beginning", "god said",
                                      "in the beginning"]
    # each segment keeps its own links, in segment order
    assert list(links["links"]) == ["kjv-3", "kjv-7", "web-3", "web-7"]
    assert read_metadata(tmp_path / "es-links.parquet")[BITEXT_DIGEST] == bitext_digest(joined)
    # an alignment made for another bitext is refused
    with pytest.raises(Exception, match="digest|another|bitext"):
        join_pivot_language([(pairs[0][0], pairs[1][1])], tmp_path / "x.parquet",
                      tmp_path / "x-links.parquet")


def test_bitexts_group_by_foreign_language_and_the_key_is_checked():
    config = {"corpus": {"kind": "bible"},
              "paraphrase": {"pivots": [{"source": "es", "target": "kjv"},
                                        {"source": "es", "target": "web"},
                                        {"source": "es", "target": "web"}]}}
    bitexts = pivot_bitexts(config)
    assert pivot_languages(bitexts) == {"es": bitexts}
    assert pivot_problems(config) == ["paraphrase.pivots: es-web is given twice"]
    labelled = {**config, "samt": {"paraphraser": True}}
    assert "samt.paraphraser paraphrases with the labelled grammar" in pivot_problems(
        labelled)[1]
    config["corpus"]["kind"] = "files"
    assert "corpus.kind: bible" in pivot_problems(config)[0]
    assert pivot_bitexts({"paraphrase": {}}) == [] and pivot_problems(
        {"corpus": {"kind": "files"}, "paraphrase": {}}) == []


def test_the_default_experiment_pivots_from_its_training_bitext_alone():
    """The default config names no pivot bitexts: its paraphrase grammar is the MT grammar's
    pivot, as before (the workflow's pivot_grammars), and its config has no problem."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert "pivots" not in config["paraphrase"]
    assert pivot_bitexts(config) == []
    assert pivot_problems(config) == []


def test_the_paraphrasers_own_lm_text_takes_each_english_version_once():
    """paraphrase.language_models: pivots: the English of the pivot bitexts, a version paired
    with several foreign languages once (its first bitext); shared (or left out): none."""
    pairs = [{"source": "es", "target": "kjv"}, {"source": "es", "target": "web"},
             {"source": "fr", "target": "kjv"}]
    config = {"corpus": {"kind": "bible"},
              "paraphrase": {"pivots": pairs, "language_models": "pivots"}}
    assert paraphraser_lm_bitexts(config) == [PivotBitext("es", "kjv"), PivotBitext("es", "web")]
    assert pivot_problems(config) == []
    for shared in ({"pivots": pairs}, {"pivots": pairs, "language_models": "shared"}):
        assert paraphraser_lm_bitexts({"corpus": {"kind": "bible"}, "paraphrase": shared}) == []
    refused = pivot_problems({"corpus": {"kind": "bible"},
                              "paraphrase": {"language_models": "pivots"}})
    assert len(refused) == 1 and refused[0].startswith("paraphrase.language_models: pivots")

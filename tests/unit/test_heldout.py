"""The held-out system's tables (Fig. 4.11/4.12) from the tiny corpus and its frozen alignment."""

import json
from pathlib import Path

import pandas as pd
import pytest

from circle.align import BITEXT_DIGEST, bitext_digest
from circle.core.schemas import ALIGNMENT, BITEXT, EVALSET
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.prepare import file_tables
from circle.corpus.preprocess import tokenize_bitext
from circle.corpus.references import single_references
from circle.experiments.conditions import Condition
from circle.experiments.heldout import (
    TUNING_SETS,
    block_sizes,
    choose_block,
    hold_out_blocks,
    tuning_set_rows,
)
from circle.experiments.sets import select_segments
from circle.grammar.extract import load_aligned_bitext

TINY = Path(__file__).parents[1] / "data" / "tiny"
FRACTIONS = (0.65, 0.55, 0.55)


def tiny_tables(directory: Path, seed: int, duplicate: bool = False) -> dict[str, Path]:
    """The tiny corpus's split tables and alignment as files; with ``duplicate``, a training
    segment outside the block of ``seed`` gets the English of the block's first segment."""
    files = {"train": {"source": "train.es.txt", "target": "train.en.txt"}}
    for name in ("tune", "test", "paratune"):
        files[name] = {"source": f"{name}.es.txt",
                       "references": [f"{name}.ref0.txt", f"{name}.ref1.txt"]}
    files["tune"]["documents"] = "tune.docs.txt"
    files = {name: {key: (str(TINY / value) if isinstance(value, str)
                          else [str(TINY / v) for v in value]) for key, value in spec.items()}
             for name, spec in files.items()}
    tables = file_tables(files, 2000, 13)
    tables["train"] = tokenize_bitext(tables["train"], "es", "en")  # the tiny config's
    if duplicate:
        block = choose_block(tables["train"], sum(block_sizes(len(tables["tune"]), FRACTIONS)),
                             seed)
        outside = 0 if block["segment_id"].iloc[0] > 0 else len(tables["train"]) - 1
        tables["train"].loc[outside, "target"] = block["target"].iloc[0]
    paths = {"alignment": TINY / "alignment.parquet"}
    if duplicate:  # the frozen links, made for the changed bitext as far as they know
        paths["alignment"] = directory / "alignment.parquet"
        write_table(read_table(TINY / "alignment.parquet", ALIGNMENT), paths["alignment"],
                    ALIGNMENT, metadata={**read_metadata(TINY / "alignment.parquet"),
                                         BITEXT_DIGEST: bitext_digest(tables["train"])})
    for name, table in tables.items():
        paths[name] = directory / f"{name}.parquet"
        schema = BITEXT if name == "train" else EVALSET
        write_table(table, paths[name], schema, metadata=None if name == "train" else
                    {"reference_names": json.dumps(["ref0", "ref1"])})
    return paths


def held_out(directory: Path, seed: int = 13, duplicate: bool = False):
    inputs = tiny_tables(directory, seed, duplicate)
    outputs = {name: directory / "heldout" / f"{name}.parquet"
               for name in ("train", "alignment", "tune", "test", "paratune")}
    counts = hold_out_blocks(inputs["train"], inputs["alignment"], inputs["tune"],
                             {"test": inputs["test"], "paratune": inputs["paratune"]},
                             FRACTIONS, seed, outputs)
    return inputs, outputs, counts


def test_the_held_out_block_leaves_training_and_enlarges_the_tune_set(tmp_path):
    inputs, outputs, counts = held_out(tmp_path)
    train = read_table(inputs["train"], BITEXT)
    base = read_table(inputs["tune"], EVALSET)
    kept = read_table(outputs["train"], BITEXT)
    tune = read_table(outputs["tune"], EVALSET)
    assert counts == [30, 50, 66, 82]  # 30 tune segments, blocks of 20, 17 -> 16, 16
    assert json.loads(read_metadata(outputs["tune"])[TUNING_SETS]) == counts
    held = json.loads(read_metadata(outputs["train"])["held_out_segments"])
    assert len(held) == 52 and held == list(range(held[0], held[0] + 52))  # contiguous
    block = train.set_index("segment_id").loc[held]
    # Exodus repeats verses ("and the lord spake unto moses, saying,"): their other copies go too
    copies = train[~train["segment_id"].isin(held) & train["target"].isin(block["target"])]
    assert len(copies) == int(read_metadata(outputs["train"])["dropped_duplicates"]) > 0
    assert sorted(kept["segment_id"]) == sorted(
        set(train["segment_id"]) - set(held) - set(copies["segment_id"]))
    links = read_table(outputs["alignment"], ALIGNMENT)
    assert links["segment_id"].tolist() == kept["segment_id"].tolist()
    assert read_metadata(outputs["alignment"])["aligner"] == "eflomal model 3"
    # the held-out links are replayed onto the held-out bitext, which their digest names
    assert read_metadata(outputs["alignment"])[BITEXT_DIGEST] == bitext_digest(kept)
    load_aligned_bitext(outputs["train"], outputs["alignment"])
    # Base: each segment's single reference; then the block, its training English the reference
    assert [refs.tolist() for refs in tune["references"][:30]] == \
        [[single] for single in single_references(base)]
    assert [refs[0] for refs in tune["references"][30:]] == block["target"].tolist()
    assert tune["source"][30:].tolist() == block["source"].tolist()
    assert tune["segment_id"].is_unique and tune["segment_id"][30:].min() > 29
    for name in ("test", "paratune"):
        pd.testing.assert_frame_equal(read_table(outputs[name], EVALSET),
                                      read_table(inputs[name], EVALSET))
    # the set selection keeps the enlarged set whole
    assert select_segments(outputs["tune"], 20, tmp_path / "selected.parquet") == 82
    assert read_metadata(tmp_path / "selected.parquet")[TUNING_SETS] == json.dumps(counts)


def test_the_block_is_seeded(tmp_path):
    first = held_out(tmp_path / "a")[1]
    again = held_out(tmp_path / "b")[1]
    other = held_out(tmp_path / "c", seed=14)[1]

    def held(outputs):
        return json.loads(read_metadata(outputs["train"])["held_out_segments"])

    assert held(first) == held(again) != held(other)


def test_a_training_segment_with_a_blocks_english_is_dropped_too(tmp_path):
    plain = held_out(tmp_path / "plain")[1]
    _, outputs, _ = held_out(tmp_path / "copied", duplicate=True)
    kept = read_table(outputs["train"], BITEXT)
    tune = read_table(outputs["tune"], EVALSET)
    assert len(kept) == len(read_table(plain["train"], BITEXT)) - 1
    assert not set(kept["target"]) & {refs[0] for refs in tune["references"][30:]}


def test_tuning_set_rows(tmp_path):
    _, outputs, counts = held_out(tmp_path)
    tune = read_table(outputs["tune"], EVALSET)
    for n, size in enumerate(counts):
        rows = tuning_set_rows(tune, Condition.parse(f"1H_t{n}").tuning_set, outputs["tune"])
        pd.testing.assert_frame_equal(rows, tune.iloc[:size])
    assert tuning_set_rows(tune, None, outputs["tune"]) is tune
    with pytest.raises(ValueError, match="no tuning set T4: its 82 rows"):
        tuning_set_rows(tune, 4, outputs["tune"])
    base = tmp_path / "tune.parquet"
    with pytest.raises(ValueError, match="tune set without held-out blocks has no tuning set T1"):
        tuning_set_rows(read_table(base, EVALSET), 1, base)

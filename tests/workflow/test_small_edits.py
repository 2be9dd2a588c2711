"""The cost of small edits: fixing a reference reruns what reads its set, and a touch of a large
input (the Bible table, a frozen alignment) reruns nothing."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from test_workflow import ROOT, TINY, snakemake

pytestmark = pytest.mark.workflow

SPLITS = ("train", "tune", "test", "paratune")


def planned(output: str) -> list[tuple[str, str]]:
    """The (rule, wildcards) of each job a dry run's output lists."""
    return re.findall(r"^rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", output, re.MULTILINE)


def touch_later(path: Path) -> None:
    """Give ``path`` a modification time after every output's."""
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 60))


def test_a_tune_reference_of_the_default_corpus_reruns_only_the_tune_split(tmp_path):
    bible = tmp_path / "bible.parquet"
    shutil.copy(ROOT / "resources/bible/bible.parquet", bible)
    overlay = tmp_path / "corpus.yaml"
    default = yaml.safe_load((ROOT / "config/config.yaml").read_text())["corpus"]
    overlay.write_text(yaml.safe_dump({"corpus": {**default, "bible": {
        **default["bible"], "table": str(bible)}}}))
    command = ["--configfile", str(ROOT / "config/config.yaml"), str(overlay),
               "--directory", str(tmp_path),
               *(f"results/default/corpus/{split}.parquet" for split in SPLITS)]
    result = snakemake("--cores", "2", *command)
    assert result.returncode == 0, result.stdout + result.stderr

    touch_later(bible)
    result = snakemake("-n", *command)
    assert "Nothing to be done" in result.stdout, result.stdout + result.stderr

    table = pq.read_table(bible)
    verses = table.to_pandas()
    row = verses.index[(verses["split"] == "tune") & verses["usable_eval"]][5]
    column = default["bible"]["references"][1]
    texts = table.column(column).to_pylist()
    texts[row] = texts[row].replace(" and ", " adn ", 1)
    assert texts[row] != verses.at[row, column]
    index = table.schema.get_field_index(column)
    pq.write_table(table.set_column(index, table.field(column), pa.array(texts)), bible)
    result = snakemake("-n", *command)
    assert planned(result.stdout) == [("prepare_corpus", "experiment=default, split=tune")], \
        result.stdout + result.stderr


def test_a_tiny_reference_edit_and_a_large_alignments_touch_rerun_what_they_must(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    for spec in config["corpus"]["files"].values():
        for key, value in spec.items():
            spec[key] = [str(data / v) for v in value] if isinstance(value, list) \
                else str(data / value)
    alignment = data / config["alignment"]["frozen"]
    config["alignment"]["frozen"] = str(alignment)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    # Over Snakemake's default checksum limit (1 MB): the tiny links with 1.5 MB of metadata.
    table = pq.read_table(alignment)
    pq.write_table(table.replace_schema_metadata(
        {**table.schema.metadata, b"circle.padding": b"x" * 1_500_000}), alignment)
    assert alignment.stat().st_size > 1_000_000
    lexical = "results/tiny/grammar/extraction/lexical.parquet"
    command = ["--configfile", str(tmp_path / "config.yaml"), "--directory", str(tmp_path),
               lexical, *(f"results/tiny/tokenized/{split}.parquet" for split in SPLITS)]
    result = snakemake("--cores", "2", *command)
    assert result.returncode == 0, result.stdout + result.stderr

    touch_later(alignment)
    for path in data.glob("*.txt"):
        touch_later(path)
    result = snakemake("-n", *command)
    assert "Nothing to be done" in result.stdout, result.stdout + result.stderr

    reference = data / "tune.ref1.txt"
    lines = reference.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace("husband", "husbnad")
    reference.write_text("".join(lines))
    result = snakemake("-n", *command)
    assert sorted(planned(result.stdout)) == [("prepare_corpus", "experiment=tiny, split=tune"),
                                              ("tokenize_corpus", "experiment=tiny, split=tune")], \
        result.stdout + result.stderr

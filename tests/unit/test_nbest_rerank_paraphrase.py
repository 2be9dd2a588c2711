"""circle paraphrase and export-system with paraphraser weights tuned with lm.rerank_nbest
(they name lm_rerank): the paraphraser's reranking LM reranks its k-best lists of the config's
k, as the workflow's paraphrase_references job does, and an export ships that LM.

The tiny experiment of test_nbest_rerank_system (decoder.k 20, a 5-gram on the training
English), whose tuned paraphraser weights here add a reranking weight large enough to change
some 1-best paraphrases.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_nbest_rerank_system import NBEST, reranking, run  # noqa: F401 (reranking: a fixture)
from test_translate import PARAPHRASER, paraphrase_inputs, project  # noqa: F401

from circle.cli import main
from circle.core.schemas import EVALSET
from circle.core.tables import read_table, write_table
from circle.corpus.preprocess import normalize
from circle.decoder import DecoderSettings, decode_corpus, write_weights
from circle.decoder.model import RERANK_FEATURE
from circle.decoder.nbest import NBEST as NBEST_TABLE
from circle.paraphrase.untargeted import paraphrase_references
from circle.system import MANIFEST, sha256
from circle.translate import Experiment

RERANKED = {**PARAPHRASER, RERANK_FEATURE: 0.5}
"""The paraphraser's weights (the bias-0 paraphraser tuned on the default experiment) and a
reranking weight."""

SENTENCES = 30


@pytest.fixture(scope="module")
def paraphrasing(reranking, tmp_path_factory) -> Path:  # noqa: F811
    """A copy of the reranking project whose tuned paraphraser weights are RERANKED, the
    search's weights as weights/paraphraser-plain.txt, and English input in.en."""
    root = tmp_path_factory.mktemp("paraphrasing") / "project"
    shutil.copytree(reranking, root)
    weights = root / "results/tiny/weights"
    write_weights(weights / "paraphraser-bias0.txt", RERANKED)
    write_weights(weights / "paraphraser-plain.txt", PARAPHRASER)
    (root / "in.en").write_text("\n".join(paraphrase_inputs()[:SENTENCES]) + "\n",
                                encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def job_lists(paraphrasing) -> pd.DataFrame:
    """The reranked lists the workflow's paraphrase_references job (its function) writes for
    in.en as the single references of a tune set, with the config's decoder settings and its
    decoder.k, the n-best size the paraphraser's reranking weight is tuned on."""
    results = paraphrasing / "results/tiny"
    sentences = inputs(paraphrasing)
    write_table(pd.DataFrame({"segment_id": range(len(sentences)), "document": "tune",
                              "source": "", "references": [[s] for s in sentences],
                              "ref_order": [[0]] * len(sentences)}),
                paraphrasing / "tune.parquet", EVALSET)
    config = yaml.safe_load((results / "config.yaml").read_text())
    paraphrase_references(paraphrasing / "tune.parquet", results / "paraphrase/bias0.parquet",
                          results / "lm/3gram.binary", results / "weights/paraphraser-bias0.txt",
                          config["decoder"]["k"], DecoderSettings.from_config(config["decoder"]),
                          1, paraphrasing / "nbest.parquet",
                          rerank_lm_path=results / "lm/5gram.binary")
    return read_table(paraphrasing / "nbest.parquet", NBEST_TABLE)


def inputs(root: Path) -> list[str]:
    return [normalize(line, "en") for line in (root / "in.en").read_text().splitlines()]


def firsts(lists: pd.DataFrame) -> list[str]:
    return list(lists[lists["rank"] == 0].sort_values("segment_id")["hypothesis"])


def search_best(root: Path) -> list[str]:
    """The search's 1-best paraphrases of in.en under the paraphraser's weights without the
    reranking weight, as the paraphraser decoded before lm.rerank_nbest."""
    results = root / "results/tiny"
    config = yaml.safe_load((results / "config.yaml").read_text())
    outputs = decode_corpus(inputs(root), results / "paraphrase/bias0.parquet",
                            results / "lm/3gram.binary", PARAPHRASER,
                            DecoderSettings.from_config(config["decoder"]), k=1)
    return [hypotheses[0].text for hypotheses in outputs]


def test_paraphrase_gives_the_first_of_the_lists_paraphrase_references_reranks(
        paraphrasing, job_lists, capsys):
    """The 1-best is the first of the job's reranked 20-best list, from a file and as a
    stream, and differs from the search's 1-best for some inputs; -k gives the job's lists."""
    here = ["--project", str(paraphrasing), "--experiment", "tiny", "--print", "tokenized"]
    expected = firsts(job_lists)
    assert expected != search_best(paraphrasing)
    best, err = run("paraphrase", str(paraphrasing / "in.en"), *here, capsys=capsys)
    assert "the tuned paraphraser weights" in err
    assert best.splitlines() == expected
    streamed, _ = run("paraphrase", str(paraphrasing / "in.en"), "--stream", *here,
                      capsys=capsys)
    assert streamed.splitlines() == expected
    nbest, _ = run("paraphrase", str(paraphrasing / "in.en"), *here, "-k", "3", capsys=capsys)
    found = [line.split(" ||| ")[:2] for line in nbest.splitlines()]
    top = job_lists[job_lists["rank"] < 3].sort_values(["segment_id", "rank"])
    assert found == [[str(s), h] for s, h in zip(top["segment_id"], top["hypothesis"],
                                                  strict=True)]


def test_weights_without_the_feature_paraphrase_as_the_search_does(paraphrasing, capsys):
    plain, _ = run("paraphrase", str(paraphrasing / "in.en"), "--project", str(paraphrasing),
                   "--experiment", "tiny", "--print", "tokenized", "--weights",
                   str(paraphrasing / "results/tiny/weights/paraphraser-plain.txt"),
                   capsys=capsys)
    assert plain.splitlines() == search_best(paraphrasing)


def test_an_export_ships_the_paraphrasers_reranking_lm_and_paraphrases_as_the_results_do(
        paraphrasing, job_lists, tmp_path, capsys):
    """The manifest names the paraphraser's reranking LM (role paraphrase_rerank_lm, with its
    SHA-256) and keeps decoder.k even for translation weights without the feature; the export
    paraphrases as the results directory does, streamed too; an export of a paraphraser
    without the feature has no such role and paraphrases as the search does."""
    here = ["--project", str(paraphrasing), "--experiment", "tiny"]
    run("export-system", "1H.rep0", str(tmp_path / "system"), *here, capsys=capsys)
    manifest = yaml.safe_load((tmp_path / "system" / MANIFEST).read_text())
    entries = {entry["role"]: entry for entry in manifest["files"]}
    assert "rerank_lm" not in entries
    assert entries["paraphrase_rerank_lm"]["path"] == "lm/5gram.binary"
    assert entries["paraphrase_rerank_lm"]["sha256"] == \
        sha256(paraphrasing / "results/tiny/lm/5gram.binary")
    assert manifest["decoder"]["k"] == NBEST
    system = ["--system", str(tmp_path / "system"), "--print", "tokenized"]
    exported, _ = run("paraphrase", str(paraphrasing / "in.en"), *system, capsys=capsys)
    assert exported.splitlines() == firsts(job_lists)

    plain_root = tmp_path / "plain"
    shutil.copytree(paraphrasing, plain_root)
    write_weights(plain_root / "results/tiny/weights/paraphraser-bias0.txt", PARAPHRASER)
    run("export-system", "1H.rep0", str(tmp_path / "plain-system"), "--project",
        str(plain_root), "--experiment", "tiny", capsys=capsys)
    plain_manifest = yaml.safe_load((tmp_path / "plain-system" / MANIFEST).read_text())
    assert "paraphrase_rerank_lm" not in {e["role"] for e in plain_manifest["files"]}
    assert plain_manifest["decoder"]["k"] == 1
    plain, _ = run("paraphrase", str(paraphrasing / "in.en"), "--system",
                   str(tmp_path / "plain-system"), "--print", "tokenized", capsys=capsys)
    assert plain.splitlines() == search_best(paraphrasing)


def test_an_export_without_the_paraphrasers_reranking_lm_is_refused_naming_the_role(
        paraphrasing, tmp_path, capsys):
    here = ["--project", str(paraphrasing), "--experiment", "tiny"]
    run("export-system", "1H.rep0", str(tmp_path / "system"), *here, capsys=capsys)
    manifest_path = tmp_path / "system" / MANIFEST
    manifest = yaml.safe_load(manifest_path.read_text())
    manifest["files"] = [e for e in manifest["files"] if e["role"] != "paraphrase_rerank_lm"]
    manifest_path.write_text(yaml.safe_dump(manifest))
    assert main(["paraphrase", "--sentence", "the king", "--system",
                 str(tmp_path / "system")]) == 2
    assert ("names no paraphraser's reranking language model (paraphrase_rerank_lm)"
            in capsys.readouterr().err)


def test_the_paraphrasers_reranking_lm_is_its_own_where_the_experiment_has_one(tmp_path):
    """As Plan.nbest_reranking_inputs gives paraphrase_references: the MT system's reranking
    LM, or the paraphraser's own with paraphrase.language_models: pivots."""
    lm = {"decoding_order": 3, "reranking_order": 5}
    shared = Experiment(tmp_path, {"lm": lm})
    own = Experiment(tmp_path, {"lm": lm, "paraphrase": {"language_models": "pivots"}})
    assert shared.paraphraser_reranking_lm == shared.reranking_lm == tmp_path / "lm/5gram.binary"
    assert own.paraphraser_reranking_lm == tmp_path / "paraphrase/lm/5gram.binary"
    assert own.system().files["paraphrase_rerank_lm"].path == own.paraphraser_reranking_lm


def test_the_job_keeps_the_first_k_of_the_reranked_lists_of_decoder_k(paraphrasing, job_lists):
    """paraphrase_references asked for k = 2 paraphrases (the workflow asks for the most any
    1H+kP condition uses) reranks the decoder.k-best lists the reranking weight was tuned on and
    keeps their first two, not the search's 2-best reranked."""
    results = paraphrasing / "results/tiny"
    config = yaml.safe_load((results / "config.yaml").read_text())
    paraphrase_references(paraphrasing / "tune.parquet", results / "paraphrase/bias0.parquet",
                          results / "lm/3gram.binary", results / "weights/paraphraser-bias0.txt",
                          2, DecoderSettings.from_config(config["decoder"]), 1,
                          paraphrasing / "nbest2.parquet",
                          rerank_lm_path=results / "lm/5gram.binary")
    two = read_table(paraphrasing / "nbest2.parquet", NBEST_TABLE)
    columns = ["segment_id", "rank", "hypothesis"]
    expected = job_lists[job_lists["rank"] < 2].sort_values(["segment_id", "rank"])[columns]
    pd.testing.assert_frame_equal(two.sort_values(["segment_id", "rank"])[columns]
                                  .reset_index(drop=True), expected.reset_index(drop=True))

"""circle translate, decode and export-system with weights tuned with lm.rerank_nbest (they
name lm_rerank): the system's reranking LM reranks the decoder's k-best lists of the config's k,
as in tuning (circle.decoder.rerank), and an export ships that LM with its checksum.

The tiny experiment of test_translate, with a 5-gram on its training English as reranking LM
and the 1H weights plus a reranking weight large enough to change some 1-best translations.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import kenlm
import pytest
import yaml
from test_system import LINES
from test_translate import TUNED, project  # noqa: F401 (project is a fixture)

from circle.cli import main
from circle.decoder import write_weights
from circle.decoder.model import RERANK_FEATURE
from circle.lm import estimate_lm
from circle.system import MANIFEST, sha256

RERANKED = "1H_reranked.rep0"
NBEST = 20
"""The config's decoder.k: the size of the lists the reranking weight was tuned on."""


@pytest.fixture(scope="module")
def reranking(project, tmp_path_factory) -> Path:  # noqa: F811
    """A copy of the tiny project with decoder.k 20, a 5-gram reranking LM and the weights
    RERANKED (1H's and lm_rerank 0.5)."""
    root = tmp_path_factory.mktemp("reranking") / "project"
    shutil.copytree(project, root)
    results = root / "results" / "tiny"
    config = yaml.safe_load((results / "config.yaml").read_text())
    config["decoder"]["k"] = NBEST
    config["lm"]["reranking_order"] = 5
    (results / "config.yaml").write_text(yaml.safe_dump(config))
    estimate_lm([results / "lm/train.en"], 5, results / "lm/5gram.binary",
                discount_fallback=True, memory="50M")
    write_weights(results / f"weights/{RERANKED}.txt", {**TUNED, RERANK_FEATURE: 0.5})
    (root / "in.es").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return root


def run(*args: str, capsys) -> tuple[str, str]:
    """``circle ARGS`` in this process: stdout and stderr (the exit status must be 0)."""
    status = main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


def test_translate_reranks_the_configs_k_best_lists_with_the_reranking_lm(reranking, capsys):
    """The 1-best is the first of the reranked 20-best list, whose scores are the dot product
    with every weight, lm_rerank the 5-gram's natural-log score; with k = 1 the decoder still
    makes 20-best lists to rerank, so some 1-best translations differ from 1H's, whose weights
    are the search's."""
    here = ["--project", str(reranking), "--experiment", "tiny", "--print", "tokenized"]
    inputs = str(reranking / "in.es")
    best, _ = run("translate", inputs, *here, "--weights", RERANKED, capsys=capsys)
    plain, _ = run("translate", inputs, *here, "--weights", "1H.rep0", capsys=capsys)
    nbest, _ = run("translate", inputs, *here, "--weights", RERANKED, "-k", str(NBEST),
                   capsys=capsys)
    model = kenlm.Model(str(reranking / "results/tiny/lm/5gram.binary"))
    weights = {**TUNED, RERANK_FEATURE: 0.5}
    lists: dict[int, list[tuple[str, float]]] = {}
    for line in nbest.splitlines():
        number, hypothesis, features, score = line.split(" ||| ")
        values = dict(zip((name[:-1] for name in features.split()[::2]),
                          (float(value) for value in features.split()[1::2]), strict=True))
        assert list(values)[-1] == RERANK_FEATURE
        assert values[RERANK_FEATURE] == pytest.approx(
            model.score(hypothesis, bos=True, eos=True) * math.log(10))
        assert float(score) == pytest.approx(
            sum(weights[name] * value for name, value in values.items()), abs=1e-6)
        lists.setdefault(int(number), []).append((hypothesis, float(score)))
    assert sorted(lists) == list(range(len(LINES)))
    for number, found in lists.items():
        scores = [score for _, score in found]
        assert scores == sorted(scores, reverse=True)
        assert found[0][0] == best.splitlines()[number]
    assert best.splitlines() != plain.splitlines()


def test_decode_with_a_grammar_and_reranked_weights_reranks_as_translate(reranking, capsys):
    results = reranking / "results/tiny"
    here = ["--project", str(reranking), "--experiment", "tiny"]
    translated, _ = run("translate", str(reranking / "in.es"), *here, "--weights", RERANKED,
                        "--print", "tokenized", capsys=capsys)
    decoded, _ = run("decode", "--input", str(reranking / "in.es"), "--grammar",
                     str(results / "grammar/bilingual.parquet"), "--weights",
                     str(results / f"weights/{RERANKED}.txt"), "--results", str(results),
                     capsys=capsys)
    assert decoded.replace("UNK_", "") == translated.replace("UNK_", "")


def test_an_export_ships_the_reranking_lm_and_translates_as_the_results_do(reranking, tmp_path,
                                                                          capsys):
    """The manifest names the reranking LM (role rerank_lm, its SHA-256) and keeps the
    decoder's k, the n-best size reranked; the export translates and decodes as the results
    directory does, and a changed reranking LM is refused naming its role."""
    here = ["--project", str(reranking), "--experiment", "tiny"]
    run("export-system", RERANKED, str(tmp_path / "system"), *here, capsys=capsys)
    manifest = yaml.safe_load((tmp_path / "system" / MANIFEST).read_text())
    entries = {entry["role"]: entry for entry in manifest["files"]}
    assert entries["rerank_lm"]["path"] == "lm/5gram.binary"
    assert entries["rerank_lm"]["sha256"] == sha256(tmp_path / "system/lm/5gram.binary") == \
        sha256(reranking / "results/tiny/lm/5gram.binary")
    assert manifest["decoder"]["k"] == NBEST
    inputs = str(reranking / "in.es")
    expected, _ = run("translate", inputs, *here, "--weights", RERANKED, capsys=capsys)
    system = ["--system", str(tmp_path / "system")]
    assert run("translate", inputs, *system, capsys=capsys)[0] == expected
    tokenized, _ = run("translate", inputs, *here, "--weights", RERANKED, "--print",
                       "tokenized", capsys=capsys)
    assert run("decode", "--input", inputs, *system, capsys=capsys)[0] == \
        tokenized.replace("UNK_", "")
    plain = tmp_path / "plain"
    run("export-system", "1H.rep0", str(plain), *here, capsys=capsys)
    plain_manifest = yaml.safe_load((plain / MANIFEST).read_text())
    assert "rerank_lm" not in {entry["role"] for entry in plain_manifest["files"]}
    assert plain_manifest["decoder"]["k"] == 1
    lm = tmp_path / "system/lm/5gram.binary"
    data = lm.read_bytes()
    lm.unlink()  # a hard link to the experiment's LM: write a new file
    lm.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert main(["translate", inputs, *system]) == 2
    assert "the reranking language model (rerank_lm)" in capsys.readouterr().err


def test_reranked_weights_without_the_reranking_lm_are_refused_naming_it(reranking, tmp_path,
                                                                        capsys):
    root = tmp_path / "project"
    shutil.copytree(reranking, root)
    (root / "results/tiny/lm/5gram.binary").unlink()
    status = main(["translate", str(root / "in.es"), "--project", str(root), "--experiment",
                   "tiny", "--weights", RERANKED])
    assert status == 2
    assert f"{root / 'results/tiny/lm/5gram.binary'}: language model does not exist" in \
        capsys.readouterr().err

"""A trained system as an artefact (`circle export-system`, `--system DIR`) and the output MT
users expect (`translate --mark-unknown`, `-k`, passed-through words in their input spelling,
`paraphrase` recased into `--output FILE`), on the tiny experiment of test_translate."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from test_translate import NEW, TINY, circle, project  # noqa: F401 (project is a fixture)

from circle.cli import main
from circle.decoder import read_weights
from circle.system import MANIFEST, sha256
from circle.translate import Recaser

LINES = [*(TINY / "test.es.txt").read_text(encoding="utf-8").splitlines()[:8], NEW,
         "El rey envió a sus siervos a Bruselas con moses."]
"""Test verses, a sentence outside the corpus, and one with two words no rule translates:
Bruselas, capitalised, and moses, which the training English spells Moses."""


def translate(*args: str, capsys) -> tuple[int, str, str]:
    """``circle translate ARGS`` in this process: exit status, stdout, stderr."""
    status = main(["translate", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def exported(project, tmp_path, capsys) -> Path:  # noqa: F811
    """Run 1H.rep0 of the tiny experiment exported into ``tmp_path/system``."""
    assert main(["export-system", "1H.rep0", str(tmp_path / "system"), "--project",
                 str(project), "--experiment", "tiny"]) == 0
    capsys.readouterr()
    return tmp_path / "system"


def test_an_exported_system_decodes_byte_identically_from_anywhere(project, tmp_path):  # noqa: F811
    """Exported from a copy of the experiment, moved, with the experiment deleted and run from
    another directory, the system translates, decodes and paraphrases as the results directory
    did: the OOV paraphrases of a kH_oov run included, recasing from its own spellings."""
    checkout = tmp_path / "checkout"
    shutil.copytree(project, checkout)
    inputs = tmp_path / "in.es"
    inputs.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    english = tmp_path / "in.en"
    english.write_text("And God said unto Moses, I AM THAT I AM.\nThe LORD went to Bruselas.\n",
                       encoding="utf-8")
    here = ["--project", str(checkout), "--experiment", "tiny"]
    export = circle("export-system", "1H_oov.rep0", "exported", *here, cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    manifest = yaml.safe_load((tmp_path / "exported" / MANIFEST).read_text())
    assert manifest["circle"].startswith("circle ") and manifest["made_from"]["run"] == \
        "1H_oov.rep0"
    roles = [entry["role"] for entry in manifest["files"]]
    assert {"grammar", "lm", "weights", "recaser", "paraphrase_grammar", "paraphraser_lm",
            "paraphraser_weights", "oov_text"} <= set(roles)
    for entry in manifest["files"]:
        assert not Path(entry["path"]).is_absolute()
        assert sha256(tmp_path / "exported" / entry["path"]) == entry["sha256"]
    results = {}
    for name, where in (("results", here), ("system", ["--system", "../moved"])):
        if name == "system":  # the experiment and the export's first place are gone
            shutil.copytree(tmp_path / "exported", tmp_path / "moved")
            shutil.rmtree(tmp_path / "exported")
            shutil.rmtree(checkout)
        cwd = tmp_path / f"run-{name}"
        cwd.mkdir()
        weights = ["--weights", "1H_oov.rep0"] if name == "results" else []
        runs = {"translate": circle("translate", str(inputs), *weights, "--output-prefix", "out",
                                    "--mark-unknown", *where, cwd=cwd),
                "paraphrase": circle("paraphrase", str(english), *where, cwd=cwd)}
        if name == "system":
            runs["decode"] = circle("decode", "--input", str(inputs), *where, cwd=cwd)
        for run in runs.values():
            assert run.returncode == 0, run.stderr
        assert "rules borrowed for OOV phrases" in runs["translate"].stderr
        results[name] = {"files": {kind: (cwd / f"out.{kind}").read_bytes()
                                   for kind in ("tokenized", "detokenized", "recased")},
                         **{command: run.stdout for command, run in runs.items()}}
    for key in ("files", "translate", "paraphrase"):
        assert results["system"][key] == results["results"][key], key
    assert results["system"]["decode"].encode() == results["results"]["files"]["tokenized"] \
        .replace(b"UNK_", b"")
    assert "Bruselas" in results["system"]["translate"]


def rewrite(path: Path, data: bytes) -> None:
    """``path`` replaced by a new file of ``data`` (an export's files may be hard links to the
    experiment's, which must stay as they are)."""
    path.unlink()
    path.write_bytes(data)


def test_a_changed_or_missing_file_of_an_export_is_refused_naming_it(exported, tmp_path,
                                                                     capsys):
    inputs = tmp_path / "in.es"
    inputs.write_text(NEW + "\n", encoding="utf-8")
    weights = exported / "weights/1H.rep0.txt"
    text = weights.read_bytes()
    rewrite(weights, text.replace(b"0.1935", b"0.1936"))  # the same size
    status, out, err = translate(str(inputs), "--system", str(exported), capsys=capsys)
    assert status == 2 and not out
    assert (f"{weights}: the translation weights (weights) has SHA-256 "
            f"{sha256(weights)} where {exported / MANIFEST} says ") in err
    rewrite(weights, text)
    grammar = exported / "grammar/bilingual.parquet"
    rewrite(grammar, grammar.read_bytes() + b"\0")
    status, _, err = translate(str(inputs), "--system", str(exported), capsys=capsys)
    assert status == 2 and "bilingual.parquet: the bilingual grammar (grammar) has " \
        "19,035,529 bytes where" in err.replace(str(exported) + "/grammar/", "")
    (exported / "grammar/bilingual.parquet").unlink()
    status, _, err = translate(str(inputs), "--system", str(exported), capsys=capsys)
    assert status == 2 and "bilingual grammar (grammar) of" in err and "does not exist" in err
    status, _, err = translate(str(inputs), "--system", str(exported), "--weights", "1H.rep1",
                               capsys=capsys)
    assert status == 2 and "names every file and setting; drop --weights" in err
    manifest = yaml.safe_load((exported / MANIFEST).read_text())
    del manifest["languages"]["target"]
    (exported / MANIFEST).write_text(yaml.safe_dump(manifest))
    status, _, err = translate(str(inputs), "--system", str(exported), capsys=capsys)
    assert status == 2 and "key 'languages.target' must be a str, found None" in err


def test_an_export_needs_an_empty_directory_and_a_run_there_is(exported, project,  # noqa: F811
                                                               capsys):
    status = main(["export-system", "1H.rep0", str(exported), "--project", str(project),
                   "--experiment", "tiny"])
    assert status == 2 and "exists and is not an empty directory" in capsys.readouterr().err
    status = main(["export-system", "9H.rep0", str(exported.parent / "other"), "--project",
                   str(project), "--experiment", "tiny"])
    assert status == 2 and "--weights 9H.rep0: neither a run" in capsys.readouterr().err


def test_passed_through_words_are_marked_and_keep_their_input_spelling(project, tmp_path,  # noqa: F811
                                                                       capsys):
    """Bruselas stays capitalised and moses lowercase, although the recaser would write
    Moses; --mark-unknown wraps both (and the Spanish 'a' the tiny grammar also passes
    through) in every output, with the given prefix and suffix."""
    inputs = tmp_path / "in.es"
    inputs.write_text(LINES[-1] + "\n", encoding="utf-8")
    here = ["--project", str(project), "--experiment", "tiny", "--weights", "1H.rep0"]
    recaser = Recaser.load(project / "results/tiny/corpus/train.parquet")
    assert recaser.recase("bruselas and moses") == "Bruselas and Moses"
    status, plain, err = translate(str(inputs), *here, capsys=capsys)
    assert status == 0, err
    assert "Bruselas" in plain and " moses" in plain and "Moses" not in plain
    assert plain.startswith("The king") and "bruselas, moses" in err
    status, marked, err = translate(str(inputs), *here, "--mark-unknown", "--output-prefix",
                                    str(tmp_path / "out"), capsys=capsys)
    assert status == 0, err
    assert marked == plain.replace("Bruselas", "UNK_Bruselas").replace(" moses", " UNK_moses") \
        .replace(" a ", " UNK_a ")
    tokenized = (tmp_path / "out.tokenized").read_text().split()
    assert {"UNK_bruselas", "UNK_moses"} <= set(tokenized) and "UNK_king" not in tokenized
    assert "UNK_bruselas" in (tmp_path / "out.detokenized").read_text()
    status, custom, _ = translate(str(inputs), *here, "--mark-unknown", "--unknown-prefix",
                                  "<", "--unknown-suffix", ">", capsys=capsys)
    assert status == 0 and custom == marked.replace("UNK_Bruselas", "<Bruselas>") \
        .replace("UNK_moses", "<moses>").replace("UNK_a ", "<a> ")


def test_nbest_lists_are_written_in_the_moses_format(project, tmp_path, capsys):  # noqa: F811
    """0-based line ||| tokenised hypothesis ||| name= value ... ||| score: best first, the
    score the weights' dot product with the features, the first the 1-best."""
    inputs = tmp_path / "in.es"
    inputs.write_text("\n".join(LINES[:3]) + "\n", encoding="utf-8")
    here = ["--project", str(project), "--experiment", "tiny", "--weights", "1H.rep0"]
    status, best, _ = translate(str(inputs), *here, "--print", "tokenized", capsys=capsys)
    assert status == 0
    status, nbest, _ = translate(str(inputs), *here, "-k", "4", capsys=capsys)
    assert status == 0
    weights = read_weights(project / "results/tiny/weights/1H.rep0.txt")
    lists: dict[int, list[tuple[str, float]]] = {}
    for line in nbest.splitlines():
        number, hypothesis, features, score = line.split(" ||| ")
        names, values = features.split()[::2], [float(v) for v in features.split()[1::2]]
        assert all(name.endswith("=") for name in names)
        dot = sum(weights[name[:-1]] * value for name, value in zip(names, values, strict=True))
        assert float(score) == pytest.approx(dot, abs=1e-6)
        lists.setdefault(int(number), []).append((hypothesis, float(score)))
    assert sorted(lists) == [0, 1, 2] and all(len(found) == 4 for found in lists.values())
    for number, found in lists.items():
        scores = [score for _, score in found]
        assert scores == sorted(scores, reverse=True)
        assert found[0][0] == best.splitlines()[number]


def test_paraphrases_are_detokenised_recased_and_written_to_a_file(project, tmp_path,  # noqa: F811
                                                                   capsys):
    here = ["--project", str(project), "--experiment", "tiny", "--pop-limit", "5"]
    sentence = ["-s", "And God said unto Moses, I AM THAT I AM in Bruselas."]
    assert main(["paraphrase", *sentence, *here, "--output", str(tmp_path / "out.en")]) == 0
    out, err = capsys.readouterr()
    assert not out and f"wrote {tmp_path / 'out.en'}" in err
    assert main(["paraphrase", *sentence, *here, "--print", "tokenized"]) == 0
    tokenized = capsys.readouterr().out.strip()
    written = (tmp_path / "out.en").read_text(encoding="utf-8").strip()
    assert tokenized == tokenized.lower() and " , " in tokenized and "bruselas" in tokenized
    assert written.lower() == tokenized.replace(" ,", ",").replace(" .", ".")
    assert written[0].isupper() and "Bruselas" in written and "God" in written


def test_the_recaser_spellings_round_trip_and_a_bad_line_is_named(tmp_path):
    recaser = Recaser.from_text(["And the LORD said unto Moses", "Then Moses went"])
    recaser.write(tmp_path / "recaser.tsv")
    assert Recaser.load(tmp_path / "recaser.tsv").forms == recaser.forms == \
        {"lord": "LORD", "moses": "Moses"}
    (tmp_path / "bad.tsv").write_text("lord\tLORD\nmoses Moses\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv, line 2: not 'word<TAB>spelling'"):
        Recaser.load(tmp_path / "bad.tsv")


def test_a_system_directory_is_read_relative_to_the_working_directory(exported, tmp_path,
                                                                      monkeypatch, capsys):
    monkeypatch.chdir(exported.parent)
    monkeypatch.delenv("CIRCLE_PROJECT", raising=False)
    (tmp_path / "in.es").write_text("El rey.\n", encoding="utf-8")
    status, out, err = translate("in.es", "--system", os.path.basename(exported),
                                 capsys=capsys)
    assert status == 0 and out.strip() == "The king.", err

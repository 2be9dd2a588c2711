"""Translating and paraphrasing new text (circle.translate, `circle translate`, `circle
paraphrase`) with a tiny experiment built from the tiny corpus: its grammar extracted from the
tiny training bitext and frozen alignment, its LM estimated on the training targets, its
paraphrase grammar pivoted from the bilingual grammar."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from circle.align import BITEXT_DIGEST, bitext_digest
from circle.cli import main
from circle.core.schemas import ALIGNMENT, BITEXT, EVALSET, TUNING_LOG
from circle.core.tables import read_table, write_table
from circle.corpus.preprocess import normalize, tokenize_bitext
from circle.decoder import write_weights
from circle.grammar.extract import extract_grammar
from circle.grammar.filter import RuleReadStats, filter_grammar, rules_for
from circle.grammar.oov_paraphrase import FEATURE
from circle.grammar.pivot import pivot_grammar
from circle.lm import estimate_lm
from circle.translate import Experiment, Recaser

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"
# weights tuned by MERT on the default experiment (1H and the bias-0 paraphraser)
TUNED = {"log_p_e_given_f": 0.1935, "log_p_f_given_e": 0.0114, "log_lex_e_given_f": 0.0666,
         "log_lex_f_given_e": 0.0020, "lm": 0.0788, "word_penalty": -0.4398,
         "phrase_penalty": -0.1242, "glue": 0.0837, "oov": -10.0, "target": 0.0}
PARAPHRASER = {"log_p_e2_given_e1": 0.0941, "log_p_e1_given_e2": 0.1222, "log_p_e1_e2": 0.0209,
               "neg_target_terminals": -0.1962, "lm": 0.1362, "word_penalty": -0.0547,
               "phrase_penalty": -0.3478, "glue": -0.0280, "oov": -10.0, "target": 0.0}
NEW = "El rey envió a sus siervos a la ciudad con un teléfono."


def paraphrase_inputs() -> list[str]:
    """100 English sentences of the tiny corpus: the training targets' first lines."""
    return (TINY / "train.en.txt").read_text(encoding="utf-8").splitlines()[:100]


def tuning_log(score: float) -> pd.DataFrame:
    return pd.DataFrame({"iteration": [1, 2], "metric": "bleu", "weights": [[0.0], [0.0]],
                         "decode_score": [score / 2, score], "pool_score": [score, None],
                         "new_hypotheses": [10, 0], "pool_size": [10, 10],
                         "returned": [False, True], "stop_reason": [None, "converged"],
                         "decoded_sentences": [0, 100]})


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project root (a Snakefile) with results/tiny as the workflow leaves it."""
    root = tmp_path_factory.mktemp("project")
    (root / "Snakefile").write_text("")
    results = root / "results" / "tiny"
    for name in ("corpus", "tokenized", "grammar", "lm", "weights", "tune", "paraphrase"):
        (results / name).mkdir(parents=True)
    config = {"experiment": "tiny", "preprocess": {"source_lang": "es", "target_lang": "en",
                                                   "lowercase": True},
              "lm": {"decoding_order": 3}, "decoder": {"pop_limit": 10},
              "oov_paraphrase": {"max_phrase_length": 1}, "seed": 13}
    (results / "config.yaml").write_text(yaml.safe_dump(config))
    source, target = ((TINY / f"train.{side}.txt").read_text(encoding="utf-8").splitlines()
                      for side in ("es", "en"))
    raw = pd.DataFrame({"segment_id": range(len(source)), "document": "train",
                        "source": source, "target": target})
    write_table(raw, results / "corpus/train.parquet", BITEXT)
    bitext = tokenize_bitext(raw, "es", "en")
    write_table(bitext, results / "tokenized/train.parquet", BITEXT)
    test = [normalize(line, "es") for line in (TINY / "test.es.txt").read_text().splitlines()]
    write_table(pd.DataFrame({"segment_id": range(len(test)), "document": "test",
                              "source": test, "references": [[""]] * len(test),
                              "ref_order": [[0]] * len(test)}),
                results / "tokenized/test.parquet", EVALSET)
    alignment = results / "tokenized/alignment.parquet"
    write_table(read_table(TINY / "alignment.parquet", ALIGNMENT), alignment, ALIGNMENT,
                metadata={BITEXT_DIGEST: bitext_digest(bitext)})
    whole = results / "grammar/whole.parquet"
    extract_grammar(results / "tokenized/train.parquet", alignment, whole)
    # many small row groups, as a large grammar has: most of them are never read
    pq.write_table(pq.read_table(whole), results / "grammar/bilingual.parquet",
                   row_group_size=2000)
    text = results / "lm/train.en"
    text.write_text("\n".join(bitext["target"]) + "\n", encoding="utf-8")
    estimate_lm([text], 3, results / "lm/3gram.binary", discount_fallback=True, memory="50M")
    write_weights(results / "weights/untuned-translation.txt", TUNED | {"lm": 1.0})
    write_weights(results / "weights/1H.rep0.txt", TUNED)
    write_weights(results / "weights/1H_oov.rep0.txt", TUNED | {FEATURE: 0.5})
    write_weights(results / "weights/1H.rep1.txt", TUNED | {"word_penalty": -1.0})
    write_table(tuning_log(0.20), results / "tune/1H.rep0.parquet", TUNING_LOG)
    write_table(tuning_log(0.10), results / "tune/1H.rep1.parquet", TUNING_LOG)
    sentences = [normalize(line, "en") for line in paraphrase_inputs()]
    pivot_grammar(whole, results / "paraphrase/pivot", results / "paraphrase/self.parquet",
                  sentences=sentences)
    (results / "paraphrase/pivot/part0.parquet").rename(results / "paraphrase/bias0.parquet")
    write_weights(results / "weights/paraphraser-bias0.txt", PARAPHRASER)
    return root


def circle(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "CIRCLE_PROJECT"}
    return subprocess.run([sys.executable, "-m", "circle.cli", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, input=stdin, env=environment)


def test_the_rules_read_for_new_text_are_those_filter_grammar_keeps(project, tmp_path):
    """The row-group reader keeps exactly the rules the workflow's filter keeps, and skips the
    row groups whose source sides start with no input word."""
    grammar = project / "results/tiny/grammar/bilingual.parquet"
    sentences = [normalize(line, "es") for line in
                 [NEW, *(TINY / "test.es.txt").read_text(encoding="utf-8").splitlines()[:3]]]
    filter_grammar(grammar, sentences, tmp_path / "filtered.parquet")
    expected = pd.read_parquet(tmp_path / "filtered.parquet")
    stats = RuleReadStats()
    found = rules_for(grammar, sentences, 10, stats).to_pandas()
    order = ["source", "target"]
    pd.testing.assert_frame_equal(found.sort_values(order, ignore_index=True),
                                  expected.sort_values(order, ignore_index=True))
    assert len(found) > 100
    assert stats.row_groups > 100 and stats.row_groups_read < stats.row_groups


def test_a_new_sentence_is_translated_from_the_command_line_with_tuned_weights(project,
                                                                             tmp_path):
    """Words outside the test set, one no rule translates; run from another directory with
    the experiment's name only: the paths resolve against the project, the default weights
    are the best-tuned 1H replicate, and the untranslated word is counted."""
    test_words = {word for line in (TINY / "test.es.txt").read_text().splitlines()
                  for word in normalize(line, "es").split()}
    words = normalize(NEW, "es").split()
    assert {"rey", "siervos", "ciudad"} <= set(words) - test_words
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "new.es").write_text(NEW + "\n", encoding="utf-8")
    result = circle("translate", "new.es", "--project", str(project), "--experiment", "tiny",
                    "--output-prefix", "out", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    results = project / "results/tiny"
    assert (f"decoding with the weights of 1H.rep0, {results / 'weights/1H.rep0.txt'}: the best "
            "tune BLEU (20.00) of the 2 tuned 1H replicate(s)") in result.stderr
    output = result.stdout.strip()
    assert output[0].isupper() and "king" in output.lower() and "servants" in output.lower()
    tokenized = (elsewhere / "out.tokenized").read_text().strip()
    assert tokenized == tokenized.lower() and tokenized.endswith(" .")
    assert (elsewhere / "out.detokenized").read_text().strip().endswith("teléfono.")
    assert (elsewhere / "out.recased").read_text().strip() == output
    # teléfono is in no rule; the tiny grammar also copies the preposition 'a' here
    counted = re.search(r"circle translate: (\d) of 13 input words \(.*\) in 1 line\(s\) left "
                        r"untranslated \(no rule translates them; copied as they are\): "
                        r"teléfono(, a)?\n", result.stderr)
    assert counted and int(counted[1]) == 1 + bool(counted[2]), result.stderr
    # a run named with --weights; the same from standard input, through main()
    named = circle("translate", "-", "--weights", "1H.rep1", "--print", "tokenized",
                   "--project", str(project), "--experiment", "tiny", cwd=elsewhere,
                   stdin=NEW + "\n")
    assert named.returncode == 0, named.stderr
    assert f"decoding with the weights of run 1H.rep1, {results / 'weights/1H.rep1.txt'}" \
        in named.stderr
    other = named.stdout.strip()  # its word penalty favours longer output
    assert "king" in other and len(other.split()) > len(tokenized.split())


def test_the_weights_of_an_oov_run_translate_an_oov_word_through_its_paraphrases(project,
                                                                               tmp_path):
    """Weights that weight the paraphrase feature (a kH_oov run's) make the OOV words of new
    text borrow rules from their distributional paraphrases in the experiment's tokenised
    text (Marton et al. 2009): "cuarto", which no training verse has, is passed through with
    1H's weights and translated with 1H_oov's."""
    line = "Y fué la tarde y la mañana el día cuarto.\n"
    outputs = {}
    for run in ("1H.rep0", "1H_oov.rep0"):
        result = circle("translate", "-", "--weights", run, "--print", "tokenized",
                        "--project", str(project), "--experiment", "tiny", cwd=tmp_path,
                        stdin=line)
        assert result.returncode == 0, result.stderr
        outputs[run] = result
    assert "cuarto" in outputs["1H.rep0"].stdout.split()
    assert "borrowed" not in outputs["1H.rep0"].stderr
    assert "cuarto" not in outputs["1H_oov.rep0"].stdout.split()
    borrowed = re.search(r"; (\d+) rules borrowed for OOV phrases", outputs["1H_oov.rep0"].stderr)
    assert borrowed and int(borrowed[1]) > 0, outputs["1H_oov.rep0"].stderr


def test_translate_reads_stdin_and_resolves_results_against_the_project(project, monkeypatch,
                                                                        capsys, tmp_path):
    monkeypatch.chdir(tmp_path)  # no results here
    monkeypatch.setenv("CIRCLE_PROJECT", str(project))
    lines = ["El rey envió a sus siervos.", "El pueblo salió de la ciudad."]
    monkeypatch.setattr(sys, "stdin", type("Input", (), {"buffer": __import__("io").BytesIO(
        "\n".join(lines).encode() + b"\n")})())
    assert main(["translate", "--results", "results/tiny", "--weights", "1H.rep0"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2 and all(line[0].isupper() for line in out.splitlines())
    assert f"{project / 'results/tiny'}: es to en" in err
    assert "every one of the" in err or "left untranslated" in err


def test_a_missing_run_names_the_runs_there_are(project, tmp_path):
    result = circle("translate", "--project", str(project), "--experiment", "tiny",
                    "--weights", "2H.rep0", cwd=tmp_path, stdin="el rey\n")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ("runs: 1H.rep0, 1H.rep1, 1H_oov.rep0, paraphraser-bias0, untuned-translation"
            in result.stderr)


def test_untuned_weights_are_used_with_a_warning(project, tmp_path):
    experiment = Experiment.at(project / "results/tiny")
    experiment.results = tmp_path  # no tuning logs, no weights
    path, note = experiment.translation_weights(None)
    assert path == tmp_path / "weights/untuned-translation.txt"
    assert "UNTUNED" in note and "warning" in note


def test_the_recaser_restores_names_and_the_first_letter():
    recaser = Recaser.from_text(["And Israel said unto the LORD God", "Then the LORD spake",
                                 "the lord of the house", "And the LORD said", "Israel went"])
    assert recaser.recase("the lord said unto israel .") == "The LORD said unto Israel ."
    assert recaser.recase("« and then »") == "« And then »"  # the first letter, not the first
    assert recaser.recase("house") == "House"


def test_one_hundred_sentences_are_paraphrased_in_one_call(project, tmp_path):
    """From a file and from standard input, with the grammar loaded once; a sentence without
    a paraphrase says why."""
    inputs = tmp_path / "in.en"
    inputs.write_text("\n".join(paraphrase_inputs()) + "\n", encoding="utf-8")
    result = circle("paraphrase", str(inputs), "--project", str(project), "--experiment",
                    "tiny", "--pop-limit", "5", "--print", "tokenized", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    outputs = result.stdout.splitlines()
    assert len(outputs) == 100
    sources = [normalize(line, "en") for line in paraphrase_inputs()]
    changed = sum(output != source for output, source in zip(outputs, sources, strict=True))
    assert changed > 50
    assert f"circle paraphrase: {changed} of 100 sentence(s) paraphrased" in result.stderr
    assert result.stderr.count("decoding with the tuned paraphraser weights") == 1
    piped = circle("paraphrase", "-", "--project", str(project), "--experiment", "tiny",
                   "--pop-limit", "5", "--print", "tokenized", cwd=tmp_path,
                   stdin="zzz qqq xxyy\n" + paraphrase_inputs()[0] + "\n")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines() == ["zzz qqq xxyy", outputs[0]]
    assert ("line 1: no paraphrase of 'zzz qqq xxyy': no rule of the paraphrase grammar "
            "matches any of its phrases") in piped.stderr


def test_the_paraphraser_decodes_with_its_own_lm_where_the_experiment_has_one(tmp_path):
    """``circle paraphrase`` takes the experiment's paraphraser LM: the MT system's, or its own
    with paraphrase.language_models: pivots (the pipeline's paraphraser_decoding_lm)."""
    shared = Experiment(tmp_path, {"lm": {"decoding_order": 4}})
    own = Experiment(tmp_path, {"lm": {"decoding_order": 4},
                                "paraphrase": {"language_models": "pivots"}})
    assert shared.paraphraser_lm == shared.lm == tmp_path / "lm/4gram.binary"
    assert own.paraphraser_lm == tmp_path / "paraphrase/lm/4gram.binary"


def test_tuning_logs_of_another_circle_name_the_way_out(tmp_path):
    """A results directory whose tuning logs another version of circle wrote (another schema
    version): the best replicate cannot be chosen, and the error says to name the weights or
    tune again, naming the log."""
    from dataclasses import replace

    import numpy as np

    from circle.core.tables import SchemaError
    from circle.translate import best_tuned_run

    (tmp_path / "tune").mkdir()
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights/1H.rep0.txt").write_text("lm 1.0\n")
    frame = pd.DataFrame({"iteration": np.array([1], dtype=np.int32), "metric": "bleu",
                          "weights": [[1.0]], "decode_score": [0.2], "pool_score": [None],
                          "new_hypotheses": np.array([10]), "pool_size": np.array([10]),
                          "returned": [True], "stop_reason": ["max_iterations"],
                          "decoded_sentences": np.array([100])})
    older = replace(TUNING_LOG, version=TUNING_LOG.version - 1)
    write_table(frame, tmp_path / "tune/1H.rep0.parquet", older)
    with pytest.raises(SchemaError, match=r"1H\.rep0\.parquet: expected schema .* another "
                                          r"version of circle.*--weights 1H\.rep0"):
        best_tuned_run(tmp_path, "1H")
    write_table(frame, tmp_path / "tune/1H.rep0.parquet", TUNING_LOG)
    assert best_tuned_run(tmp_path, "1H") == ("1H.rep0", "bleu", 0.2, 1)

"""Reference conditions, set selection and test evaluation of the ch. 4 experiments
(circle.experiments: conditions, sets, mt_tuning, run_evaluation; circle.paraphrase.untargeted)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from circle.core.schemas import CONDITION_SUMMARY, EVALSET, EVALUATION, TUNING_LOG
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.references import single_references
from circle.decoder.nbest import NBEST
from circle.experiments.conditions import (
    Condition,
    TuningRun,
    oov_variant_tag,
    reference_tag,
    run_seed,
    tagged_oov_variant,
    tagged_reference,
)
from circle.experiments.evaluate import approximate_randomisation, corpus_bleu, corpus_chrf
from circle.experiments.mt_tuning import condition_references
from circle.experiments.run_evaluation import evaluate_runs
from circle.experiments.sets import select_segments, write_reference_texts
from circle.figures.paraphraser import paraphraser_report
from circle.figures.report import write_report
from circle.paraphrase.config import ParaphraserConfig
from circle.tune.metrics import get_metric

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def evalset() -> pd.DataFrame:
    return pd.DataFrame({
        "segment_id": [1, 2, 3, 4, 5],
        "document": ["a", "a", "b", "b", "c"],
        "source": ["s1", "s2", "s3", "s4", "s5"],
        "references": [[f"r{k}-{i}" for k in range(4)] for i in range(1, 6)],
        "ref_order": [[2, 0, 1, 3], [2, 0, 1, 3], [1, 3, 0, 2], [1, 3, 0, 2], [0, 1, 2, 3]],
    })


@pytest.mark.parametrize(("name", "human", "paraphrases", "kind"),
                         [("1H", 1, 0, "human"), ("4H", 4, 0, "human"),
                          ("1H+1P", 1, 1, "paraphrase"), ("1H+3P", 1, 3, "paraphrase"),
                          ("1H+2T", 1, 2, "targeted")])
def test_condition_names_parse(name, human, paraphrases, kind):
    condition = Condition.parse(name)
    assert (condition.human, condition.paraphrases) == (human, paraphrases)
    assert condition.reference_type == kind and condition.targeted == (kind == "targeted")


def test_targeted_conditions_tune_from_the_single_reference_and_the_hook():
    # the targeted paraphrases are per hypothesis (circle.paraphrase.targeted); the fixed set is
    # 1H's
    assert condition_references(evalset(), Condition.parse("1H+2T"), None) == \
        condition_references(evalset(), Condition.parse("1H"), None)


def test_a_targeted_condition_can_carry_its_own_paraphraser():
    condition = Condition.targeted_at(1, ParaphraserConfig(0.0, -1.5))
    assert condition.name == "1H+1T_b0_w-1.5"
    assert condition == Condition.parse("1H+1T_b0_w-1.5")
    assert (condition.paraphrases, condition.reference_type) == (1, "targeted")
    assert condition.paraphraser == ParaphraserConfig(0.0, -1.5)
    assert Condition.parse("1H+1T").paraphraser is None  # the grid's choice
    run = TuningRun.parse("1H+2T_b0.25_w-0.5.rep1")
    assert (run.condition.paraphraser, run.replicate) == (ParaphraserConfig(0.25, -0.5), 1)
    assert run.name == "1H+2T_b0.25_w-0.5.rep1"
    with pytest.raises(ValueError, match="negative targeting weight"):
        Condition.targeted_at(1, ParaphraserConfig(0.0, 0.0))


@pytest.mark.parametrize("name", ["0H", "2H+1P", "1P", "H", "1H+P", "2H+1T", "1H+T",
                                  "1H+1P_b0_w-1", "1H+1T_b0", "1H+1T_b0_w1", "2H_ref1",
                                  "1H+1T_ref1", "1H_ref0", "1H_b0.5", "1H_ref1_b0.5",
                                  "1H_meteor", "1H+1P_b1.5", "2H_t1", "1H+1T_t1",
                                  "1H_ter_t1", "1H+1P_oov", "2H+1L_oov", "1H_ref1_oov",
                                  "1H+1X_kjv_oov", "1H+1T_oov", "4H_ter_oov", "4H_oov_oov"])
def test_bad_condition_names_are_refused(name):
    with pytest.raises(ValueError, match="unknown tuning condition"):
        Condition.parse(name)


@pytest.mark.parametrize(("name", "fields", "baseline", "kind"), [
    ("1H+2P_b0.25", {"paraphrases": 2, "bias": 0.25}, "1H", "paraphrase_b0.25"),
    ("1H_ref3", {"paraphrases": 0, "reference": 3}, "1H_ref3", "human"),
    ("1H+1P_ref2", {"paraphrases": 1, "reference": 2}, "1H_ref2", "paraphrase"),
    ("1H+1P_terbleu", {"paraphrases": 1, "metric": "terbleu"}, "1H_terbleu", "paraphrase"),
    ("1H+1P_b0.5_ref4_ter", {"bias": 0.5, "reference": 4, "metric": "ter"}, "1H_ref4_ter",
     "paraphrase_b0.5"),
    ("3H", {"human": 3}, "1H", "human"),
    ("1H+1P_t2", {"paraphrases": 1, "tuning_set": 2}, "1H_t2", "paraphrase"),
    ("1H_t2", {"paraphrases": 0, "tuning_set": 2}, "1H_t0", "human"),
    ("1H_t0", {"paraphrases": 0, "tuning_set": 0}, "1H_t0", "human"),
    ("1H_t0_terbleu", {"tuning_set": 0, "metric": "terbleu"}, "1H_t0_terbleu", "human"),
    ("1H+2T_b0_w-1", {"targeted": True, "paraphraser": ParaphraserConfig(0.0, -1.0)}, "1H",
     "targeted"),
    ("4H_oov", {"human": 4, "oov": True}, "4H", "human"),
    ("1H_oov_ter", {"oov": True, "metric": "ter"}, "1H_ter", "human"),
])
def test_condition_variants_of_the_thesis_figures(name, fields, baseline, kind):
    condition = Condition.parse(name)
    assert condition.name == name
    for field, value in fields.items():
        assert getattr(condition, field) == value
    assert condition.baseline.name == baseline and condition.reference_type == kind
    assert TuningRun.parse(f"{name}.rep2") == TuningRun(condition, 2)


def test_an_oov_run_starts_from_the_untuned_weights_of_the_augmented_grammars():
    """kH_oov (Marton et al. 2009's augmented system) has start weights of its own, which
    weight the paraphrase feature; kH starts where it always did."""
    assert TuningRun.parse("4H_oov.rep1").start == "untuned-translation_oov"
    assert TuningRun.parse("4H.rep1").start == "untuned-translation"
    assert not Condition.parse("4H").oov


def test_a_condition_has_one_spelling():
    with pytest.raises(ValueError, match="is spelt '1H\\+1P_b0.5'"):
        Condition.parse("1H+1P_b0.50")
    assert Condition(1, 1, bias=0.5).name == "1H+1P_b0.5"


def test_per_translator_conditions_take_one_reference_set_for_every_segment():
    assert condition_references(evalset(), Condition.parse("1H_ref2"), None) == \
        [[f"r1-{i}"] for i in range(1, 6)]
    paraphrases = pd.DataFrame({"segment_id": [1, 2], "rank": [0, 0],
                                "hypothesis": ["p1", "p2"]})
    references = condition_references(evalset(), Condition.parse("1H+1P_ref4"), paraphrases)
    assert references[:2] == [["r3-1", "p1"], ["r3-2", "p2"]]
    assert single_references(evalset()) == ["r2-1", "r2-2", "r1-3", "r1-4", "r0-5"]
    with pytest.raises(ValueError, match="cannot take reference set 5"):
        single_references(evalset(), 5)
    assert [tagged_reference(reference_tag(n)) for n in (None, 1, 12)] == [None, 1, 12]
    assert [tagged_oov_variant(oov_variant_tag(v)) for v in ("", "split", "min06")] == [
        "", "split", "min06"]
    with pytest.raises(ValueError, match="not an OOV variant tag"):
        tagged_oov_variant("-")


def test_human_conditions_follow_the_seeded_order():
    references = condition_references(evalset(), Condition.parse("2H"), None)
    assert references[0] == ["r2-1", "r0-1"]
    assert references[2] == ["r1-3", "r3-3"]


def test_paraphrase_conditions_add_the_k_best_paraphrases_of_the_single_reference():
    paraphrases = pd.DataFrame({"segment_id": [1, 1, 1, 3], "rank": [0, 1, 2, 0],
                                "hypothesis": ["p1a", "p1b", "p1c", "p3a"]})
    references = condition_references(evalset(), Condition.parse("1H+2P"), paraphrases)
    assert references[0] == ["r2-1", "p1a", "p1b"]
    assert references[1] == ["r2-2"]  # no paraphrase for segment 2
    assert references[2] == ["r1-3", "p3a"]
    with pytest.raises(ValueError, match="needs the paraphrased references"):
        condition_references(evalset(), Condition.parse("1H+1P"), None)


def test_select_segments_keeps_whole_documents(tmp_path):
    path, out = tmp_path / "set.parquet", tmp_path / "out.parquet"
    write_table(evalset(), path, EVALSET)
    assert select_segments(path, 3, out) == 2  # document b would cross the limit
    assert list(read_table(out, EVALSET)["document"]) == ["a", "a"]
    assert select_segments(path, 4, out) == 4
    assert select_segments(path, None, out) == 5
    with pytest.raises(ValueError, match=f"{path}: its first document 'a' has 2 segments, "
                       "more than the sets.max_segments limit 1 of this set"):
        select_segments(path, 1, out)


def test_a_limit_below_the_tiny_tune_sets_first_document_is_refused(tmp_path):
    documents = (TINY / "tune.docs.txt").read_text().splitlines()
    first = documents.count(documents[0])
    assert first > 1
    table = pd.DataFrame({
        "segment_id": range(len(documents)), "document": documents,
        "source": (TINY / "tune.es.txt").read_text().splitlines(),
        "references": [[line] for line in
                       (TINY / "tune.ref0.txt").read_text().splitlines()],
        "ref_order": [[0]] * len(documents)})
    path = tmp_path / "tune.parquet"
    write_table(table, path, EVALSET)
    assert select_segments(path, first, tmp_path / "out.parquet") == first
    with pytest.raises(ValueError, match=f"has {first} segments, more than the "
                       f"sets.max_segments limit {first - 1}"):
        select_segments(path, first - 1, tmp_path / "out.parquet")


# --- test evaluation of the tuning runs (evaluate_runs) ----------------------------------------

TEST_REFERENCES = [
    ["the cat sat on the mat", "a cat was sitting on the mat"],
    ["he went to the market in the morning", "in the morning he walked to the market"],
    ["the dog barked at the small boy", "a dog barked at the little boy"],
    ["they ate bread and drank water", "they had bread and water"],
    ["she read the old book again", "she read that old book once more"],
    ["we will see you tomorrow at noon", "see you tomorrow at noon"],
]
OUTPUTS = {  # (condition, replicate): the 1-best test translations
    ("1H", 0): ["the cat on mat", "he went market morning", "dog barked boy", "they ate bread",
                "she read book", "we see you noon"],
    ("1H", 1): ["cat sat the mat", "he to the market", "the dog at boy", "ate bread and water",
                "she read the book", "see you at noon"],
    ("2H", 0): ["the cat sat on the mat", "he went to the market in the morning",
                "the dog barked at the small boy", "they ate bread and drank water",
                "she read the old book", "we will see you tomorrow"],
    ("2H", 1): ["a cat sat on the mat", "he went to the market in the morning",
                "a dog barked at the little boy", "they had bread and water",
                "she read the old book again", "see you tomorrow at noon"],
}


def tuning_log_frame(scores: list[float], returned: int, metric: str = "bleu") -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame({
        "iteration": np.arange(1, n + 1, dtype=np.int32), "metric": metric,
        "weights": [[1.0, -0.5]] * n, "decode_score": scores, "pool_score": [*scores[1:], None],
        "new_hypotheses": np.full(n, 5, dtype=np.int64),
        "pool_size": np.arange(1, n + 1, dtype=np.int64) * 5,
        "returned": [i + 1 == returned for i in range(n)],
        "stop_reason": [None] * (n - 1) + ["max_iterations"],
        "decoded_sentences": np.full(n, 183, dtype=np.int64)})


def evaluation_inputs(tmp_path, scores=None):
    """The test set, one n-best table and one tuning log per run of OUTPUTS."""
    test = pd.DataFrame({"segment_id": np.arange(1, 7), "document": ["d"] * 6,
                         "source": [f"s{i}" for i in range(6)], "references": TEST_REFERENCES,
                         "ref_order": [[0, 1]] * 6})
    write_table(test, tmp_path / "test.parquet", EVALSET)
    runs = []
    for (condition, replicate), hypotheses in OUTPUTS.items():
        run = TuningRun.of(condition, replicate)
        # each 1-best and, second, the same with one word more
        texts = [t for h in hypotheses for t in (h, f"{h} then")]
        nbest = pd.DataFrame({"segment_id": np.repeat(np.arange(1, 7), 2), "target": None,
                              "rank": np.tile(np.arange(2, dtype=np.int32), 6),
                              "hypothesis": texts, "score": np.tile([-1.0, -2.0], 6),
                              "features": [[-1.0, -float(len(t.split()))] for t in texts]})
        nbest_path = tmp_path / f"{run.name}.nbest.parquet"
        write_table(nbest, nbest_path, NBEST,
                    metadata={"feature_names": json.dumps(["lm", "word_penalty"])})
        log_path = tmp_path / f"{run.name}.parquet"
        run_scores = (scores or {}).get((condition, replicate), [0.1, 0.2, 0.15])
        write_table(tuning_log_frame(run_scores, int(np.argmax(run_scores)) + 1), log_path,
                    TUNING_LOG)
        runs.append((run, 100 + replicate, str(nbest_path), str(log_path)))
    return tmp_path / "test.parquet", runs


def test_evaluate_runs_writes_runs_and_the_condition_summary(tmp_path):
    test_path, runs = evaluation_inputs(tmp_path)
    out, conditions = tmp_path / "results.parquet", tmp_path / "conditions.parquet"
    frame = evaluate_runs("x", test_path, runs, 200, 3, out,
                          conditions_path=conditions, shuffles=300, significance_level=0.05)
    results = read_table(out, EVALUATION)
    assert results["condition"].tolist() == ["1H", "1H", "2H", "2H"]
    assert results["bleu"].tolist() == frame["bleu"].tolist()
    assert results.loc[2, "bleu"] == corpus_bleu(OUTPUTS["2H", 0], TEST_REFERENCES).value
    # at the references' mean length: every second hypothesis crosses its 1-best at a shift
    # of -1, so the output is all 1-bests or all seconds, whichever total is nearer
    target = sum(np.mean([len(r.split()) for r in refs]) for refs in TEST_REFERENCES)
    for row in results.itertuples():
        shorter = OUTPUTS[row.condition, row.replicate]
        longer = [f"{h} then" for h in shorter]
        length = sum(len(h.split()) for h in shorter)
        nearer = longer if abs(length + 6 - target) < abs(length - target) else shorter
        assert (row.matched_shift < -1) == (nearer is longer)
        assert row.matched_bleu == pytest.approx(corpus_bleu(nearer, TEST_REFERENCES).value)
    assert results["matched_shift"].lt(-1).tolist() == [True, True, False, False]  # 1H short
    summary = read_table(conditions, CONDITION_SUMMARY)
    assert summary["condition"].tolist() == ["1H", "2H"]
    assert summary["replicates"].tolist() == [2, 2]
    two = summary.iloc[1]
    runs_2h = results[results["condition"] == "2H"]
    assert two["bleu_mean"] == pytest.approx(runs_2h["bleu"].mean())
    assert two["ter_sd"] == pytest.approx(runs_2h["ter"].std(ddof=1))
    metric = get_metric("bleu")
    expected = approximate_randomisation(
        np.stack([metric.stats(OUTPUTS["1H", r], TEST_REFERENCES) for r in (0, 1)]),
        np.stack([metric.stats(OUTPUTS["2H", r], TEST_REFERENCES) for r in (0, 1)]),
        "bleu", 300, 3)
    assert two["bleu_p_value"] == expected and two["bleu_significant"] == (expected < 0.05)
    assert two["bleu_difference"] > 0 and two["ter_difference"] < 0
    assert pd.isna(summary["baseline_condition"][0]) and summary["baseline_condition"][1] == "1H"
    assert read_metadata(conditions)["schema"] == "condition_summary"
    # the report reads both tables: 2H is far better than 1H on every segment
    assert two["bleu_significant"] and two["ter_significant"]
    write_report(out, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                 tmp_path / "t.png", conditions=conditions)
    text = (tmp_path / "t.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| 2 (1H+1) |"))
    assert [cell.strip()[-1] for cell in row.strip("|").split("|")[1:3]] == ["*", "*"]
    assert "n = 2 tuning replicates per cell" in text and "300 shuffles, p < 0.05." in text


def test_evaluate_runs_scores_the_untuned_system_as_a_row_outside_the_summary(tmp_path):
    test_path, runs = evaluation_inputs(tmp_path)
    untuned = ["the cat", "he went to market", "a dog barked", "they ate", "she read",
               "see you"]
    texts = [t for h in untuned for t in (h, f"{h} then")]
    nbest = pd.DataFrame({"segment_id": np.repeat(np.arange(1, 7), 2), "target": None,
                          "rank": np.tile(np.arange(2, dtype=np.int32), 6),
                          "hypothesis": texts, "score": np.tile([-1.0, -2.0], 6),
                          "features": [[-1.0, -float(len(t.split()))] for t in texts]})
    write_table(nbest, tmp_path / "untuned.parquet", NBEST,
                metadata={"feature_names": json.dumps(["lm", "word_penalty"])})
    out, conditions = tmp_path / "results.parquet", tmp_path / "conditions.parquet"
    evaluate_runs("x", test_path, runs, 100, 3, out, conditions_path=conditions, shuffles=100,
                  untuned=tmp_path / "untuned.parquet", untuned_seed=7, lang="en",
                  lowercased=True)
    results = read_table(out, EVALUATION)
    row = results[results["condition"] == "untuned"].iloc[0]
    assert results["condition"].tolist() == ["1H", "1H", "2H", "2H", "untuned"]
    assert (row["reference_type"], row["replicate"], row["seed"], row["references_used"],
            row["tune_iterations"]) == ("untuned", 0, 7, 0, 0)
    assert row["bleu"] == corpus_bleu(untuned, TEST_REFERENCES).value
    assert row["length_ratio"] == pytest.approx(corpus_bleu(untuned, TEST_REFERENCES)
                                                .length_ratio)
    assert row["chrf"] == pytest.approx(corpus_chrf(untuned, TEST_REFERENCES).value)
    assert pd.isna(row["baseline_condition"]) and pd.isna(row["p_value_vs_baseline"])
    # every run is also scored detokenised with 13a, lowercased as the pipeline
    assert results["detok_bleu"].notna().all()
    assert "tok:13a" in row["detok_bleu_signature"] and "case:lc" in row["detok_chrf_signature"]
    summary = read_table(conditions, CONDITION_SUMMARY)
    assert summary["condition"].tolist() == ["1H", "2H"]  # no test of the untuned system
    assert summary["chrf_mean"][1] == pytest.approx(
        results.loc[results["condition"] == "2H", "chrf"].mean())
    # the report shows it as row 0 of every series, and its line in the plot
    table = write_report(out, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                         tmp_path / "t.png", conditions=conditions)
    assert table["label"].tolist()[0] == "untuned"
    assert table.loc[0, "human_bleu_mean"] == row["bleu"]
    text = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert f"| untuned | {row['bleu']:.2f} | {row['ter']:.2f} | {row['chrf']:.2f} |" in text
    assert f"- chrF: `{row['chrf_signature']}`" in text
    assert f"- BLEU (detokenised): `{row['detok_bleu_signature']}`" in text


def test_reference_texts_write_one_file_per_stream_tokenised_and_detokenised(tmp_path):
    test = pd.DataFrame({"segment_id": [1, 2], "document": ["d", "d"], "source": ["a", "b"],
                         "references": [["he said &quot; yes &quot; .", "yes ."], ["it &apos;s ."]],
                         "ref_order": [[0, 1], [0]]})
    write_table(test, tmp_path / "test.parquet", EVALSET)
    tokenised = [tmp_path / "test.ref1.txt", tmp_path / "test.ref2.txt"]
    detokenised = [tmp_path / "test.ref1.detok.txt", tmp_path / "test.ref2.detok.txt"]
    write_reference_texts(tmp_path / "test.parquet", tokenised, detokenised, "en")
    assert tokenised[0].read_text() == "he said &quot; yes &quot; .\nit &apos;s .\n"
    assert tokenised[1].read_text() == "yes .\n\n"  # segment 2 has one reference
    assert detokenised[0].read_text() == 'he said "yes".\nit\'s.\n'
    with pytest.raises(ValueError, match="2 reference streams"):
        write_reference_texts(tmp_path / "test.parquet", tokenised[:1], detokenised[:1], "en")


def test_evaluate_runs_refuses_a_run_worse_than_its_start_before_scoring(tmp_path):
    test_path, runs = evaluation_inputs(tmp_path, {("2H", 1): [0.30, 0.25, 0.28]})
    log = read_table(runs[3][3], TUNING_LOG)
    log["returned"] = [False, False, True]  # the run returned iteration 3: 0.28 < 0.30
    write_table(log, runs[3][3], TUNING_LOG)
    # n-best tables that do not exist: the guard must stop the job before reading them
    runs = [(run, seed, str(tmp_path / "missing.parquet"), log) for run, seed, _, log in runs]
    out = tmp_path / "results.parquet"
    with pytest.raises(ValueError, match=r"2H\.rep1\.parquet: tuning run 2H\.rep1 returned the "
                                         r"weights of iteration 3"):
        evaluate_runs("x", test_path, runs, 100, 3, out,
                      conditions_path=tmp_path / "conditions.parquet", shuffles=100)
    assert not out.exists()


def test_paraphraser_report_shows_the_curve_weights_identity_rate_and_seeded_samples(tmp_path):
    table = evalset()
    write_table(table, tmp_path / "tune.parquet", EVALSET)
    singles = dict(zip(table["segment_id"], single_references(table), strict=True))
    best = {1: "p1", 2: singles[2], 3: "p3", 4: "p4", 5: "p5"}  # segment 2 copies its reference
    nbest = pd.DataFrame({"segment_id": [1, 1, 2, 3, 4, 5], "target": [None] * 6,
                          "rank": [0, 1, 0, 0, 0, 0],
                          "hypothesis": [best[1], "p1b", best[2], best[3], best[4], best[5]],
                          "score": [0.0] * 6, "features": [[0.0]] * 6})
    write_table(nbest, tmp_path / "nbest.parquet", NBEST, metadata={"feature_names": '["f"]'})
    (tmp_path / "untuned.txt").write_text("lm 0.5\nword_penalty -0.5\n", encoding="utf-8")
    (tmp_path / "tuned.txt").write_text("lm 0.25\nword_penalty -0.125\nidentity 0.0625\n",
                                        encoding="utf-8")

    def log(scores, returned, metric="bleu"):
        return pd.DataFrame({"iteration": np.arange(1, len(scores) + 1, dtype=np.int32),
                             "metric": metric, "weights": [[0.0]] * len(scores),
                             "decode_score": scores, "pool_score": [None] * len(scores),
                             "new_hypotheses": 1, "pool_size": 1,
                             "returned": [i == returned for i in range(len(scores))],
                             "stop_reason": [None] * len(scores),
                             "decoded_sentences": 100})

    def page(log_name, name, **options):
        return paraphraser_report(tmp_path / log_name, tmp_path / "nbest.parquet",
                                  tmp_path / "tune.parquet", tmp_path / "untuned.txt",
                                  tmp_path / "tuned.txt", tmp_path / f"{name}.md",
                                  tmp_path / f"{name}.html", **options)

    write_table(log([0.137, 0.12, 0.151], 2), tmp_path / "log.parquet", TUNING_LOG)
    text = page("log.parquet", "out", samples=3, seed=1)
    assert "Tune BLEU (%) of the decoded 1-best per iteration" in text
    assert "13.70, 12.00, 15.10" in text and "iteration 3 (15.10 against 13.70" in text
    assert "Warning" not in text
    # the weights untuned and tuned; identity, absent from the untuned file, starts at 0
    assert ("| lm | 0.5 | 0.25 |\n| word_penalty | -0.5 | -0.125 |\n"
            "| identity | 0 | 0.0625 |") in text
    assert "Identity rate: 1 of 5 tune-set references (20.0 %)" in text
    samples = text.split("| segment | single reference | 1-best paraphrase |\n|---|---|---|\n")[1]
    rows = samples.splitlines()
    assert len(rows) == 3
    for row in rows:  # each sample: the segment's single reference and its 1-best paraphrase
        segment = int(row.split("|")[1])
        assert f"| {singles[segment]} | {best[segment]} |" in row
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == text
    assert page("log.parquet", "out", samples=3, seed=1) == text
    write_table(log([0.137, 0.12], 0), tmp_path / "flat.parquet", TUNING_LOG)
    assert "Warning: tuning did not improve" in page("flat.parquet", "flat")
    # a paraphraser tuned on iBLEU (tuning.paraphraser_metric): its name with α, as people
    # write it; its scores may be negative
    write_table(log([-0.021, 0.034], 1, "ibleu:0.9"), tmp_path / "ibleu.parquet", TUNING_LOG)
    ibleu = page("ibleu.parquet", "ibleu")
    assert ("Tune iBLEU (α = 0.9) (%) of the decoded 1-best per iteration, on the "
            "paraphraser-tuning set: -2.10, 3.40. Returned: iteration 2") in ibleu
    assert "Warning" not in ibleu


@pytest.mark.parametrize("name", ["1H.rep0", "1H+3P.rep2", "4H.rep10"])
def test_a_tuning_run_name_round_trips(name):
    run = TuningRun.parse(name)
    assert run.name == name and TuningRun.of(run.condition.name, run.replicate) == run
    assert run.seed(13) == run_seed(13, name)


@pytest.mark.parametrize("name", ["1H", "1H.rep", "1H.repx", "0H.rep0", "2H+1P.rep0"])
def test_a_malformed_tuning_run_name_is_refused(name):
    with pytest.raises(ValueError, match="condition|rep"):
        TuningRun.parse(name)

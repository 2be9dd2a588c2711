"""The MT system translating with the grammars augmented for OOV phrases (Marton,
Callison-Burch & Resnik 2009; oov_paraphrase.translate) on the tiny corpus: an OOV word the
baseline passes through is translated in the test 1-best, untuned and after MERT."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from test_workflow import ROOT, TINY, snakemake, tiny_config

from circle.core.schemas import CONDITION_SUMMARY, EVALSET, TUNING_LOG
from circle.core.tables import read_metadata, read_table
from circle.decoder import read_weights
from circle.decoder.nbest import NBEST
from circle.grammar.oov_paraphrase import FEATURE

pytestmark = pytest.mark.workflow

OOV = "cuarto"
"""A word of the tiny test set that no training verse has ("el día cuarto"); its one-word
distributional paraphrase "segundo" has a rule "segundo -> second"."""


def test_an_oov_word_the_baseline_passes_through_is_translated_through_its_paraphrase(
        tmp_path):
    """Only the jobs the test decodes need, not the tiny default target: the baseline's untuned
    test decode, then the same experiment with the switch on and the weights of
    config/oov-paraphrases.yaml, whose decodes and 1H tuning run are rebuilt on the augmented
    grammars. One-word OOV phrases (the seed's "1grams" system): at the default length 4 the
    tiny grammar's noise wins ("mañana el día cuarto" -> "land of egypt", through "tierra")."""
    line = next(number for number, text in enumerate(
        (TINY / "test.es.txt").read_text(encoding="utf-8").splitlines())
        if re.search(rf"\b{OOV}\b", text))
    results = tmp_path / "results" / "tiny"
    untuned = "results/tiny/decode/untuned-translation/test.1best.txt"
    (tmp_path / "baseline").mkdir()
    baseline = tiny_config(tmp_path / "baseline", **{"oov_paraphrase.max_phrase_length": 1})
    run = snakemake("--cores", "2", "--configfile", str(baseline), "--directory", str(tmp_path),
                    untuned)
    assert run.returncode == 0, run.stdout + run.stderr
    before = (tmp_path / untuned).read_text().splitlines()[line]
    assert OOV in before.split()  # passed through

    weights = yaml.safe_load((ROOT / "config" / "oov-paraphrases.yaml").read_text())[
        "decoder"]["translation_weights"]
    (tmp_path / "on").mkdir()
    switched = tiny_config(tmp_path / "on", **{"oov_paraphrase.max_phrase_length": 1,
                                               "oov_paraphrase.translate": True,
                                               "decoder.translation_weights": weights})
    tuned = "results/tiny/decode/1H.rep0/test.1best.txt"
    run = snakemake("--cores", "2", "--configfile", str(switched), "--directory", str(tmp_path),
                    untuned, tuned)
    assert run.returncode == 0, run.stdout + run.stderr
    log = run.stdout + run.stderr
    decodes = [block for block in re.split(r"^(?=(?:local)?rule \w+:$)", log, flags=re.M)
               if re.match(r"(?:local)?rule (decode_shard|tune_translation):", block)]
    assert len(decodes) == 3 + 1  # untuned tune and test, 1H test (one shard each); 1H
    assert all("grammar/oov_paraphrased/" in block and "grammar/filtered/" not in block
               for block in decodes)
    for path in (untuned, tuned):
        after = (tmp_path / path).read_text().splitlines()[line]
        assert OOV not in after.split() and "second" in after.split(), after
    path = results / "decode/untuned-translation/test.nbest.parquet"
    nbest = read_table(path, NBEST)
    names = json.loads(read_metadata(path)["feature_names"])
    segment = read_table(results / "sets/test.parquet", EVALSET)["segment_id"].iloc[line]
    best = nbest[(nbest["rank"] == 0) & (nbest["segment_id"] == segment)].iloc[0]
    assert best["features"][names.index(FEATURE)] < 0  # a borrowed rule's h = asim < 1
    # MERT tunes the feature like the others (the run may return its start: two iterations)
    assert FEATURE in read_weights(results / "weights/1H.rep0.txt")
    log = results / "tune/1H.rep0.parquet"
    features = json.loads(read_metadata(log)["feature_names"])
    assert FEATURE not in json.loads(read_metadata(log)["fixed_features"])
    optimised = read_table(log, TUNING_LOG)["weights"].iloc[1:]
    assert any(w[features.index(FEATURE)] != weights[FEATURE] for w in optimised)


def test_the_oov_run_set_tunes_the_baseline_and_its_augmented_twin_and_reports_both(tmp_path):
    """`snakemake oov_translation` on the tiny corpus (Marton et al. 2009's Table 4 on one
    bitext): 1H and 1H_oov, each with its own MERT run (the tiny config's one replicate);
    1H_oov's decodes read the augmented grammars and 1H's the filtered ones; the page tests
    1H_oov against 1H, counts fewer OOV test tokens after augmentation and shows the "cuarto"
    verse translated."""
    changes = {"oov_paraphrase.max_phrase_length": 1, "oov_paraphrase.tuning_conditions": ["1H"]}
    run = snakemake("--cores", "2", "--configfile", str(tiny_config(tmp_path, **changes)),
                    "--directory", str(tmp_path), "oov_translation")
    assert run.returncode == 0, run.stdout + run.stderr
    log = run.stdout + run.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", log, flags=re.M)
    tunes = {re.search(r"condition=(\S+), replicate=0", job)[1]:
             re.search(r"input: (.*)", job)[1]
             for job in jobs if re.match(r"(?:local)?rule tune_translation:", job)
             and "replicate=0" in job}
    assert "grammar/oov_paraphrased/tune.parquet" in tunes["1H_oov"]
    assert "untuned-translation_oov" in tunes["1H_oov"]
    assert "grammar/filtered/tune.parquet" in tunes["1H"]
    results = tmp_path / "results" / "tiny"
    weights = read_weights(results / "weights/untuned-translation_oov.txt")
    assert weights[FEATURE] == 0.2 and FEATURE not in read_weights(
        results / "weights/untuned-translation.txt")
    assert FEATURE in read_weights(results / "weights/1H_oov.rep0.txt")
    summary = read_table(results / "evaluation/oov/conditions.parquet", CONDITION_SUMMARY)
    assert list(summary["condition"]) == ["1H", "1H_oov"]
    assert summary.set_index("condition").loc["1H_oov", "baseline_condition"] == "1H"
    page = (results / "report/oov_translation.md").read_text()
    row = next(line for line in page.splitlines()
               if line.startswith("| augmented (oov_paraphrase) | test |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    before, after = (int(cells[i].split()[0].replace(",", "")) for i in (3, 4))
    assert 0 < after < before
    sample = page[page.index("source: "):]
    verse = next(block for block in sample.split("- source: ")
                 if f"translated now: {OOV}" in block)
    lines = verse.splitlines()
    assert OOV in next(line for line in lines if "- 1H:" in line).split()
    assert "second" in next(line for line in lines if "- 1H_oov:" in line).split()
    assert (results / "report/oov_translation.csv").read_text().startswith("condition,grammar")


def test_each_oov_variant_is_searched_augmented_and_tuned_with_its_own_files(tmp_path):
    """oov_paraphrase.variants (dry run): 1H_oov-<variant> beside 1H_oov, each variant with
    its own paraphrase search, augmented grammars and untuned weights; a variant that only
    changes the features shares nothing with the base variant but the filtered grammars; the
    page reads every augmented run's tuning log for the tune scores."""
    changes = {"oov_paraphrase.max_phrase_length": 1, "oov_paraphrase.tuning_conditions": ["1H"],
               "oov_paraphrase.variants": {"split": {"max_phrase_length": 2, "feature_split": 1},
                                           "stoplist50": {"stoplist_threshold": 50}}}
    plan = snakemake("-n", "--configfile", str(tiny_config(tmp_path, **changes)),
                     "--directory", str(tmp_path), "oov_translation")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    outputs = {re.search(r"output: (\S+)", job)[1]: job for job in jobs
               if re.match(r"rule (oov_paraphrases|augment_grammar):", job)}
    for tag in ("", "-split", "-stoplist50"):
        for evalset in ("tune", "test"):
            assert f"results/tiny/oov/paraphrases{tag}/{evalset}.parquet" in outputs
            assert f"results/tiny/grammar/oov_paraphrased{tag}/{evalset}.parquet" in outputs
    tunes = {re.search(r"condition=(\S+), replicate=0", job)[1]: re.search(r"input: (.*)", job)[1]
             for job in jobs if job.startswith("rule tune_translation:")}
    assert sorted(tunes) == ["1H", "1H_oov", "1H_oov-split", "1H_oov-stoplist50"]
    assert "grammar/oov_paraphrased-split/tune.parquet" in tunes["1H_oov-split"]
    assert "weights/untuned-translation_oov-split.txt" in tunes["1H_oov-split"]
    [report] = [job for job in jobs if job.startswith("rule report_oov_translation:")]
    assert all(f"results/tiny/tune/{c}.rep0.parquet" in report
               for c in ("1H_oov", "1H_oov-split", "1H_oov-stoplist50"))


def test_a_training_sample_leaves_its_other_verses_to_the_oov_paraphrases(tmp_path):
    """With corpus.train_segments the bitext is the sample (aligned afresh: the frozen
    alignment is the whole bitext's), and the OOV paraphrases of either evaluation set read
    the tokenised verses it leaves out beside every split; the held-out system's read them
    too."""
    config = tiny_config(tmp_path, **{"corpus.train_segments": 300, "alignment.frozen": None})
    targets = [f"results/tiny/oov/paraphrases/{evalset}.parquet" for evalset in ("tune", "test")]
    plan = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path), "--",
                     *targets, "results/tiny/heldout/oov/paraphrases/test.parquet")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    unused = "results/tiny/tokenized/train_unused.parquet"
    [made] = [job for job in jobs if job.startswith("rule unused_training_segments:")]
    assert "output: results/tiny/corpus/train_unused.parquet" in made
    assert any(job.startswith("rule tokenize_corpus:") and f"output: {unused}" in job
               for job in jobs)
    searches = [job for job in jobs if job.startswith("rule oov_paraphrases:")]
    assert len(searches) == 3 and all(unused in job.split("output:")[0] for job in searches)
    assert "rule align_corpus:" in plan.stdout

"""Which configuration runs: the effective configuration (results/<experiment>/config.yaml)
that the workflow writes for every shipped config, and the frozen alignment of the default
experiment."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from test_workflow import ROOT, snakemake, tiny_config

from circle.align import BITEXT_DIGEST, bitext_digest
from circle.core.schemas import BITEXT
from circle.core.tables import read_metadata, read_table
from circle.experiments.conditions import Condition
from circle.pipeline.plan import Plan

pytestmark = pytest.mark.workflow

FROZEN = "resources/alignment/bible-es-kjv.parquet"
LAPTOP_SUBSETS = {"tune": 200, "test": 300, "paratune": 100}
WHOLE_SETS = {"tune": None, "test": None, "paratune": None}
FIG5_10_CONDITIONS = ["1H", "2H", "3H", "4H", "1H+1P", "1H+2P", "1H+3P", "1H+1T", "1H+2T",
                      "1H+3T"]


def effective_config(run: Path, experiment: str, *configfiles: Path) -> dict:
    """Write ``experiment``'s effective configuration in ``run`` (a directory seeing the
    repository's config/ and resources/) with these --configfile arguments, and read it."""
    for name in ("config", "resources"):
        if not (run / name).exists():
            (run / name).symlink_to(ROOT / name)
    options = ["--configfile", *map(str, configfiles)] if configfiles else []
    target = f"results/{experiment}/config.yaml"
    result = snakemake("--cores", "1", target, *options, cwd=run)
    assert result.returncode == 0, result.stdout + result.stderr
    return yaml.safe_load((run / target).read_text())


def test_default_experiment_is_the_laptop_run_with_the_frozen_alignment(tmp_path):
    config = effective_config(tmp_path, "default")
    assert config["sets"]["max_segments"] == LAPTOP_SUBSETS
    assert config["paraphrase"]["min_count"] == 1
    assert config["alignment"]["frozen"] == FROZEN
    assert {k: config["tuning"][k] for k in ("replicates", "restarts", "max_iterations")} == {
        "replicates": 3, "restarts": 10, "max_iterations": 10}
    assert config["tuning"]["conditions"] == FIG5_10_CONDITIONS


def test_paper_is_the_full_split_with_the_exact_pivot_and_moses_mert(tmp_path):
    config = effective_config(tmp_path, "paper", ROOT / "config" / "paper.yaml")
    assert config["sets"]["max_segments"] == WHOLE_SETS
    assert (config["paraphrase"]["min_count"], config["paraphrase"]["min_probability"]) == (0, 0)
    assert config["paraphrase"]["phrases_from"] == ["tune", "paratune"]  # exact for every rule
    tuning = config["tuning"]
    assert (tuning["optimizer"], tuning["metric"], tuning["restarts"], tuning["max_iterations"],
            tuning["replicates"]) == ("mert", "bleu", 20, 25, 3)
    assert tuning["conditions"] == FIG5_10_CONDITIONS
    assert config["alignment"]["frozen"] == FROZEN
    # overlaid on the default experiment it means the same
    overlaid = tmp_path / "overlaid"
    overlaid.mkdir()
    assert effective_config(overlaid, "paper", ROOT / "config" / "config.yaml",
                            ROOT / "config" / "paper.yaml") == config


def test_the_ladder_rung_pivots_through_five_english_versions_with_its_own_lms(tmp_path):
    """config/ladder-es-english.yaml overlays the default experiment: the MT system as it is,
    the paraphraser pivoted through every English version with LMs of its own, leaked LM lines
    left out; the plan aligns the four new pairs and estimates the paraphraser's LMs."""
    ladder = ROOT / "config" / "ladder-es-english.yaml"
    config = effective_config(tmp_path, "ladder-es-english", ROOT / "config" / "config.yaml",
                              ladder)
    (tmp_path / "default").mkdir()
    default = effective_config(tmp_path / "default", "default")
    assert [(p["source"], p["target"]) for p in config["paraphrase"]["pivots"]] == [
        ("es", "kjv"), ("es", "web"), ("es", "dar"), ("es", "ylt"), ("es", "bbe")]
    assert config["paraphrase"]["language_models"] == "pivots"
    assert config["lm"]["leaked_lines"] == "drop"
    assert {k: config[k] for k in ("corpus", "sets", "decoder")} == {
        k: default[k] for k in ("corpus", "sets", "decoder")}
    # the same alignment settings, and the four new pairs' frozen alignments replayed
    frozen = config["alignment"].pop("frozen_pivots")
    assert default["alignment"].pop("frozen_pivots") == {}
    assert config["alignment"] == default["alignment"]
    assert frozen == {f"es-{v}": f"resources/alignment/bible-es-{v}.parquet"
                      for v in ("web", "dar", "ylt", "bbe")}
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(ladder),
                     "--directory", str(tmp_path), "--", "reference_quality")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    # the four new pairs are tokenised and their frozen alignments replayed, not aligned again
    tokenised = re.findall(r"output: results/ladder-es-english/pivots/(es-\w+)/tokenized/",
                           plan.stdout)
    assert sorted(set(tokenised)) == ["es-bbe", "es-dar", "es-web", "es-ylt"]
    assert "rule align_corpus:" not in plan.stdout
    [joined] = [job for job in re.split(r"^(?=rule \w+:$)", plan.stdout, flags=re.M)
                if job.startswith("rule pivot_language:")]
    assert all(path in joined for path in frozen.values())
    assert "rule estimate_paraphraser_lm:" in plan.stdout


@pytest.mark.parametrize("own_lms", ["ladder-es-english", "ladder-languages-english"])
def test_a_rung_with_shared_lms_differs_only_in_the_paraphrasers_lms(tmp_path, own_lms):
    """config/<rung>-shared-lms.yaml: the rung's pivots and replayed alignments, the
    paraphraser decoding with the MT system's LMs (no LMs of its own)."""
    shared_lms = f"{own_lms}-shared-lms"
    rungs = {}
    for name in (own_lms, shared_lms):
        (tmp_path / name).mkdir()
        rungs[name] = effective_config(tmp_path / name, name, ROOT / "config" / "config.yaml",
                                       ROOT / "config" / f"{name}.yaml")
    own, shared = rungs[own_lms], rungs[shared_lms]
    assert shared["paraphrase"].pop("language_models", "shared") == "shared"
    assert own["paraphrase"].pop("language_models") == "pivots"
    # the rung with its own LMs may widen the bias grid for the grid search
    assert set(shared["paraphrase"].pop("biases")) <= set(own["paraphrase"].pop("biases"))
    assert shared["paraphrase"] == own["paraphrase"]
    assert shared["alignment"] == own["alignment"]
    # the rung with its own LMs may add 1H+kT (Makefile's LADDER_TARGETED); 1H+kP are shared
    own_conditions = own["tuning"].pop("conditions")
    assert [c for c in own_conditions if not Condition.parse(c).targeted] == \
        shared["tuning"].pop("conditions")
    assert {k: shared[k] for k in ("corpus", "sets", "decoder", "tuning")} == {
        k: own[k] for k in ("corpus", "sets", "decoder", "tuning")}
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"),
                     str(ROOT / "config" / f"{shared_lms}.yaml"), "--directory",
                     str(tmp_path / shared_lms), "--", "reference_quality")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "rule align_corpus:" not in plan.stdout
    assert "rule estimate_paraphraser_lm:" not in plan.stdout


def test_the_es_english_rung_with_the_identity_feature_tunes_it_on_the_5_percent_bias(tmp_path):
    """config/ladder-es-english-identity.yaml: the es-english rung's pivots, LMs and alignments,
    with φ_ident, and the paraphraser tuned on the 5 % bias's grammar as
    config/identity-feature.yaml tunes it on the default grammar."""
    rungs = {}
    for name in ("ladder-es-english", "ladder-es-english-identity", "identity-feature"):
        (tmp_path / name).mkdir()
        rungs[name] = effective_config(tmp_path / name, name, ROOT / "config" / "config.yaml",
                                       ROOT / "config" / f"{name}.yaml")
    own, identity = rungs["ladder-es-english"], rungs["ladder-es-english-identity"]
    assert identity["paraphrase"].pop("identity_feature") is True
    assert own["paraphrase"].pop("identity_feature") is False
    assert identity["paraphrase"].pop("biases") == [0, 0.05, 0.25]
    assert own["paraphrase"].pop("biases") == [0, 0.25]
    assert identity["paraphrase"] == own["paraphrase"]
    assert identity["tuning"].pop("paraphraser_bias") == 0.05
    assert own["tuning"].pop("paraphraser_bias") == 0
    assert identity["tuning"] == own["tuning"]
    assert rungs["identity-feature"]["tuning"]["paraphraser_bias"] == 0.05
    assert {k: identity[k] for k in ("corpus", "sets", "decoder", "alignment", "lm")} == {
        k: own[k] for k in ("corpus", "sets", "decoder", "alignment", "lm")}
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"),
                     str(ROOT / "config" / "ladder-es-english-identity.yaml"), "--directory",
                     str(tmp_path / "ladder-es-english-identity"), "--", "reference_quality")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    [tuned] = [job for job in re.split(r"^(?=rule \w+:$)", plan.stdout, flags=re.M)
               if job.startswith("rule tune_paraphraser:")]
    assert "paraphrase/bias0.05.parquet" in tuned and "paraphrase/lm/3gram" in tuned, tuned
    assert "rule estimate_paraphraser_lm:" in plan.stdout


def test_the_languages_rung_pivots_five_languages_with_the_kjv(tmp_path):
    """config/ladder-languages-kjv.yaml: Spanish (the MT grammar) and the four foreign Bibles,
    each with the KJV; the paraphraser shares the MT system's LMs; the plan tokenises each
    foreign Bible from the foreign Bibles' table, replays its shipped alignment and extracts its
    own grammar."""
    rung = ROOT / "config" / "ladder-languages-kjv.yaml"
    config = effective_config(tmp_path, "ladder-languages-kjv", ROOT / "config" / "config.yaml",
                              rung)
    assert [(p["source"], p["target"]) for p in config["paraphrase"]["pivots"]] == [
        (language, "kjv") for language in ("es", "fr", "it", "de", "ru")]
    assert config["paraphrase"].get("language_models", "shared") == "shared"
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(rung),
                     "--directory", str(tmp_path), "--", "reference_quality")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    bitexts = [job for job in jobs if re.match(r"(?:local)?rule pivot_bitext:", job)]
    assert len(bitexts) == 4
    assert all("resources/bible/foreign_bibles.parquet" in job for job in bitexts)
    assert "rule align_corpus:" not in plan.stdout  # the shipped alignments are replayed
    [joined] = [job for job in jobs if re.match(r"(?:local)?rule pivot_language:", job)
                and "pivot/fr" in job]
    assert "resources/alignment/bible-fr-kjv.parquet" in joined
    extracted = re.findall(r"output: results/ladder-languages-kjv/pivot/(\w+)/grammar/"
                           r"bilingual.parquet", plan.stdout)
    assert sorted(set(extracted)) == ["de", "fr", "it", "ru"]  # es: the MT grammar
    assert "rule estimate_paraphraser_lm:" not in plan.stdout


def test_the_languages_english_rung_pivots_two_languages_with_five_englishes(tmp_path):
    """config/ladder-languages-english.yaml: Spanish and French, each with the five English
    versions, the paraphraser with its own LMs; each language's grammar is extracted from its
    five pivot bitexts (Spanish's KJV pair is the MT bitext), every alignment replayed."""
    rung = ROOT / "config" / "ladder-languages-english.yaml"
    config = effective_config(tmp_path, "ladder-languages-english",
                              ROOT / "config" / "config.yaml", rung)
    versions = ("kjv", "web", "dar", "ylt", "bbe")
    assert [(p["source"], p["target"]) for p in config["paraphrase"]["pivots"]] == [
        (language, version) for language in ("es", "fr") for version in versions]
    assert config["paraphrase"]["language_models"] == "pivots"
    assert config["lm"]["leaked_lines"] == "drop"
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(rung),
                     "--directory", str(tmp_path), "--", "reference_quality")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "rule align_corpus:" not in plan.stdout  # the shipped alignments are replayed
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    for language in ("es", "fr"):
        [joined] = [job for job in jobs if re.match(r"(?:local)?rule pivot_language:", job)
                    and f"pivot/{language}" in job]
        pairs = [f"{language}-{v}" for v in versions if (language, v) != ("es", "kjv")]
        assert all(f"resources/alignment/bible-{pair}.parquet" in joined for pair in pairs)
    extracted = re.findall(r"output: results/ladder-languages-english/pivot/(\w+)/grammar/"
                           r"bilingual.parquet", plan.stdout)
    assert sorted(set(extracted)) == ["es", "fr"]
    assert "rule estimate_paraphraser_lm:" in plan.stdout


def test_make_ladder_runs_every_rung_then_writes_the_ladder_page():
    """`make ladder` runs the default experiment, the experiments it names and every shipped
    rung (config/ladder-*.yaml), each with a shipped config, then `circle ladder` over all of
    them, the default first."""
    outside_make = {k: v for k, v in os.environ.items()  # `make test` runs this test
                    if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    planned = subprocess.run(["make", "--no-print-directory", "-n", "ladder"], cwd=ROOT,
                             capture_output=True, text=True, env=outside_make)
    assert planned.returncode == 0, planned.stderr
    page = planned.stdout.strip().splitlines()[-1].split()
    assert page[:3] == [".venv/bin/circle", "ladder", "results/default"]
    experiments = [path.removeprefix("results/") for path in page[3:]]
    ran = [name for loop in re.findall(r"^for \w+ in ([^;]+);", planned.stdout, flags=re.M)
           for name in loop.split()]
    assert ran == experiments  # each experiment of the page is run first, in its order
    rungs = sorted(path.stem for path in (ROOT / "config").glob("ladder-*.yaml"))
    assert sorted(e for e in experiments if e.startswith("ladder-")) == rungs
    assert all((ROOT / "config" / f"{experiment}.yaml").is_file() for experiment in experiments)
    default = re.search(r"^\.venv/bin/snakemake --cores \d+$", planned.stdout, flags=re.M)
    assert default and default.start() < planned.stdout.index("for ")  # the default first
    # the rungs that also run 1H+kT and the grid search are rungs whose configs tune 1H+kT
    [targeted] = re.findall(r'^\s*case " ([^"]+) " in \*" \$rung "\*\) '
                            r'targets="\$targets targeted_tuning grid_search";; esac;',
                            planned.stdout, flags=re.M)
    assert targeted.split() == ["ladder-languages-english"]
    conditions = {rung: yaml.safe_load((ROOT / "config" / f"{rung}.yaml").read_text(
        encoding="utf-8")).get("tuning", {}).get("conditions", []) for rung in rungs}
    assert targeted.split() == [rung for rung in rungs if any(
        Condition.parse(name).targeted for name in conditions[rung])]  # and only they
    for rung in targeted.split():
        assert {"1H+1T", "1H+3T"} <= set(conditions[rung])


@pytest.mark.parametrize(("experiment", "bias", "identity"),
                         [("samt-paraphraser", 0, False), ("samt-identity", 0.05, True),
                          ("samt-equal-pruning", 0, False)])
def test_the_samt_paraphrasers_bias_the_collapsed_labelled_grammar(tmp_path, experiment, bias,
                                                                   identity):
    """config/samt-paraphraser.yaml, config/samt-identity.yaml and config/samt-equal-pruning.yaml
    overlay the default experiment under their own names: the labelled stages built from its
    own training bitext, the paraphrase grammar biased from the labelled grammar collapsed to X
    (at 5 % with φ_ident in samt-identity; pruned by count only, as the Hiero pivot is, in
    samt-equal-pruning) and the paraphraser tuned on it, no Hiero pivot, 1H beside 1H+1P and
    1H+3P."""
    overlay = ROOT / "config" / f"{experiment}.yaml"
    config = effective_config(tmp_path, experiment, ROOT / "config" / "config.yaml", overlay)
    assert config["samt"]["paraphraser"] is True
    pruning = [config["samt"][key] for key in ("min_count", "min_probability", "top_paraphrases")]
    if experiment == "samt-equal-pruning":
        assert pruning == [config["paraphrase"]["min_count"], 0, 0]
        assert config["paraphrase"]["min_probability"] == 0
    else:
        assert pruning == [1, 0.01, 20]  # the draft's thresholds (values circle chose)
    assert config["paraphrase"]["identity_feature"] is identity
    assert config["tuning"]["paraphraser_bias"] == bias
    assert config["tuning"]["conditions"] == ["1H", "1H+1P", "1H+3P"]
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(overlay),
                     "--directory", str(tmp_path), "--", "samt_grammars", "reference_sparsity")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    [biasing] = [job for job in jobs if re.match(r"(?:local)?rule bias_grammar:", job)]
    assert f"input: results/{experiment}/samt/collapsed/part0.parquet, " \
           f"results/{experiment}/samt/collapsed/self_paraphrase.parquet" in biasing
    [tuning] = [job for job in jobs if re.match(r"(?:local)?rule tune_paraphraser:", job)]
    assert f"results/{experiment}/paraphrase/bias{bias}.parquet" in tuning
    for stage in ("parse_training", "extract_labelled_grammar", "pivot_labelled_grammar",
                  "collapse_labelled_grammar"):
        assert f"rule {stage}:" in plan.stdout
    assert "rule prepare_pivot:" not in plan.stdout and "rule pivot_part:" not in plan.stdout


def test_samt_labelled_decodes_the_labelled_grammar_as_pivoted(tmp_path):
    """config/samt-labelled.yaml: the paraphraser's grammar of bias 0 is the labelled pivot's
    output itself, decoded with labels; nothing is collapsed to X, no Hiero pivot."""
    overlay = ROOT / "config" / "samt-labelled.yaml"
    config = effective_config(tmp_path, "samt-labelled", ROOT / "config" / "config.yaml",
                              overlay)
    assert config["samt"]["decoding"] == "labelled" and config["paraphrase"]["biases"] == [0]
    assert config["tuning"]["conditions"] == ["1H", "1H+1P", "1H+3P"]
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(overlay),
                     "--directory", str(tmp_path), "--", "reference_sparsity")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    [biasing] = [job for job in jobs if re.match(r"(?:local)?rule bias_grammar:", job)]
    assert "input: results/samt-labelled/samt/paraphrase/part0.parquet, " \
           "results/samt-labelled/samt/paraphrase/self_paraphrase.parquet" in biasing
    [tuning] = [job for job in jobs if re.match(r"(?:local)?rule tune_paraphraser:", job)]
    assert "results/samt-labelled/paraphrase/bias0.parquet" in tuning
    for absent in ("collapse_labelled_grammar", "prepare_pivot", "pivot_part"):
        assert f"rule {absent}:" not in plan.stdout


@pytest.mark.parametrize(("experiment", "identity"), [("identity-feature", True),
                                                    ("paraphraser-bias05", False)])
def test_the_identity_feature_pair_tunes_the_paraphraser_on_the_5_percent_bias(
        tmp_path, experiment, identity):
    """config/identity-feature.yaml and its control config/paraphraser-bias05.yaml overlay the
    default experiment under their own names: the paraphraser tuned on the 5 % bias's grammar,
    with φ_ident or without it, and that paraphraser making the untargeted references."""
    overlay = ROOT / "config" / f"{experiment}.yaml"
    config = effective_config(tmp_path, experiment, ROOT / "config" / "config.yaml", overlay)
    assert config["paraphrase"]["identity_feature"] is identity
    assert config["tuning"]["paraphraser_bias"] == 0.05
    assert config["tuning"]["conditions"] == ["1H", "1H+1P", "1H+3P", "1H+1T", "1H+3T"]
    assert config["sets"]["max_segments"] == LAPTOP_SUBSETS
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(overlay),
                     "--directory", str(tmp_path))
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    [tuning] = [job for job in jobs if re.match(r"(?:local)?rule tune_paraphraser:", job)]
    assert f"results/{experiment}/paraphrase/bias0.05.parquet" in tuning
    assert f"output: results/{experiment}/weights/paraphraser-bias0.05.txt" in tuning
    [references] = [job for job in jobs if re.match(r"(?:local)?rule paraphrase_references:", job)]
    assert f"results/{experiment}/weights/paraphraser-bias0.05.txt" in references
    assert f"output: results/{experiment}/paraphrase/untargeted-bias0.05/tune.nbest.parquet" \
        in references


def test_the_oov_paraphrase_system_decodes_and_tunes_on_the_augmented_grammars(tmp_path):
    """config/oov-paraphrases.yaml overlays the default experiment under its own name: the
    default's corpus, alignment and sets, 1H and 4H, the augmented grammars in every decode
    and tuning run, and an untuned weight for the paraphrase feature."""
    overlay = ROOT / "config" / "oov-paraphrases.yaml"
    config = effective_config(tmp_path, "oov-paraphrases", ROOT / "config" / "config.yaml",
                              overlay)
    (tmp_path / "default").mkdir()
    default = effective_config(tmp_path / "default", "default")
    assert config["oov_paraphrase"]["translate"] is True
    assert default["oov_paraphrase"]["translate"] is False
    assert {k: config[k] for k in ("corpus", "alignment", "sets", "seed")} == {
        k: default[k] for k in ("corpus", "alignment", "sets", "seed")}
    weights = config["decoder"]["translation_weights"]
    assert weights == {**default["decoder"]["translation_weights"],
                       "log_paraphrase_similarity": 0.2}
    assert config["tuning"]["conditions"] == ["1H", "4H"]
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"), str(overlay),
                     "--directory", str(tmp_path), "--",
                     "results/oov-paraphrases/report/fig4_3.md")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=rule \w+:$)", plan.stdout, flags=re.M)
    translating = [job for job in jobs
                   if re.match(r"rule (decode_shard|tune_translation):", job)]
    # untuned tune and test, the 6 runs' test sets (one shard each), the 6 runs
    assert len(translating) == 2 + 6 + 6
    assert all("results/oov-paraphrases/grammar/oov_paraphrased/" in job
               and "grammar/filtered/" not in job.split("output:")[0] for job in translating)
    assert "rule augment_grammar:" in plan.stdout and "rule tune_paraphraser:" not in plan.stdout


@pytest.mark.parametrize("size, segments", [("10k", 10_000), ("20k", 20_000)])
def test_the_training_size_systems_are_the_default_on_a_sample_with_its_alignment(
        tmp_path, size, segments):
    """config/oov-10k.yaml and config/oov-20k.yaml are the default experiment on a seeded
    sample of the training verses (and only its 1H and 4H in the default target), each
    replaying the frozen alignment of its sample; the verses left out are monolingual text of
    the OOV paraphrases."""
    experiment = f"oov-{size}"
    config = effective_config(tmp_path, experiment, ROOT / "config" / "config.yaml",
                              ROOT / "config" / f"{experiment}.yaml")
    (tmp_path / "default").mkdir()
    default = effective_config(tmp_path / "default", "default",
                               ROOT / "config" / "config.yaml")
    frozen = f"resources/alignment/bible-es-kjv-{size}.parquet"
    assert config["corpus"] == {**default["corpus"], "train_segments": segments}
    assert config["alignment"] == {**default["alignment"], "frozen": frozen}
    assert default["corpus"]["train_segments"] is None
    assert config["tuning"] == {**default["tuning"], "conditions": ["1H", "4H"]}
    same = [key for key in default if key not in ("experiment", "corpus", "alignment", "tuning")]
    assert {key: config[key] for key in same} == {key: default[key] for key in same}
    plan = snakemake("-n", "--configfile", str(ROOT / "config" / "config.yaml"),
                     str(ROOT / "config" / f"{experiment}.yaml"), "--directory", str(tmp_path),
                     "--", f"results/{experiment}/oov/paraphrases/test.parquet")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "rule align_corpus:" not in plan.stdout
    assert f"input: results/{experiment}/tokenized/train.parquet, {frozen}" in plan.stdout
    [search] = [job for job in re.split(r"^(?=rule \w+:$)", plan.stdout, flags=re.M)
                if job.startswith("rule oov_paraphrases:")]
    assert f"results/{experiment}/tokenized/train_unused.parquet" in search


def test_the_tiny_test_config_replays_its_frozen_alignment_on_whole_sets(tmp_path):
    config = effective_config(tmp_path, "tiny", tiny_config(tmp_path))
    assert config["alignment"]["frozen"] == str(ROOT / "tests/data/tiny/alignment.parquet")
    assert config["sets"]["max_segments"] == WHOLE_SETS
    assert (config["tuning"]["replicates"], config["tuning"]["restarts"],
            config["paraphrase"]["min_count"]) == (1, 2, 0)


def test_six_replicates_extend_an_experiment_by_three_more_of_the_same_runs(tmp_path):
    """config/six-replicates.yaml over the identity-feature experiment: its name, paraphraser
    and k-best stay (so its results directory and paraphrases are reused), 1H, 1H+1P and 1H+3P
    get six replicates, and replicates 0-2 keep their seeds (they are the same runs)."""
    three = effective_config(tmp_path, "identity-feature", ROOT / "config" / "config.yaml",
                             ROOT / "config" / "identity-feature.yaml")
    (tmp_path / "six").mkdir()
    six = effective_config(tmp_path / "six", "identity-feature", ROOT / "config" / "config.yaml",
                           ROOT / "config" / "identity-feature.yaml",
                           ROOT / "config" / "six-replicates.yaml")
    plans = {"three": Plan(three), "six": Plan(six)}
    runs = {name: {(run.name, plan.tuning_seed(run.name))
                   for run in plan.tuning_runs() if not run.condition.targeted}
            for name, plan in plans.items()}
    assert len(runs["six"]) == 2 * len(runs["three"]) == 18
    assert runs["three"] < runs["six"]
    assert (six["tuning"].pop("replicates"), three["tuning"].pop("replicates")) == (6, 3)
    assert six["tuning"].pop("conditions") == ["1H", "1H+1P", "1H+3P"]
    assert three["tuning"].pop("conditions") == ["1H", "1H+1P", "1H+3P", "1H+1T", "1H+3T"]
    assert six["tuning"] == three["tuning"] and six["paraphrase"] == three["paraphrase"]


def test_an_overlay_named_after_the_default_config_extends_it(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("tuning: {replicates: 5}\n")
    config = effective_config(tmp_path, "default", ROOT / "config" / "config.yaml", overlay)
    assert config["tuning"]["replicates"] == 5
    assert config["sets"]["max_segments"] == LAPTOP_SUBSETS


def test_five_gram_reranking_is_the_default_experiment_with_reranked_nbest_lists(tmp_path):
    """config/five-gram-reranking.yaml: the default experiment with the MT system's and the
    paraphraser's n-best lists reranked by the 5-gram LM, under its own name; every other
    setting the default's."""
    default = effective_config(tmp_path, "default")
    reranked = effective_config(tmp_path, "five-gram-reranking", ROOT / "config" / "config.yaml",
                                ROOT / "config" / "five-gram-reranking.yaml")
    assert (default["lm"].pop("rerank_nbest"), reranked["lm"].pop("rerank_nbest")) == (False,
                                                                                        True)
    assert reranked["lm"] == default["lm"] and reranked["lm"]["reranking_order"] == 5
    assert reranked["tuning"] == default["tuning"]
    assert (reranked.pop("experiment"), default.pop("experiment")) == ("five-gram-reranking",
                                                                      "default")
    assert {k: v for k, v in reranked.items() if k not in ("lm", "tuning")} == {
        k: v for k, v in default.items() if k not in ("lm", "tuning")}


def test_every_shipped_config_is_covered():
    shipped = {p.relative_to(ROOT).as_posix() for p in
               [*(ROOT / "config").glob("*.yaml"), *(ROOT / "tests").rglob("config.yaml")]}
    assert shipped == {"config/config.yaml", "config/paper.yaml", "config/ladder-es-english.yaml",
                       "config/ladder-languages-kjv.yaml", "config/oov-paraphrases.yaml",
                       "config/oov-10k.yaml", "config/oov-20k.yaml",
                       "config/samt-paraphraser.yaml", "config/identity-feature.yaml",
                       "config/paraphraser-bias05.yaml", "config/samt-identity.yaml",
                       "config/samt-labelled.yaml", "config/ladder-languages-english.yaml",
                       "config/ladder-es-english-shared-lms.yaml",
                       "config/ladder-languages-english-shared-lms.yaml",
                       "config/ladder-es-english-identity.yaml",
                       "config/six-replicates.yaml", "config/powered.yaml",
                       "config/powered-pilot.yaml", "config/powered-languages-english.yaml",
                       "config/powered-identity.yaml", "config/one-machine.yaml",
                       "config/identity-ibleu.yaml", "config/samt-equal-pruning.yaml",
                       "config/five-gram-reranking.yaml", "tests/data/tiny/config.yaml"}


def test_the_effective_config_is_rewritten_only_when_the_config_changes(tmp_path):
    effective_config(tmp_path, "default")
    again = snakemake("--cores", "1", "-n", "results/default/config.yaml", cwd=tmp_path)
    assert "Nothing to be done" in again.stdout + again.stderr
    changed = snakemake("--cores", "1", "results/default/config.yaml", "--config", "seed=14",
                        cwd=tmp_path)
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert yaml.safe_load((tmp_path / "results/default/config.yaml").read_text())["seed"] == 14


def test_the_default_dry_run_replays_the_frozen_alignment():
    result = snakemake("-n", "--forceall")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule align_corpus:" not in result.stdout and "rule extract_grammar:" in result.stdout
    assert f"input: results/default/tokenized/train.parquet, {FROZEN}" in result.stdout


def test_refreeze_alignment_writes_eflomals_alignment_as_the_frozen_one(tmp_path):
    frozen = tmp_path / "frozen" / "tiny.parquet"
    config = tiny_config(tmp_path, **{"alignment.frozen": str(frozen)})
    result = snakemake("--cores", "1", "--configfile", str(config), "--directory", str(tmp_path),
                       "refreeze_alignment")
    assert result.returncode == 0, result.stdout + result.stderr
    assert frozen.read_bytes() == (tmp_path / "results/tiny/align/eflomal.parquet").read_bytes()
    bitext = read_table(tmp_path / "results/tiny/tokenized/train.parquet", BITEXT)
    assert read_metadata(frozen)[BITEXT_DIGEST] == bitext_digest(bitext)
    plan = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                     "results/tiny/grammar/bilingual.parquet")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "rule align_corpus:" not in plan.stdout
    assert f"input: results/tiny/tokenized/train.parquet, {frozen}" in plan.stdout


def documented_target_commands() -> list[tuple[str, list[str]]]:
    """The commands that name a target beside --configfile my.yaml in the own-data sections
    of config/README.md and docs/usage.md, split into words."""
    commands = []
    for path, heading in (("config/README.md", "## Your own corpus"),
                          ("docs/usage.md", "## Using your own data")):
        section = (ROOT / path).read_text().split(heading, 1)[1].split("\n## ", 1)[0]
        for block in re.findall(r"```[a-z]*\n(.*?)```", section, flags=re.S):
            commands += [(path, shlex.split(line)) for line in block.splitlines()
                         if line.startswith("snakemake ") and "--configfile my.yaml" in line]
    return commands


def test_the_documented_configfile_forms_reach_the_target(tmp_path):
    """`--configfile my.yaml thrax_grammars` reads the target as a second config file; the
    forms the own-data sections document (a target after `--`, or before --configfile) plan
    the target's jobs, and only those."""
    commands = documented_target_commands()
    assert {path for path, _ in commands} == {"config/README.md", "docs/usage.md"}
    assert any(words[-2] == "--" for _, words in commands)  # the `--` form is documented
    config = str(tiny_config(tmp_path))
    for path, words in commands:
        assert words[:3] == ["snakemake", "--cores", "2"] and "thrax_grammars" in words, path
        args = [config if word == "my.yaml" else word for word in words[1:]]
        plan = snakemake("-n", "--directory", str(tmp_path), *args)  # the documented words last
        assert plan.returncode == 0, f"{path}: {words}\n{plan.stdout}{plan.stderr}"
        assert "rule export_grammar:" in plan.stdout and "rule thrax_grammars:" in plan.stdout
        assert "rule tune_translation:" not in plan.stdout  # not the default target
    trap = snakemake("-n", "--directory", str(tmp_path), "--cores", "2", "--configfile", config,
                     "thrax_grammars")
    assert trap.returncode != 0  # the form the documentation warns about

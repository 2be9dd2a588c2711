"""A tuning run resolved once against the default config: what its condition leaves open is
the config's, its inputs and params are built from that one description."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from circle.core import layout
from circle.decoder.model import DecoderSettings
from circle.experiments.conditions import Condition, TuningRun, run_seed
from circle.experiments.mt_tuning import RunSettings, run_tuning_settings
from circle.paraphrase.config import ParaphraserConfig
from circle.paraphrase.targeted import TargetedSettings
from circle.pipeline.plan import Plan
from circle.pipeline.runs import augmented_weights, resolve_run

ROOT = Path(__file__).resolve().parents[2]
DECODER = {"pop_limit": 100, "span_limit": 10, "options_limit": 20, "k": 100}


def default_config(**changes) -> dict:
    """config/config.yaml with the schema's defaults, then ``changes`` (section -> keys)."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    validate(config, schema=str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    for section, values in changes.items():
        config[section] = {**config[section], **values}
    return config


def test_a_plain_run_takes_the_config_metric_and_its_own_seed_and_reads_no_extra_table():
    config = default_config()
    run = resolve_run("2H", "1", config)
    assert (run.name, run.start, run.metric) == ("2H.rep1", "untuned-translation", "bleu")
    assert run.seed == run_seed(config["seed"], "2H.rep1")
    assert run.paraphrase_bias is None and run.paraphraser is None
    assert run.inputs("default", "lm.binary") == {
        "evalset": "results/default/sets/tune.parquet",
        "grammar": "results/default/grammar/filtered/tune.parquet",
        "lm": "lm.binary", "weights": "results/default/weights/untuned-translation.txt"}
    assert "conditions" not in run.tuning and "replicates" not in run.tuning
    assert run.oov_variant is None


def test_with_oov_paraphrases_translating_a_run_tunes_on_the_augmented_grammar():
    config = default_config(oov_paraphrase={"translate": True})
    for name in ("1H", "1H+2P", "1H+1T"):
        run = resolve_run(name, 0, config)
        assert run.oov_variant == ""
        assert run.inputs("x", "lm")["grammar"] == (
            "results/x/grammar/oov_paraphrased/tune.parquet")


def test_an_oov_run_tunes_on_the_augmented_grammar_from_its_own_start_weights():
    run = resolve_run("4H_oov", 2, default_config())
    assert run.oov_variant == "" and run.name == "4H_oov.rep2"
    assert run.inputs("x", "lm")["grammar"] == "results/x/grammar/oov_paraphrased/tune.parquet"
    assert run.inputs("x", "lm")["weights"] == "results/x/weights/untuned-translation_oov.txt"
    assert run.seed != resolve_run("4H", 2, default_config()).seed
    variant = resolve_run("4H_oov-split", 2, default_config())
    assert variant.oov_variant == "split"
    assert variant.inputs("x", "lm")["grammar"] == (
        "results/x/grammar/oov_paraphrased-split/tune.parquet")
    assert variant.inputs("x", "lm")["weights"] == (
        "results/x/weights/untuned-translation_oov-split.txt")
    assert variant.seed not in (run.seed, resolve_run("4H", 2, default_config()).seed)


@pytest.mark.parametrize(("weights", "variant"), [
    ("4H_oov.rep0", ""), ("1H_oov_ter.rep3", ""), ("untuned-translation_oov", ""),
    ("4H_oov-split.rep1", "split"), ("4H_oov-stoplist500_ter.rep0", "stoplist500"),
    ("untuned-translation_oov-unigrams", "unigrams"),
    ("4H.rep0", None), ("untuned-translation", None), ("paraphraser-bias0", None),
    ("1H+1P.rep2", None), ("untuned-translation_oov-", None), ("untuned-translation_oovx", None)])
def test_the_weights_of_oov_runs_decode_with_their_variants_augmented_grammar(weights, variant):
    assert augmented_weights(weights) == variant


def test_the_condition_metric_overrides_the_config_one():
    config = default_config(tuning={"metric": "bleu"})
    assert resolve_run("2H_ter", 0, config).metric == "ter"
    assert resolve_run("2H", 0, config).tuning["metric"] == "bleu"


def test_untargeted_paraphrases_come_at_the_config_bias_unless_the_condition_names_one():
    config = default_config(tuning={"paraphraser_bias": 0.1})
    default = resolve_run("1H+2P", 0, config)
    assert default.paraphrase_bias == 0.1
    assert default.inputs("x", "lm")["paraphrases"] == (
        "results/x/paraphrase/untargeted-bias0.1/tune.nbest.parquet")
    own = resolve_run("1H+2P_b0.25_ref3", 0, config)
    assert own.paraphrase_bias == 0.25
    assert own.inputs("x", "lm")["paraphrases"] == (
        "results/x/paraphrase/untargeted-bias0.25/tune.ref3.nbest.parquet")


def test_a_targeted_run_starts_from_its_replicates_1h_and_waits_for_the_grids_choice():
    run = resolve_run("1H+3T", 2, default_config())
    assert run.start == "1H.rep2" and run.paraphraser is None
    assert run.inputs("x", "lm")["weights"] == "results/x/weights/1H.rep2.txt"
    assert "paraphrases" not in run.inputs("x", "lm")


def test_a_configured_point_or_the_conditions_own_paraphraser_replaces_the_grid_choice():
    pointed = resolve_run("1H+1T", 0, default_config(
        grid_search={"point": {"bias": 0.1, "weight": -0.5}}))
    assert pointed.paraphraser == ParaphraserConfig(0.1, -0.5)
    own = resolve_run("1H+1T_b0_w-2", 0, default_config())
    assert own.paraphraser == ParaphraserConfig(0.0, -2.0)


def test_dose_and_lattice_conditions_read_their_own_tables():
    config = default_config()
    assert resolve_run("1H+1X_noise25", 0, config).inputs("x", "lm")["extra"] == (
        "results/x/references/noise25.parquet")
    assert resolve_run("3H+2L", 0, config).inputs("x", "lm")["lattice"] == (
        "results/x/lattice/tune.3H.references.parquet")


def test_the_job_params_are_the_runs_settings_seed_and_iteration_directory():
    config = default_config()
    run = resolve_run("1H+1P", 1, config)
    params = run.to_params("x", DECODER, None)
    assert params == {"settings": DECODER, "tuning": dict(run.tuning), "seed": run.seed,
                      "targeted": None, "iterations": "results/x/tune/1H+1P.rep1.iterations"}


def plain(value) -> bool:
    """Whether ``value`` is made of the builtin values Snakemake records as params."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(plain(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


@pytest.mark.parametrize(("condition", "point"), [
    ("1H+2T", None), ("1H+1T_b0_w-2", ParaphraserConfig(0.0, -2.0)),
    ("1H+2P", None), ("2H_ter", None)])
def test_a_runs_params_are_plain_and_read_back_as_its_typed_settings(condition, point):
    config = default_config(tuning={"replicate_pool": 2})
    plan = Plan(config)
    run = plan.resolve(condition, 2)
    params = plan.tuning_job_params("x", condition, 2)
    assert plain(params)
    settings = RunSettings.from_params(run.run, params)
    assert settings.decoder == DecoderSettings.from_config(config["decoder"])
    assert settings.tuning == run_tuning_settings(run.run, run.tuning, run.seed)
    assert settings.tuning.seed == run_seed(config["seed"], f"{condition}.rep2")
    assert settings.tuning.metric == run.metric
    assert settings.tuning.replicate_pool == (
        0 if run.condition.targeted else 2)
    if not run.condition.targeted:
        assert settings.targeted is None
        return
    assert settings.targeted.point == point == run.paraphraser
    assert settings.targeted.depth == plan.max_paraphrases(targeted=True)
    assert ("choice" in plan.tuning_inputs("x", condition, 2)) == (point is None)


def test_a_configured_point_reaches_the_runs_and_pages_settings_once_parsed():
    plan = Plan(default_config(grid_search={"point": {"bias": 0.1, "weight": -0.5}}))
    assert plan.targeted_point == ParaphraserConfig(0.1, -0.5)
    run = RunSettings.from_params(TuningRun.of("1H+2T", 0),
                                  plan.tuning_job_params("x", "1H+2T", 0))
    assert run.targeted.point == plan.targeted_point
    page = TargetedSettings.from_config(plan.targeted_settings("x", plan.targeted_point))
    assert page.point == plan.targeted_point
    own = plan.tuning_job_params("x", "1H+1T_b0_w-2", 0)["targeted"]["point"]
    assert ParaphraserConfig.from_point(own) == ParaphraserConfig(0.0, -2.0)


def test_a_misspelt_condition_is_refused_with_the_canonical_name():
    with pytest.raises(ValueError, match="spelt '1H\\+1P_b0.5'"):
        resolve_run("1H+1P_b0.50", 0, default_config())


def test_the_decoder_settings_are_the_search_keys_of_the_config_decoder_section():
    decoder = default_config()["decoder"]
    settings = DecoderSettings.from_config(decoder)
    assert (settings.pop_limit, settings.span_limit, settings.options_limit, settings.k) == (
        decoder["pop_limit"], decoder["span_limit"], decoder["options_limit"], decoder["k"])
    assert DecoderSettings.from_config(decoder, k=1, span_limit=None).k == 1
    assert DecoderSettings.from_config({"k": 7, "translation_weights": {}}) == DecoderSettings(k=7)
    with pytest.raises(ValueError, match="pop_limit must be ≥ 1"):
        DecoderSettings.from_config({**decoder, "pop_limit": 0})


def test_every_path_template_lies_under_its_systems_results():
    """The file names the package and the rules share are all templates of one system's
    results (its ``{experiment}`` wildcard), defined once in circle.core.layout."""
    templates = {name: value for name, value in vars(layout).items()
                 if name.isupper() and isinstance(value, str) and "/" in value
                 and name != "RESULTS"}
    assert {"TOKENIZED_TABLE", "LM_BINARY", "PARAPHRASE_GRAMMAR", "EVALUATION_TABLE",
            "WEIGHTS", "DECODE_NBEST"} <= set(templates)
    for name, template in templates.items():
        assert template.startswith(layout.RESULTS + "/"), name


def test_the_rules_run_wildcards_spell_a_tuning_runs_name():
    run = TuningRun(Condition.parse("1H+2P_b0.5"), 3)
    assert layout.RUN.format(condition="1H+2P_b0.5", replicate=3) == run.name
    assert layout.TUNING_ITERATIONS.format(experiment="x", condition="1H", replicate=0) == (
        "results/x/tune/1H.rep0.iterations")


def test_results_name_an_experiments_files_by_the_templates(tmp_path):
    results = layout.Results.of(tmp_path, "tiny")
    assert results.directory == tmp_path / "results" / "tiny"
    assert results.weights("1H.rep0") == tmp_path / layout.WEIGHTS.format(
        experiment="tiny", weights="1H.rep0")
    assert results.lm(4) == tmp_path / "results/tiny/lm/4gram.binary"
    assert results.report("fig4_3.csv") == results.report_directory / "fig4_3.csv"
    assert results.evaluation_conditions("dose/") == (
        tmp_path / "results/tiny/evaluation/dose/conditions.parquet")
    for run in ("1H.rep1", "1H.rep0", "2H.rep0"):
        results.path(layout.TUNING_LOG, run=run).parent.mkdir(parents=True, exist_ok=True)
        results.path(layout.TUNING_LOG, run=run).write_bytes(b"")
    assert [path.name for path in results.files(layout.TUNING_LOG)] == [
        "1H.rep0.parquet", "1H.rep1.parquet", "2H.rep0.parquet"]
    assert [path.name for path in results.files(layout.TUNING_LOG, run="1H.rep*")] == [
        "1H.rep0.parquet", "1H.rep1.parquet"]

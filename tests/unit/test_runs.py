"""A tuning run resolved once against the default config: what its condition leaves open is
the config's, its inputs and params are built from that one description."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from circle.decoder.model import DecoderSettings
from circle.experiments.conditions import run_seed
from circle.paraphrase.config import ParaphraserConfig
from circle.pipeline import runs
from circle.pipeline.runs import augmented_weights, resolve_run

ROOT = Path(__file__).resolve().parents[2]
TARGETED = {"biases": [0.0, 0.1], "point": None, "nbest": 100, "cache": "c"}
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
    assert run.paraphrase_bias is None and run.paraphraser is None and not run.grid_choice
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
    assert run.start == "1H.rep2" and run.grid_choice and run.paraphraser is None
    assert run.inputs("x", "lm")["weights"] == "results/x/weights/1H.rep2.txt"
    assert "paraphrases" not in run.inputs("x", "lm")
    assert run.targeted_params(TARGETED) == TARGETED


def test_a_configured_point_or_the_conditions_own_paraphraser_replaces_the_grid_choice():
    pointed = resolve_run("1H+1T", 0, default_config(
        grid_search={"point": {"bias": 0.1, "weight": -0.5}}))
    assert pointed.paraphraser == ParaphraserConfig(0.1, -0.5) and not pointed.grid_choice
    own = resolve_run("1H+1T_b0_w-2", 0, default_config())
    assert own.paraphraser == ParaphraserConfig(0.0, -2.0) and not own.grid_choice
    assert own.targeted_params(TARGETED)["point"] == {"bias": 0.0, "weight": -2.0}
    assert TARGETED["point"] is None  # the shared settings are not changed


def test_dose_and_lattice_conditions_read_their_own_tables():
    config = default_config()
    assert resolve_run("1H+1X_noise25", 0, config).inputs("x", "lm")["extra"] == (
        "results/x/references/noise25.parquet")
    assert resolve_run("3H+2L", 0, config).inputs("x", "lm")["lattice"] == (
        "results/x/lattice/tune.3H.references.parquet")


def test_the_job_params_are_the_runs_settings_seed_and_iteration_directory():
    config = default_config()
    run = resolve_run("1H+1P", 1, config)
    params = run.job_params("x", DECODER, TARGETED)
    assert params == {"settings": DECODER, "tuning": dict(run.tuning), "seed": run.seed,
                      "targeted": None, "iterations": "results/x/tune/1H+1P.rep1.iterations"}


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
    results (its ``{experiment}`` wildcard), defined once in circle.pipeline.runs."""
    templates = {name: value for name, value in vars(runs).items()
                 if name.isupper() and isinstance(value, str) and "/" in value}
    assert {"TOKENIZED_TABLE", "LM_BINARY", "PARAPHRASE_GRAMMAR", "EVALUATION_TABLE",
            "WEIGHTS", "DECODE_NBEST"} <= set(templates)
    for name, template in templates.items():
        assert template.startswith("results/{experiment}/"), name

"""The configuration checks run when the workflow is built: conditions against the data's
references, untuned weights against the grammars' features."""

import copy
import math
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from circle.core.schemas import (
    GRAMMAR,
    GRAMMAR_OOV_PARAPHRASED,
    IDENTITY_FEATURE,
    PARAPHRASE_GRAMMAR,
    PARAPHRASE_GRAMMAR_IDENT,
    PARAPHRASE_GRAMMAR_LEX_IDENT,
)
from circle.decoder.model import MAX_SEARCH_SIZE, Model
from circle.pipeline.config import (
    config_problems,
    duplicate_key_problems,
    frozen_alignment_problems,
    grammar_schemas,
    own_data_warnings,
    schema_problems,
    thesis_numbers,
    with_schema_defaults,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def checked(config: dict) -> list[str]:
    """The problems of ``config`` after the schema has filled in its defaults."""
    validate(config, schema=str(SCHEMA))
    return config_problems(config)


def readme_example() -> dict:
    text = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    own_data = text[text.index("## Your own corpus"):]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", own_data, re.DOTALL).group(1))


def tiny() -> dict:
    return yaml.safe_load((ROOT / "tests" / "data" / "tiny" / "config.yaml").read_text())


@pytest.mark.parametrize("config", [
    lambda: yaml.safe_load((ROOT / "config" / "config.yaml").read_text()),
    lambda: yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()),
    tiny, readme_example,
], ids=["default", "paper", "tiny", "readme-own-data"])
def test_shipped_configs_have_no_problem(config):
    assert checked(config()) == []


def with_change(config: dict, dotted: str, value) -> dict:
    node = config
    *parents, leaf = dotted.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return config


TRANSLATION = {"log_p_e_given_f": 0.2, "log_p_f_given_e": 0.2, "log_lex_e_given_f": 0.2,
               "log_lex_f_given_e": 0.2, "lm": 0.5, "word_penalty": -0.5,
               "phrase_penalty": 0.0, "glue": 0.0, "oov": -10.0}


@pytest.mark.parametrize("dotted, value, problem", [
    ("tuning.conditions", ["2H", "1H+1P"],
     "tuning.conditions ['2H', '1H+1P'] lacks 1H, the baseline every condition is compared with"),
    ("tuning.conditions", ["1H", "7H"],
     "tuning.conditions: 7H needs 7 references but the tune set has 2 "
     "(corpus.files.tune.references)"),
    ("corpus.files.paratune.references", ["paratune.ref0.txt"],
     "the paraphraser-tuning set has 1 reference (corpus.files.paratune.references); "
     "paraphraser tuning needs 2 (one is its input)"),
    ("decoder.translation_weights", {**TRANSLATION, "lm": math.nan},
     "decoder.translation_weights: weight 'lm' is not a finite number: nan"),
    ("decoder.translation_weights", {**TRANSLATION, "oov": -math.inf},
     "decoder.translation_weights: weight 'oov' is not a finite number: -inf"),
    ("decoder.translation_weights",
     {**{k: v for k, v in TRANSLATION.items() if k != "lm"}, "lmm": 0.5},
     "decoder.translation_weights: weights do not fit the features"),
    ("paraphrase.lexical_feature", True,
     "decoder.paraphrase_weights: weights do not fit the features"),
    ("tuning.bounds", {"lgo_*": [0, None], "lm": [0, None]},
     "tuning.bounds.lgo_*: the pattern matches no feature; the features are ['glue', 'lm', "
     "'log_lex_e_given_f'"),
    ("tuning.bounds", {"log_*": [0, None], "log_p_e_given_f": [-1, 1]},
     "tuning.bounds.log_p_e_given_f: every feature the pattern matches, ['log_p_e_given_f'], "
     "is bounded by an earlier pattern (the first matching one wins)"),
    ("tuning.bounds", {"log_*": [1, 0]},
     "tuning.bounds.log_*: [1, 0] is not an interval [lower, upper] that contains 0"),
    ("tuning.bounds", {"log_*": [None, -1]},
     "tuning.bounds.log_*: [None, -1] is not an interval [lower, upper] that contains 0"),
    ("tuning.conditions", ["1H", "1H+1P_b0.3"],
     "tuning.conditions: 1H+1P_b0.3: bias 0.3 is not one of paraphrase.biases [0.0, 0.5]"),
    ("tuning.conditions", ["1H", "1H+1P_b0.50"],
     "tuning.conditions: tuning condition '1H+1P_b0.50' is spelt '1H+1P_b0.5'"),
    ("tuning.conditions", ["1H", "1H_t1"],
     "tuning.conditions: 1H_t1: _t<n> names a tuning set of the held-out system"),
    ("tuning.conditions", ["1H", "2H+1P"],
     "tuning.conditions: unknown tuning condition '2H+1P'"),
], ids=["no-1H", "7H-of-2", "paratune-1-ref", "nan-weight", "inf-weight", "misspelt-weight",
        "lexical-feature-unweighted", "bounds-typo", "bounds-shadowed", "bounds-inverted",
        "bounds-without-0", "bias-not-built", "non-canonical-condition", "heldout-tuning-set",
        "unknown-condition"])
def test_each_infeasible_config_is_named(dotted, value, problem):
    problems = checked(with_change(tiny(), dotted, value))
    assert len(problems) == 1 and problems[0].startswith(problem)


def test_the_condition_suffixes_the_config_readme_names_are_accepted():
    conditions = ["1H", "2H", "1H+1P_b0.5", "1H_ref1", "1H+1P_ref2", "1H_terbleu",
                  "1H+1P_b0.5_ref1_ter", "1H+1T_b0.5_w-1"]
    assert checked(with_change(tiny(), "tuning.conditions", conditions)) == []


@pytest.mark.parametrize("dotted, value, problem", [
    ("experiment", "tiny\n", "config experiment: 'tiny\\n' does not match"),
    ("seed", -5, "config seed: -5 is less than the minimum of 0"),
], ids=["experiment-trailing-newline", "negative-seed"])
def test_a_schema_violation_names_its_key(dotted, value, problem):
    [found] = schema_problems(with_change(tiny(), dotted, value))
    assert found.startswith(problem)


def test_a_key_given_twice_is_named_with_its_file_and_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("experiment: tiny\nseed: 1\ntuning:\n  restarts: 2\n  restarts: 3\n"
                    "seed: 2\n")
    assert sorted(duplicate_key_problems([path])) == [
        f"{path}:5: key 'restarts' given twice in one mapping",
        f"{path}:6: key 'seed' given twice in one mapping"]
    assert duplicate_key_problems([ROOT / "config" / name
                                   for name in ("config.yaml", "paper.yaml")]) == []


def test_the_identity_feature_switch_picks_the_paraphrase_grammar_and_starts_its_weight_at_0():
    off = tiny()
    assert checked(off) == [] and off["paraphrase"]["identity_feature"] is False
    assert grammar_schemas(off)["paraphrase"] == PARAPHRASE_GRAMMAR
    on = with_change(tiny(), "paraphrase.identity_feature", True)
    assert checked(on) == []  # the untuned weights need not name φ_ident
    assert grammar_schemas(on)["paraphrase"] == PARAPHRASE_GRAMMAR_IDENT
    model = Model(PARAPHRASE_GRAMMAR_IDENT.features, on["decoder"]["paraphrase_weights"])
    assert model.weights[model.index[IDENTITY_FEATURE]] == 0.0
    both = with_change(on, "paraphrase.lexical_feature", True)
    assert grammar_schemas(both)["paraphrase"] == PARAPHRASE_GRAMMAR_LEX_IDENT
    weights = {**off["decoder"]["paraphrase_weights"], IDENTITY_FEATURE: 0.0}
    problems = checked(with_change(tiny(), "decoder.paraphrase_weights", weights))
    assert problems == ["decoder.paraphrase_weights: weights do not fit the features "
                        f"{list(model.names[:4] + model.names[5:])}: unknown ['identity'], "
                        "missing []"]


def test_a_misspelt_weight_is_named_with_the_one_it_replaces():
    weights = {**{k: v for k, v in TRANSLATION.items() if k != "lm"}, "lmm": 0.5}
    problems = checked(with_change(tiny(), "decoder.translation_weights", weights))
    assert problems[0].endswith("unknown ['lmm'], missing ['lm']")


def test_bible_references_are_counted_from_the_chosen_columns():
    config = with_change(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()),
                         "corpus.bible.references", ["web", "dar"])
    assert checked(config) == [
        "tuning.conditions: 3H needs 3 references but the tune set has 2 "
        "(corpus.bible.references)",
        "tuning.conditions: 4H needs 4 references but the tune set has 2 "
        "(corpus.bible.references)"]


def schema_defaults(schema: dict, prefix: str = "") -> dict[str, object]:
    """Every key of the schema that has a default, dotted, with that default; objects whose
    default is ``{}`` are not listed themselves, their keys are."""
    found = {}
    for name, spec in schema.get("properties", {}).items():
        key = f"{prefix}{name}"
        if "default" in spec and spec["default"] != {}:
            found[key] = spec["default"]
        if spec.get("type") == "object" and spec.get("default") == {}:
            found |= schema_defaults(spec, f"{key}.")
    return found


def readme_defaults() -> dict[str, tuple[str, str | None]]:
    """The key table of config/README.md: dotted key -> (stated default, stated value of the
    default experiment or None). Rows naming several keys (`a.b` / `c`, `a.{b,c}`) and their
    defaults (`x / y`) are split."""
    text = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Keys"):text.index("## Your own corpus")]
    rows = {}
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        key_cell, default_cell = (cell.strip() for cell in line.split(" | ")[:2])
        keys = []
        for part in re.findall(r"`([^`]+)`", key_cell.lstrip("| ")):
            if "." not in part and keys:  # `a.b` / `c` shares the parent a.
                part = keys[0].rsplit(".", 1)[0] + "." + part
            if braces := re.fullmatch(r"(.*)\{(.*)\}(.*)", part):
                keys += [braces[1] + leaf + braces[3] for leaf in braces[2].split(",")]
            else:
                keys.append(part)
        experiment = re.search(r" \(default experiment: (.*)\)$", default_cell)
        default_cell = default_cell[:experiment.start()] if experiment else default_cell
        defaults = split(default_cell, len(keys))
        values = split(experiment[1], len(keys)) if experiment else [None] * len(keys)
        assert len(defaults) == len(keys) == len(values), line
        rows |= {k: (d, v) for k, d, v in zip(keys, defaults, values, strict=True)}
    return rows


def split(cell: str, keys: int) -> list[str]:
    """The cell's value per key: `x / y` for two keys, or one value for them all."""
    parts = cell.split(" / ") if keys > 1 else [cell]
    return parts * keys if len(parts) == 1 else parts


def stated(cell: str) -> object:
    return yaml.safe_load(cell.strip("`"))


@pytest.mark.parametrize("name", ["config", "paper", "ladder-languages-english",
                                  "samt-labelled"])
def test_schema_defaults_complete_a_config_as_the_workflow_does(name):
    """circle reads a finished run's effective config with the schema's defaults filled in,
    exactly as the workflow's validate() fills them when it is built; a key the schema refuses
    is refused."""
    config = yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
    if name.startswith(("ladder", "samt")):  # an overlay: on the default config
        default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
        config = {**default, **{k: {**default.get(k, {}), **v} if isinstance(v, dict) else v
                                for k, v in config.items()}}
    workflow = copy.deepcopy(config)
    validate(workflow, schema=str(SCHEMA))
    assert with_schema_defaults(config) == workflow
    assert config["samt"]["decoding"] in ("collapsed", "labelled")  # a default filled in
    config["tuning"]["misspelt"] = 1
    with pytest.raises(jsonschema.ValidationError, match="misspelt"):
        with_schema_defaults(config)


def test_every_default_in_the_config_readme_is_the_schema_default():
    schema = yaml.safe_load(SCHEMA.read_text())
    defaults, documented = schema_defaults(schema), readme_defaults()
    assert sorted(set(defaults) - set(documented)) == []  # every key with a default is listed
    for key, (cell, _) in documented.items():
        if key in defaults and cell != "see schema":
            assert stated(cell) == defaults[key], key


def test_the_config_readme_states_the_default_experiment_where_it_differs():
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate(default, schema=str(SCHEMA))
    schema = schema_defaults(yaml.safe_load(SCHEMA.read_text()))

    def value(key: str) -> object:
        node = default
        for part in key.split("."):
            node = node[part]
        return node

    for key, (_, experiment) in readme_defaults().items():
        if key not in schema:
            continue
        expected = value(key) if value(key) != schema[key] else None
        assert (stated(experiment) if experiment else None) == expected, key


FROZEN = "resources/alignment/bible-es-kjv.parquet"


def alignment_options(frozen, **changes) -> dict:
    return {"alignment": {"symmetrization": "grow-diag-final-and", "model": 3, "frozen": frozen,
                          **changes}}


def test_the_shipped_frozen_alignment_fits_the_default_alignment_settings():
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert default["alignment"]["frozen"] == FROZEN
    assert frozen_alignment_problems({"alignment": {
        **default["alignment"], "frozen": str(ROOT / FROZEN)}}) == []


@pytest.mark.parametrize("changes, problem", [
    ({"symmetrization": "union"},
     "was made with grow-diag-final-and, but alignment.symmetrization asks for union"),
    ({"model": 2}, "was made with eflomal model 3, but alignment.model asks for eflomal model 2"),
])
def test_a_frozen_alignment_made_otherwise_is_named(changes, problem):
    [found] = frozen_alignment_problems(alignment_options(str(ROOT / FROZEN), **changes))
    assert found.startswith(f"alignment.frozen: {ROOT / FROZEN} ") and problem in found
    assert "snakemake refreeze_alignment" in found


def test_a_missing_or_unreadable_frozen_alignment_is_named(tmp_path):
    missing, text = tmp_path / "missing.parquet", tmp_path / "links.txt"
    text.write_text("0-0 1-1\n")
    assert frozen_alignment_problems(alignment_options(str(missing))) == [
        f"alignment.frozen: {missing} does not exist; rebuild it with `snakemake "
        "refreeze_alignment`, or set alignment.frozen: null to run eflomal"]
    [problem] = frozen_alignment_problems(alignment_options(str(text)))
    assert problem.startswith(f"alignment.frozen: {text}: not a readable Parquet file")


def test_a_table_of_another_schema_as_frozen_alignment_is_named():
    bible = ROOT / "resources" / "bible" / "bible.parquet"
    [problem] = frozen_alignment_problems(alignment_options(str(bible)))
    assert problem.startswith(f"alignment.frozen: {bible} is not an 'alignment' table "
                              "(schema 'verses')")


def test_the_schema_bounds_the_search_sizes_as_the_decoder_does():
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]
    sizes = [schema["decoder"]["properties"][key] for key in ("k", "pop_limit", "options_limit")]
    sizes += [schema[section]["properties"]["nbest"] for section in ("grid_search", "targeted")]
    assert [size["maximum"] for size in sizes] == [MAX_SEARCH_SIZE] * 5
    problem = "config decoder.k: 1000000000 is greater than the maximum of 10000"
    assert schema_problems(with_change(tiny(), "decoder.k", 10**9)) == [problem]


def test_thesis_numbers_are_on_for_the_bible_and_off_for_own_data_unless_asked():
    bible = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    own = readme_example()
    validate(bible, schema=str(SCHEMA))
    validate(own, schema=str(SCHEMA))
    assert bible["report"]["thesis_numbers"] == "auto" and thesis_numbers(bible)
    assert not thesis_numbers(own)
    own["report"]["thesis_numbers"] = True
    assert thesis_numbers(own)
    bible["report"]["thesis_numbers"] = False
    assert not thesis_numbers(bible)
    with pytest.raises(WorkflowError):
        validate(with_change(own, "report.thesis_numbers", "yes"), schema=str(SCHEMA))


def test_own_data_is_warned_about_one_replicate_and_the_cost_of_the_defaults():
    own = readme_example()
    validate(own, schema=str(SCHEMA))
    warnings = own_data_warnings(own)
    assert len(warnings) == 2 and "tuning.replicates is 1" in warnings[0]
    assert "max_iterations 25" in warnings[1] and "restarts 20" in warnings[1]
    assert "44 min 33 s" in warnings[1]
    own["tuning"]["replicates"] = 3
    assert len(own_data_warnings(own)) == 1
    bible = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate(bible, schema=str(SCHEMA))
    assert own_data_warnings(bible) == []


def test_translating_oov_paraphrases_needs_a_weight_for_the_paraphrase_feature():
    """oov_paraphrase.translate checks decoder.translation_weights against the augmented
    grammar's features: the default weights lack log_paraphrase_similarity, the overlay
    config/oov-paraphrases.yaml names it, and a weight for it without the switch is unknown."""
    on = with_change(tiny(), "oov_paraphrase.translate", True)
    problems = checked(on)
    assert len(problems) == 1 and problems[0].startswith(
        "decoder.translation_weights: weights do not fit the features")
    assert "missing ['log_paraphrase_similarity']" in problems[0]
    assert "oov_paraphrase.translate" in problems[0]
    assert grammar_schemas(on)["translation"] == GRAMMAR_OOV_PARAPHRASED
    overlay = yaml.safe_load((ROOT / "config" / "oov-paraphrases.yaml").read_text())
    weights = overlay["decoder"]["translation_weights"]
    assert checked(with_change(on, "decoder.translation_weights", weights)) == []
    off = with_change(tiny(), "decoder.translation_weights", weights)
    assert "unknown ['log_paraphrase_similarity']" in " ".join(checked(off))
    assert grammar_schemas(off)["translation"] == GRAMMAR


def test_each_oov_variant_must_search_validly_and_split_below_the_longest_phrase():
    """A variant whose settings cannot search, or whose feature_split leaves the long feature
    no phrase, is named with its key; the shipped variants pass."""
    assert checked(tiny()) == []
    bad = with_change(tiny(), "oov_paraphrase.variants", {
        "toolong": {"feature_split": 4}, "short": {"max_phrase_length": 2, "feature_split": 2},
        "fine": {"max_phrase_length": 3, "feature_split": 2}})
    assert checked(bad) == [
        "oov_paraphrase.variants.toolong: feature_split 4 leaves no phrase to its second "
        "feature (max_phrase_length 4)",
        "oov_paraphrase.variants.short: feature_split 2 leaves no phrase to its second "
        "feature (max_phrase_length 2)"]
    split = with_change(tiny(), "oov_paraphrase.feature_split", 4)
    assert checked(split) == ["oov_paraphrase: feature_split 4 leaves no phrase to its second "
                              "feature (max_phrase_length 4)"]
    with pytest.raises(WorkflowError):
        validate(with_change(tiny(), "oov_paraphrase.variants", {"Bad-Name": {"k": 5}}),
                 schema=str(SCHEMA))
    with pytest.raises(WorkflowError):
        validate(with_change(tiny(), "oov_paraphrase.variants", {"x": {"translate": True}}),
                 schema=str(SCHEMA))


def test_labelled_decoding_needs_the_labelled_paraphraser_bias_0_and_no_targeted_run():
    labelled_weights = yaml.safe_load((ROOT / "config" / "samt-labelled.yaml").read_text())[
        "decoder"]["paraphrase_weights"]
    config = with_change(tiny(), "samt.decoding", "labelled")
    assert checked(copy.deepcopy(config)) == [
        "samt.decoding labelled: the labelled grammar paraphrases only with samt.paraphraser "
        "true"]
    config["samt"]["paraphraser"] = True
    config["decoder"]["paraphrase_weights"] = labelled_weights
    problems = checked(copy.deepcopy(config))
    assert [problem.split(":")[0] for problem in problems] == ["samt.decoding labelled"] * 2
    assert "paraphrase.biases [0.0, 0.5] must be [0]" in problems[0]
    assert "targeted conditions ['1H+1T']" in problems[1]
    for dotted, value in (("paraphrase.biases", [0]), ("figures.untargeted_biases", []),
                          ("grid_search.sweep_bias", 0),
                          ("tuning.conditions", ["1H", "2H", "1H+1P"])):
        config = with_change(config, dotted, value)
    assert checked(copy.deepcopy(config)) == []
    # the labelled grammar's features need weights: the Hiero paraphraser's do not fit them
    config["decoder"]["paraphrase_weights"] = {
        name: value for name, value in labelled_weights.items() if "bb" not in name}
    [problem] = checked(config)
    assert problem.startswith("decoder.paraphrase_weights: weights do not fit the features")

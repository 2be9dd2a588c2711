"""The configuration checks run when the workflow is built: conditions against the data's
references, untuned weights against the grammars' features."""

import math
import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from circle.config import config_problems

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
], ids=["no-1H", "7H-of-2", "paratune-1-ref", "nan-weight", "inf-weight", "misspelt-weight",
        "lexical-feature-unweighted"])
def test_each_infeasible_config_is_named(dotted, value, problem):
    problems = checked(with_change(tiny(), dotted, value))
    assert len(problems) == 1 and problems[0].startswith(problem)


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

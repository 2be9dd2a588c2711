"""The checks the workflow runs on its configuration when it is built (check_config): a config
that would run something other than what it says, or fail later without naming a key, is
refused with the key named."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import yaml

from circle.corpus.preprocess import normalize
from circle.pipeline.config import (
    MAX_CONFIG_VALUES,
    MAX_MESSAGE_CHARS,
    ConfigError,
    check_config,
)
from circle.tune.metrics import get_metric
from circle.tune.pro import sentence_scores

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "tiny" / "config.yaml"
DEFAULT = ROOT / "config" / "config.yaml"


def config_file(tmp_path: Path, source: Path = TINY, extra: str = "", **changes) -> Path:
    """``source`` with the dotted keys of ``changes`` set and ``extra`` appended, written to
    ``tmp_path``."""
    config = yaml.safe_load(source.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        node = config
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config) + extra, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    """The problems check_config finds in the config file ``path`` (none: [])."""
    try:
        check_config(yaml.safe_load(path.read_text(encoding="utf-8")), [path])
    except ConfigError as error:
        return error.problems
    return []


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail the block if it takes longer than ``seconds``."""
    def expire(*_):
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_the_shipped_configs_pass(tmp_path):
    assert problems(config_file(tmp_path)) == []
    assert problems(config_file(tmp_path, DEFAULT)) == []


@pytest.mark.parametrize("dotted, value, key, whole", [
    ("tuning.replicates", 2.0, "tuning.replicates", 2),
    ("decoder.shards", 2.0, "decoder.shards", 2),
    ("seed", 13.0, "seed", 13),
    ("corpus.train_segments", 40.0, "corpus.train_segments", 40),
], ids=["replicates", "shards", "seed", "nullable-integer"])
def test_a_whole_number_written_as_a_decimal_is_refused_with_its_key(
        tmp_path, dotted, value, key, whole):
    """JSON Schema counts 2.0 as an integer; Python's range() does not. Refused rather than
    converted: the config file then says what runs, and one value has one spelling."""
    assert problems(config_file(tmp_path, **{dotted: value})) == [
        f"config {key}: {value!r} is written as a decimal number, but the key takes a whole "
        f"number: write {whole}"]


def test_a_decimal_where_a_whole_number_belongs_keeps_the_schemas_message(tmp_path):
    assert problems(config_file(tmp_path, **{"tuning.replicates": 2.5})) == [
        "config tuning.replicates: 2.5 is not of type 'integer'"]


def yaml_bomb(key: str, depth: int = 9) -> str:
    """YAML whose value at ``key`` expands to 9**depth strings through aliases of lists of
    aliases; a few hundred bytes."""
    lines = [f"{key}:", '  - &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, depth):
        lines.append(f"  - &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("key", ["bomb", "figures"], ids=["unknown-key", "known-key"])
def test_a_yaml_alias_bomb_is_refused_at_once_with_its_key(tmp_path, key):
    source = config_file(tmp_path)
    text = source.read_text(encoding="utf-8")
    if key in yaml.safe_load(text):
        text = yaml.safe_dump({k: v for k, v in yaml.safe_load(text).items() if k != key})
    source.write_text(text + yaml_bomb(key), encoding="utf-8")
    with within(20):
        found = problems(source)
    assert found == [f"config {key}: holds more than {MAX_CONFIG_VALUES:,} values once its YAML "
                     "aliases are expanded (aliases of lists of aliases?); a configuration "
                     "holds a few hundred"]


def test_a_long_schema_message_is_cut(tmp_path):
    """A refused value is quoted in the message, but not beyond a few lines."""
    [problem] = problems(config_file(tmp_path, **{"experiment": "x" * 5000 + " "}))
    cut = re.fullmatch(r"config experiment: ('x+)\.\.\. \(([\d,]+) characters\)", problem)
    assert cut and len(cut[1]) == MAX_MESSAGE_CHARS and int(cut[2].replace(",", "")) > 5000


def test_a_targeted_condition_deeper_than_its_nbest_is_refused_naming_both_keys(tmp_path):
    """1H+kP's paraphraser decodes k paraphrases itself; 1H+kT takes its k from
    targeted.nbest's list, so k above it would tune on fewer and keep the name."""
    conditions = ["1H", "1H+1T", "1H+12T"]
    assert problems(config_file(tmp_path, **{"tuning.conditions": conditions,
                                             "targeted.nbest": 10})) == [
        "tuning.conditions: 1H+12T takes 12 targeted paraphrases per hypothesis, but "
        "targeted.nbest 10 decodes only 10: raise targeted.nbest to at least 12"]
    assert problems(config_file(tmp_path, **{"tuning.conditions": conditions,
                                             "targeted.nbest": 12})) == []



IBLEU_WITH_PRO = (
    "tuning.paraphraser_metric ibleu:0.9 with tuning.optimizer pro: PRO ranks hypotheses by a "
    "sentence-level score, which iBLEU does not have; tune the paraphraser with "
    "tuning.optimizer mert (MERT scores iBLEU on the whole tune set) or on "
    "tuning.paraphraser_metric bleu, ter or terbleu")


@pytest.mark.parametrize("optimizer, metric, expected", [
    ("pro", "ibleu:0.9", [IBLEU_WITH_PRO]),
    ("mert", "ibleu:0.9", []),
    ("pro", "ter", []),
    ("pro", None, []),
], ids=["pro-ibleu", "mert-ibleu", "pro-ter", "pro-unset"])
def test_pro_on_ibleu_is_refused_naming_both_keys(tmp_path, optimizer, metric, expected):
    """The paraphraser's job would fail at its first optimisation (below), so the workflow
    refuses it when built. MERT tunes on iBLEU, and PRO on the other metrics."""
    assert problems(config_file(tmp_path, **{"tuning.optimizer": optimizer,
                                             "tuning.paraphraser_metric": metric})) == expected


FOREST = "tuning.line_search forest: "


@pytest.mark.parametrize("changes, expected", [
    ({}, []),
    ({"tuning.optimizer": "pro"}, [FOREST + "tuning.optimizer pro has no line search"]),
    ({"tuning.fan_out": 2, "lm.rerank_nbest": True},
     [FOREST + "tuning.fan_out 2 splits an iteration over jobs that keep no forest",
      FOREST + "lm.rerank_nbest's feature is scored on n-best lists only, not on the search's "
               "forest"]),
    ({"tuning.conditions": ["1H", "2H", "1H+1T"]},
     [FOREST + "tuning.conditions ['1H+1T'] would paraphrase the outputs of the forests' "
               "envelopes inside the optimisation; tune them in an experiment of their own"]),
], ids=["mert", "pro", "fan-out-rerank", "targeted"])
def test_forest_mert_is_refused_where_it_would_have_no_forest(tmp_path, changes, expected):
    found = problems(config_file(tmp_path, **{"tuning.line_search": "forest",
                                              "tuning.conditions": ["1H", "2H"], **changes}))
    assert found == [f"{problem}; set tuning.line_search null" for problem in expected]


def test_pro_has_no_sentence_level_ibleu():
    """Why PRO on iBLEU is refused: PRO ranks pairs of hypotheses by their sentence-level
    scores, and iBLEU has none."""
    ibleu = get_metric("ibleu:0.9")
    with pytest.raises(ValueError, match="no sentence-level score for metric 'ibleu:0.9'"):
        sentence_scores(ibleu, np.zeros((1, ibleu.n_stats)))

KNOWN = ("as, bn, ca, cs, de, el, en, es, et, fi, fr, ga, gu, hi, hu, is, it, ja, kn, ko, lt, lv, "
         "ml, mni, mr, nl, or, pa, pl, pt, ro, ru, sk, sl, sv, ta, tdt, te, yue, zh")


@pytest.mark.parametrize("source, changes, expected", [
    (TINY, {"preprocess.target_lang": "eng"},
     [f"preprocess.target_lang: 'eng' is not a language code the Moses tokeniser knows; it "
      f"knows {KNOWN}"]),
    (TINY, {"preprocess.source_lang": "en"},
     ["preprocess.source_lang and preprocess.target_lang are both 'en'; the source and the "
      "target are two languages, each tokenised by its own rules"]),
    (DEFAULT, {"preprocess.source_lang": "en", "preprocess.target_lang": "es"},
     ["preprocess.source_lang is 'en', but it tokenises the Bible column 'es', which is in "
      "'es' (swapped codes?)"]
     + [f"preprocess.target_lang is 'es', but it tokenises the Bible column '{column}', which "
        "is in 'en' (swapped codes?)" for column in ("kjv", "web", "dar", "ylt", "bbe")]),
], ids=["unknown", "equal", "swapped-bible"])
def test_language_codes_are_checked_against_the_tokeniser_and_the_bible(
        tmp_path, source, changes, expected):
    assert problems(config_file(tmp_path, source, **changes)) == expected


def test_the_tokeniser_refuses_a_language_it_does_not_know():
    """A code the Moses tokeniser does not know would tokenise by no language's rules
    (``lord 's``), so every caller (the jobs, ``circle tokenize``) is refused."""
    assert normalize("The lord's house", "en") == "the lord &apos;s house"
    with pytest.raises(ValueError, match="'xx' is not a language code the Moses tokeniser"):
        normalize("The lord's house", "xx")

"""circle.pipeline.shared_system: which MT settings must agree for an experiment to share
another's MT system, and the files it shares."""

from __future__ import annotations

import copy

import pytest
import yaml
from test_plan import config as merged_config

from circle.corpus.prepare import reference_names
from circle.pipeline.config import config_problems
from circle.pipeline.shared_system import (
    mt_system_changes,
    mt_system_config_problems,
    mt_system_mismatch,
    mt_system_problem,
    share_mt_system,
    shared_mt_files,
)


@pytest.fixture
def default_config() -> dict:
    """config/config.yaml with the schema's defaults, as results/<experiment>/config.yaml
    stores it."""
    return yaml.safe_load(yaml.safe_dump(merged_config()))


def test_only_the_mt_systems_keys_must_agree(default_config):
    """The paraphraser's, the conditions' and the execution's keys may differ; the seed, the
    corpus, the LM, the decoder's search and the tuning settings may not."""
    theirs = default_config
    ours = copy.deepcopy(theirs)
    ours["experiment"] = "other"
    ours["paraphrase"]["identity_feature"] = True
    ours["tuning"]["conditions"] = ["1H", "1H+1P"]
    ours["tuning"]["paraphraser_bias"] = 0.05
    ours["tuning"]["fan_out"] = not theirs["tuning"]["fan_out"]
    ours["decoder"]["shards"] = 16
    ours["decoder"]["paraphrase_weights"] = {"lm": 0.5}
    assert mt_system_changes(theirs, ours) == []
    for section, key, value in [("tuning", "restarts", 99), ("decoder", "pop_limit", 7),
                                ("lm", "decoding_order", 4), ("sets", "max_segments", {"tune": 7}),
                                ("grammar", "max_nonterminals", 1)]:
        changed = copy.deepcopy(ours)
        changed[section][key] = value
        changes = mt_system_changes(theirs, changed)
        assert changes and all(change.startswith(f"{section}.{key}") for change in changes)
    assert mt_system_changes(theirs, {**ours, "seed": 14}) == ["seed: 13 -> 14"]


def test_a_system_built_refusing_leaked_lines_is_the_one_dropping_them(default_config):
    """lm.leaked_lines: `error` there (the build found no leak) shares with `drop` here, not
    the other way round."""
    theirs = default_config
    assert theirs["lm"]["leaked_lines"] == "error"
    dropping = copy.deepcopy(theirs)
    dropping["lm"]["leaked_lines"] = "drop"
    assert mt_system_changes(theirs, dropping) == []
    assert mt_system_changes(dropping, theirs) == ['lm.leaked_lines: "drop" -> "error"']


def test_the_shared_files_are_the_mt_systems_and_each_1h_replicates(default_config):
    config = copy.deepcopy(default_config)
    config["tuning"]["replicates"] = 2
    files = shared_mt_files(config)
    assert len(files) == len(set(files))
    assert {"corpus/train.parquet", "tokenized/paratune.parquet", "sets/tune.parquet",
            "sets/test.ref1.detok.txt", "grammar/bilingual.parquet",
            "grammar/extraction/lexical.parquet", "grammar/filtered/test.parquet",
            "lm/3gram.binary", "weights/untuned-translation.txt",
            "decode/untuned-translation/tune.nbest.parquet", "weights/1H.rep1.txt",
            "tune/1H.rep1.parquet", "decode/1H.rep1/test.1best.detok.txt"} <= set(files)
    references = len(reference_names(config["corpus"])["test"])
    assert f"sets/test.ref{references}.txt" in files
    assert f"sets/test.ref{references + 1}.txt" not in files
    assert "weights/1H.rep2.txt" not in files
    assert not any(name.startswith(("paraphrase/", "decode/1H.rep0/tune")) for name in files)
    assert "lm/5gram.binary" not in files  # the reranking LM only where it reranks MT n-bests
    config["lm"]["rerank_nbest"] = True
    assert "lm/5gram.binary" in shared_mt_files(config)


def test_sharing_is_refused_naming_the_problem(default_config, tmp_path):
    config = copy.deepcopy(default_config)
    assert mt_system_config_problems(config) == []  # mt_system unset: its own system
    config["mt_system"] = config["experiment"]
    assert "is this experiment" in mt_system_config_problems(config)[0]
    assert mt_system_config_problems(config) == [p for p in config_problems(config)
                                                 if "mt_system" in p]
    config["mt_system"] = "owner"
    config["experiment"] = "borrower"
    assert "does not exist: build that experiment's MT system" in mt_system_problem(
        config, tmp_path)
    owner = tmp_path / "owner"
    owner.mkdir()
    (owner / "config.yaml").write_text(yaml.safe_dump({**default_config,
                                                       "seed": 1}))
    problem = mt_system_problem(config, tmp_path)
    assert problem == mt_system_mismatch(config, tmp_path)
    assert f"built with other MT settings than this config's ({owner / 'config.yaml'}): " \
           "seed: 1 -> 13" in problem
    (owner / "config.yaml").write_text(yaml.safe_dump(default_config))
    assert mt_system_mismatch(config, tmp_path) is None
    files = shared_mt_files(config)
    for name in files[1:]:
        (owner / name).parent.mkdir(parents=True, exist_ok=True)
        (owner / name).write_text(name)
    problem = mt_system_problem(config, tmp_path)
    assert f"1 of the files this experiment shares are missing ({owner / files[0]})" in problem
    targets = [str(tmp_path / "borrower" / name) for name in files]
    with pytest.raises(ValueError, match="1 of the files this experiment shares are missing"):
        share_mt_system(config, targets, tmp_path)
    assert not (tmp_path / "borrower").exists()  # nothing copied before the check
    (owner / files[0]).write_text(files[0])
    assert mt_system_problem(config, tmp_path) is None
    share_mt_system(config, targets, tmp_path)
    assert [(tmp_path / "borrower" / name).read_text() for name in files] == files
    assert sorted(path.name for path in (tmp_path / "borrower" / "weights").iterdir()) == \
        sorted(name.split("/")[-1] for name in files if name.startswith("weights/"))

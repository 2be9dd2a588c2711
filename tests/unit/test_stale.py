"""What a results folder's effective configuration says about a new configuration."""

from __future__ import annotations

import yaml

from circle.pipeline.config import write_effective_config
from circle.pipeline.stale import SHOWN_CHANGES, config_changes, stale_results_problem


def test_config_changes_name_nested_added_and_removed_keys():
    recorded = {"seed": 13, "tuning": {"restarts": 2, "bounds": {"lm": [0, 1]}}, "old": "x"}
    current = {"seed": 13, "tuning": {"restarts": 3, "bounds": {"lm": [0, 2]}}, "new": None}
    assert config_changes(recorded, current) == [
        'new: (none) -> null', 'old: "x" -> (none)', "tuning.bounds.lm: [0, 1] -> [0, 2]",
        "tuning.restarts: 2 -> 3"]
    assert config_changes(recorded, recorded) == []


def test_the_effective_config_as_written_is_no_change(tmp_path):
    path = tmp_path / "results" / "x" / "config.yaml"
    path.parent.mkdir(parents=True)
    config = {"experiment": "x", "seed": 13, "sets": {"max_segments": {"tune": 200}},
              "tuning": {"conditions": ["1H", "1H+1P"]}}
    assert stale_results_problem(path, config) is None  # no results yet
    write_effective_config(config, path)
    assert stale_results_problem(path, config) is None
    many = {**config, **{f"key{i:02d}": i for i in range(SHOWN_CHANGES + 2)}}
    problem = stale_results_problem(path, many)
    assert problem.startswith(f"{path.parent} was made with another configuration ({path}: "
                              "key00: (none) -> 0; key01: (none) -> 1;")
    assert "key09: (none) -> 9; and 2 more)" in problem
    assert yaml.safe_load(path.read_text()) == config

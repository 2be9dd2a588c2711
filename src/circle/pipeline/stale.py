"""Results made with another configuration than the one a run is given, when Snakemake has no
record of how they were made (its ``.snakemake/`` directory is gone: a copied results folder, a
cleaned cache). Snakemake then reruns nothing for a changed config; the effective configuration
written beside the results (``results/<experiment>/config.yaml``) says what they were made
with."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

SHOWN_CHANGES = 10
"""How many changed keys a message lists."""


def _shown(value: Any, present: bool) -> str:
    return json.dumps(value, default=str) if present else "(none)"


def config_changes(recorded: Mapping[str, Any], current: Mapping[str, Any],
                   prefix: str = "") -> list[str]:
    """Each dotted key whose value differs between two configurations, as ``key: old -> new``
    (``(none)`` where one has no such key), in key order."""
    changes = []
    for key in sorted({*recorded, *current}, key=str):
        old, new = recorded.get(key), current.get(key)
        name = f"{prefix}{key}"
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            changes += config_changes(old, new, f"{name}.")
        elif old != new or (key in recorded) != (key in current):
            changes.append(f"{name}: {_shown(old, key in recorded)} -> "
                           f"{_shown(new, key in current)}")
    return changes


def recorded_and_current(effective_config: Path, config: Mapping[str, Any]
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The configuration an effective config file records, and ``config`` as such a file
    stores it (YAML's types), so that the two compare key by key."""
    recorded = yaml.safe_load(effective_config.read_text(encoding="utf-8")) or {}
    return recorded, yaml.safe_load(yaml.safe_dump(dict(config)))


def stale_results_problem(effective_config: str | Path, config: Mapping[str, Any]) -> str | None:
    """Why the results beside ``effective_config`` do not stand for ``config``: the keys whose
    values the file records otherwise; None when it is missing or records ``config``."""
    path = Path(effective_config)
    if not path.is_file():
        return None
    changes = config_changes(*recorded_and_current(path, config))
    if not changes:
        return None
    more = len(changes) - SHOWN_CHANGES
    listed = "; ".join(changes[:SHOWN_CHANGES]) + (f"; and {more} more" if more > 0 else "")
    results = path.parent
    return (f"{results} was made with another configuration ({path}: {listed}), and Snakemake "
            f"has no record of how (its .snakemake/ directory is not the one that made them), "
            f"so it would rerun nothing for the change. Rebuild with this configuration with "
            f"--forceall, or run the recorded one (--configfile {path}), or move {results} "
            f"away")

"""Collection order for ``make test``'s parallel run (pytest-xdist, ``--dist loadscope
--no-loadscope-reorder``): the scheduler hands modules to the workers in collection order, so the
module of the tiny end-to-end run (minutes) comes first, then the other modules that run
Snakemake, and the short unit modules fill the other worker meanwhile, instead of a long module
starting last and running alone."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: ("tiny_default_run" not in getattr(item, "fixturenames", ()),
                                 item.get_closest_marker("workflow") is None))

"""A circle command whose output cannot be written (a full disk) ends with one line, not a
traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"
FULL = Path("/dev/full")


@pytest.mark.skipif(not FULL.exists(), reason="needs Linux's /dev/full, a device always full")
@pytest.mark.parametrize("args, stdin", [
    (["info", str(TINY / "alignment.parquet")], None),
    (["validate", str(TINY / "test.es.txt"), str(TINY / "test.ref0.txt")], None),
    (["tokenize", "--lang", "en"], TINY / "train.en.txt"),
], ids=["info", "validate", "tokenize"])
def test_output_to_a_full_disk_ends_in_one_line(args, stdin):
    with FULL.open("w") as full:
        result = subprocess.run([sys.executable, "-m", "circle.cli", *args], stdout=full,
                                input=stdin.read_text(encoding="utf-8") if stdin else "",
                                stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr == f"circle {args[0]}: error: No space left on device\n"

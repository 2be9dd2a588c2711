"""Static checks of the project's own code: ruff (pyproject.toml [tool.ruff])."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "workflow/scripts",
                             "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

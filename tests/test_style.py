"""Static checks of the project's own code: ruff (pyproject.toml [tool.ruff])."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    checked = [name for name in ("src", "workflow/scripts", "tests", "bench")
               if (ROOT / name).is_dir()]
    result = subprocess.run([sys.executable, "-m", "ruff", "check", *checked], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

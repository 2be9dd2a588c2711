"""Locating and running the external programs the pipeline calls (KenLM, eflomal)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


class ExternalToolError(RuntimeError):
    """An external program is missing or failed."""


def find_executable(name: str) -> str:
    """The path of ``name``: next to the running Python first (the project's venv), then PATH."""
    beside_python = Path(sys.executable).parent / name
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which(name)
    if found is None:
        raise ExternalToolError(f"'{name}' is not installed; run `make setup` (envs/setup.sh) to "
                                "install the project's tools")
    return found


def run_tool(name: str, arguments: Sequence[str], log_path: str | Path | None = None,
             stdin_path: str | Path | None = None, stdout_path: str | Path | None = None) -> None:
    """Run an external tool, appending its stderr (and stdout unless redirected) to the log."""
    command = [find_executable(name), *map(str, arguments)]
    with open(log_path or "/dev/null", "a") as log:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        stdout = open(stdout_path, "wb") if stdout_path else log
        try:
            result = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=log, check=False)
        finally:
            for handle in (stdin, stdout):
                if handle not in (subprocess.DEVNULL, log):
                    handle.close()
    if result.returncode != 0:
        raise ExternalToolError(f"{name} exited with status {result.returncode}; command: "
                                f"{' '.join(command)}" + (f"; see {log_path}" if log_path else ""))

"""What every Snakemake script wrapper needs: logging into the rule's log, and provenance; and
worker processes that die with the job that started them."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from types import TracebackType
from typing import Any

from circle.core.tables import provenance


def _report_input_errors(kind: type[BaseException], error: BaseException,
                         trace: TracebackType | None) -> None:
    """Print circle's own errors (bad input, refused LM text, ...) as one clear message.

    They are raised with the file, line and problem in their message, so a traceback would only
    hide it. Anything else is a bug and keeps its full traceback.
    """
    if kind.__module__.startswith("circle."):
        print(f"error ({kind.__name__}): {error}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)


def start_job(snakemake: Any) -> dict[str, str]:
    """Send logging and stderr to the rule's log file; return the job's table provenance."""
    log = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115 - stays open for the job
    sys.stderr = log
    sys.excepthook = _report_input_errors
    logging.basicConfig(stream=log, level=logging.INFO, force=True,
                        format="%(asctime)s %(levelname)s %(message)s")
    return provenance(snakemake.rule, snakemake.config, wildcards=dict(snakemake.wildcards))


PR_SET_PDEATHSIG = 1
"""Linux prctl(2) option: the signal a process gets when its parent dies."""


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this worker process when the process that started it (``parent``)
    dies, whatever kills it (the OOM killer's SIGKILL included): an orphaned worker would hold
    its memory, blocked on a pipe whose other end a sibling worker inherited. On Linux (prctl
    PR_SET_PDEATHSIG); elsewhere a worker ends only when every copy of its pipe is closed. A
    worker's first call (a pool's initializer)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)

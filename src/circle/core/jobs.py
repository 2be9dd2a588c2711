"""What every Snakemake script wrapper needs: logging into the rule's log, and provenance; and
worker processes that die with the job that started them."""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import signal
import sys
from types import TracebackType
from typing import Any

from circle.core.tables import provenance


def out_of_memory(error: MemoryError, rule: str, mem_mb: Any) -> str:
    """The message of a job that ran out of memory: what failed, the job's memory request
    (``mem_mb``, None without one) and how to raise it."""
    request = "no memory request (mem_mb)" if mem_mb is None else f"mem_mb={mem_mb}"
    return (f"out of memory: {str(error) or 'an allocation failed'}. The job ({rule}) ran with "
            f"{request}; give it more with `--set-resources {rule}:mem_mb=<MB>` (or under "
            "set-resources in a profile, profiles/), and on one machine run fewer jobs beside "
            "it (--resources mem_mb=<MB the machine has>)")


def _report_errors(kind: type[BaseException], error: BaseException,
                   trace: TracebackType | None, rule: str, mem_mb: Any) -> None:
    """Print circle's own errors (bad input, refused LM text, ...) and running out of memory as
    one clear message.

    circle's errors are raised with the file, line and problem in their message, so a traceback
    would only hide it. Anything else is a bug and keeps its full traceback.
    """
    if issubclass(kind, MemoryError):
        print(f"error ({kind.__name__}): {out_of_memory(error, rule, mem_mb)}", file=sys.stderr)
    elif kind.__module__.startswith("circle."):
        print(f"error ({kind.__name__}): {error}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)


def start_job(snakemake: Any) -> dict[str, str]:
    """Send logging and stderr to the rule's log file; return the job's table provenance."""
    log = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115 - stays open for the job
    sys.stderr = log
    sys.excepthook = functools.partial(_report_errors, rule=snakemake.rule,
                                       mem_mb=getattr(snakemake.resources, "mem_mb", None))
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

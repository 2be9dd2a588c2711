"""Progress lines for the long loops of a job: done/total, rate and ETA, at a bounded rate.

A :class:`Progress` counts finished items (shards, sentences, grid rows, tuning iterations) and
logs through the job's logger at most one line per ``interval`` seconds, plus one final line
when the loop ends, so that a job log shows how far a step is and when it will end without
growing with the input::

    extracting rules: 12/40 shards (30 %), 0.4 shards/s, ETA 1 min 10 s
    extracting rules: 40/40 shards in 1 min 41 s (0.4 shards/s)

Lines are logged at INFO level: the job's log (:func:`circle.core.jobs.start_job`) shows them, a
test or an interactive session without logging configured does not.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

INTERVAL = 30.0
"""Default seconds between two progress lines of one loop."""


def duration(seconds: float) -> str:
    """``seconds`` for a person: '42 s', '3 min 5 s', '2 h 7 min'."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class Progress:
    """Progress of ``task`` over ``total`` items called ``unit``, logged to ``logger``.

    Call :meth:`advance` as items finish and :meth:`finish` at the end (or use it as a context
    manager, which finishes on success). ``clock`` is the time source (seconds).
    """

    def __init__(self, logger: logging.Logger, task: str, total: int, unit: str,
                 interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic):
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        self.logger, self.task, self.total, self.unit = logger, task, total, unit
        self.interval, self.clock = interval, clock
        self.done = 0
        self.started = self.last_line = clock()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self.finish()

    def rate(self) -> float:
        """Items per second so far (0 before the first item)."""
        elapsed = self.clock() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more finished items; log a line if ``interval`` has passed."""
        self.done += count
        now = self.clock()
        if now - self.last_line >= self.interval and self.done < self.total:
            self.last_line = now
            rate = self.rate()
            eta = duration((self.total - self.done) / rate) if rate > 0 else "unknown"
            self.logger.info("%s: %d/%d %s (%d %%), %s %s/s, ETA %s", self.task, self.done,
                             self.total, self.unit, 100 * self.done // self.total,
                             _rate(rate), self.unit, eta)

    def finish(self) -> None:
        """Log the final line: items done, time taken and the rate."""
        elapsed = self.clock() - self.started
        self.logger.info("%s: %d/%d %s in %s (%s %s/s)", self.task, self.done, self.total,
                         self.unit, duration(elapsed), _rate(self.rate()), self.unit)


def _rate(rate: float) -> str:
    """Two significant digits below 10 per second, whole numbers above."""
    return f"{rate:.2g}" if rate < 10 else f"{rate:.0f}"


def progress(items: Iterable[T], logger: logging.Logger, task: str, total: int, unit: str,
             interval: float = INTERVAL) -> Iterator[T]:
    """Yield ``items`` (``total`` of them), counting each one finished when the next is asked
    for; log as :class:`Progress` does, the final line once the items are exhausted."""
    with Progress(logger, task, total, unit, interval) as counter:
        for item in items:
            yield item
            counter.advance()

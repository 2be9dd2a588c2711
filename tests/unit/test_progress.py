"""Progress lines: bounded rate, done/total, rate and ETA, one final line."""

from __future__ import annotations

import logging

import pytest

from circle.core.progress import Progress, duration, progress

logger = logging.getLogger("circle.test_progress")


class Clock:
    """A clock that the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def messages(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == logger.name]


@pytest.mark.parametrize("seconds, text", [
    (0.4, "0 s"), (42, "42 s"), (59.6, "1 min 0 s"), (185, "3 min 5 s"), (7620, "2 h 7 min")])
def test_duration(seconds, text):
    assert duration(seconds) == text


def test_lines_are_bounded_in_rate_and_carry_rate_and_eta(caplog):
    caplog.set_level(logging.INFO)
    clock = Clock()
    with Progress(logger, "counting rules", 100, "shards", interval=30, clock=clock) as bar:
        for _ in range(100):  # one shard every 2 s: a line every 15 shards
            clock.now += 2
            bar.advance()
    lines = messages(caplog)
    assert lines[0] == "counting rules: 15/100 shards (15 %), 0.5 shards/s, ETA 2 min 50 s"
    assert lines[1] == "counting rules: 30/100 shards (30 %), 0.5 shards/s, ETA 2 min 20 s"
    assert len(lines) == 100 * 2 // 30 + 1  # at most one line per 30 s, plus the final one
    assert lines[-1] == "counting rules: 100/100 shards in 3 min 20 s (0.5 shards/s)"


def test_a_fast_loop_logs_only_its_final_line(caplog):
    caplog.set_level(logging.INFO)
    assert list(progress(range(5), logger, "decoding", 5, "inputs")) == [0, 1, 2, 3, 4]
    [line] = messages(caplog)
    assert line.startswith("decoding: 5/5 inputs in 0 s (")


def test_a_failing_loop_logs_no_final_line(caplog):
    caplog.set_level(logging.INFO)
    with pytest.raises(RuntimeError):
        for item in progress(range(5), logger, "decoding", 5, "inputs"):
            if item == 2:
                raise RuntimeError("decoder failed")
    assert messages(caplog) == []


def test_nothing_is_printed_without_logging_configured(capsys):
    list(progress(range(3), logger, "decoding", 3, "inputs", interval=0))
    assert capsys.readouterr() == ("", "")


def test_negative_total_is_refused():
    with pytest.raises(ValueError, match="total must be >= 0"):
        Progress(logger, "decoding", -1, "inputs")


@pytest.mark.parametrize("done, seconds, text", [
    (42, 10_000, "0.0042"), (5, 10, "0.5"), (346, 100, "3.5"), (345_020, 100, "3450")])
def test_rates_are_short(caplog, done, seconds, text):
    caplog.set_level(logging.INFO)
    clock = Clock()
    bar = Progress(logger, "decoding", 10**6, "inputs", interval=0, clock=clock)
    clock.now += seconds
    bar.advance(done)
    assert f", {text} inputs/s, " in messages(caplog)[0]

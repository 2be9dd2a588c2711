"""A warm system (`circle translate --stream`, `circle paraphrase --stream`): loaded once, each
line of stdin answered (and flushed) as soon as it is read, as another program driving it
through a pipe needs, with the same outputs as the whole input decoded at once. On the tiny
experiment of test_translate."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from test_translate import NEW, TINY, circle, paraphrase_inputs, project  # noqa: F401 (a fixture)

from circle.corpus.preprocess import normalize
from circle.grammar.filter import RowGroups, RuleReadStats, rules_for

ANSWER_TIMEOUT = 300
"""Seconds to wait for a line's answer (the tests run niced beside other work)."""


class Driver:
    """A `circle ... --stream` process driven through pipes, a line at a time."""

    def __init__(self, *args: str, cwd: Path):
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("CIRCLE_PROJECT", "PYTHONUNBUFFERED")}  # circle flushes
        self.process = subprocess.Popen([sys.executable, "-m", "circle.cli", *args, "--stream"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, cwd=cwd, env=environment)
        self.answers: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in iter(self.process.stdout.readline, b""):
            self.answers.put(line)

    def ask(self, line: bytes) -> str:
        """Write one line, keep stdin open, and return the answer's line."""
        self.process.stdin.write(line)
        self.process.stdin.flush()
        answer = self.answers.get(timeout=ANSWER_TIMEOUT).decode("utf-8")
        assert self.process.poll() is None  # still running, waiting for the next line
        return answer.removesuffix("\n")

    def close(self) -> tuple[int, list[str], str]:
        """Close stdin; the exit status, the answers not yet taken and stderr."""
        self.process.stdin.close()
        stderr = self.process.stderr.read().decode("utf-8")
        status = self.process.wait(timeout=ANSWER_TIMEOUT)
        rest = []
        while not self.answers.empty():
            rest.append(self.answers.get().decode("utf-8").removesuffix("\n"))
        return status, rest, stderr


def test_a_warm_translator_answers_each_line_at_once_as_the_batch(project, tmp_path):  # noqa: F811
    lines = [NEW, *(TINY / "test.es.txt").read_text(encoding="utf-8").splitlines()[:5]]
    (tmp_path / "in.es").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    options = ["--project", str(project), "--experiment", "tiny", "--mark-unknown"]
    batch = circle("translate", "in.es", *options, "--output-prefix", "batch", cwd=tmp_path)
    assert batch.returncode == 0, batch.stderr
    expected = batch.stdout.splitlines()
    assert len(expected) == len(lines) and "UNK_teléfono" in expected[0]

    driver = Driver("translate", "-", *options, "--output-prefix", "warm", cwd=tmp_path)
    answers = [driver.ask(f"{lines[0]}\n".encode())]
    recased = (tmp_path / "batch.recased").read_text(encoding="utf-8").splitlines()
    assert (tmp_path / "warm.recased").read_text(encoding="utf-8") == f"{recased[0]}\n"
    answers.append(driver.ask(f"{lines[1]}\n".encode()))
    status, rest, stderr = driver.close()
    assert status == 0, stderr
    assert answers == expected[:2] and rest == []
    more = Driver("translate", "-", *options, cwd=tmp_path)
    answers = [more.ask(f"{line}\n".encode()) for line in lines]
    status, rest, stderr = more.close()
    assert status == 0 and rest == [], stderr
    assert answers == expected
    assert batch.stderr.splitlines()[-1] == stderr.splitlines()[-1]  # the untranslated words
    assert f"circle translate: {len(lines)} line(s);" in stderr
    for kind in ("tokenized", "detokenized", "recased"):  # the first two lines
        warm = (tmp_path / f"warm.{kind}").read_text(encoding="utf-8").splitlines()
        assert warm == (tmp_path / f"batch.{kind}").read_text(encoding="utf-8").splitlines()[:2]


def test_a_warm_paraphraser_answers_each_line_at_once_as_the_batch(project, tmp_path):  # noqa: F811
    lines = ["zzz qqq xxyy", *paraphrase_inputs()[:4]]
    options = ["--project", str(project), "--experiment", "tiny", "--pop-limit", "5"]
    batch = circle("paraphrase", "-", *options, cwd=tmp_path,
                   stdin="".join(f"{line}\n" for line in lines))
    assert batch.returncode == 0, batch.stderr
    expected = batch.stdout.splitlines()
    assert len(expected) == len(lines) and expected[1] != lines[1]

    driver = Driver("paraphrase", "-", *options, cwd=tmp_path)
    answers = [driver.ask(f"{line}\n".encode()) for line in lines]
    status, rest, stderr = driver.close()
    assert status == 0 and rest == [], stderr
    assert answers == expected
    assert ("circle paraphrase: line 1: no paraphrase of 'zzz qqq xxyy': no rule of the "
            "paraphrase grammar matches any of its phrases") in stderr
    assert batch.stderr.splitlines()[-1] == stderr.splitlines()[-1]  # n of 5 paraphrased


def test_a_bad_line_ends_a_stream_naming_it_after_the_good_ones(project, tmp_path):  # noqa: F811
    driver = Driver("translate", "-", "--project", str(project), "--experiment", "tiny",
                    "--print", "tokenized", cwd=tmp_path)
    assert "king" in driver.ask(b"El rey.\n")
    driver.process.stdin.write(b"caf\xe9\n")
    status, rest, stderr = driver.close()
    assert status == 2 and rest == []
    assert stderr.endswith("circle translate: error: invalid corpus input:\n  <stdin>:2: "
                           "invalid UTF-8 at byte 3 of the line\n")


def test_a_stream_is_decoded_in_one_process(project, tmp_path):  # noqa: F811
    result = circle("translate", "--stream", "--workers", "2", "--project", str(project),
                    "--experiment", "tiny", cwd=tmp_path, stdin="El rey.\n")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.endswith("circle translate: error: --stream decodes each line as it "
                                  "comes, in one process: drop --workers\n")


def test_row_groups_kept_in_memory_give_the_same_rules_within_their_budget(project, tmp_path):  # noqa: F811
    """A warm translator's kept row groups (RowGroups with a budget) read the same rules, line
    after line, as reading the grammar afresh; the least recently used are dropped first."""
    grammar = project / "results/tiny/grammar/bilingual.parquet"
    lines = [normalize(line, "es") for line in
             [NEW, *(TINY / "test.es.txt").read_text(encoding="utf-8").splitlines()[:4]]]
    one_group = RowGroups(grammar).read(0).nbytes
    kept = RowGroups(grammar, max_bytes=20 * one_group)
    read = set()
    for line in lines:
        fresh, warm = RuleReadStats(), RuleReadStats()
        expected = rules_for(grammar, [line], 10, fresh)
        assert rules_for(grammar, [line], 10, warm, kept).equals(expected)
        assert warm == fresh and warm.rules > 0
        read |= set(kept.kept)
        assert 0 < kept.kept_bytes <= kept.max_bytes and len(kept.kept) <= 20
    assert len(read) > 20  # more groups than the budget holds were read: some were dropped
    last = next(reversed(kept.kept))
    oldest = next(iter(kept.kept))
    kept.read(oldest)  # now the most recent
    assert next(reversed(kept.kept)) == oldest != last

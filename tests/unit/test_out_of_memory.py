"""A job that runs out of memory says so, with its memory request and how to raise it; a
language model that does not fit in memory is not called corrupt."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from circle import cli
from circle.corpus.preprocess import normalize_all
from circle.decoder.lm import LanguageModel
from circle.lm import estimate_lm

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"

JOB = """
    import resource, sys
    from types import SimpleNamespace
    from circle.core.jobs import start_job
    from circle.decoder.lm import LanguageModel

    log, lm, margin = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start_job(SimpleNamespace(log=[log], rule="tune_translation", config={}, wildcards={},
                              resources=SimpleNamespace(mem_mb=3700)))
    LanguageModel(lm)  # once, so that only the model's own memory is missing below
    with open("/proc/self/status") as status:
        used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (used + margin, resource.RLIM_INFINITY))
    {load}
"""
"""A job's start (circle.core.jobs.start_job) with a memory request of 3,700 MB, then a load
(``{load}``) under an address-space limit :data:`MARGIN` above what the job uses."""
MARGIN = 128 * 1024


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    """A 3-gram model of the tiny corpus's English training side (KenLM binary)."""
    directory = tmp_path_factory.mktemp("lm")
    text = directory / "train.en.txt"
    lines = (TINY / "train.en.txt").read_text(encoding="utf-8").splitlines()
    text.write_text("\n".join(normalize_all(lines, "en")) + "\n", encoding="utf-8")
    binary = directory / "3gram.binary"
    estimate_lm([text], 3, binary, discount_fallback=True, memory="100M",
                log_path=directory / "lmplz.log")
    return binary


def run_job(tmp_path: Path, lm: Path, load: str) -> tuple[int, str]:
    """Run the job that ends with ``load``; return its exit status and log."""
    log = tmp_path / "job.log"
    script = textwrap.dedent(JOB).replace("{load}", load)
    result = subprocess.run([sys.executable, "-c", script, str(log), str(lm), str(MARGIN)],
                            capture_output=True, text=True, timeout=120)
    return result.returncode, log.read_text(encoding="utf-8")


HINT = ("The job (tune_translation) ran with mem_mb=3700; give it more with `--set-resources "
        "tune_translation:mem_mb=<MB>` (or under set-resources in a profile, profiles/), and on "
        "one machine run fewer jobs beside it (--resources mem_mb=<MB the machine has>)\n")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_a_language_model_too_large_for_the_memory_left_is_named_so(tmp_path, tiny_lm):
    """KenLM maps the whole model, larger than the margin, so its load fails for memory."""
    assert tiny_lm.stat().st_size > 2 * MARGIN
    assert LanguageModel(tiny_lm).order == 3  # the model itself is intact
    status, log = run_job(tmp_path, tiny_lm, "LanguageModel(lm)")
    assert status != 0 and "Traceback" not in log and "not a KenLM model" not in log
    assert log.startswith(f"error (MemoryError): out of memory: {tiny_lm}: not enough memory to "
                          "load the language model (Cannot read model")
    assert "Cannot allocate memory" in log and log.endswith(HINT)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_a_job_out_of_memory_names_its_request_and_how_to_raise_it(tmp_path, tiny_lm):
    status, log = run_job(tmp_path, tiny_lm, "bytearray(64 * 1024 * 1024)")
    assert status != 0 and "Traceback" not in log
    assert log == f"error (MemoryError): out of memory: an allocation failed. {HINT}"


def test_a_circle_command_out_of_memory_says_so_in_one_line(monkeypatch, capsys, tiny_lm):
    def out_of_memory(args):
        raise MemoryError(f"{args.table}: not enough memory to load the language model")

    monkeypatch.setattr(cli, "_info", out_of_memory)
    assert cli.main(["info", str(tiny_lm)]) == 1
    assert capsys.readouterr().err == (f"circle info: error: out of memory: {tiny_lm}: not "
                                       "enough memory to load the language model\n")

"""n-gram language models estimated with KenLM's own ``lmplz`` and compiled with ``build_binary``.

Modified Kneser-Ney (lmplz's only estimator; Heafield et al. 2013). The decoder and the reranker
load the binary models with the ``kenlm`` Python module. Before estimating, the LM text is checked
for leaked evaluation references: a model that has seen the tune, test or paraphraser-tuning
references would inflate every BLEU score downstream.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from circle.core.external import run_tool
from circle.core.schemas import BITEXT, EVALSET
from circle.core.tables import atomic_path, read_table, scratch_directory
from circle.corpus.preprocess import normalize_all
from circle.corpus.validate import CorpusError, read_lines

logger = logging.getLogger(__name__)


class LeakError(ValueError):
    """The LM training text contains evaluation references."""


def reference_index(references: Mapping[str, Iterable[Sequence[str]]],
                    min_words: int) -> dict[str, str]:
    """Map each normalised reference sentence of at least ``min_words`` tokens to its origin.

    ``references`` maps an evaluation set name to its rows of (tokenised) references.
    """
    index = {}
    for set_name, rows in references.items():
        for row_number, refs in enumerate(rows, start=1):
            for ref_number, ref in enumerate(refs):
                if len(ref.split()) >= min_words:
                    index.setdefault(" ".join(ref.split()),
                                     f"{set_name} row {row_number} reference {ref_number}")
    return index


LEAKED_LINES = ("error", "drop")
"""What the LM build does with a text line that is an evaluation reference (``lm.leaked_lines``):
``error`` refuses the text; ``drop`` leaves those lines out and logs them. A verse-aligned corpus
repeats formulae across verses ("and the lord spake unto moses, saying, ..."), so the English of
the training books can hold, as another verse, the very wording of an evaluation reference; the
LM must not learn it either way."""


def check_no_leak(texts: Mapping[str, Sequence[str]], leaked: Mapping[str, str],
                  on_leak: str = "error") -> dict[str, list[str]]:
    """Refuse LM text containing any sentence of ``leaked`` (from :func:`reference_index`), or
    with ``on_leak`` = ``"drop"`` (:data:`LEAKED_LINES`) return ``texts`` without those lines.

    ``texts`` maps an origin (a file name) to its lines. Raises :class:`LeakError` listing up to
    ten offending lines as ``origin:line``.
    """
    if on_leak not in LEAKED_LINES:
        raise ValueError(f"lm.leaked_lines is {on_leak!r}, not one of {LEAKED_LINES}")
    found = [(origin, number, leaked[key])
             for origin, lines in texts.items()
             for number, line in enumerate(lines, start=1)
             if (key := " ".join(line.split())) in leaked]
    problems = [f"{origin}:{number}: is the {what}" for origin, number, what in found]
    shown = "\n  ".join(problems[:10])
    if problems and on_leak == "error":
        raise LeakError(f"LM training text contains {len(problems)} evaluation reference(s); "
                        f"refusing to estimate the model (lm.leaked_lines: drop leaves such "
                        f"lines out):\n  {shown}")
    if problems:
        logger.warning("LM text: %d line(s) that are evaluation references left out "
                       "(lm.leaked_lines: drop):\n  %s", len(problems), shown)
    dropped = {(origin, number) for origin, number, _ in found}
    return {origin: [line for number, line in enumerate(lines, start=1)
                     if (origin, number) not in dropped]
            for origin, lines in texts.items()}


def prepare_lm_text(train_paths: Sequence[str | Path], evalset_paths: Sequence[str | Path],
                    extra_paths: Sequence[str | Path], out_path: str | Path,
                    preprocess: Mapping[str, object], max_line_chars: int,
                    leak_min_words: int, on_leak: str = "error") -> None:
    """Write the LM text: the tokenised English side of the training bitexts (the MT system's;
    for the paraphraser's own LMs, its pivot bitexts', :mod:`circle.corpus.pivots`), in order,
    plus extra monolingual files.

    Extra files are validated and tokenised like every other text. Raises :class:`LeakError`
    if any line is a tune, test or paraphraser-tuning reference, unless ``on_leak`` is
    ``"drop"``: then such lines are left out (:func:`check_no_leak`).
    """
    texts = {str(path): list(read_table(path, BITEXT, columns=["target"])["target"])
             for path in train_paths}
    for path in extra_paths:
        lines, problems = read_lines(path, max_line_chars)
        if problems:
            raise CorpusError(problems)
        texts[str(path)] = normalize_all(lines, str(preprocess["target_lang"]),
                                         bool(preprocess["lowercase"]))
    references = {Path(p).stem: read_table(p, EVALSET, columns=["references"])["references"]
                  for p in evalset_paths}
    texts = check_no_leak(texts, reference_index(references, leak_min_words), on_leak)
    lines = write_text((line for text in texts.values() for line in text), out_path)
    logger.info("LM text: %d lines from %s; no evaluation reference of %d+ tokens in it",
                lines, ", ".join(texts), leak_min_words)


def write_text(lines: Iterable[str], path: str | Path) -> int:
    """Write one sentence per line atomically; return the number of lines."""
    count = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
            count += 1
    return count


def estimate_lm(text_paths: Sequence[str | Path], order: int, binary_path: str | Path,
                discount_fallback: bool, memory: str,
                log_path: str | Path | None = None) -> None:
    """Estimate a modified Kneser-Ney ARPA model with lmplz and compile it with build_binary.

    ``memory`` is lmplz's ``-S`` (e.g. ``"1G"`` or ``"20%"``); ``discount_fallback`` enables
    lmplz's fallback discounts for data too small to estimate them (tiny test corpora). lmplz's
    scratch files and the ARPA model live in a temporary directory next to the output.
    """
    binary_path = Path(binary_path)
    with scratch_directory(binary_path) as tmp_dir:
        joined = tmp_dir / "lm_text.txt"
        with open(joined, "wb") as out:
            for path in text_paths:
                out.write(Path(path).read_bytes())
        arpa = tmp_dir / f"lm.{order}.arpa"
        arguments = ["-o", order, "-S", memory, "-T", tmp_dir, "--arpa", arpa, "--text", joined]
        if discount_fallback:
            arguments.append("--discount_fallback")
        run_tool("lmplz", arguments, log_path)
        with atomic_path(binary_path) as binary_tmp:
            run_tool("build_binary", [arpa, binary_tmp], log_path)

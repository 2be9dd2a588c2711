"""Word alignment: eflomal in both directions, symmetrised here.

eflomal (Östling & Tiedemann 2016) is GPL-3, so it is only ever run as a separate process through
its command-line tool ``eflomal-align``; this module never imports it. Both of its link files are
in source-target orientation (Pharaoh ``i-j``). eflomal has no seed option: its Gibbs sampler
gives slightly different links on every run (about 88 % of forward links agree between two runs on
the Bible training set). The pipeline therefore treats the alignment table as the frozen artefact
of record: Snakemake never recomputes it while it exists, and ``alignment.frozen`` in the config
replays a saved table instead of running eflomal at all.

Symmetrisation heuristics follow Koehn, Och & Marcu (2003) and the Moses ``symal`` pseudo-code:
``intersect``, ``union``, ``grow-diag``, ``grow-diag-final`` and ``grow-diag-final-and``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from circle.core.external import run_tool
from circle.core.schemas import ALIGNMENT, BITEXT
from circle.core.tables import (
    META_PREFIX,
    PARQUET_WRITE_OPTIONS,
    atomic_path,
    read_metadata,
    read_table,
    scratch_directory,
    write_table,
)

logger = logging.getLogger(__name__)
Link = tuple[int, int]
SYMMETRIZATIONS = ("intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
_DIAGONAL_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


class AlignmentError(ValueError):
    """Alignment input or output that does not fit its sentences."""


def parse_links(text: str, source_len: int, target_len: int, where: str) -> set[Link]:
    """Parse a Pharaoh ``i-j`` string, checking every index against the sentence lengths."""
    links = set()
    for item in text.split():
        try:
            i, j = (int(x) for x in item.split("-"))
        except ValueError:
            raise AlignmentError(f"{where}: '{item}' is not an 'i-j' link") from None
        if not (0 <= i < source_len and 0 <= j < target_len):
            raise AlignmentError(f"{where}: link {item} is out of range for a sentence pair of "
                                 f"{source_len} source and {target_len} target words")
        links.add((i, j))
    return links


def format_links(links: Iterable[Link]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def symmetrize(forward: set[Link], reverse: set[Link], method: str = "grow-diag-final-and"
               ) -> set[Link]:
    """Combine two directional alignments (both as source-target pairs) into one."""
    if method not in SYMMETRIZATIONS:
        raise ValueError(f"unknown symmetrization '{method}'; choose one of {SYMMETRIZATIONS}")
    union = forward | reverse
    if method == "union":
        return set(union)
    alignment = forward & reverse
    if method == "intersect":
        return alignment
    _grow_diag(alignment, union)
    if method in ("grow-diag-final", "grow-diag-final-and"):
        both_unaligned = method == "grow-diag-final-and"
        _final(alignment, forward, both_unaligned)
        _final(alignment, reverse, both_unaligned)
    return alignment


def _grow_diag(alignment: set[Link], union: set[Link]) -> None:
    """GROW-DIAG: add union points neighbouring the alignment that cover an unaligned word."""
    aligned_source = {i for i, _ in alignment}
    aligned_target = {j for _, j in alignment}
    added = True
    while added:
        added = False
        for i, j in sorted(alignment):
            for di, dj in _DIAGONAL_NEIGHBOURS:
                point = (i + di, j + dj)
                if point in union and point not in alignment and (
                        point[0] not in aligned_source or point[1] not in aligned_target):
                    alignment.add(point)
                    aligned_source.add(point[0])
                    aligned_target.add(point[1])
                    added = True


def _final(alignment: set[Link], directional: set[Link], both_unaligned: bool) -> None:
    """FINAL / FINAL-AND: add directional points whose words are (both) still unaligned."""
    aligned_source = {i for i, _ in alignment}
    aligned_target = {j for _, j in alignment}
    for i, j in sorted(directional):
        source_free, target_free = i not in aligned_source, j not in aligned_target
        if (source_free and target_free) if both_unaligned else (source_free or target_free):
            alignment.add((i, j))
            aligned_source.add(i)
            aligned_target.add(j)


def run_eflomal(source_path: Path, target_path: Path, forward_path: Path, reverse_path: Path,
                samplers: int, model: int, log_path: Path | None = None) -> None:
    """Run ``eflomal-align`` on tokenised, line-parallel files (both directions)."""
    run_tool("eflomal-align", ["-s", source_path, "-t", target_path, "-f", forward_path,
                               "-r", reverse_path, "-m", model, "--n-samplers", samplers,
                               "--overwrite"], log_path)


@dataclass(frozen=True)
class AlignmentStats:
    """Summary of an alignment table, written to the rule's log."""

    sentences: int
    source_words: int
    target_words: int
    links: int
    agreement: float
    """|forward ∩ reverse| / |forward ∪ reverse| over the corpus."""
    unaligned_source: float
    unaligned_target: float

    def describe(self) -> str:
        return (f"{self.sentences} sentence pairs, {self.source_words} source and "
                f"{self.target_words} target words; {self.links} symmetrised links "
                f"({self.links / max(self.source_words, 1):.3f} per source word, "
                f"{self.links / max(self.target_words, 1):.3f} per target word); "
                f"forward/reverse agreement {self.agreement:.3f}; unaligned words: "
                f"{self.unaligned_source:.3%} source, {self.unaligned_target:.3%} target")


def symmetrize_corpus(bitext: pd.DataFrame, forward_lines: Sequence[str],
                      reverse_lines: Sequence[str], method: str, origin: str
                      ) -> tuple[pd.DataFrame, AlignmentStats]:
    """Symmetrise eflomal's link lines for a tokenised BITEXT table into an ALIGNMENT table.

    ``origin`` names the link files in error messages (line numbers are 1-based).
    """
    if not len(forward_lines) == len(reverse_lines) == len(bitext):
        raise AlignmentError(f"{origin}: {len(forward_lines)} forward and {len(reverse_lines)} "
                             f"reverse link lines for {len(bitext)} sentence pairs")
    rows, intersection, union, aligned_src, aligned_tgt = [], 0, 0, 0, 0
    src_words = tgt_words = n_links = 0
    for number, (segment, src, tgt, fwd, rev) in enumerate(zip(
            bitext["segment_id"], bitext["source"], bitext["target"], forward_lines,
            reverse_lines, strict=True), start=1):
        n_src, n_tgt = len(src.split()), len(tgt.split())
        where = f"{origin} line {number} (segment {segment})"
        forward = parse_links(fwd, n_src, n_tgt, where)
        reverse = parse_links(rev, n_src, n_tgt, where)
        links = symmetrize(forward, reverse, method)
        rows.append((segment, fwd.strip(), rev.strip(), format_links(links)))
        intersection += len(forward & reverse)
        union += len(forward | reverse)
        aligned_src += len({i for i, _ in links})
        aligned_tgt += len({j for _, j in links})
        src_words += n_src
        tgt_words += n_tgt
        n_links += len(links)
    table = pd.DataFrame(rows, columns=["segment_id", "forward", "reverse", "links"])
    stats = AlignmentStats(len(rows), src_words, tgt_words, n_links,
                           intersection / max(union, 1), 1 - aligned_src / max(src_words, 1),
                           1 - aligned_tgt / max(tgt_words, 1))
    return table, stats


def aligner_name(model: int) -> str:
    """The ``aligner`` metadata of an ALIGNMENT table made with eflomal model ``model``."""
    return f"eflomal model {model}"


BITEXT_DIGEST = "bitext_digest"
"""The ALIGNMENT table metadata key of :func:`bitext_digest` of the bitext it was made for."""

REFREEZE_HINT = ("rebuild it with `snakemake refreeze_alignment`, or set alignment.frozen: null "
                 "to run eflomal")


def bitext_digest(bitext: pd.DataFrame) -> str:
    """SHA-256 of a tokenised bitext's ``segment_id``, ``source`` and ``target``, in segment
    order: what an alignment's links are links of."""
    rows = bitext.sort_values("segment_id")
    text = "".join(f"{segment}\t{source}\t{target}\n" for segment, source, target in zip(
        rows["segment_id"], rows["source"], rows["target"], strict=True))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_alignment_fits(alignment_path: str | Path, bitext: pd.DataFrame,
                         bitext_path: str | Path) -> None:
    """Raise :class:`AlignmentError` unless the ALIGNMENT table holds exactly the bitext's
    segments and every link fits its sentence pair: all that can be checked of a table that
    records no :data:`BITEXT_DIGEST`."""
    links = read_table(alignment_path, ALIGNMENT, columns=["segment_id", "links"])
    if sorted(links["segment_id"]) != sorted(bitext["segment_id"]):
        apart = sorted(set(links["segment_id"]) ^ set(bitext["segment_id"]))
        raise AlignmentError(f"{alignment_path}: its {len(links)} segments are not the "
                             f"{len(bitext)} of {bitext_path}"
                             + (f" (first in one only: segment {apart[0]})" if apart else "")
                             + f"; the table records no bitext digest and does not fit; "
                             f"{REFREEZE_HINT}")
    rows = bitext.merge(links, on="segment_id")
    for segment, source, target, text in zip(rows["segment_id"], rows["source"], rows["target"],
                                             rows["links"], strict=True):
        try:
            parse_links(text, len(source.split()), len(target.split()),
                        f"{alignment_path}: segment {segment}")
        except AlignmentError as error:
            raise AlignmentError(f"{error} of {bitext_path}; the table records no bitext digest "
                                 f"and does not fit; {REFREEZE_HINT}") from None


def check_bitext_digest(alignment_path: str | Path, bitext: pd.DataFrame,
                        bitext_path: str | Path) -> None:
    """An alignment table is replayed only onto the bitext it was made for: raise
    :class:`AlignmentError` when its :data:`BITEXT_DIGEST` is another bitext's. A table made
    before alignments recorded the digest is refused when it does not fit the bitext
    (:func:`check_alignment_fits`), else replayed with a warning."""
    made_for = read_metadata(alignment_path).get(BITEXT_DIGEST)
    if made_for is None:
        check_alignment_fits(alignment_path, bitext, bitext_path)
        logger.warning("%s records no digest of the bitext it was made for (made before "
                       "alignment tables recorded one): its links fit the sentences of %s, "
                       "but a sentence that grew would pass; `python -m circle.align "
                       "record-digest` adds the digest", alignment_path, bitext_path)
    elif made_for != bitext_digest(bitext):
        raise AlignmentError(f"{alignment_path}: made for another training bitext than "
                             f"{bitext_path} (bitext digest {made_for[:12]}…, this bitext's "
                             f"{bitext_digest(bitext)[:12]}…); {REFREEZE_HINT}")


def record_bitext_digest(alignment_path: str | Path, bitext_path: str | Path) -> str:
    """Add the :data:`BITEXT_DIGEST` of the tokenised bitext ``bitext_path`` to an ALIGNMENT
    table made for it before tables recorded one, after :func:`check_alignment_fits`; the
    table's rows and other metadata are written back unchanged (checked before it replaces the
    file, atomically). Returns the digest."""
    bitext = read_table(bitext_path, BITEXT, columns=["segment_id", "source", "target"])
    digest = bitext_digest(bitext)
    made_for = read_metadata(alignment_path).get(BITEXT_DIGEST)
    if made_for is not None and made_for != digest:
        raise AlignmentError(f"{alignment_path}: already records the digest of another bitext "
                             f"than {bitext_path} ({made_for[:12]}…, not {digest[:12]}…)")
    check_alignment_fits(alignment_path, bitext, bitext_path)
    table = pq.read_table(alignment_path)
    metadata = {**table.schema.metadata, f"{META_PREFIX}{BITEXT_DIGEST}".encode(): digest.encode()}
    with atomic_path(alignment_path) as tmp:
        pq.write_table(table.replace_schema_metadata(metadata), tmp, **PARQUET_WRITE_OPTIONS)
        if not pq.read_table(tmp).equals(table):
            raise AlignmentError(f"{alignment_path}: the rows written back differ; left as it was")
    return digest


def align_table(bitext_path: str | Path, out_path: str | Path, samplers: int, model: int,
                symmetrization: str, log_path: str | Path | None,
                provenance: Mapping[str, str]) -> AlignmentStats:
    """Align a tokenised BITEXT table with eflomal and write the symmetrised ALIGNMENT table."""
    bitext = read_table(bitext_path, BITEXT)
    with scratch_directory(out_path) as tmp_dir:
        files = {name: tmp_dir / name for name in ("source", "target", "forward", "reverse")}
        for side in ("source", "target"):
            files[side].write_text("\n".join(bitext[side]) + "\n", encoding="utf-8")
        run_eflomal(files["source"], files["target"], files["forward"], files["reverse"],
                    samplers, model, log_path)
        forward = files["forward"].read_text(encoding="utf-8").splitlines()
        reverse = files["reverse"].read_text(encoding="utf-8").splitlines()
    table, stats = symmetrize_corpus(bitext, forward, reverse, symmetrization,
                                     origin="eflomal output")
    logger.info("alignment (%s): %s", symmetrization, stats.describe())
    write_table(table, out_path, ALIGNMENT, provenance,
                metadata={"symmetrization": symmetrization, "aligner": aligner_name(model),
                          "stochastic": "eflomal has no seed; links vary between runs",
                          BITEXT_DIGEST: bitext_digest(bitext)})
    return stats


def freeze_alignment(source: str | Path, frozen: str | Path | None) -> None:
    """Replace the frozen alignment ``frozen`` (config ``alignment.frozen``) with the ALIGNMENT
    table ``source``, atomically and with its provenance metadata, after checking the table."""
    if frozen is None:
        raise AlignmentError("alignment.frozen is null: this config has no frozen alignment to "
                             "rebuild; set it to the path the alignment should be written to")
    table = read_table(source, ALIGNMENT, columns=["segment_id"])
    with atomic_path(frozen) as tmp:
        shutil.copyfile(source, tmp)
    logger.info("froze %s (%d segments) as %s", source, len(table), frozen)


def join_pivot_language(pairs: Sequence[tuple[str | Path, str | Path]],
                        bitext_out: str | Path, alignment_out: str | Path,
                        provenance: Mapping[str, str] | None = None) -> int:
    """One pivot language's training bitext and alignment (:mod:`circle.corpus.pivots`): the
    tokenised bitexts and their alignments ``pairs`` (each checked against its bitext) one after
    the other, segments renumbered in that order. Returns the segments written."""
    bitexts, alignments, made_with = [], [], set()
    first = 0
    for bitext_path, alignment_path in pairs:
        bitext = read_table(bitext_path, BITEXT).sort_values("segment_id", ignore_index=True)
        check_bitext_digest(alignment_path, bitext, bitext_path)
        links = read_table(alignment_path, ALIGNMENT).set_index("segment_id")
        missing = set(bitext["segment_id"]) - set(links.index)
        if missing:
            raise ValueError(f"{alignment_path}: no links for {len(missing)} segments of "
                             f"{bitext_path}")
        meta = read_metadata(alignment_path)
        made_with.add((meta.get("aligner"), meta.get("symmetrization")))
        numbers = range(first, first + len(bitext))
        links = links.loc[bitext["segment_id"]].reset_index(drop=True)
        alignments.append(links.assign(segment_id=numbers))
        bitexts.append(bitext.assign(segment_id=numbers))
        first += len(bitext)
    if len(made_with) > 1:
        raise ValueError(f"the alignments of one pivot language were made differently: "
                         f"{sorted(made_with, key=str)}")
    (aligner, symmetrization), = made_with
    joined = pd.concat(bitexts, ignore_index=True)
    write_table(joined, bitext_out, BITEXT, provenance,
                {"pivot_bitexts": ",".join(str(Path(path)) for path, _ in pairs)})
    write_table(pd.concat(alignments, ignore_index=True)[["segment_id", "forward", "reverse",
                                                          "links"]],
                alignment_out, ALIGNMENT, provenance,
                {"aligner": str(aligner), "symmetrization": str(symmetrization),
                 BITEXT_DIGEST: bitext_digest(joined)})
    return len(joined)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m circle.align record-digest ALIGNMENT BITEXT``: :func:`record_bitext_digest`."""
    parser = argparse.ArgumentParser(prog="python -m circle.align", description=main.__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record-digest", help="add the digest of the tokenised bitext "
                                 "an alignment table was made for to its metadata")
    record.add_argument("alignment", help="the ALIGNMENT table (rewritten with the same rows)")
    record.add_argument("bitext", help="the tokenised BITEXT table it was made for")
    args = parser.parse_args(argv)
    try:
        digest = record_bitext_digest(args.alignment, args.bitext)
    except AlignmentError as error:
        parser.exit(2, f"error: {error}\n")
    print(f"{args.alignment}: bitext digest {digest}")


if __name__ == "__main__":
    main()

"""The evaluation sets of the experiments: the first whole documents of each set (the
per-document single reference stays intact, §4.3.1) and the test references as plain text for
other tools."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from circle.core.schemas import EVALSET
from circle.core.tables import atomic_path, read_metadata, read_table, write_table
from circle.corpus.preprocess import detokenize
from circle.experiments.heldout import TUNING_SETS


def select_segments(evalset_path: str | os.PathLike, max_segments: int | None,
                    out_path: str | os.PathLike,
                    provenance: Mapping[str, str] | None = None) -> int:
    """Keep the first whole documents of a set, up to ``max_segments`` segments (None: all).

    Whole documents keep the per-document single-reference simulation intact; a limit below the
    first document's size is refused, as it would keep nothing. A held-out system's tune set
    (:mod:`circle.experiments.heldout`) is kept whole, its tuning sets with it.
    """
    table = read_table(evalset_path, EVALSET)
    source_metadata = read_metadata(evalset_path)
    if max_segments is not None and TUNING_SETS not in source_metadata:
        sizes = table.groupby("document", sort=False).size()
        if sizes.iloc[0] > max_segments:
            raise ValueError(
                f"{evalset_path}: its first document '{sizes.index[0]}' has {sizes.iloc[0]} "
                f"segments, more than the sets.max_segments limit {max_segments} of this set; "
                "only whole documents are kept: raise the limit or set it to null")
        table = table[table["document"].isin(sizes.index[sizes.cumsum() <= max_segments])]
    metadata = {key: value for key, value in source_metadata.items()
                if key in ("reference_names", TUNING_SETS)}
    metadata["max_segments"] = str(max_segments)
    write_table(table, out_path, EVALSET, provenance, metadata)
    return len(table)

def write_reference_texts(evalset_path: str | os.PathLike,
                          tokenised_paths: Sequence[str | os.PathLike],
                          detokenised_paths: Sequence[str | os.PathLike], lang: str) -> None:
    """An evaluation set's references as plain text, one file per reference stream (stream k
    holds every segment's k-th reference in the set's order, an empty line where a segment has
    fewer), tokenised as the pipeline scores them and detokenised (Moses), so that any tool
    scores the decoder's ``<set>.1best.txt`` / ``.1best.detok.txt`` against them, e.g. with the
    ``sacrebleu`` command. As many paths as the set's most references per segment."""
    table = read_table(evalset_path, EVALSET)
    references = [list(refs) for refs in table["references"]]
    width = max((len(refs) for refs in references), default=0)
    if len(tokenised_paths) != width or len(detokenised_paths) != width:
        raise ValueError(f"{evalset_path}: {width} reference streams, but "
                         f"{len(tokenised_paths)} tokenised and {len(detokenised_paths)} "
                         "detokenised paths to write them to")
    for k, (tokenised, detokenised) in enumerate(zip(tokenised_paths, detokenised_paths,
                                                     strict=True)):
        stream = [refs[k] if k < len(refs) else "" for refs in references]
        for path, lines in ((tokenised, stream),
                            (detokenised, [detokenize(r, lang) if r else "" for r in stream])):
            text = "".join(f"{line}\n" for line in lines)
            with atomic_path(path) as tmp:
                tmp.write_text(text, encoding="utf-8")

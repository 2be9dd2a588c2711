"""Larger single-reference tuning sets from held-out training blocks (thesis §4.6, Fig. 4.11/4.12).

The thesis enlarges its single-reference tuning set (MT03, 919 sentences) in three steps with
blocks of 600, 500 and 500 sentences of the MT training bitext, whose English side is their single
reference, and tunes an MT system trained *without* those blocks on each set, with and without the
1-best paraphrase of the single reference. Here the blocks are a seeded contiguous run of training
segments, sized as fractions of the experiment's tune set (the thesis's 600/919, 500/919, 500/919
by default). The held-out system is a second system of the same experiment, built by the same
rules under ``results/<experiment>/heldout/``: its training bitext is the experiment's minus the
blocks (and minus any other training segment whose English is a block's, so that nothing of a
block's reference is trained on), its alignment the experiment's links of the segments it keeps
(no new alignment: the links of the other segments do not change), its tune set the base set's
single references followed by the blocks, its test and paraphraser-tuning sets the experiment's.
The grammar, the pivoted paraphrase grammar, the LMs and the tuned paraphraser are rebuilt from
that training text, as the thesis's system and paraphraser excluded the blocks too.

Tuning set T<n> is the tune set's first rows that make the base set and the first n blocks: the
table's metadata ``tuning_sets`` lists their row counts, and a condition's ``_t<n>``
(:attr:`circle.experiments.conditions.Condition.tuning_set`) tunes on them.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from circle.align import BITEXT_DIGEST, bitext_digest, check_bitext_digest
from circle.core.schemas import ALIGNMENT, BITEXT, EVALSET
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.references import single_references

logger = logging.getLogger(__name__)

TUNING_SETS = "tuning_sets"
"""Metadata key of a held-out system's tune set: JSON row counts of T0 (the base set), T1, ..."""

HELDOUT_REFERENCE = "single reference"
"""The one reference name of a held-out tune set: a base segment's single reference (the seeded
per-document choice, §4.3.1) or a block segment's training English."""


def block_sizes(base: int, fractions: Sequence[float]) -> list[int]:
    """The held-out blocks' sizes in segments: each fraction of the ``base`` tune set's size,
    rounded (at least one segment)."""
    return [max(1, round(fraction * base)) for fraction in fractions]


def tuning_set_sizes(base: int, blocks: Sequence[int]) -> list[int]:
    """Row counts of T0 (the base set), T1, ...: the base and the first n blocks."""
    return [int(size) for size in np.cumsum([base, *blocks])]


def choose_block(train: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    """A seeded contiguous run of ``size`` training segments (in segment order)."""
    ordered = train.sort_values("segment_id", kind="stable", ignore_index=True)
    if size > len(ordered) // 2:
        raise ValueError(f"the held-out blocks ({size} segments) would take more than half of "
                         f"the {len(ordered)} training segments; lower figures.heldout_blocks")
    start = int(np.random.default_rng(seed).integers(0, len(ordered) - size + 1))
    return ordered.iloc[start:start + size]


def hold_out_blocks(train_path: str | os.PathLike, alignment_path: str | os.PathLike,
                    tune_path: str | os.PathLike, shared_paths: Mapping[str, str | os.PathLike],
                    fractions: Sequence[float], seed: int,
                    outputs: Mapping[str, str | os.PathLike],
                    provenance: Mapping[str, str] | None = None) -> list[int]:
    """Write the held-out system's tokenised tables and alignment (module docstring).

    Reads the experiment's tokenised training bitext, its alignment, its selected tune set and
    the tokenised evaluation sets the held-out system shares (``shared_paths``: set name ->
    table, copied as they are). ``outputs`` maps ``train``, ``alignment``, ``tune`` and every
    shared set's name to its path. Returns the row counts of T0, T1, ...
    """
    train = read_table(train_path, BITEXT)
    base = read_table(tune_path, EVALSET)
    sizes = block_sizes(len(base), fractions)
    block = choose_block(train, sum(sizes), seed)
    held = train["segment_id"].isin(block["segment_id"])
    # a segment elsewhere whose English is a block's would train on that block's reference
    dropped = ~held & train["target"].isin(set(block["target"]))
    kept = train[~held & ~dropped]
    check_bitext_digest(alignment_path, train, train_path)
    alignment = read_table(alignment_path, ALIGNMENT)
    links = alignment[alignment["segment_id"].isin(kept["segment_id"])]
    if len(links) != len(kept):
        raise ValueError(f"{alignment_path}: links for {len(links)} of the {len(kept)} training "
                         f"segments the held-out system keeps ({train_path})")
    first_id = int(base["segment_id"].max()) + 1  # a user's corpus numbers each set from 0
    block_rows = pd.DataFrame({
        "segment_id": range(first_id, first_id + len(block)),
        "document": block["document"].to_numpy(), "source": block["source"].to_numpy(),
        "references": [[target] for target in block["target"]],
        "ref_order": [[0]] * len(block)})
    base_rows = base.assign(references=[[single] for single in single_references(base)],
                            ref_order=[[0]] * len(base))
    tune = pd.concat([base_rows, block_rows], ignore_index=True)
    counts = tuning_set_sizes(len(base), sizes)
    alignment_meta = read_metadata(alignment_path)
    write_table(kept, outputs["train"], BITEXT, provenance,
                {"held_out_segments": json.dumps([int(s) for s in block["segment_id"]]),
                 "dropped_duplicates": str(int(dropped.sum()))})
    write_table(links, outputs["alignment"], ALIGNMENT, provenance,
                {**{key: alignment_meta[key] for key in ("symmetrization", "aligner")
                    if key in alignment_meta}, BITEXT_DIGEST: bitext_digest(kept)})
    write_table(tune, outputs["tune"], EVALSET, provenance,
                {"reference_names": json.dumps([HELDOUT_REFERENCE]),
                 TUNING_SETS: json.dumps(counts)})
    for name, path in shared_paths.items():
        write_table(read_table(path, EVALSET), outputs[name], EVALSET, provenance,
                    {"reference_names": read_metadata(path)["reference_names"]})
    logger.info("held out %d training segments (%s to %s) in blocks of %s; dropped %d other "
                "segments with a block's English; tuning sets of %s segments", len(block),
                block["segment_id"].iloc[0], block["segment_id"].iloc[-1], sizes,
                int(dropped.sum()), counts)
    return counts


def tuning_set_rows(table: pd.DataFrame, tuning_set: int | None,
                    path: str | os.PathLike) -> pd.DataFrame:
    """The rows of tuning set T<``tuning_set``> of the tune set ``table`` read from ``path``
    (None: every row)."""
    if tuning_set is None:
        return table
    counts = read_metadata(path).get(TUNING_SETS)
    if counts is None:
        raise ValueError(f"{path}: a tune set without held-out blocks has no tuning set "
                         f"T{tuning_set} (conditions _t<n> tune the held-out system)")
    counts = json.loads(counts)
    if not 0 <= tuning_set < len(counts) or counts[-1] != len(table):
        raise ValueError(f"{path}: no tuning set T{tuning_set}: its {len(table)} rows make the "
                         f"tuning sets T0-T{len(counts) - 1} of {counts} rows")
    return table.iloc[:counts[tuning_set]]

"""Decoding an evaluation-set table in shards and gathering the shards' n-best lists.

A set (schema ``EVALSET``) is cut into ``shards`` contiguous, nearly equal blocks of rows, in
segment order, so that each block is one Snakemake job; :func:`gather_nbest` concatenates the
blocks' ``NBEST`` tables in the same order and also writes the Moses n-best text and the 1-best
text, tokenised and detokenised, one line per segment. The text files number sentences by their
0-based position in the set (Moses' convention); the set table's row order, which is also the
order of the first appearance of each ``segment_id`` in the ``NBEST`` table, maps a line number
to its segment. :class:`RecordedDecode` reads a gathered table back as n-best lists, so a tuning
run that starts from the weights a set was decoded with need not decode it again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from circle.core.schemas import EVALSET
from circle.core.tables import atomic_path, read_metadata, read_table, write_table
from circle.corpus.preprocess import detokenize
from circle.decoder.corpus import decode_corpus
from circle.decoder.grammar import load_grammar
from circle.decoder.lm import LanguageModel
from circle.decoder.model import (
    DECODER_FEATURES,
    RERANK_FEATURE,
    DecoderSettings,
    Model,
    read_weights,
)
from circle.decoder.nbest import NBEST, Hypothesis, best_hypotheses, format_nbest, nbest_rows


def shard_rows(count: int, shard: int, shards: int) -> range:
    """The rows of shard ``shard`` (0-based) when ``count`` rows are cut into ``shards`` blocks."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} does not exist among {shards} shards")
    bounds = np.linspace(0, count, shards + 1).round().astype(int)
    return range(bounds[shard], bounds[shard + 1])


def decode_shard(evalset_path: str | os.PathLike, grammar_path: str | os.PathLike,
                 lm_path: str | os.PathLike, weights_path: str | os.PathLike,
                 out_path: str | os.PathLike, shard: int, shards: int,
                 settings: DecoderSettings, workers: int = 1,
                 provenance: Mapping[str, str] | None = None,
                 rerank_lm_path: str | os.PathLike | None = None) -> int:
    """Decode one shard of an evaluation set's source side into an ``NBEST`` table; with
    ``rerank_lm_path`` its lists reranked with that LM (:mod:`circle.decoder.rerank`)."""
    table = read_table(evalset_path, EVALSET, columns=["segment_id", "source"])
    block = table.iloc[list(shard_rows(len(table), shard, shards))]
    weights = read_weights(weights_path)
    lm = LanguageModel(lm_path)
    grammar = load_grammar(grammar_path)
    rerank = rerank_lm_path is not None
    names = Model(grammar.feature_names, weights, rerank).names  # checks the weights first
    outputs = decode_corpus(list(block["source"]), grammar, lm, weights, settings,
                            workers=workers, rerank_lm=rerank_lm_path)
    write_nbest(block["segment_id"].tolist(), outputs, names, out_path, provenance,
                {"weights": json.dumps(weights, sort_keys=True), "shard": f"{shard}/{shards}"})
    return len(block)


def write_nbest(segment_ids: Sequence[int], outputs: Sequence[Sequence[Hypothesis]],
                feature_names: Sequence[str], out_path: str | os.PathLike,
                provenance: Mapping[str, str] | None = None,
                metadata: Mapping[str, str] | None = None,
                targets: Sequence[str | None] | None = None) -> None:
    """Write per-segment n-best lists as an ``NBEST`` table."""
    rows = []
    for position, (segment, hypotheses) in enumerate(zip(segment_ids, outputs, strict=True)):
        rows += nbest_rows(int(segment), hypotheses,
                           None if targets is None else targets[position])
    frame = pd.DataFrame(rows, columns=NBEST.arrow.names)
    write_table(frame, out_path, NBEST, provenance,
                {**(metadata or {}), "feature_names": json.dumps(list(feature_names))})


def _hypotheses(rows: pd.DataFrame, feature_names: Sequence[str]) -> list[Hypothesis]:
    """The ``NBEST`` rows of one list as hypotheses, in row order."""
    return [Hypothesis(text, score, dict(zip(feature_names, values.tolist(), strict=True)))
            for text, score, values in zip(rows["hypothesis"].tolist(), rows["score"].tolist(),
                                           rows["features"], strict=True)]


def gather_nbest(shard_paths: Sequence[str | os.PathLike], out_path: str | os.PathLike,
                 nbest_text_path: str | os.PathLike, onebest_path: str | os.PathLike,
                 detokenized_path: str | os.PathLike, lang: str,
                 provenance: Mapping[str, str] | None = None) -> int:
    """Concatenate shard ``NBEST`` tables (in shard order); write the Moses n-best text, the
    1-best text and the 1-best text detokenised for language ``lang`` too."""
    frames = [read_table(path, NBEST) for path in shard_paths]
    names = {read_metadata(path)["feature_names"] for path in shard_paths}
    if len(names) != 1:
        raise ValueError(f"{shard_paths[0]}: the shards were decoded with different features")
    feature_names = json.loads(names.pop())
    frame = pd.concat(frames, ignore_index=True)
    metadata = {key: value for key, value in read_metadata(shard_paths[0]).items()
                if key in ("weights", "feature_names")}
    write_table(frame, out_path, NBEST, provenance, metadata)
    with atomic_path(nbest_text_path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        groups = frame.groupby("segment_id", sort=False)
        for position, (_, group) in enumerate(groups):
            out.writelines(line + "\n" for line in
                           format_nbest(position, _hypotheses(group, feature_names)))
    best = best_hypotheses(frame)
    outputs = [best.get(segment, "") for segment in frame["segment_id"].drop_duplicates()]
    for path, texts in ((onebest_path, outputs),
                        (detokenized_path, [detokenize(text, lang) for text in outputs])):
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
            out.writelines(text + "\n" for text in texts)
    return len(outputs)


@dataclass(frozen=True)
class RecordedDecode:
    """A set's n-best lists as :func:`gather_nbest` recorded them, in the set's row order, with
    the weights they were decoded with (completed as the decoder completes them: an omitted
    ``target`` weight is 0)."""

    path: str
    weights: dict[str, float]
    lists: list[list[Hypothesis]]

    @classmethod
    def read(cls, path: str | os.PathLike, segment_ids: Sequence[int]) -> RecordedDecode:
        """The lists of ``segment_ids`` (the set's rows, in order) from the ``NBEST`` table
        ``path``; a segment the table lacks is an error naming it."""
        metadata = read_metadata(path)
        names = json.loads(metadata["feature_names"])
        model = Model([name for name in names if name not in (*DECODER_FEATURES, RERANK_FEATURE)],
                      json.loads(metadata["weights"]), RERANK_FEATURE in names)
        if model.names != tuple(names):
            raise ValueError(f"{path}: features {names} are not a decoder's")
        weights = dict(zip(names, model.weights, strict=True))
        frame = read_table(path, NBEST, columns=["segment_id", "rank", "hypothesis", "score",
                                                 "features"])
        by_segment = {segment: group.sort_values("rank", kind="stable")
                      for segment, group in frame.groupby("segment_id", sort=False)}
        missing = [segment for segment in segment_ids if segment not in by_segment]
        if missing:
            raise ValueError(f"{path}: no n-best list for segments {missing[:5]} of the set "
                             f"({len(missing)} of {len(segment_ids)} missing)")
        lists = [_hypotheses(by_segment[segment], names) for segment in segment_ids]
        return cls(str(path), weights, lists)

    def lists_for(self, weights: Mapping[str, float]) -> list[list[Hypothesis]] | None:
        """The recorded lists if ``weights`` are exactly the recorded decode's, else None."""
        return self.lists if dict(weights) == self.weights else None

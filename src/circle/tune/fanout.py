"""A tuning run whose iterations fan out over jobs, so that a cluster decodes (and, for 1H+kT,
paraphrases towards) one iteration's n-best lists on many nodes at once: at paper scale an
iteration is 865 sentences × 100–300-best lists and, for targeted conditions, a paraphrase list
per new hypothesis (thesis §5.3).

Iteration i of a run is ``shards`` shard jobs and one optimisation job, which exchange files:

* shard job s (:func:`decode_shard`) reads iterations 1..i-1 (the weights iteration i decodes;
  the pool, which says which pairs are new), decodes its sentences with the iteration's weight
  vectors and scores the new (sentence, hypothesis) pairs against their own references; a
  targeted run's paraphrasing happens here. It writes :data:`~circle.core.schemas.TUNING_SHARD`.
* the optimisation job (:func:`optimise_iteration`) adds the shards to the pool in the order in
  which :func:`circle.tune.loop.tune` adds one shard of every sentence, optimises, and writes
  iteration i as the file the in-process loop's checkpoint saves
  (:mod:`circle.tune.checkpoint`), its stop reason included;
* once an iteration ended the run, :func:`finish` makes the run's result from the files.

Sentences are dealt to shards by reference (:func:`shard_of`): a targeted hook paraphrases the
new pairs of one reference as one batch, so a reference's sentences stay in one shard. Decoding a
sentence does not depend on the others, so a fanned-out run returns the same weights and log as
the in-process loop (tests/unit/test_tune_fanout.py); and a killed run resumes at the first
iteration file missing, as Snakemake reruns only the jobs whose outputs are missing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from circle.core.schemas import TUNING_SHARD
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import Hypothesis
from circle.decoder.sets import RecordedDecode
from circle.tune.checkpoint import SavedIteration, StaleIteration
from circle.tune.loop import (
    IterationShard,
    PoolBuilder,
    TuningProblem,
    TuningResult,
    restored_entry,
)

logger = logging.getLogger(__name__)

Decode = Callable[[list[str], dict[str, float]], list[list[Hypothesis]]]
"""``decode(sources, weights) -> n-best lists``, one per source, in order."""


def shard_of(references: Sequence[Sequence[str]], shards: int) -> list[int]:
    """The shard of each sentence: the sentences of one (first) reference go together, and the
    references are dealt to the shards in turn in the order they first appear."""
    if shards < 1:
        raise ValueError(f"cannot fan out over {shards} shards")
    groups: dict[str, int] = {}
    return [groups.setdefault(refs[0], len(groups)) % shards for refs in references]


def shard_sentences(references: Sequence[Sequence[str]], shards: int, shard: int) -> list[int]:
    """The sentence indices of shard ``shard`` of ``shards`` (:func:`shard_of`), in order."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} of {shards} does not exist")
    return [index for index, owner in enumerate(shard_of(references, shards)) if owner == shard]


def restore(builder: PoolBuilder, saved: Sequence[SavedIteration]) -> np.ndarray:
    """Put iterations 1..i-1 into ``builder``'s pool; returns the weights iteration i decodes.
    Refuses a gap and an iteration that ended the run."""
    weights = builder.problem.start
    for expected, iteration in enumerate(saved, start=1):
        if iteration.iteration != expected:
            raise ValueError(f"saved iteration {iteration.iteration} given where iteration "
                             f"{expected} belongs")
        if iteration.stop_reason is not None:
            raise ValueError(f"iteration {expected} ended the run ({iteration.stop_reason}); "
                             "no iteration follows it")
        builder.restore(iteration)
        weights = iteration.next_weights
    return weights


def decode_shard(builder: PoolBuilder, saved: Sequence[SavedIteration],
                 sentences: Sequence[str], indices: Sequence[int],
                 decode: Decode, recorded: RecordedDecode | None = None) -> IterationShard:
    """Iteration ``len(saved) + 1`` on the sentences ``indices``: their n-best lists under the
    iteration's weight vectors and the new pairs, scored. The ``recorded`` lists of the tune
    set stand in for decoding the weights they were decoded with, as in the one-job loop
    (:func:`circle.tune.loop.tune`), so a fanned-out run decodes what the loop decodes."""
    problem = builder.problem
    weights = restore(builder, saved)
    sources = [sentences[index] for index in indices]
    nbests, decoded = [], 0
    for vector in problem.decoded_vectors(len(saved) + 1, weights):
        weights_map = problem.weights_of(vector)
        if recorded is not None and (lists := recorded.lists_for(weights_map)) is not None:
            nbests.append([lists[index] for index in indices])
        else:
            nbests.append(decode(sources, weights_map))
            decoded += len(sources)
    return replace(builder.score(list(indices), sources, nbests), decoded_sentences=decoded)


def write_shard(shard: IterationShard, path: str | os.PathLike, names: Sequence[str],
                fingerprint: str, provenance: Mapping[str, str] | None = None) -> None:
    """Write a shard as :data:`~circle.core.schemas.TUNING_SHARD` (atomically)."""
    frame = pd.DataFrame({"decode": pd.Series(shard.decodes, dtype="int32"),
                          "sentence": pd.Series(shard.sentences, dtype="int64"),
                          "hypothesis": pd.Series(shard.hypotheses, dtype=object),
                          "features": pd.Series(list(shard.features), dtype=object),
                          "stats": pd.Series(list(shard.stats), dtype=object)})
    one_best = [[index, stats.tolist()] for index, stats
                in zip(shard.one_best_sentences, shard.one_best_stats, strict=True)]
    write_table(frame, path, TUNING_SHARD, provenance,
                {"feature_names": json.dumps(list(names)), "one_best": json.dumps(one_best),
                 "fingerprint": fingerprint, "decoded_sentences": str(shard.decoded_sentences)})


def read_shard(path: str | os.PathLike, fingerprint: str, n_stats: int) -> IterationShard:
    """A shard written for the run of ``fingerprint`` (others are refused)."""
    meta = read_metadata(path)
    if meta.get("fingerprint") != fingerprint:
        raise StaleIteration(f"{path}: written for other inputs or settings of the run")
    table = read_table(path, TUNING_SHARD)
    width = len(json.loads(meta["feature_names"]))
    one_best = json.loads(meta["one_best"])
    return IterationShard(
        table["decode"].tolist(), table["sentence"].tolist(), table["hypothesis"].tolist(),
        np.array(table["features"].tolist(), dtype=np.float64).reshape(len(table), width),
        np.array(table["stats"].tolist(), dtype=np.float64).reshape(len(table), n_stats),
        [int(index) for index, _ in one_best],
        np.array([stats for _, stats in one_best], dtype=np.float64).reshape(-1, n_stats),
        int(meta["decoded_sentences"]))


def optimise_iteration(builder: PoolBuilder, saved: Sequence[SavedIteration],
                       shards: Sequence[IterationShard], workers: int = 1) -> SavedIteration:
    """Iteration ``len(saved) + 1`` from its shards: pool, optimisation (in ``workers``
    processes) or stop; returned as the checkpoint file of that iteration holds it."""
    problem = builder.problem
    weights = restore(builder, saved)
    covered = sorted(index for shard in shards for index in shard.one_best_sentences)
    if covered != sorted(set(covered)):
        raise ValueError("the shards of an iteration overlap")
    new_rows, decode_score = builder.merge(shards)
    entry, new = problem.step(builder, [restored_entry(iteration) for iteration in saved],
                              weights, new_rows, decode_score, workers)
    entry = replace(entry, decoded_sentences=sum(shard.decoded_sentences for shard in shards))
    logger.info("iteration %d: %s of the decode %.4f%s; %d new hypotheses, pool %d%s",
                entry.iteration, problem.metric.name, decode_score,
                "" if entry.pool_score is None else f", of the pool at the new weights "
                                                    f"{entry.pool_score:.4f}",
                new_rows, len(builder.pool),
                "" if entry.stop_reason is None else f"; the run stops: {entry.stop_reason}")
    return builder.saved(entry, new)


def finish(problem: TuningProblem, saved: Sequence[SavedIteration]) -> TuningResult:
    """The result of a run whose last saved iteration ended it."""
    if not saved or saved[-1].stop_reason is None:
        raise ValueError("the run has not ended: its last iteration did not stop it")
    for expected, iteration in enumerate(saved, start=1):
        if iteration.iteration != expected:
            raise ValueError(f"saved iteration {iteration.iteration} given where iteration "
                             f"{expected} belongs")
    return problem.result([restored_entry(iteration) for iteration in saved], None)

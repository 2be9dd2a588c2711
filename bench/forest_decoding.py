"""Time the forest mode's per-hypothesis step (thesis §5.3; ``Decoder.decode_forest``): re-weight
one reference's hypergraph towards a hypothesis and read its paraphrase k-best list, without a
new search.

``--sentences`` tune sentences drawn with a seeded generator are translated with the 1H
replicate-0 weights into ``--hypotheses``-best lists (the targets of a 1H+kT run's first
iteration). Each sentence's single reference is decoded once into its forest, as the targeted
paraphraser of the grid's choice does in forest mode (targeted to the union of the hypotheses'
words, pop and options limits × ``--forest-beam``); then every distinct hypothesis word set
re-weights it and reads the ``--nbest``-best list, ``--rounds`` times over. Printed: CPU
milliseconds per list (re-weighting + k-best, the median round), edges per forest, and a digest
of every list's texts, scores and features, so that two versions of the decoder can be checked
to give identical lists. With ``--worker-task`` it times instead what a tuning worker does for
each reference (:func:`circle.paraphrase.targeted.targeted_lists`: every hypothesis's list, reranked
with the default reranker and the 5-gram LM, cut to ``--depth``) and prints CPU milliseconds per
(reference, hypothesis) pair and a digest of the reranked lists. Run from the repository root
after ``snakemake grid_search``:

    python bench/forest_decoding.py [--results results/default] [--sentences 6]
        [--worker-task [--depth 3]]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, GRID_CHOICE, RESULTS, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.decoder import Decoder, DecoderSettings, LanguageModel, load_grammar, read_weights
from circle.experiments.conditions import TuningRun
from circle.paraphrase.config import bias_name, read_grid_choice
from circle.paraphrase.targeted import Reranker, TargetedTask, kept_forest, targeted_lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=RESULTS.format(experiment="default"))
    parser.add_argument("--sentences", type=int, default=6)
    parser.add_argument("--hypotheses", type=int, default=100)
    parser.add_argument("--nbest", type=int, default=100)
    parser.add_argument("--forest-beam", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker-task", action="store_true")
    parser.add_argument("--depth", type=int, default=3)
    args = parser.parse_args()
    results = Results.at(args.results)

    tune = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    rows = np.sort(np.random.default_rng(args.seed).choice(len(tune), args.sentences,
                                                           replace=False))
    lm = LanguageModel(results.lm(3))
    translator = Decoder(load_grammar(results.path(FILTERED_GRAMMAR, evalset="tune")), lm,
                         read_weights(results.weights(TuningRun.of("1H", 0).name)),
                         DecoderSettings())
    tasks = [(tune["references"].iloc[row][0],
              [h.text for h in translator.decode(tune["source"].iloc[row], k=args.hypotheses)])
             for row in rows.tolist()]

    choice = read_grid_choice(results.path(GRID_CHOICE))
    settings = DecoderSettings(k=args.nbest)
    settings = replace(settings, pop_limit=settings.pop_limit * args.forest_beam,
                       options_limit=settings.options_limit * args.forest_beam)
    weights = dict(read_weights(results.paraphraser_weights("0")),
                   target=choice.targeting_weight)
    paraphraser = Decoder(load_grammar(results.paraphrase_grammar(bias_name(choice.bias))), lm,
                          weights, settings)
    if args.worker_task:
        time_worker_task(paraphraser, tasks, results.lm(5), args)
        return
    forests, targets = [], []
    for reference, hypotheses in tasks:
        words = [sorted(w) for w in dict.fromkeys(frozenset(h.split()) for h in hypotheses)]
        forests.append(paraphraser.forest(reference, sorted(set().union(*words))))
        targets.append(words)
    lists = sum(len(words) for words in targets)
    edges = [forest.edges for forest in forests]

    digest, rounds = hashlib.sha256(), []
    for round_number in range(args.rounds):
        start = time.process_time()
        decoded = [paraphraser.decode_forest(forest, words)
                   for forest, targets_of in zip(forests, targets, strict=True)
                   for words in targets_of]
        rounds.append(time.process_time() - start)
        if round_number == 0:
            for nbest in decoded:
                for hypothesis in nbest:
                    digest.update(f"{hypothesis.text}\t{hypothesis.score!r}\t"
                                  f"{hypothesis.features!r}\n".encode())
    print(f"{len(forests)} forests ({min(edges):,}–{max(edges):,} edges), {lists} lists of "
          f"{args.nbest}-best; paraphraser bias {choice.bias:g}, targeting weight "
          f"{choice.targeting_weight:g}, forest beam x{args.forest_beam}")
    print(f"{1000 * statistics.median(rounds) / lists:.2f} ms CPU per list (median of "
          f"{args.rounds} rounds: {', '.join(f'{1000 * r / lists:.2f}' for r in rounds)})")
    print(f"digest of the lists: {digest.hexdigest()[:16]}")


def time_worker_task(paraphraser: Decoder, tasks: list[tuple[str, list[str]]],
                     reranking_lm: Path, args: argparse.Namespace) -> None:
    """Time :func:`circle.paraphrase.targeted.targeted_lists` on ``tasks``, their forests built
    first."""
    targeted_tasks = []
    for reference, hypotheses in tasks:
        forest_words = tuple(sorted(set().union(*(h.split() for h in hypotheses))))
        kept_forest(paraphraser, reference, forest_words)
        targeted_tasks.append(TargetedTask(reference, hypotheses, forest_words))
    pairs = sum(len(hypotheses) for _, hypotheses in tasks)
    digest, rounds = hashlib.sha256(), []
    for round_number in range(args.rounds):
        start = time.process_time()
        lists = [targeted_lists(paraphraser, task, "forest", Reranker(), str(reranking_lm),
                                args.depth) for task in targeted_tasks]
        rounds.append(time.process_time() - start)
        if round_number == 0:
            for ranked in lists:
                digest.update(repr(ranked).encode())
    print(f"{len(tasks)} forests, {pairs} (reference, hypothesis) pairs, reranked, depth "
          f"{args.depth}")
    print(f"{1000 * statistics.median(rounds) / pairs:.3f} ms CPU per pair (median of "
          f"{args.rounds} rounds: {', '.join(f'{1000 * r / pairs:.3f}' for r in rounds)})")
    print(f"digest of the reranked lists: {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()

"""Compare the two search modes of targeted paraphrasing (thesis §5.3;
``circle.paraphrase.targeted``) on a finished experiment: exact (one targeted search per distinct
hypothesis word set) against forest (one search per reference, re-weighted per hypothesis).

``--sentences`` tune sentences drawn with a seeded generator are translated with the 1H
replicate-0 weights into ``--hypotheses``-best lists (the targets, as in the first iteration of
a 1H+kT run); each sentence's single reference is then paraphrased towards every hypothesis with
the targeted paraphraser of the experiment's grid-search choice, in each mode, with the config's
paraphrase n-best size and reranker, in one process. Printed: CPU milliseconds per (reference,
hypothesis) pair in each mode, the share of pairs whose reranked 1-best (the 1H+1T reference) is
identical, the TER between the two 1-bests, and how often the forest's 1-best has the better
paraphraser model score. Run from the repository root after ``snakemake grid_search``:

    python bench/targeted_modes.py [--experiment default] [--sentences 10] [--hypotheses 100]

With ``--run-cache DIR`` (the cache of one forest-mode 1H+kT run, e.g. ``targeted_tuning.py
--out``'s ``cache``) the targets are instead the hypotheses that run added after its first
iteration, for ``--sentences`` of its references, and each forest is targeted to the forest words
the run recorded for them (today's runs: the words of the reference's first batch).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, GRID_CHOICE, Results
from circle.core.schemas import EVALSET, TARGETED_CACHE
from circle.core.tables import read_table
from circle.decoder import Decoder, DecoderSettings, LanguageModel, load_grammar, read_weights
from circle.experiments.conditions import TuningRun
from circle.paraphrase.config import bias_name, read_grid_choice
from circle.paraphrase.targeted import SEARCH_MODES, Reranker, TargetedParaphraser, TargetedTask
from circle.tune.metrics import ter_from_stats, ter_stats

ROOT = Path(__file__).resolve().parents[1]


def targets(results: Results, sentences: int, hypotheses: int, seed: int,
            settings: DecoderSettings) -> list[tuple[str, list[str]]]:
    """(reference, hypotheses) tasks: sampled tune sentences' first references and n-best
    translations under the 1H replicate-0 weights."""
    tune = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    rows = np.sort(np.random.default_rng(seed).choice(len(tune), size=sentences, replace=False))
    decoder = Decoder(load_grammar(results.path(FILTERED_GRAMMAR, evalset="tune")),
                      LanguageModel(results.lm(3)),
                      read_weights(results.weights(TuningRun.of("1H", 0).name)), settings)
    return [(tune["references"].iloc[row][0],
             [h.text for h in decoder.decode(tune["source"].iloc[row], k=hypotheses)])
            for row in rows.tolist()]


def later_targets(cache: Path, sentences: int, seed: int
                  ) -> list[tuple[str, list[str], tuple[str, ...]]]:
    """(reference, hypotheses, forest words) tasks from a forest-mode run's cache parts (one per
    iteration, in order): for sampled references, the hypotheses of the parts after the first,
    grouped by the forest words the run gave them."""
    parts = sorted(cache.glob("*.parquet"))
    if len(parts) < 2:
        raise SystemExit(f"{cache}: the cache of a run of at least two iterations is needed")
    tables = [read_table(part, TARGETED_CACHE).query("rank == 0") for part in parts]
    references = sorted(set(tables[0]["reference"]))
    chosen = np.random.default_rng(seed).choice(len(references), size=sentences, replace=False)
    later = pd.concat(tables[1:])
    tasks = []
    for reference in (references[i] for i in sorted(chosen.tolist())):
        rows = later[later["reference"] == reference]
        for words, group in rows.groupby("forest_words", sort=False):
            tasks.append((reference, group["hypothesis"].tolist(), tuple(words.split())))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--config", default=str(ROOT / "config/config.yaml"))
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--hypotheses", type=int, default=100)
    parser.add_argument("--forest-beam", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-cache", type=Path,
                        help="a forest-mode run's cache: target its later iterations' hypotheses")
    args = parser.parse_args()
    results = Results.of(ROOT, args.experiment)
    config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    targeted = config.get("targeted", {})
    settings = DecoderSettings()
    if args.run_cache is None:
        tasks = [(reference, hypotheses, None) for reference, hypotheses
                 in targets(results, args.sentences, args.hypotheses, args.seed, settings)]
    else:
        tasks = later_targets(args.run_cache, args.sentences, args.seed)
    pairs = sum(len(hypotheses) for _, hypotheses, _ in tasks)
    choice = read_grid_choice(results.path(GRID_CHOICE))
    grammar = load_grammar(results.paraphrase_grammar(bias_name(choice.bias)))
    weights = read_weights(results.paraphraser_weights("0"))
    reranker = Reranker(**targeted.get("rerank", {}))
    print(f"{len({reference for reference, _, _ in tasks})} references ({len(tasks)} forests), "
          f"{pairs} (reference, hypothesis) pairs; paraphraser "
          f"bias {choice.bias:g}, targeting weight {choice.targeting_weight:g}, "
          f"{targeted.get('nbest', 100)}-best, forest beam x{args.forest_beam}")
    lists, seconds = {}, {}
    for mode in SEARCH_MODES:
        paraphraser = TargetedParaphraser(
            grammar, results.lm(3), weights, choice,
            DecoderSettings(k=targeted.get("nbest", 100)), mode, args.forest_beam, reranker,
            results.lm(5), depth=1)
        batches = [TargetedTask(reference, hypotheses,
                                paraphraser.forest_words(hypotheses) if first is None
                                or mode == "exact" else first)
                   for reference, hypotheses, first in tasks]
        start = time.process_time()
        lists[mode] = [ranked[0] for task in paraphraser.lists(batches) for ranked in task]
        seconds[mode] = time.process_time() - start
        paraphraser.close()
        print(f"{mode:>6}: {1000 * seconds[mode] / pairs:.2f} ms CPU per pair")
    exact = [text for text, _ in lists["exact"]]
    forest = [text for text, _ in lists["forest"]]
    identical = np.mean([a == b for a, b in zip(exact, forest, strict=True)])
    ter = np.mean(ter_from_stats(ter_stats(forest, [[text] for text in exact])))
    better = np.mean([f[1] > e[1] + 1e-9 for e, f in zip(lists["exact"], lists["forest"],
                                                         strict=True)])
    print(f"reranked 1-best identical for {100 * identical:.1f} % of pairs; mean TER between "
          f"them {100 * ter:.2f}; forest's reranking score higher for {100 * better:.1f} %; "
          f"forest / exact CPU {seconds['forest'] / seconds['exact']:.2f}")


if __name__ == "__main__":
    main()

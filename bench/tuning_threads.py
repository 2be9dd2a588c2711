"""Two MT tuning runs on two cores: one after the other with two decoding workers each (what the
tune_translation rule's ``threads: 2`` does), or side by side with one worker each (what
``--set-threads tune_translation=1`` would make Snakemake do). Time each mode as a whole
process, the two modes alternating (the machine's speed drifts):

    for run in 1 2 3; do
        for mode in side-by-side sequential; do
            /usr/bin/time -f "$mode %e s" python bench/tuning_threads.py --mode $mode \\
                --config results/identity-feature/config.yaml
        done
    done

Each run tunes a replicate of a condition (default 1H, replicates 0 and 1) exactly as
bench/tuners.py does, on an experiment whose tune grammar exists (``--config``; default the
experiment of config/config.yaml), and prints its wall seconds, iterations and a digest of its
weights (the same in both modes: decoding does not depend on the number of workers).
"""

import argparse
import hashlib
import json
import multiprocessing
import time
from dataclasses import replace

import yaml

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, read_weights
from circle.experiments.conditions import UNTUNED_TRANSLATION, Condition, TuningRun, run_seed
from circle.experiments.mt_tuning import condition_references
from circle.tune.loop import TUNING_FIXED, TuningSettings, tune


def tune_run(config_path: str, condition: str, replicate: int, workers: int,
             k: int | None = None, **settings):
    """One tuning run of ``condition`` (replicate ``replicate``) on the experiment of
    ``config_path``, as the pipeline's job runs it (``k``: another n-best size; ``settings``:
    other :class:`~circle.tune.loop.TuningSettings`); its
    :class:`~circle.tune.loop.TuningResult`."""
    with open(config_path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    results = Results.of(".", config["experiment"])
    tune_set = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    seed = run_seed(config["seed"], TuningRun.of(condition, replicate).name)
    tuning = replace(TuningSettings.from_config(config.get("tuning", {}), seed), **settings)
    decoder = DecoderSettings.from_config(config.get("decoder", {}))
    return tune(list(tune_set["source"]),
                condition_references(tune_set, Condition.parse(condition), None),
                results.path(FILTERED_GRAMMAR, evalset="tune"),
                results.lm(config.get("lm", {}).get("decoding_order", 3)),
                read_weights(results.weights(UNTUNED_TRANSLATION)),
                decoder if k is None else replace(decoder, k=k), tuning, workers,
                fixed=TUNING_FIXED)


def tune_replicate(config_path: str, condition: str, replicate: int, workers: int) -> str:
    """One tuning run; its line of output."""
    began = time.perf_counter()
    result = tune_run(config_path, condition, replicate, workers)
    digest = hashlib.sha256(json.dumps(result.weights, sort_keys=True).encode()).hexdigest()
    return (f"{TuningRun.of(condition, replicate).name}: {time.perf_counter() - began:.1f} s, "
            f"{len(result.log)} iterations, {workers} worker(s), weights {digest[:12]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["sequential", "side-by-side"], required=True)
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--condition", default="1H")
    parser.add_argument("--replicates", type=int, nargs=2, default=[0, 1])
    args = parser.parse_args()
    jobs = [(args.config, args.condition, replicate,
             2 if args.mode == "sequential" else 1) for replicate in args.replicates]
    if args.mode == "sequential":
        lines = [tune_replicate(*job) for job in jobs]
    else:
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            lines = pool.starmap(tune_replicate, jobs)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

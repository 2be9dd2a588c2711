"""How many decodes a tuning run needs under other stopping rules and n-best sizes, and what it
returns: each run's decodes, iterations, returned iteration and tune score.

    python bench/tuning_decodes.py --conditions 1H 2H 4H --replicates 0 1 2 \\
        --variant patience=none --variant patience=2 --variant patience=2,k=300

Runs each (condition, replicate) of the experiment of ``--config`` (its tune grammar and untuned
weights must exist: ``snakemake untuned_translations``) once per variant, as the pipeline's job
runs it (the pipeline's replicate seeds, ``replicate_pool`` 1 as the schema's default; the
untuned start is decoded here, where the pipeline reads its lists from the decode stage), and prints
a row per run and a total per variant. A variant is comma-separated ``key=value`` pairs:
``patience`` (an integer or ``none``), ``k`` (the n-best size), ``max_iterations``. Tune scores
only: the test set is not used to choose between variants.

A run with a patience stops at the first decode its patience allows and returns its best decode
so far; until then it is the same run without patience (same seeds, same decodes, same
optimisations). So ``--derive-patience 1 2 3`` prints, beside every run of a variant without
patience, the runs each patience would have made, read off its log (``patience=p (derived)``)
instead of tuning them again; ``--variant patience=2`` tunes one to check the derivation.
"""

import argparse

from tuning_threads import tune_run

from circle.decoder.model import DECODER_FEATURES, RERANK_FEATURE
from circle.experiments.conditions import TuningRun
from circle.tune.loop import TuningProblem, TuningResult, TuningSettings


def under_patience(result: TuningResult, patience: int) -> tuple[int, int, int, float]:
    """What the run of ``result`` (tuned without patience) would have been with ``patience``:
    its sentence decodes, iterations, returned iteration and that iteration's tune score."""
    problem = TuningProblem([name for name in result.feature_names
                             if name not in (*DECODER_FEATURES, RERANK_FEATURE)], result.weights,
                            TuningSettings(metric=result.metric, patience=patience),
                            rerank=RERANK_FEATURE in result.feature_names)
    log = result.log
    stop = len(log)
    for index in range(1, len(log)):
        if problem.decodes_without_gain(log[:index], log[index].decode_score) is not None:
            stop = index + 1
            break
    prefix = log[:stop]
    best = prefix[problem.best_decode([entry.decode_score for entry in prefix])]
    return (sum(entry.decoded_sentences for entry in prefix), stop, best.iteration,
            best.decode_score)


def parse_variant(text: str) -> dict:
    variant = {}
    for pair in text.split(","):
        key, value = pair.split("=")
        variant[key] = None if value == "none" else int(value)
    return variant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--conditions", nargs="+", default=["1H", "2H", "4H"])
    parser.add_argument("--replicates", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variant", action="append", required=True,
                        help="e.g. patience=none or patience=2,k=300")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--derive-patience", type=int, nargs="*", default=[],
                        help="patiences to read off every run of a variant without patience")
    args = parser.parse_args()
    print("| variant | run | decodes | iterations | returned | tune score |")
    print("|:---|:---|---:|---:|---:|---:|")
    totals = {}
    for text in args.variant:
        variant = parse_variant(text)
        k = variant.pop("k", None)
        for condition in args.conditions:
            for replicate in args.replicates:
                result = tune_run(args.config, condition, replicate, args.workers, k=k,
                                  replicate_pool=1, **variant)
                decodes = sum(entry.decoded_sentences for entry in result.log)
                returned = result.returned
                rows = [(text, decodes, len(result.log), returned.iteration,
                         returned.decode_score)]
                if "patience" in variant and variant["patience"] is None:
                    rows += [(f"{text.replace('patience=none', f'patience={p}')} (derived)",
                              *under_patience(result, p)) for p in args.derive_patience]
                for name, decodes, iterations, iteration, score in rows:
                    totals.setdefault(name, []).append((decodes, score))
                    print(f"| {name} | {TuningRun.of(condition, replicate).name} | {decodes} | "
                          f"{iterations} | {iteration} | {100 * score:.2f} |", flush=True)
    for text, rows in totals.items():
        print(f"{text}: {sum(d for d, _ in rows)} sentence decodes, mean tune score "
              f"{100 * sum(s for _, s in rows) / len(rows):.2f} over {len(rows)} runs")


if __name__ == "__main__":
    main()

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
"""

import argparse

from tuning_threads import tune_run


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
                totals.setdefault(text, []).append((decodes, returned.decode_score))
                print(f"| {text} | {condition}.rep{replicate} | {decodes} | {len(result.log)} | "
                      f"{returned.iteration} | {100 * returned.decode_score:.2f} |", flush=True)
    for text, rows in totals.items():
        print(f"{text}: {sum(d for d, _ in rows)} sentence decodes, mean tune score "
              f"{100 * sum(s for _, s in rows) / len(rows):.2f} over {len(rows)} runs")


if __name__ == "__main__":
    main()

"""The ladder of paraphrasers (issue 37): one row per experiment that ran `reference_quality`
and `reference_sparsity` (the default experiment, the rungs of config/ladder-*.yaml, the
labelled paraphraser, the paraphrasers tuned on a biased grammar with and without φ_ident), with
what it pivots through, the bias its paraphraser was tuned on and φ_ident's tuned weight, its
grammars' sizes, what its pivot cost, the quality of its 1-best untargeted paraphrase of the
tune set's single reference against the verse's held-out human references (beside the MT
system's own output, the first check of the ladder), how much of R it keeps (BLEU against R,
ppBLEU), the diversity of its k-best, the grid search's choice where it ran, and the test gain
of 1H+1P, 1H+3P, 1H+1T and 1H+3T over 1H (raw, and for 1H+kP at a common length), with the
experiment's own significance test (* significantly better, † significantly worse).

The pivot's cost is the wall time summed over the jobs that only the paraphraser needs (the
pivot bitexts' tokenisation and alignment, each pivot language's extraction, the pivot's
preparation and pairing, the bias, the paraphraser's own LMs) from Snakemake's benchmark
files, and the largest peak resident memory among them. A job run beside others on shared
cores takes longer: the times are upper bounds.

Usage: python bench/paraphraser_ladder.py results/default results/ladder-es-english ...
"""

import argparse
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml
from snakemake.utils import validate

from circle.core import schemas
from circle.core.schemas import CONDITION_SUMMARY
from circle.core.tables import read_table
from circle.decoder.model import read_weights
from circle.paraphrase.config import bias_name
from circle.pipeline.plan import Plan
from circle.pipeline.runs import (
    EVALUATION_CONDITIONS,
    GRID_CHOICE,
    LABELLED_BILINGUAL_GRAMMAR,
    PARAPHRASE_GRAMMAR,
    WEIGHTS,
)

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"

PIVOT_RULES = ("tokenize_corpus", "pivot_bitext", "align_corpus", "pivot_language",
               "split_for_counting", "count_rules", "extract_grammar")
"""The rules of the pivot bitexts' and pivot languages' own systems."""

PARAPHRASER_RULES = ("prepare_pivot", "pivot_part", "bias_grammar", "estimate_paraphraser_lm")
"""The experiment's own rules that only the paraphraser needs (the MT system extracts its
grammar whether or not anything is pivoted)."""

LABELLED_PARAPHRASER_RULES = ("parse_training", "extract_labelled_grammar",
                              "pivot_labelled_grammar", "collapse_labelled_grammar",
                              "bias_grammar")
"""Those rules of a labelled paraphraser (samt.paraphraser)."""


def pivot_cost(root: Path, experiment: str, labelled: bool) -> tuple[float, float]:
    """Summed wall seconds and largest peak RSS (MB) of the paraphrase grammar's jobs."""
    benchmarks = root / "benchmarks" / experiment
    rules = LABELLED_PARAPHRASER_RULES if labelled else PARAPHRASER_RULES
    files = [path for name in rules for path in
             [*benchmarks.glob(f"{name}.tsv"), *benchmarks.glob(f"{name}/*.tsv")]]
    for systems in ("pivots", "pivot"):  # the pivot bitexts', the pivot languages'
        files += [path for path in (benchmarks / systems).glob("*/**/*.tsv")
                  if path.parent.name in PIVOT_RULES or path.stem in PIVOT_RULES]
    runs = pd.concat([pd.read_csv(path, sep="\t") for path in files])
    return float(runs["s"].sum()), float(runs["max_rss"].max())


def row(results: Path) -> dict[str, str]:
    experiment, root = results.name, results.parent.parent
    config = yaml.safe_load((results / "config.yaml").read_text(encoding="utf-8"))
    # runs of 20fa1e7 name the foreign Bibles' table where 913e875 moved it from
    config["corpus"]["bible"].pop("foreign_bibles", None)
    validate(config, str(SCHEMA))  # fills in the keys added since the run
    plan = Plan(config)
    pivots = config["paraphrase"].get("pivots") or []
    labelled = config["samt"]["paraphraser"]
    grammars = ([LABELLED_BILINGUAL_GRAMMAR.format(experiment=experiment)] if labelled
                else plan.pivot_grammars())
    bilingual = sum(pq.ParquetFile(root / path).metadata.num_rows for path in grammars)
    bias = bias_name(float(config["tuning"]["paraphraser_bias"]))
    paraphrase = pq.ParquetFile(root / PARAPHRASE_GRAMMAR.format(
        experiment=experiment, bias=bias)).metadata.num_rows
    seconds, rss = pivot_cost(root, experiment, labelled)
    tuned = read_weights(root / WEIGHTS.format(experiment=experiment,
                                               weights=f"paraphraser-bias{bias}"))
    choice_path = root / GRID_CHOICE.format(experiment=experiment)
    if choice_path.exists():
        choice = read_table(choice_path, schemas.GRID_CHOICE).iloc[0]
        grid = (f"{100 * choice['bias']:g} %, {choice['targeting_weight']:g}: "
                f"D {choice['balance']:.1f} [{choice['delta_ref']:.1f}, {choice['delta_mt']:.1f}]")
    else:
        grid = "–"
    quality = pd.read_csv(results / "report" / "reference_quality.csv")
    first = quality[quality["candidate"] == "P1"].iloc[0]
    second = quality[quality["candidate"] == "P2"]
    untuned = quality[quality["candidate"] == "MT untuned"].iloc[0]
    summary = read_table(root / EVALUATION_CONDITIONS.format(experiment=experiment, run_set=""),
                         CONDITION_SUMMARY).set_index("condition")

    def gain(condition: str, metric: str) -> str:
        if condition not in summary.index:
            return "–"
        found = summary.loc[condition]
        difference = found[f"{metric}_difference"]
        mark = ("*" if difference > 0 else "†") if found[f"{metric}_significant"] else ""
        return (f"{difference:+.2f}{mark} "
                f"(p = {found[f'{metric}_p_value']:.2g})")

    return {
        "experiment": experiment,
        "pivots": (", ".join(f"{p['source']}-{p['target']}" for p in pivots) or "training bitext")
        + ("" if not labelled else ", SAMT-labelled, " + (
            "decoded with labels" if config["samt"].get("decoding") == "labelled"
            else "collapsed to X")),
        "paraphraser LMs": config["paraphrase"].get("language_models", "shared"),
        "tuned on bias, φ_ident weight": (
            f"{100 * float(bias):g} %, " + (f"{tuned['identity']:.3f}" if "identity" in tuned
                                            else "–")),
        "bilingual rules (M)": f"{bilingual / 1e6:.1f}",
        "paraphrase rules (M)": f"{paraphrase / 1e6:.2f}",
        "pivot cost (s, peak GB)": f"{seconds:,.0f} s, {rss / 1024:.1f} GB",
        "P1 BLEU / chrF / TER": f"{first['bleu']:.1f} / {first['chrf']:.1f} / {first['ter']:.1f}",
        "MT untuned BLEU": f"{untuned['bleu']:.1f}",
        "P1 length / R": f"{first['length_ratio']:.3f}",
        "P1 BLEU vs R, ppBLEU": f"{first['input_bleu']:.1f}, {first['pp_bleu']:.1f}",
        "P1 added valid / wrong reachable %": (f"{100 * first['valid_share']:.1f} / "
                                               f"{100 * first['reachable_wrong_share']:.1f}"),
        "P2 BLEU vs P1, new 4-grams %": (
            "–" if second.empty else f"{second['first_bleu'].iloc[0]:.1f}, "
                                     f"{100 * second['new_share'].iloc[0]:.1f}"),
        "1H+1P − 1H BLEU": gain("1H+1P", "bleu"),
        "at common length": gain("1H+1P", "matched_bleu"),
        "1H+3P − 1H BLEU": gain("1H+3P", "bleu"),
        "1H+3P at common length": gain("1H+3P", "matched_bleu"),
        "grid choice: bias, weight: D [Δd_ref, Δd_mt]": grid,
        "1H+1T − 1H BLEU": gain("1H+1T", "bleu"),
        "1H+3T − 1H BLEU": gain("1H+3T", "bleu"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path,
                        help="results/<experiment> directories with report/reference_quality.csv")
    args = parser.parse_args()
    rows = [row(results) for results in args.results]
    print("| " + " | ".join(rows[0]) + " |")
    print("|:---|:---|:---|" + "---:|" * (len(rows[0]) - 3))
    for found in rows:
        print("| " + " | ".join(found.values()) + " |")


if __name__ == "__main__":
    main()

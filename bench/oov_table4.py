"""Marton, Callison-Burch & Resnik (2009)'s Table 4 across bitext sizes: for each experiment
that ran `snakemake oov_translation` (e.g. config/oov-10k.yaml, config/oov-20k.yaml and the
default experiment), one row per augmented condition (kH_oov and each kH_oov-<variant> it ran),
with its training verses, the test set's OOV tokens before and after that condition's
augmentation, the test BLEU and TER of kH and of the condition (mean ± sd over replicates), the
difference of their pooled scores (all replicates' output as one corpus, the statistic of the
test) with its approximate-randomisation p-value (the experiment's own evaluation), and the
difference at a common length.

Usage: python bench/oov_table4.py results/oov-10k results/oov-20k results/default
"""

import argparse
from pathlib import Path

import yaml

from circle.core.layout import (
    EVALSET_TABLE,
    EVALUATION_CONDITIONS,
    FILTERED_GRAMMAR,
    OOV_PARAPHRASED_GRAMMAR,
    TOKENIZED_TABLE,
    Results,
)
from circle.core.schemas import BITEXT, CONDITION_SUMMARY
from circle.core.tables import read_table
from circle.experiments.conditions import Condition, oov_variant_tag
from circle.experiments.oov_translation import variant_description, variant_search_settings
from circle.figures.oov_translation import score_table, set_coverage


def cell(mean: float, sd: float) -> str:
    return f"{mean:.2f} ± {sd:.2f}"


def rows(directory: Path) -> list[list[str]]:
    results = Results.at(directory)
    experiment, path = results.experiment, results.path
    config = yaml.safe_load(results.config.read_text(encoding="utf-8"))
    verses = len(read_table(path(TOKENIZED_TABLE, split="train"), BITEXT, columns=["source"]))
    summary = read_table(path(EVALUATION_CONDITIONS, run_set="oov/"), CONDITION_SUMMARY)
    ran = {Condition.parse(name).oov_variant for name in summary["condition"]}
    variants = [v for v in ("", *config["oov_paraphrase"].get("variants", {})) if v in ran]
    table = score_table(summary, {}, {v: variant_description(config, v) for v in variants})
    table = table.set_index("condition")
    found = []
    for name in table.index[table["grammar"] == "augmented"]:
        condition = Condition.parse(name)
        variant = condition.oov_variant
        coverage = set_coverage(
            "test", variant, path(EVALSET_TABLE, evalset="test"),
            path(FILTERED_GRAMMAR, evalset="test"),
            path(OOV_PARAPHRASED_GRAMMAR, evalset="test", oov_variant=oov_variant_tag(variant)),
            variant_search_settings(config, variant)["max_phrase_length"]).coverage
        base, oov = table.loc[condition.baseline.name], table.loc[name]
        mark = "*" if oov["bleu_significant"] else ""
        found.append([
            experiment, f"{verses:,}", name, oov["settings"],
            f"{100 * coverage.tokens / coverage.words:.2f} % → "
            f"{100 * coverage.tokens_after / coverage.words:.2f} %",
            cell(base["bleu_mean"], base["bleu_sd"]), cell(oov["bleu_mean"], oov["bleu_sd"]),
            f"{oov['bleu_difference']:+.2f}{mark} (p = {oov['bleu_p_value']:.2g})",
            cell(base["ter_mean"], base["ter_sd"]), cell(oov["ter_mean"], oov["ter_sd"]),
            f"{oov['matched_bleu_difference']:+.2f}"
            + ("*" if oov["matched_bleu_significant"] else "")])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path,
                        help="results/<experiment> directories with evaluation/oov/")
    args = parser.parse_args()
    print("| experiment | training verses | condition | settings | test OOV tokens before → "
          "after | BLEU kH | BLEU augmented | Δ BLEU pooled | TER kH | TER augmented "
          "| Δ BLEU at common length |")
    print("|:---|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|")
    for results in args.results:
        for row in rows(results):
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

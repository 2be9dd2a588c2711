"""Marton, Callison-Burch & Resnik (2009)'s Table 4 across bitext sizes: one row per
experiment that ran `snakemake oov_translation` (e.g. config/oov-10k.yaml, config/oov-20k.yaml
and the default experiment), with its training verses, the test set's OOV tokens before and
after augmentation, and the test BLEU and TER of kH and kH_oov (mean ± sd over replicates) with
the difference of their pooled scores (all replicates' output as one corpus, the statistic of
the test) and its approximate-randomisation p-value (the experiment's own evaluation).

Usage: python bench/oov_table4.py results/oov-10k results/oov-20k results/default
"""

import argparse
from pathlib import Path

import yaml

from circle.core.schemas import BITEXT, CONDITION_SUMMARY
from circle.core.tables import read_table
from circle.figures.oov_translation import score_table, set_coverage
from circle.pipeline.runs import (
    EVALSET_TABLE,
    EVALUATION_CONDITIONS,
    FILTERED_GRAMMAR,
    OOV_PARAPHRASED_GRAMMAR,
    TOKENIZED_TABLE,
)


def cell(mean: float, sd: float) -> str:
    return f"{mean:.2f} ± {sd:.2f}"


def row(results: Path) -> list[str]:
    experiment = results.name
    root = results.parent.parent
    config = yaml.safe_load((results / "config.yaml").read_text(encoding="utf-8"))

    def path(template: str, **fields: str) -> Path:
        return root / template.format(experiment=experiment, **fields)

    verses = len(read_table(path(TOKENIZED_TABLE, split="train"), BITEXT, columns=["source"]))
    found = set_coverage("test", path(EVALSET_TABLE, evalset="test"),
                         path(FILTERED_GRAMMAR, evalset="test"),
                         path(OOV_PARAPHRASED_GRAMMAR, evalset="test"),
                         config["oov_paraphrase"]["max_phrase_length"]).coverage
    table = score_table(read_table(path(EVALUATION_CONDITIONS, run_set="oov/"),
                                   CONDITION_SUMMARY)).set_index("condition")
    cells = [experiment, f"{verses:,}",
             f"{100 * found.tokens / found.words:.2f} % → "
             f"{100 * found.tokens_after / found.words:.2f} %"]
    for name in [name for name in table.index if f"{name}_oov" in table.index]:
        base, oov = table.loc[name], table.loc[f"{name}_oov"]
        mark = "*" if oov["bleu_significant"] else ""
        cells += [name, cell(base["bleu_mean"], base["bleu_sd"]),
                  cell(oov["bleu_mean"], oov["bleu_sd"]),
                  f"{oov['bleu_difference']:+.2f}{mark} (p = {oov['bleu_p_value']:.2g})",
                  cell(base["ter_mean"], base["ter_sd"]), cell(oov["ter_mean"], oov["ter_sd"]),
                  f"{oov['matched_bleu_difference']:+.2f}"
                  + ("*" if oov["matched_bleu_significant"] else "")]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path,
                        help="results/<experiment> directories with evaluation/oov/")
    args = parser.parse_args()
    print("| experiment | training verses | test OOV tokens before → after | condition "
          "| BLEU kH | BLEU kH_oov | Δ BLEU pooled | TER kH | TER kH_oov "
          "| Δ BLEU at common length |")
    print("|:---|---:|---:|:---|---:|---:|---:|---:|---:|---:|")
    for results in args.results:
        print("| " + " | ".join(row(results)) + " |")


if __name__ == "__main__":
    main()

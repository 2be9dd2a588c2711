"""Where the rise of `snakemake oov_masking`'s accuracy@1 with the monolingual text comes from,
from its table (results/<exp>/evaluation/oov_masking.parquet,
circle.experiments.oov_masking): the words that borrow a rule on both the smallest and the
largest text, right on each (and right on one only), against the words only the largest
text covers; and on the largest text, precision@1 by the top borrowed rule's asim (does the
paraphrase feature tell right borrowings from wrong ones?) and by whether the paraphrase it
comes from is one word.

Usage: python bench/oov_masking_pairs.py results/default/evaluation/oov_masking.parquet
"""

import argparse

import pandas as pd

from circle.core.schemas import OOV_MASKING
from circle.core.tables import read_table

ASIM_BANDS = [0.0, 0.4, 0.6, 0.8, 1.0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    table = read_table(parser.parse_args().table, OOV_MASKING)
    right = table.pivot(index="word", columns="fraction", values="correct_at_1")
    covered = table.pivot(index="word", columns="fraction", values="borrowed_targets") > 0
    small, large = right.columns.min(), right.columns.max()
    both = covered[small] & covered[large]
    print(f"{len(right)} masked words; smallest text {small:g}, largest {large:g}")
    print(f"covered on both: {both.sum()}; right on the smallest {right.loc[both, small].sum()}, "
          f"on the largest {right.loc[both, large].sum()} (right on the smallest only "
          f"{(right.loc[both, small] & ~right.loc[both, large]).sum()}, on the largest only "
          f"{(~right.loc[both, small] & right.loc[both, large]).sum()})")
    only = covered[large] & ~covered[small]
    print(f"covered on the largest only: {only.sum()}, right {right.loc[only, large].sum()}; "
          f"on the smallest only: {(covered[small] & ~covered[large]).sum()}")
    largest = table[(table["fraction"] == large) & (table["borrowed_targets"] > 0)]
    bands = pd.cut(largest["top_asim"], ASIM_BANDS)
    print("precision@1 on the largest text by the top rule's asim:")
    for band, group in largest.groupby(bands, observed=True)["correct_at_1"]:
        print(f"  {band}: {100 * group.mean():.1f} % of {len(group)}")
    one_word = largest["top_paraphrase"].str.count(" ") == 0
    for name, group in (("one-word", largest[one_word]), ("longer", largest[~one_word])):
        print(f"  through a {name} paraphrase: {100 * group['correct_at_1'].mean():.1f} % of "
              f"{len(group)}")


if __name__ == "__main__":
    main()

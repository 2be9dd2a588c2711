"""Pang, Knight & Marcu (2003)'s lattice evaluations on our verse groups, beside the seed's figures:
lattice size, paths (§4.2.1, Table 3), the leave-one-out edit-distance gain (§4.2.3, Table 6's
n = 3 row for groups of four), the Fig. 1 group, and each stage's cost.

Usage: python benchmarks/pang_lattices.py [--groups 300] [--splits tune test]
"""

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

from circle.lattice.evaluate import group_figures, group_lattice
from circle.lattice.fsa import count_sentences
from circle.lattice.parse import load_parser, parse_sentences, parse_verses, read_groups

REFERENCES = ["web", "dar", "ylt", "bbe"]
FIG1 = ["At least 12 people were killed in the battle last week.",
        "At least 12 people lost their lives in last week’s fighting.",
        "Last week’s fight took at least 12 lives.",
        "The fighting last week killed at least 12.",
        "The battle of last week killed at least 12 persons.",
        "At least 12 persons died in the fighting last week.",
        "At least 12 died in the battle last week.",
        "At least 12 people were killed in the fighting last week.",
        "During last week’s fighting, at least 12 people died.",
        "Last week at least twelve people died in the fighting.",
        "Last week’s fighting took the lives of twelve people."]
"""The seed's Fig. 1 group in its printed order (the OCR prints 9 and 11 out of place)."""
SEED_TABLE3 = {"1-10": (22749, 775), "10-20": (172386, 4468), "20-30": (3479544, 29202),
               "30-45": (684589, 4135)}
"""The seed's Table 3: N max and N mean per average-sentence-length bucket (11 translations)."""


def bucket(length: float) -> str:
    for low, high in ((1, 10), (10, 20), (20, 30)):
        if length < high:
            return f"{low}-{high}"
    return "30-45"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verses", default="resources/bible/bible.parquet")
    parser.add_argument("--splits", nargs="+", default=["tune", "test"])
    parser.add_argument("--groups", type=int, default=300)
    args = parser.parse_args()

    trees = parse_sentences(FIG1, load_parser())
    _, fig1, _ = group_lattice(trees)
    print(f"Fig. 1 group (11 sentences): {count_sentences(fig1)} distinct sentences in the "
          f"squeezed lattice, {fig1.states} states, {len(fig1.edges)} edges (seed: 49)")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "parses.parquet"
        start = time.process_time()
        parse_verses(args.verses, path, args.splits, REFERENCES, limit=args.groups)
        parse_seconds = time.process_time() - start
        groups = read_groups(path)
    start = time.process_time()
    figures = [group_figures(group) for group in groups.values()]
    evaluate_seconds = time.process_time() - start
    start = time.process_time()
    for group in groups.values():
        group_lattice(group)
    lattice_seconds = time.process_time() - start

    n = len(figures)
    lengths = [statistics.mean(len(tree.words()) for tree in group) for group in groups.values()]
    print(f"\n{n} groups of {len(REFERENCES)} translations ({', '.join(args.splits)}), "
          f"mean length {statistics.mean(lengths):.1f} tokens")
    rate = statistics.mean(f.merge_rate for f in figures)
    print(f"merge rate (phrase-node pairs merged) {rate:.3f}")
    print(f"states {statistics.mean(f.states for f in figures):.1f} -> squeezed "
          f"{statistics.mean(f.squeezed_states for f in figures):.1f}; edges "
          f"{statistics.mean(f.edges for f in figures):.1f} -> "
          f"{statistics.mean(f.squeezed_edges for f in figures):.1f}")
    distinct = [f.distinct_sentences for f in figures]
    print(f"distinct sentences: mean {statistics.mean(distinct):.1f}, median "
          f"{statistics.median(distinct)}, max {max(distinct)}; groups with a sentence nobody "
          f"wrote: {sum(d > len(REFERENCES) for d in distinct)}/{n}")
    print("\n| ASL | groups | N max | N mean | ln N max | ln N mean | seed N max | seed N mean |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (seed_max, seed_mean) in SEED_TABLE3.items():
        counts = [f.paths for f, length in zip(figures, lengths, strict=True)
                  if bucket(length) == name]
        if counts:
            print(f"| {name} | {len(counts)} | {max(counts)} | {statistics.mean(counts):.1f} | "
                  f"{math.log(max(counts)):.2f} | "
                  f"{statistics.mean(math.log(c) for c in counts):.2f} | {seed_max} | "
                  f"{seed_mean} |")
    gains = [f.ed_input - f.ed_fsa for f in figures]
    print(f"\nleave-one-out, lattice of the other 3: ed(input) "
          f"{statistics.mean(f.ed_input for f in figures):.2f}, ed(FSA) "
          f"{statistics.mean(f.ed_fsa for f in figures):.2f}, gain "
          f"{statistics.mean(gains):.2f} (std {statistics.stdev(gains):.2f}); "
          f"seed Table 6, n = 3: 0.33 (0.76); n = 10: 0.93 (1.21)")
    print(f"\ncost (CPU): parse {parse_seconds:.1f} s ({1000 * parse_seconds / n:.0f} ms a "
          f"group); merge + lattice + squeeze {1000 * lattice_seconds / n:.1f} ms a group; "
          f"all figures with the leave-one-out lattices {1000 * evaluate_seconds / n:.1f} ms "
          f"a group")


if __name__ == "__main__":
    main()

"""Which tune segments the lattice tuning conditions kH+mL can give a sentence (docs/lattice.md,
"Tuning with lattice sentences"): per k, the segments whose squeezed lattice of their first k
references in the seeded order (those of kH) has a sentence none of them is, with the parser's
Penn tags and with a coarser tag set (a tag's first two letters: NNS, NNP, NNPS are NN; VBD,
VBZ, ... are VB), and for the first k, why the others have none: where top-down merging
(circle.lattice.merge, the seed's §3) stopped.

Usage: python bench/lattice_coverage.py results/default/sets/tune.parquet \
           results/default/lattice/tune.parses.parquet [--k 2 3 4]
"""

import argparse
from collections import Counter

from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import select_references
from circle.grammar.parse import read_groups
from circle.grammar.tree import Tree
from circle.lattice.evaluate import group_lattice
from circle.lattice.fsa import count_sentences


def coarse(tree: Tree) -> Tree:
    """``tree`` with each part-of-speech tag cut to its first two letters (punctuation kept)."""
    if tree.word is not None:
        label = tree.label[:2] if tree.label[:1].isalpha() else tree.label
        return Tree(label, word=tree.word)
    return Tree(tree.label, tuple(coarse(child) for child in tree.children))


def has_new_sentence(trees: list[Tree]) -> bool:
    """Whether the squeezed lattice of ``trees`` has a sentence none of them is."""
    _, squeezed, _ = group_lattice(trees)
    return count_sentences(squeezed) > len({tuple(w.lower() for w in t.words()) for t in trees})


def why(trees: list[Tree]) -> str:
    """Where merging stopped for a group (the reason it has or has no new sentence)."""
    if len({tree.rule for tree in trees}) > 1:
        arity = len({len(tree.rule) for tree in trees}) == 1
        return ("roots expand with different rules, "
                + ("as many children" if arity else "different numbers of children"))
    _, _, stats = group_lattice(trees)
    if stats.merged == 0 and stats.keyword_blocked:
        return "same root rule, the keyword check refused the merge"
    return ("same root rule, merged: a new sentence" if has_new_sentence(trees)
            else "same root rule, merged: no new sentence")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tune_set", help="results/<exp>/sets/tune.parquet")
    parser.add_argument("parses", help="results/<exp>/lattice/tune.parses.parquet")
    parser.add_argument("--k", type=int, nargs="+", default=[2, 3, 4])
    args = parser.parse_args()
    tune = read_table(args.tune_set, EVALSET, columns=["segment_id", "ref_order"])
    groups = read_groups(args.parses)
    chosen = {k: [select_references(groups[int(segment)], order, k)
                  for segment, order in zip(tune["segment_id"], tune["ref_order"], strict=True)]
              for k in args.k}
    print(f"{len(tune)} tune segments ({args.tune_set}, {args.parses})")
    print("| k | segments with a lattice sentence, Penn tags | coarse tags |")
    print("|---:|---:|---:|")
    for k, sets in chosen.items():
        penn = sum(has_new_sentence(trees) for trees in sets)
        coarser = sum(has_new_sentence([coarse(tree) for tree in trees]) for trees in sets)
        print(f"| {k} | {penn} | {coarser} |")
    first = args.k[0]
    print(f"\nwhere merging stopped, k = {first} (Penn tags):")
    for reason, count in Counter(why(trees) for trees in chosen[first]).most_common():
        print(f"  {count:4d}  {reason}")
    roots = Counter(" / ".join(sorted(" ".join(tree.rule[1:]) for tree in trees))
                    for trees in chosen[first] if len({tree.rule for tree in trees}) > 1)
    print(f"most frequent pairs of differing root rules (S -> ...), k = {first}:")
    for rules, count in roots.most_common(8):
        print(f"  {count:4d}  {rules}")


if __name__ == "__main__":
    main()

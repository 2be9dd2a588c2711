"""Pang, Knight & Marcu (2003)'s lattice evaluations on our verse groups, beside the seed's figures:
lattice size, paths (§4.2.1, Table 3), LM entropy (§4.2.1, with --lm), the repetition check
(§4.2.2), the leave-one-out edit-distance gain (§4.2.3, Table 6's n = 3 row for groups of four),
the Fig. 1 group, and each stage's cost.

Usage: python bench/pang_lattices.py [--groups 300] [--seed 39] [--splits tune test] [--dot F]
       python bench/pang_lattices.py \
           --parses results/default/lattice/{tune,test}.parses.parquet \
           [--paraphrases results/default/sets/tune.parquet \
                          results/default/paraphrase/untargeted-bias0/tune.nbest.parquet]
"""

import argparse
import math
import random
import statistics
import time
from pathlib import Path

from sacremoses import MosesTokenizer

from circle.core.schemas import EVALSET, VERSES
from circle.core.tables import read_table
from circle.corpus.references import single_references
from circle.decoder.nbest import NBEST
from circle.grammar.parse import load_parser, parse_sentences, read_groups
from circle.lattice.evaluate import (
    FIG1_GROUP,
    chain,
    edit_distance,
    entropy_difference,
    group_figures,
    group_lattice,
    growing_references,
)
from circle.lattice.fsa import KenLMModel, count_sentences, to_dot

REFERENCES = ["web", "dar", "ylt", "bbe"]
SEED_TABLE3 = {"1-10": (22749, 775), "10-20": (172386, 4468), "20-30": (3479544, 29202),
               "30-45": (684589, 4135)}
"""The seed's Table 3: N max and N mean per average-sentence-length bucket (11 translations)."""
SEED_TABLE6 = ["5.65 (3.86), 0 (0)", "3.66 (3.02), 0.19 (0.60)", "2.71 (2.55), 0.33 (0.76)",
               "2.10 (2.33), 0.46 (0.90)"]
"""The seed's Table 6, rows n = 1..4: ed(FSA_n) - ed(FSA_10) and ed(input_n) - ed(FSA_n),
mean (std)."""


class EscapedLM(KenLMModel):
    """The pipeline's LM saw Moses-escaped text (``'`` as ``&apos;``); escape the words alike."""

    escape = MosesTokenizer(lang="en").escape_xml

    def advance(self, state: object, word: str) -> tuple[object, float]:
        return super().advance(state, self.escape(word))


def bucket(length: float) -> str:
    for low, high in ((1, 10), (10, 20), (20, 30)):
        if length < high:
            return f"{low}-{high}"
    return "30-45"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verses", default="resources/bible/bible.parquet")
    parser.add_argument("--splits", nargs="+", default=["tune", "test"])
    parser.add_argument("--groups", type=int, default=300, help="verses drawn at random")
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--dot", help="write the Fig. 1 group's lattice here as Graphviz DOT "
                        "(draw it with dot -Tpng)")
    parser.add_argument("--lm", help="a KenLM model (results/<exp>/lm/5gram.binary) for the "
                        "entropy check of §4.2.1")
    parser.add_argument("--max-paths", type=int, default=10_000,
                        help="the entropy check enumerates the sentences of lattices up to this")
    parser.add_argument("--parses", nargs="+", help="parses tables (snakemake lattice_parses) "
                        "to read every group from instead of parsing a sample")
    parser.add_argument("--paraphrases", nargs=2, metavar=("TUNE_SET", "NBEST"),
                        help="the tune set and the untargeted paraphrases of its single "
                        "references (results/<exp>/sets/tune.parquet, results/<exp>/paraphrase/"
                        "untargeted-bias0/tune.nbest.parquet): the leave-one-out distance to the "
                        "other translations with the paraphrases beside it (needs the tune "
                        "set's parses in --parses)")
    parser.add_argument("--k", type=int, default=3, help="paraphrases per reference")
    args = parser.parse_args()

    nlp = load_parser()
    trees = parse_sentences(FIG1_GROUP, nlp)
    _, fig1, _ = group_lattice(trees)
    print(f"Fig. 1 group (11 sentences): {count_sentences(fig1)} distinct sentences in the "
          f"squeezed lattice, {fig1.states} states, {len(fig1.edges)} edges (seed: 49)")
    if args.dot:
        Path(args.dot).write_text(to_dot(fig1, "fig1"), encoding="utf-8")

    if args.parses:
        start = time.process_time()
        groups = [group for path in args.parses for group in read_groups(path).values()]
        parse_seconds, source = time.process_time() - start, ", ".join(args.parses)
    else:
        verses = read_table(args.verses, VERSES, columns=["segment_id", "split", *REFERENCES])
        verses = verses[verses["split"].isin(args.splits)].dropna().sort_values("segment_id")
        verses = verses.sample(min(args.groups, len(verses)), random_state=args.seed)
        verses = verses.sort_values("segment_id")
        start = time.process_time()
        parsed = {name: parse_sentences(list(verses[name]), nlp) for name in REFERENCES}
        parse_seconds, source = time.process_time() - start, ", ".join(args.splits)
        groups = [[parsed[name][i] for name in REFERENCES] for i in range(len(verses))]
    start = time.process_time()
    figures = [group_figures(group) for group in groups]
    evaluate_seconds = time.process_time() - start
    start = time.process_time()
    for group in groups:
        group_lattice(group)
    lattice_seconds = time.process_time() - start

    n = len(figures)
    lengths = [statistics.mean(len(tree.words()) for tree in group) for group in groups]
    print(f"\n{n} groups of {len(groups[0])} translations ({source}), "
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
          f"wrote: {sum(d > len(g) for d, g in zip(distinct, groups, strict=True))}/{n}")
    print("\nPaths by average sentence length (ASL, tokens; our last bucket also holds groups over"
          " 45, which the seed dropped):")
    print("| ASL | groups | N max | N mean | ln N max | ln N mean | seed N max | seed N mean |")
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
    print(f"\nleave-one-out, lattice of the other {len(groups[0]) - 1}: ed(input) "
          f"{statistics.mean(f.ed_input for f in figures):.2f}, ed(FSA) "
          f"{statistics.mean(f.ed_fsa for f in figures):.2f}, gain "
          f"{statistics.mean(gains):.2f} (std {statistics.stdev(gains):.2f}); "
          f"seed Table 6, n = 3: 0.33 (0.76); n = 10: 0.93 (1.21)")
    rng = random.Random(args.seed)
    table6 = [growing_references(rng.sample(group, len(group))) for group in groups]
    last = len(groups[0]) - 1
    print("\nTable 6: each group in a seeded random order, the last translation the test "
          "sentence, FSA_n from the first n")
    print("| n | ed(FSA_n) - ed(FSA_last) | ed(input_n) - ed(FSA_n) | seed (11 translations) |")
    print("|---:|---:|---:|---|")
    for size in range(1, last + 1):
        growth = [rows[size - 1][0] - rows[last - 1][0] for rows in table6]
        gain = [rows[size - 1][1] - rows[size - 1][0] for rows in table6]
        print(f"| {size} | {statistics.mean(growth):.2f} ({statistics.stdev(growth):.2f}) | "
              f"{statistics.mean(gain):.2f} ({statistics.stdev(gain):.2f}) | "
              f"{SEED_TABLE6[size - 1]} |")
    if args.lm:
        lm = EscapedLM(args.lm)
        differences = [entropy_difference(group_lattice(group)[1],
                                          [[w.lower() for w in tree.words()] for tree in group],
                                          lm, args.max_paths) for group in groups]
        done = [d for d in differences if d is not None]
        new = [d for d, f, group in zip(differences, figures, groups, strict=True)
               if d is not None and f.distinct_sentences > len(group)]
        print(f"\nent(FSA) - ent(SG), bits a word ({args.lm}; {len(done)} groups of at most "
              f"{args.max_paths} paths): {statistics.mean(done):.5f} (std "
              f"{statistics.stdev(done):.5f}); in the {len(new)} groups with new sentences "
              f"{statistics.mean(new):.5f} ({statistics.stdev(new):.5f}); seed: -0.11586 "
              f"(1.25162), its MT output 1.74259 (1.05749)")
    ratios = [ratio for f in figures for ratio in f.repetition_ratios]
    repeated = [ratio for ratio in ratios if ratio > 0]
    print(f"\nrepetition check over {len(ratios)} words no translation repeats: mean ratio "
          f"{statistics.mean(ratios):.5f}; {100 * len(repeated) / len(ratios):.2f} % of words "
          f"non-zero, mean {statistics.mean(repeated) if repeated else 0:.3f} among them "
          f"(seed, syntax-based: 0.0035074; 2.16 %, 0.162)")
    if args.paraphrases:
        tune_parses = next(path for path in args.parses if "tune" in Path(path).name)
        paraphrase_comparison(read_groups(tune_parses), *args.paraphrases, args.k)
    print(f"\ncost (CPU): parse (or read) {parse_seconds:.1f} s "
          f"({1000 * parse_seconds / n:.0f} ms a group); merge + lattice + squeeze "
          f"{1000 * lattice_seconds / n:.1f} ms a group; "
          f"all figures with the leave-one-out lattices {1000 * evaluate_seconds / n:.1f} ms "
          f"a group")


def paraphrase_comparison(groups: dict[int, list], tune_path: str, nbest_path: str,
                          k: int) -> None:
    """The seed's §4.2.3 question asked of circle's untargeted paraphrases: for each tune
    translation held out, except the single reference (the paraphrases' input), its least word
    edit distance to the other translations, to them and the k-best paraphrases of the single
    reference, and to the squeezed lattice of the others. The first two on the pipeline's Moses
    tokens (the paraphrases' own), the lattice's on the parser's tokens beside the same
    held-out translations' distance to the others in those tokens."""
    table = read_table(tune_path, EVALSET)
    nbest = read_table(nbest_path, NBEST)
    kept = nbest[nbest["rank"] < k].sort_values(["segment_id", "rank"])
    paraphrases = kept.groupby("segment_id")["hypothesis"].apply(list)
    rows = []
    for segment, references, single in zip(table["segment_id"], table["references"],
                                           single_references(table), strict=True):
        references = [reference.split() for reference in references]
        trees = groups[int(segment)]
        if len(trees) != len(references):
            raise ValueError(f"segment {segment}: {len(trees)} parses, {len(references)} "
                             "references")
        held_single = references.index(single.split())
        extra = [p.split() for p in paraphrases.get(segment, [])]
        words = [[w.lower() for w in tree.words()] for tree in trees]
        for held, reference in enumerate(references):
            if held == held_single:
                continue
            others = [r for i, r in enumerate(references) if i != held]
            to_others = min(edit_distance(chain(o), reference) for o in others)
            with_paraphrases = min([to_others, *(edit_distance(chain(p), reference)
                                                 for p in extra)])
            parsed_others = [w for i, w in enumerate(words) if i != held]
            to_parsed = min(edit_distance(chain(o), words[held]) for o in parsed_others)
            lattice = group_lattice([t for i, t in enumerate(trees) if i != held])[1]
            rows.append((to_others, with_paraphrases, to_parsed,
                         edit_distance(lattice, words[held])))
    others, with_p, parsed, fsa = (list(column) for column in zip(*rows, strict=True))
    gain_p = [a - b for a, b in zip(others, with_p, strict=True)]
    gain_fsa = [a - b for a, b in zip(parsed, fsa, strict=True)]
    print(f"\nleave-one-out against circle's paraphrases ({len(rows)} held-out tune "
          f"translations other than the single reference, {tune_path}, {nbest_path}, "
          f"k = {k}):")
    print("| distance of the held-out translation to | tokens | mean | gain over the others "
          "(sd) | held-outs it helps |")
    print("|---|---|---:|---:|---:|")
    print(f"| the other translations | Moses | {statistics.mean(others):.2f} | | |")
    print(f"| them and the {k}-best untargeted paraphrases of the single reference | Moses | "
          f"{statistics.mean(with_p):.2f} | {statistics.mean(gain_p):.2f} "
          f"({statistics.stdev(gain_p):.2f}) | {sum(g > 0 for g in gain_p)} |")
    print(f"| the other translations | parser | {statistics.mean(parsed):.2f} | | |")
    print(f"| their squeezed lattice | parser | {statistics.mean(fsa):.2f} | "
          f"{statistics.mean(gain_fsa):.2f} ({statistics.stdev(gain_fsa):.2f}) | "
          f"{sum(g > 0 for g in gain_fsa)} |")


if __name__ == "__main__":
    main()

"""Labelled (SAMT) grammars against Hiero's on a sample of the training bitext: parse the
English side over its Moses tokens (circle.grammar.parse.parse_tokens), extract the Hiero and the
labelled grammar of the same verses (circle.grammar.extract), pivot both (circle.grammar.pivot;
the labelled one with the draft's pruning) and print their sizes, the label counts, each pivot's
wall time and peak resident memory, and example labelled paraphrase rules, the structural ones
of Ganitkevitch & Callison-Burch's table first (possessive, dative shift, passive).

Usage: python bench/samt_grammar.py [--verses 2000] [--seed 40] [--min-count 1]
           [--min-probability 0.01] [--top-paraphrases 20] [--examples 10]
"""

import argparse
import logging
import math
import tempfile
import time
from pathlib import Path

import duckdb
import pandas as pd
import psutil
from grammar import PeakMemory  # bench/grammar.py

from circle.core.schemas import (
    ALIGNMENT,
    BITEXT,
    LABELLED_PARAPHRASE_GRAMMAR,
    PARAPHRASE_GRAMMAR,
    VERSES,
)
from circle.core.tables import read_table, write_table
from circle.corpus.preprocess import normalize
from circle.figures.samt import label_counts, structural_examples
from circle.grammar.extract import extract_grammar
from circle.grammar.parse import load_parser, parse_tokens
from circle.grammar.pivot import grammar_parts, pivot_grammar
from circle.grammar.samt import FALLBACK, Bracketing, unescape_label


def sample(args) -> pd.DataFrame:
    """The sampled training verses, tokenised as the pipeline stores them, with their links."""
    verses = read_table(args.table, VERSES, columns=["segment_id", "document", "split",
                                                     "es", "kjv"])
    train = verses[verses["split"] == "train"]
    rows = train.sample(n=min(args.verses, len(train)), random_state=args.seed)
    rows = rows.sort_values("segment_id")
    links = read_table(args.alignment, ALIGNMENT).set_index("segment_id")
    return pd.DataFrame({
        "segment_id": rows["segment_id"].to_numpy(), "document": rows["document"].to_numpy(),
        "source": [normalize(text, "es") for text in rows["es"]],
        "target": [normalize(text, "en") for text in rows["kjv"]],
        "cased": [normalize(text, "en", lowercase=False) for text in rows["kjv"]],
        "links": links.loc[rows["segment_id"], "links"].to_numpy()})


def measured(name: str, work):
    """Runs ``work``, printing its wall time and the process's peak resident memory (sampled
    every 50 ms; the process holds the parser and the sample, its RSS before is printed too)."""
    before = psutil.Process().memory_info().rss
    peak = PeakMemory()
    started = time.perf_counter()
    with peak:
        result = work()
    seconds = time.perf_counter() - started
    print(f"{name}: {seconds:.1f} s, peak RSS {peak.peak / 2**20:.0f} MiB "
          f"(before {before / 2**20:.0f} MiB)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="resources/bible/bible.parquet")
    parser.add_argument("--alignment", default="resources/alignment/bible-es-kjv.parquet")
    parser.add_argument("--verses", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--min-count", type=float, default=1.0)
    parser.add_argument("--min-probability", type=float, default=0.01)
    parser.add_argument("--top-paraphrases", type=int, default=20)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--partition-pairs", type=int, default=1_000_000,
                        help="pivot triples summed at once (the pivot's default is 4 M; at "
                             "2000 verses the unpruned labelled pivot ran out of a 2 GB limit)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    rows = sample(args)
    print(f"{len(rows)} training verses (seed {args.seed}), "
          f"{rows['target'].str.split().str.len().mean():.1f} English tokens a verse")
    nlp = load_parser()
    trees = measured("parse (spaCy over the Moses tokens, cased)",
                     lambda: parse_tokens(list(rows["target"]), nlp, list(rows["cased"])))
    parses = {int(segment): Bracketing.of_tree(tree)
              for segment, tree in zip(rows["segment_id"], trees, strict=True)}

    with tempfile.TemporaryDirectory(prefix="samt-grammar-") as scratch:
        out = Path(scratch)
        write_table(rows[["segment_id", "document", "source", "target"]],
                    out / "bitext.parquet", BITEXT)
        write_table(rows[["segment_id", "links"]].assign(forward="", reverse="")[
            ["segment_id", "forward", "reverse", "links"]], out / "alignment.parquet", ALIGNMENT)
        bitext, alignment = out / "bitext.parquet", out / "alignment.parquet"
        hiero = measured("extract Hiero", lambda: extract_grammar(
            bitext, alignment, out / "hiero.parquet", memory_limit=args.memory_limit))
        samt = measured("extract labelled", lambda: extract_grammar(
            bitext, alignment, out / "samt.parquet", memory_limit=args.memory_limit,
            parses=parses))
        con = duckdb.connect()
        labels = label_counts(con, out / "samt.parquet")
        fallback = labels.loc[labels["label"] == FALLBACK, "rules"].sum()
        print(f"bilingual rules: Hiero {hiero.rules}, labelled {samt.rules} "
              f"({samt.rules / hiero.rules:.2f}x; the same {hiero.rule_occurrences} "
              "occurrences)")
        print(f"labels: {(labels['rules'] > 0).sum()} left-hand sides, {len(labels)} labels in "
              f"all; rules with lhs X (no SAMT category): {fallback / samt.rules:.1%}; "
              "most frequent: " + ", ".join(
                  f"{unescape_label(row.label)} {row.rules + row.nonterminals}"
                  for row in labels.assign(total=labels["rules"] + labels["nonterminals"])
                  .sort_values("total", ascending=False).head(12).itertuples()))

        pruning = {"min_count": args.min_count, "min_probability": args.min_probability}
        runs = [("Hiero pivot, unpruned", out / "hiero.parquet", {}, PARAPHRASE_GRAMMAR),
                ("Hiero pivot, pruned", out / "hiero.parquet", pruning, PARAPHRASE_GRAMMAR),
                ("labelled pivot, unpruned", out / "samt.parquet",
                 {"labelled": True, "keep_identity": True}, LABELLED_PARAPHRASE_GRAMMAR),
                ("labelled pivot, pruned", out / "samt.parquet",
                 {"labelled": True, "keep_identity": True, **pruning,
                  "top_paraphrases": args.top_paraphrases}, LABELLED_PARAPHRASE_GRAMMAR)]
        parts = []
        for k, (name, grammar, options, _) in enumerate(runs):
            directory = out / f"pivot{k}"
            stats = measured(f"{name} {options}", lambda grammar=grammar, options=options,
                             directory=directory: pivot_grammar(
                                 grammar, directory, directory / "self.parquet",
                                 memory_limit=args.memory_limit,
                                 partition_pairs=args.partition_pairs, **options))
            print(f"  {stats.kept_rules} of {stats.bilingual_rules} bilingual rules kept, "
                  f"{stats.pivot_pairs} pairs, {stats.paraphrase_rules} paraphrase rules of "
                  f"{stats.phrases} phrases")
            parts = grammar_parts(directory, 1)
        print(f"\n{args.examples} labelled paraphrase rules of the pruned grammar "
              "(lhs -> source | target; count = derived count, p = p(e2|e1)):")
        for kind, rule in structural_examples(con, parts, args.examples):
            print(f"  [{kind}] {rule['lhs']} -> {rule['source']} | {rule['target']}   "
                  f"count {rule['count']:.2f}, p {math.exp(rule['log_p_e2_given_e1']):.3f}, "
                  f"lex {rule['log_lex_e2_given_e1']:.2f}, bb_p_e|f "
                  f"{rule['log_bb_p_e_given_f']:.2f}, rarity {rule['bb_rarity']:.2f}, "
                  f"pivots {rule['pivots']}")


if __name__ == "__main__":
    main()

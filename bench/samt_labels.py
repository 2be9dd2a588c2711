"""SAMT labels (Zollmann & Venugopal 2006) on the training English: parse a sample of training
verses over their own Moses tokens with the parser stage (circle.grammar.parse), label every
span of at most --max-length tokens (circle.grammar.samt), and print each step's cost per verse,
the label-set size and the most frequent labels.

Usage: python bench/samt_labels.py [--verses 500] [--seed 40] [--max-length 10] [--top 20]
"""

import argparse
import random
import time
from collections import Counter

from circle.core.schemas import VERSES
from circle.core.tables import read_table
from circle.corpus.preprocess import normalize
from circle.grammar.parse import load_parser, project, projective_heads, token_docs, with_leaves
from circle.grammar.samt import FALLBACK, Bracketing, samt_labels


def kind(label: str) -> str:
    """The SAMT reading a label comes from."""
    if "+" in label:
        return "A+B"
    if "/" in label or "\\" in label:
        return "A/B or A\\B"
    return "X" if label == FALLBACK else "constituent"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="resources/bible/bible.parquet")
    parser.add_argument("--column", default="kjv", help="the training English")
    parser.add_argument("--verses", type=int, default=500, help="training verses drawn at random")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--max-length", type=int, default=10,
                        help="longest span labelled (Hiero's initial phrases: 10 target words)")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()

    table = read_table(args.table, VERSES, columns=["split", args.column])
    training = table.loc[table["split"] == "train", args.column].tolist()
    texts = random.Random(args.seed).sample(training, args.verses)
    # the grammar's target words: Moses tokens, lowercased; the parser reads them in their case
    cased = [normalize(text, "en", lowercase=False) for text in texts]
    lowered = [line.lower() for line in cased]
    words = [line.split() for line in lowered]
    print(f"{len(texts)} of {len(training)} training verses ({args.column}), "
          f"{sum(map(len, words)) / len(words):.1f} tokens a verse")

    started = time.perf_counter()
    nlp = load_parser()
    print(f"parser loaded in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    docs = token_docs(lowered, nlp, cased)
    trees = [with_leaves(project(doc), verse) for doc, verse in zip(docs, words, strict=True)]
    parse_seconds = time.perf_counter() - started
    lifted = sum(any(head not in (None, doc[token].head.i)
                     for token, head in projective_heads(doc).items()) for doc in docs)

    started = time.perf_counter()
    bracketings = [Bracketing.of_tree(tree) for tree in trees]
    labelled = [samt_labels(bracketing, args.max_length) for bracketing in bracketings]
    label_seconds = time.perf_counter() - started

    spans = sum(map(len, labelled))
    per_verse = 1000 / len(texts)
    print(f"parse (spaCy + projection): {parse_seconds * per_verse:.2f} ms a verse; "
          f"labelling (bracketing + every span up to {args.max_length} tokens): "
          f"{label_seconds * per_verse:.2f} ms a verse, "
          f"{label_seconds / spans * 1e6:.2f} us a span, {spans / len(labelled):.0f} spans a verse")
    print(f"whole training side ({len(training)} verses): parse "
          f"{parse_seconds / len(texts) * len(training) / 60:.1f} min, label "
          f"{label_seconds / len(texts) * len(training) / 60:.1f} min (one core)")
    print(f"parses with a non-projective arc, lifted by the projection: {lifted} of "
          f"{len(texts)}")
    for bracketing, verse in zip(bracketings, words, strict=True):
        if bracketing.words != tuple(verse):
            raise ValueError(f"a tree's leaves are not its verse's tokens: {verse}")

    counts = Counter(label for labels in labelled for label in labels.values())
    kinds = Counter()
    for label, count in counts.items():
        kinds[kind(label)] += count
    print(f"label set: {len(counts)} labels over {spans} spans; by reading: "
          + ", ".join(f"{name} {count / spans:.1%}" for name, count in kinds.most_common()))
    by_length = Counter(end - start for labels in labelled for start, end in labels)
    fallback = Counter(end - start for labels in labelled
                       for (start, end), label in labels.items() if label == FALLBACK)
    print("X by span length: " + ", ".join(
        f"{length}: {fallback[length] / by_length[length]:.0%}" for length in sorted(by_length)))
    print(f"the {args.top} most frequent labels:")
    for label, count in counts.most_common(args.top):
        print(f"  {label:<12} {count:>7}  {count / spans:6.2%}")


if __name__ == "__main__":
    main()

"""The non-projective arcs of the parser stage's dependency parses (circle.grammar.parse) on the
tune and test references, by construction: the arcs the projection lifts (Nivre & Nilsson 2005)
so that every tree reads as its sentence. Before the lifting, each tree with such an arc moved
the words of a gap (a subtree with a gap always comes out whole, the gap's words elsewhere).
Also checks that every tree's leaves are its tokens, and the projection's cost.

Usage: python bench/parse_order.py [--splits tune test] [--books Ruth] [--examples 1]
"""

import argparse
import time
from collections import Counter

from circle.core.schemas import VERSES
from circle.core.tables import read_table
from circle.grammar.parse import SUBJECTS, load_parser, project, projective_heads

REFERENCES = ["web", "dar", "ylt", "bbe"]
WH_TAGS = {"WDT", "WP", "WP$", "WRB"}


def construction(token) -> str:
    """The construction a lifted dependent (a spaCy token, with its parser's head) comes from."""
    if token.dep_ == "appos":
        return "apposition parted from its noun"
    if token.dep_ in {"relcl", "acl"}:
        return "relative or participial clause parted from its noun"
    if any(word.tag_ in WH_TAGS for word in token.subtree if word.i <= token.i):
        return "fronted wh-word (of a stranded preposition or a later verb)"
    return f"other ({token.dep_})"


def crosses_a_subjects_verb(token) -> bool:
    """Whether the arc's gap holds the verb of a subject that holds the arc's head: the old
    ``S`` put that subject whole before the verb phrase."""
    low, high = sorted((token.i, token.head.i))
    ancestor = token.head
    while True:
        if ancestor.dep_ in SUBJECTS and low < ancestor.head.i < high:
            return True
        if ancestor.head.i == ancestor.i:
            return False
        ancestor = ancestor.head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verses", default="resources/bible/bible.parquet")
    parser.add_argument("--splits", nargs="+", default=["tune", "test"])
    parser.add_argument("--books", nargs="+", help="only these books (any split)")
    parser.add_argument("--examples", type=int, default=1, help="sentences shown a construction")
    args = parser.parse_args()

    verses = read_table(args.verses, VERSES, columns=["segment_id", "book", "split", *REFERENCES])
    chosen = (verses["book"].isin(args.books) if args.books
              else verses["split"].isin(args.splits))
    verses = verses[chosen].sort_values("segment_id")
    texts = [text for row in verses[REFERENCES].itertuples(index=False) for text in row]
    nlp = load_parser()
    docs = list(nlp.pipe(texts, batch_size=64))
    started = time.process_time()
    trees = [project(doc) for doc in docs]
    seconds = time.process_time() - started
    kinds, examples, lifted_trees, subjects = Counter(), {}, 0, 0
    for doc, tree in zip(docs, trees, strict=True):
        assert tree.words() == [token.text for token in doc if not token.is_space]
        lifted = [doc[token] for token, head in projective_heads(doc).items()
                  if head not in (None, doc[token].head.i)]
        lifted_trees += bool(lifted)
        for token in lifted:
            kind = construction(token)
            kinds[kind] += 1
            subjects += crosses_a_subjects_verb(token)
            examples.setdefault(kind, []).append(doc.text)
    print(f"{len(texts):,} references ({len(verses):,} verses x {', '.join(REFERENCES)}): every "
          f"tree's leaves are its tokens; {lifted_trees} trees ({lifted_trees / len(texts):.1%}) "
          f"have a non-projective arc, {sum(kinds.values())} arcs lifted, {subjects} of them "
          f"over the verb of a subject; projection {1000 * seconds / len(texts):.2f} ms a tree")
    print("| construction | arcs |\n|---|---:|")
    for kind, count in kinds.most_common():
        print(f"| {kind} | {count} |")
    for kind, sentences in examples.items():
        for text in sentences[:args.examples]:
            print(f"{kind}: {text}")


if __name__ == "__main__":
    main()

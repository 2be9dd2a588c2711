"""OOV coverage of an evaluation set before and after borrowing rules from distributional
paraphrases (Marton, Callison-Burch & Resnik 2009; circle.distributional), and the run time.

Reads an experiment's tokenised splits (the monolingual text: the source side of every split),
its bilingual grammar and an input table (default: the experiment's test set); OOV words are
those no one-word phrase rule translates. Prints the search's cost, OOV types and tokens before
and after, a sample of borrowed rules for single OOV words, and the best candidates of the
words given with --words at any score.

Usage: python bench/oov_paraphrases.py [--experiment default] [--input TABLE]
       [--min-score 0.3] [--stoplist-threshold 2000] [--max-phrase-length 4]
       [--words asentando destruían fuéronle] [--samples 12]
"""

import argparse
import math
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from circle.core.layout import BILINGUAL_GRAMMAR, EVALSET_TABLE, TOKENIZED_TABLE, Results
from circle.corpus.prepare import EVAL_SETS
from circle.distributional import DistributionalSettings, MonolingualCorpus
from circle.grammar.oov_paraphrase import (
    FEATURE,
    borrowed_rules,
    coverage,
    find_paraphrases,
    read_known_words,
    read_phrase_rules,
    source_texts,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--input", type=Path)
    parser.add_argument("--min-score", type=float, default=0.3)
    parser.add_argument("--stoplist-threshold", type=int, default=2000)
    parser.add_argument("--max-phrase-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--words", nargs="*", default=["asentando", "destruían", "fuéronle"])
    parser.add_argument("--samples", type=int, default=12)
    args = parser.parse_args()
    results = Results.of(".", args.experiment)
    inputs = source_texts([args.input or results.path(EVALSET_TABLE, evalset="test")])
    splits = [results.path(TOKENIZED_TABLE, split=split) for split in ("train", *EVAL_SETS)]
    bilingual = results.path(BILINGUAL_GRAMMAR)
    settings = DistributionalSettings(min_score=args.min_score, seed=args.seed,
                                      stoplist_threshold=args.stoplist_threshold,
                                      max_phrase_length=args.max_phrase_length)
    monolingual = source_texts(splits)
    known = read_known_words(bilingual)
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        paraphrases = find_paraphrases(bilingual, inputs, monolingual, settings,
                                       Path(scratch) / "paraphrases.parquet")
        searched = time.perf_counter() - started
    started = time.perf_counter()
    borrowed = borrowed_rules(paraphrases,
                              read_phrase_rules(bilingual, set(paraphrases["paraphrase"])))
    borrowing = time.perf_counter() - started
    found = coverage(inputs, known, set(borrowed["source"]), settings.max_phrase_length)
    print(f"{settings}")
    print(f"input: {len(inputs)} sentences, {found.words} tokens; monolingual: "
          f"{len(monolingual)} sentences, {sum(len(s.split()) for s in monolingual)} tokens")
    print(f"search (index + all OOV phrases): {searched:.1f} s; borrowing: {borrowing:.1f} s")
    print(f"OOV phrases with paraphrases: {paraphrases['phrase'].nunique()}, paraphrases: "
          f"{len(paraphrases)}, borrowed rules: {len(borrowed)} for "
          f"{borrowed['source'].nunique()} phrases")
    print(f"OOV types {found.types} -> {found.types_after}, tokens {found.tokens} "
          f"({100 * found.tokens / found.words:.2f} %) -> {found.tokens_after} "
          f"({100 * found.tokens_after / found.words:.2f} %)")
    print("\nsample unigram OOVs with borrowed rules: best paraphrase -> its translations")
    unigrams = borrowed[~borrowed["source"].str.contains(" ")]
    for word, rules in list(unigrams.groupby("source", sort=False))[:args.samples]:
        best = rules.sort_values(FEATURE, ascending=False).head(4)
        print(f"  {word}: " + "; ".join(f"{r.paraphrase_of} -> {r.target} "
                                        f"(h {math.exp(getattr(r, FEATURE)):.2f})"
                                        for r in best.itertuples()))
    corpus = MonolingualCorpus(monolingual, replace(settings, min_score=0.0))
    for word in args.words:
        status = "in the input" if any(word in s.split() for s in inputs) else "not in the input"
        print(f"\n{word} ({status}; {'known' if word in known else 'unknown'} to the grammar): "
              "top 5 candidates at any score")
        for p in corpus.paraphrases(word)[:5]:
            print(f"  {p.similarity:.3f} {p.paraphrase}")

if __name__ == "__main__":
    main()

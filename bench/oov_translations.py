"""Translations before and after borrowing rules from distributional paraphrases (Marton,
Callison-Burch & Resnik 2009): the first test sentences with an OOV word that a borrowed
one-word rule covers, decoded with the set's filtered grammar and with its augmented grammar
(`snakemake oov_paraphrased_grammars`), at the config's untuned weights plus a weight for the
paraphrase feature.

Usage: python bench/oov_translations.py [--experiment default] [--sentences 8]
       [--feature-weight 0.2]
"""

import argparse
import time

import yaml

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, OOV_PARAPHRASED_GRAMMAR, Results
from circle.core.schemas import EVALSET, GRAMMAR_OOV_PARAPHRASED
from circle.core.tables import read_table
from circle.decoder import decode_corpus
from circle.decoder.grammar import load_grammar
from circle.experiments.conditions import oov_variant_tag
from circle.grammar.oov_paraphrase import FEATURE, read_known_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--feature-weight", type=float, default=0.2)
    args = parser.parse_args()
    results = Results.of(".", args.experiment)
    config = yaml.safe_load(results.config.read_text())
    weights = config["decoder"]["translation_weights"]
    evalset = read_table(results.path(EVALSET_TABLE, evalset="test"), EVALSET)
    filtered = results.path(FILTERED_GRAMMAR, evalset="test")
    augmented = results.path(OOV_PARAPHRASED_GRAMMAR, evalset="test",
                             oov_variant=oov_variant_tag(""))
    known = read_known_words(filtered)
    rules = read_table(augmented, GRAMMAR_OOV_PARAPHRASED, columns=["source", "paraphrase_of"])
    borrowed = set(rules.loc[rules["paraphrase_of"].notna(), "source"])
    picked = [row for row in evalset.itertuples()
              if any(w not in known and w in borrowed for w in row.source.split())]
    picked = picked[:args.sentences]
    lm = str(results.lm(config["lm"]["decoding_order"]))
    outputs = []
    for grammar, model in ((filtered, weights),
                           (augmented, {**weights, FEATURE: args.feature_weight})):
        started = time.perf_counter()
        outputs.append(decode_corpus([row.source for row in picked], load_grammar(grammar), lm,
                                     model, k=1))
        print(f"{grammar}: loaded and decoded in {time.perf_counter() - started:.1f} s")
    for row, before, after in zip(picked, *outputs, strict=True):
        print(f"\nsource: {row.source}\nOOV:    "
              f"{' '.join(w for w in row.source.split() if w not in known)}\n"
              f"ref:    {row.references[row.ref_order[0]]}\n"
              f"before: {before[0].text}\nafter:  {after[0].text}")


if __name__ == "__main__":
    main()

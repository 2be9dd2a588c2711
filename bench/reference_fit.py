"""What tuning with paraphrased references fits: decode the tune set with several runs' weights
and score each output against the single human reference, its 1-best untargeted paraphrase and
all human references of the tune set (sacrebleu BLEU, percent).

Usage: python bench/reference_fit.py [--experiment default]
       [--runs untuned-translation 1H.rep0 1H+1P.rep0 2H.rep0]
"""

import argparse

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, UNTARGETED_PARAPHRASES, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights
from circle.decoder.nbest import NBEST
from circle.experiments.conditions import UNTUNED_TRANSLATION, Condition, reference_tag
from circle.experiments.evaluate import corpus_bleu
from circle.experiments.mt_tuning import condition_references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--runs", nargs="+",
                        default=[UNTUNED_TRANSLATION, "1H.rep0", "1H+1P.rep0", "1H+3P.rep0",
                                 "2H.rep0"])
    parser.add_argument("--lm-order", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    results = Results.of(".", args.experiment)
    table = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    paraphrases = read_table(results.path(UNTARGETED_PARAPHRASES, bias="0",
                                            reference=reference_tag(None)), NBEST)
    single = condition_references(table, Condition.parse("1H"), None)
    paraphrased = [refs[1:] for refs in
                   condition_references(table, Condition.parse("1H+1P"), paraphrases)]
    humans = [list(refs) for refs in table["references"]]
    print(f"1-best paraphrases against the reference they paraphrase: "
          f"{corpus_bleu([p[0] for p in paraphrased], single).value:.2f} BLEU")
    grammar = load_grammar(results.path(FILTERED_GRAMMAR, evalset="tune"))
    print("| weights | vs single reference | vs its 1-best paraphrase | vs all human references |")
    print("|---|---:|---:|---:|")
    for run in args.runs:
        outputs = decode_corpus(list(table["source"]), grammar,
                                results.lm(args.lm_order), read_weights(results.weights(run)),
                                DecoderSettings(k=1), workers=args.workers)
        best = [hypotheses[0].text for hypotheses in outputs]
        print(f"| {run} | {corpus_bleu(best, single).value:.2f} | "
              f"{corpus_bleu(best, paraphrased).value:.2f} | "
              f"{corpus_bleu(best, humans).value:.2f} |")


if __name__ == "__main__":
    main()

"""Tune one targeted run (condition 1H+kT, thesis §5.3) of a finished experiment in a chosen
search mode, outside the pipeline, and score it on the test set: the exact-versus-forest
comparison of tuned systems. A human-reference condition (``--condition 1H``, 2H, ...) runs
from the untuned weights as the pipeline's does, for timing untargeted iterations beside
targeted ones on the same machine.

Everything but the mode comes from the experiment's results and config (``config/config.yaml``
with the schema's defaults): the tune set, filtered
grammars, LMs, the 1H weights of the replicate, the paraphraser weights and the grid search's
chosen configuration; the MERT seed is the pipeline's seed of that run. The targeted cache goes
to ``--out`` (not the experiment's), so the run paraphrases everything itself. Printed: per
iteration the decode and reference (targeted paraphrasing) seconds from the tuning log, and the
test BLEU (sacrebleu, lowercased, against all references) of the tuned weights. Run from the
repository root:

    python bench/targeted_tuning.py --mode exact [--condition 1H+1T] [--replicate 0]
        [--without-reranking] [--score-only] --out DIR
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import yaml
from snakemake.utils import validate

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, GRID_CHOICE, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, decode_corpus, read_weights
from circle.experiments.conditions import UNTUNED_TRANSLATION, TuningRun, run_seed
from circle.experiments.evaluate import corpus_bleu
from circle.experiments.mt_tuning import ConditionTuning
from circle.paraphrase.config import bias_name
from circle.paraphrase.targeted import SEARCH_MODES, TargetedSettings, targeted_setup
from circle.tune.loop import TuningSettings

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=SEARCH_MODES, required=True)
    parser.add_argument("--condition", default="1H+1T")
    parser.add_argument("--replicate", type=int, default=0)
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--without-reranking", action="store_true",
                        help="keep the paraphraser's order (the ablation of targeted.rerank: null)")
    parser.add_argument("--score-only", action="store_true",
                        help="score the weights already in --out without tuning")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text(encoding="utf-8"))
    validate(config, str(ROOT / "workflow/schemas/config.schema.yaml"))  # fills the defaults
    results = Results.of(ROOT, args.experiment)
    run = TuningRun.of(args.condition, args.replicate)
    if run.condition.paraphrases and not run.condition.targeted:
        parser.error("untargeted paraphrase conditions (1H+kP) are not run here")
    biases = [float(b) for b in config["paraphrase"]["biases"]]
    targeted = config["targeted"]
    params = {"biases": biases, "point": None, "nbest": targeted["nbest"], "search": args.mode,
              "forest_beam": targeted["forest_beam"],
              "rerank": None if args.without_reranking else targeted["rerank"],
              "depth": run.condition.paraphrases, "cache": args.out / "cache"}
    settings = DecoderSettings.from_config(config["decoder"])
    setup, start = None, results.weights(UNTUNED_TRANSLATION)
    if run.condition.targeted:
        setup = targeted_setup(TargetedSettings.from_config(params), results.path(GRID_CHOICE),
                               [results.paraphrase_grammar(bias_name(b)) for b in biases],
                               results.lm(3), results.paraphraser_weights("0"), results.lm(5),
                               settings)
        start = results.weights(TuningRun.of("1H", args.replicate).name)
    tuning = TuningSettings.from_config(config["tuning"], run_seed(config["seed"], run.name))
    args.out.mkdir(parents=True, exist_ok=True)
    weights_path = args.out / f"{run.name}.txt"
    if not args.score_only:
        ConditionTuning(run, results.path(EVALSET_TABLE, evalset="tune"),
                        results.path(FILTERED_GRAMMAR, evalset="tune"), results.lm(3),
                        start, None, settings, tuning, setup).tune(
                            args.workers, weights_path, args.out / f"{run.name}.parquet")
    test = read_table(results.path(EVALSET_TABLE, evalset="test"), EVALSET)
    nbest = decode_corpus(list(test["source"]), results.path(FILTERED_GRAMMAR, evalset="test"),
                          results.lm(3), read_weights(weights_path), settings,
                          workers=args.workers, k=1)
    bleu = corpus_bleu([hypotheses[0].text for hypotheses in nbest],
                       [list(references) for references in test["references"]], lowercased=True)
    print(f"{weights_path}: test BLEU {bleu.value:.2f} ({bleu.signature})")


if __name__ == "__main__":
    main()

"""The page on the tuned paraphraser (thesis §3.2.3): its tune score per iteration, its weights
before and after tuning, how often its 1-best copies the reference, and sample untargeted
paraphrases of the tune set's single references."""

from __future__ import annotations

import os

import numpy as np

from circle.core.pages import write_page
from circle.core.schemas import EVALSET, TUNING_LOG
from circle.core.tables import read_table
from circle.corpus.references import single_references
from circle.decoder.model import read_weights
from circle.decoder.nbest import NBEST, best_hypotheses
from circle.tune.metrics import IBleu, get_metric


def paraphraser_report(log_path: str | os.PathLike, nbest_path: str | os.PathLike,
                       tune_path: str | os.PathLike, untuned_weights_path: str | os.PathLike,
                       tuned_weights_path: str | os.PathLike, out_path: str | os.PathLike,
                       html_path: str | os.PathLike, samples: int = 10, seed: int = 0) -> str:
    """A Markdown page (and its HTML) on the tuned paraphraser: its tune score per iteration
    against the untuned start; its weights untuned and tuned (a weight the untuned file leaves
    out starts at 0, as φ_ident's: Ganitkevitch & Callison-Burch, draft §4.1); the identity rate,
    the share of the tune set's single references whose 1-best untargeted paraphrase is the
    reference itself; and ``samples`` seeded random references with their 1-best paraphrase, so
    a reader sees what the paraphrases look like."""
    log = read_table(log_path, TUNING_LOG)
    metric = str(log["metric"].iloc[0])
    chosen_row = log[log["returned"]].iloc[0]
    start, returned = log["decode_score"].iloc[0], chosen_row["decode_score"]
    curve = ", ".join(f"{100 * value:.2f}" for value in log["decode_score"])
    table = read_table(tune_path, EVALSET)
    singles = dict(zip(table["segment_id"], single_references(table), strict=True))
    best = best_hypotheses(read_table(nbest_path, NBEST))
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(np.fromiter(best, np.int64, len(best)),
                               size=min(samples, len(best)), replace=False))
    untuned, tuned = read_weights(untuned_weights_path), read_weights(tuned_weights_path)
    copies = sum(text.split() == singles[segment].split() for segment, text in best.items())
    lines = ["# The tuned paraphraser (thesis §3.2.3)", "",
             f"Tune {metric_label(metric)} (%) of the decoded 1-best per iteration, on the "
             f"paraphraser-tuning set: {curve}. Returned: iteration "
             f"{int(chosen_row['iteration'])} "
             f"({100 * returned:.2f} against {100 * start:.2f} untuned).", ""]
    if not get_metric(metric).better(returned, start):
        lines += ["**Warning: tuning did not improve on the untuned weights; the paraphraser "
                  "runs with its untuned start.**", ""]
    lines += ["| feature | untuned | tuned |", "|:---|---:|---:|"]
    lines += [f"| {name} | {untuned.get(name, 0.0):.4g} | {tuned.get(name, 0.0):.4g} |"
              for name in [*untuned, *(name for name in tuned if name not in untuned)]]
    lines += ["", f"Identity rate: {copies} of {len(best)} tune-set references "
              f"({100 * copies / len(best):.1f} %) have their own text as 1-best paraphrase.",
              ""]
    lines += [f"{len(chosen)} random tune-set references (seed {seed}) and their 1-best "
              "untargeted paraphrase:", "", "| segment | single reference | 1-best paraphrase |",
              "|---|---|---|"]
    lines += [f"| {segment} | {singles[segment]} | {best[segment]} |" for segment in chosen]
    text = "\n".join(lines) + "\n"
    write_page(text, out_path, html_path, "The tuned paraphraser")
    return text


def metric_label(name: str) -> str:
    """A tuning metric's name as the page writes it: ``BLEU``, ``TER``, ``TERBLEU``, and iBLEU
    (Sun & Zhou 2012) with its α, ``iBLEU (α = 0.9)`` for ``ibleu:0.9``."""
    metric = get_metric(name)
    return f"iBLEU (α = {metric.alpha:g})" if isinstance(metric, IBleu) else name.upper()

"""The page on the tuned paraphraser (thesis §3.2.3): its tune score per iteration and sample
untargeted paraphrases of the tune set's single references."""

from __future__ import annotations

import os

import numpy as np

from circle.core.pages import write_page
from circle.core.schemas import EVALSET, TUNING_LOG
from circle.core.tables import read_table
from circle.decoder.nbest import NBEST
from circle.tune.loop import single_references
from circle.tune.metrics import get_metric


def paraphraser_report(log_path: str | os.PathLike, nbest_path: str | os.PathLike,
                       tune_path: str | os.PathLike, out_path: str | os.PathLike,
                       html_path: str | os.PathLike, samples: int = 10, seed: int = 0) -> str:
    """A Markdown page (and its HTML) on the tuned paraphraser: its tune score per iteration
    against the untuned start, and ``samples`` seeded random single references of the tune set
    with their 1-best untargeted paraphrase, so a reader sees what the paraphrases look like."""
    log = read_table(log_path, TUNING_LOG)
    metric = str(log["metric"].iloc[0])
    chosen_row = log[log["returned"]].iloc[0]
    start, returned = log["decode_score"].iloc[0], chosen_row["decode_score"]
    curve = ", ".join(f"{100 * value:.2f}" for value in log["decode_score"])
    table = read_table(tune_path, EVALSET)
    singles = dict(zip(table["segment_id"], single_references(table), strict=True))
    nbest = read_table(nbest_path, NBEST)
    best = nbest[nbest["rank"] == 0].set_index("segment_id")["hypothesis"]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(best.index.to_numpy(), size=min(samples, len(best)),
                               replace=False))
    lines = ["# The tuned paraphraser (thesis §3.2.3)", "",
             f"Tune {metric.upper()} (%) of the decoded 1-best per iteration, on the "
             f"paraphraser-tuning set: {curve}. Returned: iteration "
             f"{int(chosen_row['iteration'])} "
             f"({100 * returned:.2f} against {100 * start:.2f} untuned).", ""]
    if not get_metric(metric).better(returned, start):
        lines += ["**Warning: tuning did not improve on the untuned weights; the paraphraser "
                  "runs with its untuned start.**", ""]
    lines += [f"{len(chosen)} random tune-set references (seed {seed}) and their 1-best "
              "untargeted paraphrase:", "", "| segment | single reference | 1-best paraphrase |",
              "|---|---|---|"]
    lines += [f"| {segment} | {singles[segment]} | {best[segment]} |" for segment in chosen]
    text = "\n".join(lines) + "\n"
    write_page(text, out_path, html_path, "The tuned paraphraser")
    return text

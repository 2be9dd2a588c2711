"""The targeted samples page: (hypothesis, original reference, top targeted paraphrase) triples
drawn from the targeted cache (:func:`circle.paraphrase.targeted.sample_triples`), each with the
TER of the reference and of its paraphrase to the hypothesis, for reading what targeting does
(thesis §5.3, Fig. 5.9).
"""

from __future__ import annotations

import pandas as pd

from circle.paraphrase.targeted import TargetedSetup
from circle.tune.metrics import ter_from_stats, ter_stats


def triples_page(triples: pd.DataFrame, setup: TargetedSetup, lists: int) -> str:
    """The Markdown page of :func:`sample_triples`: the set-up, then each triple with the TER
    of the reference and of its paraphrase to the hypothesis (how far targeting moved it)."""
    reranker = "not reranked" if setup.reranker is None else (
        f"reranked by {setup.reranker.lm:g} × LM log-probability per word − "
        f"{setup.reranker.distance:g} × WER to the hypothesis + "
        f"{setup.reranker.paraphraser:g} × paraphraser score")
    lines = ["# Targeted paraphrases inside the tuning loop (thesis §5.3, Fig. 5.9)", "",
             f"Paraphraser: bias {setup.config.bias:g}, targeting weight "
             f"{setup.config.targeting_weight:g}; {setup.mode} search, "
             f"{setup.settings.k}-best, {reranker}. {len(triples)} of the {lists:,} cached "
             "targeted lists (one per reference, hypothesis and forest words), drawn with the "
             "config seed. H = MT hypothesis, "
             "R = original reference, P = the top targeted paraphrase of R; TER to H in "
             "brackets.", ""]
    targets = [[hypothesis] for hypothesis in triples["hypothesis"]]
    distances = zip(ter_from_stats(ter_stats(list(triples["reference"]), targets)),
                    ter_from_stats(ter_stats(list(triples["paraphrase"]), targets)), strict=True)
    for number, (row, (before, after)) in enumerate(
            zip(triples.itertuples(index=False), distances, strict=True), start=1):
        lines += [f"## Triple {number}", "", f"- H: {row.hypothesis}",
                  f"- R: {row.reference} [{100 * before:.1f}]",
                  f"- P: {row.paraphrase} [{100 * after:.1f}]", ""]
    return "\n".join(lines)

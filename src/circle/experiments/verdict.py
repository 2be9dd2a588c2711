"""The powered experiment's verdict, read from its condition summaries by the decision rules
that docs/results.md fixed before the run ("The powered experiment: decision rules, fixed
before the run", committed at e536912).

Every comparison is a condition against 1H of the same experiment on test BLEU at a common
length: Δ, the mean over the condition's tuning replicates minus 1H's, and the two-sided Welch
t-test over the replicates' scores (:func:`circle.experiments.replicates.welch_test`, the
summary's ``matched_bleu_mean_difference`` and ``matched_bleu_welch_p_value``), α = 0.05.

* 2H is **resolved** from 1H iff Δ2H > 0 and p(2H) < α (one test, not corrected).
* A paraphraser (1H+1P of each experiment) **reaches half the human gain** iff ΔP ≥ Δ2H / 2,
  and is **above 1H** iff ΔP > 0 and its p-value, Holm-adjusted over the paraphrasers, is
  below α.
* The rules, the first that holds being the verdict: (a) 2H is not resolved; (b) the best
  paraphraser (largest ΔP) reaches half the human gain; (c) every paraphraser is at or below
  1H; (d) one is above 1H, none reaching half the human gain.
* The controls' check: 1H+1X_copy (1H's own objective) resolved from 1H either way means the
  test read MERT's draw as an effect; the shuffled H2 and the KJV verse are reported only.

A verdict is read from complete conditions only: each must have the experiment's
``tuning.replicates`` runs, and the experiments must share the MT system (their 1H scores).
:mod:`circle.pipeline.verdict` reads the experiments' summaries and writes the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from circle.experiments.conditions import BASELINE_CONDITION
from circle.experiments.replicates import ALPHA, holm

HUMAN = "2H"
PARAPHRASER = "1H+1P"
COPY = "1H+1X_copy"
CONTROLS = ("1H+1X_shuffle", "1H+1X_kjv", COPY)
"""The dose-response's controls of the powered experiment, the copy of R last."""

RULES = {
    "a": "2H is not resolved from 1H: this corpus cannot test the thesis's claim at this "
         "scale; the paraphrasers' numbers are underpowered, with no claim either way.",
    "b": "2H is resolved and the best paraphraser reaches half the human gain: the 183-verse "
         "runs were underpowered, and their claims that paraphrased references do not help are "
         "withdrawn.",
    "c": "2H is resolved and every paraphraser is at or below 1H: the paraphrasers fail here.",
    "d": "2H is resolved, no paraphraser reaches half the human gain, and one is above 1H: the "
         "paraphrasers help, by less than half of what a second human reference gives.",
}
"""The rules' verdicts, as docs/results.md states them."""


@dataclass(frozen=True)
class Comparison:
    """A condition of an experiment against its 1H: the replicates on each side, Δ and the
    Welch p-value at a common length (what the verdict reads), raw BLEU's beside them, and the
    pooled approximate randomisation test's p-value at a common length."""

    experiment: str
    condition: str
    replicates: int
    baseline_replicates: int
    difference: float
    p_value: float
    raw_difference: float
    raw_p_value: float
    pooled_p_value: float

    @property
    def resolved(self) -> bool:
        """Resolved from 1H in either direction (p < α)."""
        return bool(self.p_value < ALPHA)


@dataclass(frozen=True)
class Paraphraser:
    """A paraphraser's comparison with its Holm-adjusted p-value and the rules' two readings."""

    comparison: Comparison
    holm_p_value: float
    reaches_half: bool
    above: bool


@dataclass(frozen=True)
class Verdict:
    """The rule that holds (``a``–``d``), its readings and the controls' check."""

    rule: str
    human: Comparison
    paraphrasers: tuple[Paraphraser, ...]
    controls: tuple[Comparison, ...]

    @property
    def human_resolved(self) -> bool:
        return human_gains(self.human)

    @property
    def copy_failed(self) -> bool:
        """Whether the copy of R, 1H's own objective, came out resolved from 1H."""
        return any(c.condition == COPY and c.resolved for c in self.controls)


def human_gains(human: Comparison) -> bool:
    """2H is resolved from 1H as the rules read it: better than 1H, and p < α."""
    return human.difference > 0 and human.resolved


def decide(human: Comparison, paraphrasers: Sequence[Comparison],
           controls: Sequence[Comparison] = ()) -> Verdict:
    """The verdict of the rules (module doc) on the comparisons."""
    if not paraphrasers:
        raise ValueError("the verdict needs at least one paraphraser's 1H+1P")
    adjusted = holm([c.p_value for c in paraphrasers])
    read = tuple(Paraphraser(c, float(p), c.difference >= human.difference / 2,
                             c.difference > 0 and p < ALPHA)
                 for c, p in zip(paraphrasers, adjusted, strict=True))
    best = max(read, key=lambda p: p.comparison.difference)
    if not human_gains(human):
        rule = "a"
    elif best.reaches_half:
        rule = "b"
    elif not any(p.above for p in read):
        rule = "c"
    else:
        rule = "d"
    return Verdict(rule, human, read, tuple(controls))


def comparison(summary: pd.DataFrame, experiment: str, condition: str,
               replicates: int) -> Comparison:
    """``condition``'s row of an experiment's summary as a comparison with 1H; refused unless
    the condition and 1H have ``replicates`` runs each and a replicate-level test."""
    rows = summary[summary["condition"] == condition]
    baseline = summary[summary["condition"] == BASELINE_CONDITION]
    if rows.empty or baseline.empty:
        missing = condition if rows.empty else BASELINE_CONDITION
        raise ValueError(f"{experiment}: no {missing} in its condition summary (has the run "
                         "set been evaluated?)")
    row, base = rows.iloc[0], baseline.iloc[0]
    if row["baseline_condition"] != BASELINE_CONDITION:
        raise ValueError(f"{experiment}: {condition} is tested against "
                         f"{row['baseline_condition']}, not {BASELINE_CONDITION}")
    for name, count in ((condition, row["replicates"]), (BASELINE_CONDITION, base["replicates"])):
        if int(count) != replicates:
            raise ValueError(f"{experiment}: {name} has {int(count)} of {replicates} replicates: "
                             "the verdict reads complete conditions only")
    values = [row["matched_bleu_mean_difference"], row["matched_bleu_welch_p_value"],
              row["bleu_mean_difference"], row["bleu_welch_p_value"]]
    if any(pd.isna(value) for value in values):
        raise ValueError(f"{experiment}: {condition} has no replicate-level test against 1H")
    return Comparison(experiment, condition, int(row["replicates"]), int(base["replicates"]),
                      *map(float, values), float(row["matched_bleu_p_value"]))


def check_one_system(summaries: dict[str, pd.DataFrame]) -> None:
    """Refuse experiments whose 1H runs differ: the rules compare paraphrasers over one MT
    system's 1H."""
    scores = {name: tuple(summary.loc[summary["condition"] == BASELINE_CONDITION,
                                      ["bleu_mean", "matched_bleu_mean", "replicates"]]
                          .iloc[0].round(6)) for name, summary in summaries.items()}
    first_name, first = next(iter(scores.items()))
    for name, score in scores.items():
        if not np.allclose(score, first):
            raise ValueError(f"{name}'s 1H (BLEU, at a common length, replicates {score}) is "
                             f"not {first_name}'s {first}: the experiments must share the MT "
                             "system and its 1H runs")

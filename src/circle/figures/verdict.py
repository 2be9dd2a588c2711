"""The powered experiment's verdict page (``circle verdict``; :mod:`circle.experiments.verdict`):
the rule that holds, the comparisons it read, the controls' check, and what the verdict does not
show; :mod:`circle.pipeline.verdict` writes it as ``verdict.md``, ``verdict.html`` and
``verdict.csv`` (every comparison)."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from circle.core.pages import p_value_text, pipe_table
from circle.experiments.verdict import RULES, Comparison, Paraphraser, Verdict

TITLE = "The powered experiment's verdict"
HEADER = ("experiment", "condition", "replicates", "Δ BLEU at a common length", "Welch p",
          "Holm p", "reading", "Δ BLEU raw", "raw Welch p", "pooled AR p")


def _row(comparison: Comparison, holm: str = "", reading: str = "") -> list[str]:
    return [comparison.experiment, comparison.condition,
            f"{comparison.replicates} vs {comparison.baseline_replicates}",
            f"{comparison.difference:+.2f}", p_value_text(comparison.p_value), holm, reading,
            f"{comparison.raw_difference:+.2f}", p_value_text(comparison.raw_p_value),
            p_value_text(comparison.pooled_p_value)]


def _paraphraser_reading(paraphraser: Paraphraser) -> str:
    above = "above 1H" if paraphraser.above else "at or below 1H"
    half = "reaches" if paraphraser.reaches_half else "below"
    return f"{above}; {half} half the human gain"


def verdict_table(verdict: Verdict) -> pd.DataFrame:
    """Every comparison the verdict read or reports, as the page's CSV."""
    rows = [{**asdict(verdict.human), "role": "human control", "holm_p_value": None}]
    rows += [{**asdict(p.comparison), "role": "paraphraser", "holm_p_value": p.holm_p_value,
              "reaches_half": p.reaches_half, "above": p.above} for p in verdict.paraphrasers]
    rows += [{**asdict(c), "role": "control", "holm_p_value": None} for c in verdict.controls]
    return pd.DataFrame(rows)


def verdict_markdown(verdict: Verdict, made_at: str) -> str:
    """The page's Markdown."""
    human = verdict.human
    rows = [_row(human, reading="resolved" if verdict.human_resolved else "not resolved")]
    rows += [_row(p.comparison, p_value_text(p.holm_p_value), _paraphraser_reading(p))
             for p in verdict.paraphrasers]
    rows += [_row(c, reading="resolved from 1H" if c.resolved else "not resolved")
             for c in verdict.controls]
    copy_check = [c for c in verdict.controls if c.condition == "1H+1X_copy"]
    if not copy_check:
        check = "The copy of R (1H+1X_copy) was not run: the controls' check is missing."
    elif verdict.copy_failed:
        check = ("**The controls' check failed**: 1H+1X_copy, 1H's own objective from other "
                 f"seeds, is resolved from 1H (Δ {copy_check[0].difference:+.2f}, p "
                 f"{p_value_text(copy_check[0].p_value)}): the test read MERT's draw as an "
                 "effect, and the verdict stands with that failure beside it.")
    else:
        check = (f"The controls' check holds: 1H+1X_copy is not resolved from 1H (Δ "
                 f"{copy_check[0].difference:+.2f}, p {p_value_text(copy_check[0].p_value)}).")
    experiments = dict.fromkeys(p.comparison.experiment for p in verdict.paraphrasers)
    return "\n".join([
        f"# {TITLE}\n",
        f"Experiments {', '.join(experiments)}, "
        f"made at {made_at}, read by the decision rules of docs/results.md (\"The powered "
        "experiment: decision rules, fixed before the run\", committed before the first run). "
        "Δ: mean test BLEU over a condition's tuning replicates minus 1H's; Welch p: the "
        "two-sided Welch t-test over the replicates' scores, each tuning run one observation; "
        "Holm p: adjusted over the paraphrasers. Only the common-length columns enter the "
        "verdict; raw BLEU and the pooled approximate randomisation test are beside them.\n",
        f"**Verdict: rule ({verdict.rule}).** {RULES[verdict.rule]}\n",
        *pipe_table(HEADER, rows, left={"experiment", "condition", "reading"}), "",
        check + "\n",
        "What this does not show: the paraphrasers' effect on another corpus or language pair, "
        "on raw BLEU (where any second reference gains by its length alone), or with more "
        "than one paraphrased reference; a condition not resolved from 1H is not shown equal "
        "to it (the pilot's replicate spread sets what these replicates can detect: "
        "`circle power`).\n",
    ])

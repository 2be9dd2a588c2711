"""The thesis's remaining figures as tuning-run sets and tables (target ``paper_tables``).

Fig. 4.3, 5.3–5.8, 5.4 and 5.10 have their own rules; this module adds the figures that need
tuning runs of their own, each with the thesis's published numbers beside ours:

* Fig. 4.8/4.9: 1H and 1H+1P tuned with TERBLEU (Matsoukas et al. 2009; thesis §4.4) and
  with BLEU, scored by BLEU, its two factors (precision, brevity penalty) and TER;
* Fig. 4.10: each reference set in turn as every segment's single reference (1H, 1H+1P;
  thesis §4.5, "per-translator" sets, unlike the seeded per-document choice of §4.3.1);
* Fig. 5.14: the 1H+kP conditions with the untargeted paraphraser on self-paraphrase-biased
  grammars (thesis §5.5), beside the unbiased untargeted and the targeted curves.

Every condition is compared with its own baseline (:attr:`Condition.baseline`: 1H with the
same single reference and tuning metric) by the evaluation's approximate randomisation test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from circle.experiments import Condition, TuningRun


@dataclass(frozen=True)
class PaperFigure:
    """A thesis figure that needs its own tuning runs: ``key`` names its report files
    (``report/<key>.md``), ``conditions`` the runs it shows (every replicate of each)."""

    key: str
    figure: str
    title: str
    conditions: tuple[Condition, ...]


def paper_figures(conditions: Sequence[str], references: int, tuning_metric: str,
                  other_metric: str, untargeted_biases: Sequence[float]) -> list[PaperFigure]:
    """The figures of this module for a config: its tuning ``conditions`` (Fig. 5.14 repeats
    their 1H+kP and shows their 1H+kT), the tune set's number of ``references`` (Fig. 4.10),
    ``tuning_metric`` and the ``other_metric`` it is compared with (Fig. 4.8/4.9) and the
    ``untargeted_biases`` of Fig. 5.14."""
    parsed = [Condition.parse(name) for name in conditions]
    untargeted = [c for c in parsed if c.paraphrases and not c.targeted]
    targeted = [c for c in parsed if c.targeted]
    single = Condition(1)
    metrics = [tuning_metric] + ([other_metric] if other_metric != tuning_metric else [])
    by_metric = tuple(Condition(1, k, metric=None if metric == tuning_metric else metric)
                      for metric in metrics for k in (0, 1))
    by_reference = tuple(Condition(1, k, reference=n)
                         for n in range(1, references + 1) for k in (0, 1))
    biased = tuple(Condition(1, c.paraphrases, bias=float(b))
                   for b in untargeted_biases for c in untargeted)
    figures = [
        PaperFigure("fig4_8", "4.8/4.9", "Tuning metric: 1H and 1H+1P tuned with "
                    f"{' and with '.join(m.upper() for m in metrics)} (thesis Fig. 4.8/4.9)",
                    by_metric),
        PaperFigure("fig4_10", "4.10", "Each reference set in turn as the single reference "
                    "(thesis Fig. 4.10)", by_reference),
    ]
    if biased:
        figures.append(PaperFigure("fig5_14", "5.14", "Untargeted paraphrases with "
                                   "self-paraphrase bias (thesis Fig. 5.14)",
                                   (single, *untargeted, *biased, *targeted)))
    return figures


def figure_runs(figures: Sequence[PaperFigure], replicates: int) -> list[TuningRun]:
    """Every tuning run the figures show, each once, in figure order."""
    conditions = dict.fromkeys(c for figure in figures for c in figure.conditions)
    return [TuningRun(condition, replicate)
            for condition in conditions for replicate in range(replicates)]

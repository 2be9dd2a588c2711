"""The tuning runs of the thesis's figures that need runs of their own (target ``paper_tables``;
their tables and pages: :mod:`circle.figures.paper`, Fig. 6.2's: :mod:`circle.figures.focus`).

The workflow builds its DAG from these run sets, so they stand apart from the page writing:
a thesis figure is a set of :class:`Condition` variants, each with every tuning replicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from circle.experiments.conditions import Condition, TuningRun


@dataclass(frozen=True)
class PaperFigure:
    """A thesis figure that needs its own tuning runs: ``key`` names its report files
    (``report/<key>.md``), ``conditions`` the runs it shows (every replicate of each)."""

    key: str
    figure: str
    title: str
    conditions: tuple[Condition, ...]
    heldout: bool = False
    """The runs are the held-out system's (Fig. 4.11/4.12), not the experiment's."""


def paper_figures(conditions: Sequence[str], references: int, tuning_metric: str,
                  other_metric: str, untargeted_biases: Sequence[float],
                  heldout_blocks: Sequence[float] = ()) -> list[PaperFigure]:
    """The figures of this module for a config: its tuning ``conditions`` (Fig. 5.14 repeats
    their 1H+kP and shows their 1H+kT), the tune set's number of ``references`` (Fig. 4.10),
    ``tuning_metric`` and the ``other_metric`` it is compared with (Fig. 4.8/4.9), the
    ``untargeted_biases`` of Fig. 5.14 and the ``heldout_blocks`` of Fig. 4.11/4.12 (none: no
    such figure)."""
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
    if heldout_blocks:
        figures.append(PaperFigure(
            "fig4_12", "4.11/4.12", "Larger single-reference tuning sets from held-out training "
            "blocks (thesis Fig. 4.11/4.12)",
            tuple(Condition(1, k, tuning_set=n) for n in range(len(heldout_blocks) + 1)
                  for k in (0, 1)), heldout=True))
    if biased:
        figures.append(PaperFigure("fig5_14", "5.14", "Untargeted paraphrases with "
                                   "self-paraphrase bias (thesis Fig. 5.14)",
                                   (single, *untargeted, *biased, *targeted)))
    return figures


def figure_runs(figures: Sequence[PaperFigure], replicates: int, heldout: bool = False
                ) -> list[TuningRun]:
    """Every tuning run the figures show, each once, in figure order: the experiment's, or with
    ``heldout`` the held-out system's."""
    conditions = dict.fromkeys(c for figure in figures if figure.heldout == heldout
                               for c in figure.conditions)
    return [TuningRun(condition, replicate)
            for condition in conditions for replicate in range(replicates)]




FOCUS_CONDITIONS = ("2H", "1H+1P", "1H+1T")
"""The runs of Fig. 6.2: a human, an untargeted and a targeted second reference."""


def focus_runs(conditions: Sequence[str], replicates: int) -> list[TuningRun]:
    """Every replicate of the Fig. 6.2 runs, if the config tunes all three conditions."""
    if not set(FOCUS_CONDITIONS) <= set(conditions):
        return []
    return [TuningRun.of(condition, replicate) for replicate in range(replicates)
            for condition in FOCUS_CONDITIONS]

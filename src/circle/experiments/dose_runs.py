"""The dose-response's runs (:mod:`circle.experiments.dose_response`): its extra references, the
controls it reuses, what stops a config's dose-response, and its conditions and runs. The spec
the workflow's plan and config checks read, apart from the references' measures, which need the
decoder's LMs and n-best lists and the tuner's reference order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from circle.corpus.prepare import reference_names
from circle.experiments.conditions import Condition, TuningRun

DEFAULT_EXTRAS: tuple[str, ...] = ("kjv", "mt", "noise25", "noise50", "noise75", "shuffle")
"""The extra references of the dose-response when the config names none (``kjv`` only where
the corpus is the Bible): between them and H2, P1 adequacy spans the range."""

CONTROLS: tuple[tuple[str, str], ...] = (("2H", "H2"), ("1H+1P", "P1"))
"""The conditions of the figures that already add one reference, and their extra reference:
the dose-response reuses their runs."""

def dose_extras(config: Mapping) -> list[str]:
    """The extra references of the config's dose-response: ``dose_response.extra``, or when it
    is null :data:`DEFAULT_EXTRAS` that the corpus can make (``kjv`` only from the Bible,
    degraded references only with a second tune reference)."""
    chosen = (config.get("dose_response") or {}).get("extra")
    if chosen is not None:
        return list(chosen)
    bible = config["corpus"]["kind"] == "bible"
    two = len(reference_names(config["corpus"])["tune"]) >= 2
    return [extra for extra in DEFAULT_EXTRAS
            if (extra != "kjv" or bible) and (extra in ("kjv", "mt") or two)]


def dose_controls(config: Mapping) -> list[str]:
    """The controls of :data:`CONTROLS` the config's experiment runs anyway: 2H with a second
    tune reference, 1H+1P when the config has a 1H+kP condition (its paraphrases exist)."""
    conditions = [Condition.parse(c) for c in config["tuning"]["conditions"]]
    controls = []
    if len(reference_names(config["corpus"])["tune"]) >= 2:
        controls.append("2H")
    if any(c.paraphrases and not c.targeted for c in conditions):
        controls.append("1H+1P")
    return controls


def dose_problems(config: Mapping) -> list[str]:
    """What stops the config's dose-response: an extra reference name the condition grammar
    does not allow, ``kjv`` without the Bible corpus or with the KJV among the references, a
    degraded reference without a second tune reference."""
    problems = []
    corpus = config["corpus"]
    tune_references = len(reference_names(corpus)["tune"])
    for extra in dose_extras(config):
        try:
            check_extra(extra)
        except ValueError as error:
            problems.append(f"dose_response.extra: {error}")
            continue
        if extra == "kjv" and (corpus["kind"] != "bible"
                               or "kjv" in corpus["bible"]["references"]):
            problems.append("dose_response.extra: kjv needs corpus.kind bible without kjv "
                            "among corpus.bible.references (it would be a human reference)")
        if (extra == "shuffle" or extra.startswith("noise")) and tune_references < 2:
            problems.append(f"dose_response.extra: {extra} degrades a second human reference; "
                            f"the tune set has {tune_references}")
    return problems


def dose_conditions(extras: Sequence[str], controls: Sequence[str] = ("2H", "1H+1P")
                    ) -> list[Condition]:
    """The conditions of the dose-response: 1H (the baseline), the ``controls`` among
    :data:`CONTROLS` that the experiment can run, and ``1H+1X_<extra>`` per extra."""
    known = dict(CONTROLS)
    unknown = [c for c in controls if c not in known]
    if unknown:
        raise ValueError(f"unknown dose-response controls {unknown}; choose from {list(known)}")
    return [Condition(1), *map(Condition.parse, controls),
            *(Condition(1, extra=extra) for extra in extras)]


def dose_runs(conditions: Sequence[Condition], replicates: int) -> list[TuningRun]:
    """Every run of the dose-response: each condition times each replicate."""
    return [TuningRun(c, r) for c in conditions for r in range(replicates)]


def check_extra(extra: str) -> None:
    """Refuse a name that :data:`~circle.experiments.conditions.EXTRA_PATTERN` does not
    allow."""
    Condition(1, extra=extra)

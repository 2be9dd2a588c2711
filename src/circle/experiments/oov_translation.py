"""The OOV run set (target ``oov_translation``): Marton, Callison-Burch & Resnik (2009)'s Table 4
experiment, the baseline MT system against the same system with the rules its OOV phrases
borrow from their distributional paraphrases (:mod:`circle.grammar.oov_paraphrase`), each tuned
with its own MERT runs.

Each condition kH of ``oov_paraphrase.tuning_conditions`` is tuned twice per replicate: kH on the
filtered grammars, and kH_oov on the same grammars augmented for the set's OOV phrases, from the
untuned weights plus one for the paraphrase feature (``oov_paraphrase.untuned_weight``). kH_oov
is tested against kH with the same replicates
(:attr:`~circle.experiments.conditions.Condition.baseline`). The seed's Table 4 varies the
bitext's size with the monolingual text fixed; here that is one experiment per size
(``corpus.train_segments``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from circle.corpus.prepare import reference_names
from circle.experiments.conditions import Condition, TuningRun, parse_conditions


def oov_conditions(config: Mapping[str, Any]) -> list[Condition]:
    """The baseline conditions of ``oov_paraphrase.tuning_conditions``, or when it is null nH
    for the tune set's n references (the best-tuned system)."""
    chosen = config["oov_paraphrase"]["tuning_conditions"]
    if chosen is None:
        chosen = [f"{len(reference_names(config['corpus'])['tune'])}H"]
    return [Condition.parse(name) for name in chosen]


def oov_problems(config: Mapping[str, Any]) -> list[str]:
    """What stops the OOV run set: a name of ``oov_paraphrase.tuning_conditions`` that is not a
    kH condition the tune set has references for, or such names where
    ``oov_paraphrase.translate`` already decodes every run with the augmented grammars."""
    key = "oov_paraphrase.tuning_conditions"
    chosen = config["oov_paraphrase"]["tuning_conditions"] or []
    problems = []
    if chosen and config["oov_paraphrase"]["translate"]:
        problems.append(f"{key}: oov_paraphrase.translate decodes every run with the augmented "
                        "grammars, so that kH_oov would be kH; compare with the baseline "
                        "experiment instead, or turn translate off")
    tune = len(reference_names(config["corpus"])["tune"])
    conditions, parse_problems = parse_conditions(chosen, key, tune)
    problems += parse_problems
    problems += [f"{key}: '{c.name}' is not a kH condition (optionally with a _<metric>); its "
                 "kH_oov is tuned beside it"
                 for c in conditions if c != Condition(c.human, metric=c.metric)]
    return problems


def oov_runs(conditions: Sequence[Condition], replicates: int) -> list[TuningRun]:
    """The runs of the OOV page: each kH and its kH_oov, each replicate, and 1H (with kH's
    metric), kH's own baseline, which the evaluation needs beside it."""
    every = [c for condition in conditions
             for c in (condition.baseline, condition, replace(condition, oov=True))]
    return [TuningRun(c, r) for c in dict.fromkeys(every) for r in range(replicates)]

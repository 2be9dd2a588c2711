"""Tuning with new references drawn from word lattices (Pang, Knight & Marcu 2003; target
``lattice_tuning``, beyond the thesis).

Conditions ``kH+mL`` tune with each segment's first k human references in the seeded order (those
of kH) plus the m best sentences by the LM of the word lattice merged from those k, sentences none
of the k translators wrote (:mod:`circle.lattice.references`). A segment whose lattice has fewer
new sentences gets fewer; the page (:mod:`circle.figures.lattice_tuning`) counts them. Each
condition is tested against kH with the same replicates
(:attr:`~circle.experiments.conditions.Condition.baseline`) and sits in the table beside (k+m)H
where the tune set has that many references.

A lattice needs at least two references, so this is not the thesis's question (what can be added
to ONE reference, §4.3): it asks what more can be squeezed out of the k references one has, as
Zheng et al. (2018) did with pseudo-references for neural MT.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from circle.corpus.prepare import reference_names
from circle.experiments.conditions import Condition, TuningRun, parse_conditions

DEFAULT_CONDITIONS: tuple[str, ...] = ("2H+1L", "2H+2L")
"""The conditions of ``lattice.tuning_conditions: null`` where the corpus allows them."""

def _chosen(config: Mapping) -> Sequence[str] | None:
    """``lattice.tuning_conditions`` as the config gives it (None: the default)."""
    return (config.get("lattice") or {}).get("tuning_conditions")


def _parsed_text(config: Mapping) -> bool:
    """Whether the lattice stage can parse the config's references: English (spaCy's model),
    lowercased (the lattice's words are)."""
    preprocess = config["preprocess"]
    return preprocess["target_lang"] == "en" and bool(preprocess["lowercase"])


def lattice_conditions(config: Mapping) -> list[Condition]:
    """The kH+mL conditions of the config: ``lattice.tuning_conditions``, or when it is null
    :data:`DEFAULT_CONDITIONS` if the tune set has two references and the lattice stage can run
    on the target language (English, lowercased), else none."""
    chosen = _chosen(config)
    if chosen is None:
        usable = len(reference_names(config["corpus"])["tune"]) >= 2 and _parsed_text(config)
        chosen = DEFAULT_CONDITIONS if usable else ()
    return [Condition.parse(name) for name in chosen]


def lattice_problems(config: Mapping) -> list[str]:
    """What stops the config's lattice tuning: a name in ``lattice.tuning_conditions`` (the
    schema's pattern lets only kH+mL through) that the condition grammar refuses or that asks
    for more references than the tune set has, and a parser language other than English or
    references that are not lowercased (the lattice's words are)."""
    chosen = _chosen(config) or []
    tune = len(reference_names(config["corpus"])["tune"])
    _, problems = parse_conditions(chosen, "lattice.tuning_conditions", tune)
    if chosen and not _parsed_text(config):
        problems.append("lattice.tuning_conditions: the lattice stage parses English (spaCy) "
                        "and lowercases its words; kH+mL needs preprocess.target_lang en and "
                        "preprocess.lowercase true")
    return problems


def lattice_counts(conditions: Sequence[Condition]) -> dict[int, int]:
    """Per k, the most lattice sentences a kH+mL condition of ``conditions`` takes: the rows
    per segment of the k references' lattice table."""
    counts: dict[int, int] = {}
    for condition in conditions:
        if condition.lattice:
            counts[condition.human] = max(counts.get(condition.human, 0), condition.lattice)
    return counts


def lattice_runs(conditions: Sequence[Condition], tune_references: int,
                 replicates: int) -> list[TuningRun]:
    """The runs of the lattice page: 1H .. nH for the tune set's n references (kH is each
    kH+mL's baseline, 1H kH's) and the kH+mL ``conditions``, each replicate."""
    every = [*(Condition(k) for k in range(1, tune_references + 1)), *conditions]
    return [TuningRun(c, r) for c in every for r in range(replicates)]

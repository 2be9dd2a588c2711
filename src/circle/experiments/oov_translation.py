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
(``corpus.train_segments``). Its other rows are variants of the search and of the paraphrase
feature, tuned beside kH_oov as kH_oov-<variant> (``oov_paraphrase.variants``: each overrides
some of the section's search settings and ``feature_split``), such as paraphrases of unigrams
only, minScore 0.6, one feature for 1-2 and another for 3-4-word phrases; a variant that changes
only ``stoplist_threshold`` is a candidate for the threshold the seed leaves open, chosen by the
tune set's score (:func:`stoplist_candidates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from circle.corpus.prepare import reference_names
from circle.distributional import DistributionalSettings
from circle.experiments.conditions import Condition, TuningRun, parse_conditions


def oov_conditions(config: Mapping[str, Any]) -> list[Condition]:
    """The baseline conditions of ``oov_paraphrase.tuning_conditions``, or when it is null nH
    for the tune set's n references (the best-tuned system)."""
    chosen = config["oov_paraphrase"]["tuning_conditions"]
    if chosen is None:
        chosen = [f"{len(reference_names(config['corpus'])['tune'])}H"]
    return [Condition.parse(name) for name in chosen]


def variant_section(section: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """The oov_paraphrase section with a variant's overrides ("": the section itself)."""
    return {**section, **(section["variants"][variant] if variant else {})}


def variant_search_settings(config: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """The search settings of a variant (:class:`DistributionalSettings` keyword arguments,
    with the config seed)."""
    return {**DistributionalSettings.search_keys(variant_section(config["oov_paraphrase"],
                                                                 variant)),
            "seed": config["seed"]}


def variant_feature_split(config: Mapping[str, Any], variant: str) -> int | None:
    """A variant's ``feature_split``: None one paraphrase feature, n one for OOV phrases of at
    most n words and one for longer ones (:mod:`circle.grammar.oov_paraphrase`)."""
    return variant_section(config["oov_paraphrase"], variant)["feature_split"]


def variant_problems(config: Mapping[str, Any]) -> list[str]:
    """Each variant (and the section itself) must make valid search settings, and a
    ``feature_split`` must leave longer phrases to the second feature (the schema checks the
    variants' names and keys)."""
    problems = []
    for variant in ("", *config["oov_paraphrase"]["variants"]):
        key = f"oov_paraphrase.variants.{variant}" if variant else "oov_paraphrase"
        section = variant_section(config["oov_paraphrase"], variant)
        try:
            DistributionalSettings.from_config(section, config["seed"])
        except ValueError as error:
            problems.append(f"{key}: {error}")
            continue
        split = section["feature_split"]
        if split is not None and split >= section["max_phrase_length"]:
            problems.append(f"{key}: feature_split {split} leaves no phrase to its second "
                            f"feature (max_phrase_length {section['max_phrase_length']})")
    return problems


def variant_description(config: Mapping[str, Any], variant: str) -> str:
    """What sets a variant apart, in words: its overrides ("": the section's own settings)."""
    overrides = config["oov_paraphrase"]["variants"][variant] if variant else {}
    return ", ".join(f"{key} {value}" for key, value in overrides.items()) or "oov_paraphrase"


def stoplist_candidates(config: Mapping[str, Any]) -> list[str]:
    """The variants ("" the section's own settings) among which the stoplist threshold is
    chosen by the tune set: the section, and each variant that overrides only
    ``stoplist_threshold``."""
    variants = config["oov_paraphrase"]["variants"]
    return ["", *(name for name, overrides in variants.items()
                  if set(overrides) == {"stoplist_threshold"})]


def oov_problems(config: Mapping[str, Any]) -> list[str]:
    """What stops the OOV run set: a name of ``oov_paraphrase.tuning_conditions`` that is not a
    kH condition the tune set has references for, or such names where
    ``oov_paraphrase.translate`` already decodes every run with the augmented grammars; and
    the variants' problems (:func:`variant_problems`)."""
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
    return problems + variant_problems(config)


def oov_runs(conditions: Sequence[Condition], replicates: int,
             variants: Sequence[str] = ()) -> list[TuningRun]:
    """The runs of the OOV page: each kH, its kH_oov and its kH_oov-<variant> for each of
    ``variants``, each replicate, and 1H (with kH's metric), kH's own baseline, which the
    evaluation needs beside it."""
    every = [c for condition in conditions
             for c in (condition.baseline, condition, replace(condition, oov=True),
                       *(replace(condition, oov=True, oov_variant=v) for v in variants))]
    return [TuningRun(c, r) for c in dict.fromkeys(every) for r in range(replicates)]

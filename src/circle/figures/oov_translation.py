"""The page of the OOV run set (target ``oov_translation``,
:mod:`circle.experiments.oov_translation`): Marton, Callison-Burch & Resnik (2009)'s Table 4 on
one bitext size — test BLEU, TER and chrF of kH, kH_oov and each kH_oov-<variant> with
significance and their tune scores, the stoplist threshold chosen by the tune set, the OOV rate
of the tune and test sets before and after the borrowed rules, and test verses whose output
changed."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from circle.core.pages import csv_text, p_value_text, write_page, write_text_atomically
from circle.core.schemas import (
    CONDITION_SUMMARY,
    EVALSET,
    GRAMMAR_OOV_PARAPHRASED,
    GRAMMAR_OOV_PARAPHRASED_BY_LENGTH,
    TUNING_LOG,
)
from circle.core.tables import read_table
from circle.experiments.conditions import Condition, TuningRun
from circle.grammar.io import grammar_schema
from circle.grammar.oov_paraphrase import Coverage, coverage, read_known_words

PAGE_TITLE = ("Translating OOV phrases through their distributional paraphrases (Marton, "
              "Callison-Burch & Resnik 2009, Table 4)")

SAMPLES = 6
"""Test verses shown in which kH_oov's replicate-0 output translates an OOV word that kH's
passes through."""


@dataclass(frozen=True)
class SetCoverage:
    """The OOV words of one evaluation set's input before and after the borrowed rules of one
    variant ("" oov_paraphrase's own settings), and the borrowed rules of its augmented
    grammar."""

    evalset: str
    variant: str
    coverage: Coverage
    borrowed_rules: int
    borrowed_phrases: int


def borrowed_sources(augmented_path: str | os.PathLike) -> tuple[set[str], int]:
    """The source sides of an augmented grammar's borrowed rules and how many rules they are
    (read as Arrow: the grammar's own rules stay unread strings)."""
    grammar_schema(augmented_path, (GRAMMAR_OOV_PARAPHRASED, GRAMMAR_OOV_PARAPHRASED_BY_LENGTH))
    table = pq.read_table(augmented_path, columns=["source", "paraphrase_of"],
                          page_checksum_verification=True)
    borrowed = pc.filter(table["source"], pc.is_valid(table["paraphrase_of"]))
    return set(pc.unique(borrowed).to_pylist()), len(borrowed)


def set_coverage(evalset: str, variant: str, set_path: str | os.PathLike,
                 filtered_path: str | os.PathLike, augmented_path: str | os.PathLike,
                 max_length: int) -> SetCoverage:
    """:class:`SetCoverage` of a set: OOV = no one-word phrase rule of its filtered grammar
    (the decoder passes the word through), and after augmentation a token covered by an
    n-gram that is a borrowed rule's source side
    (:func:`circle.grammar.oov_paraphrase.coverage`)."""
    sources = read_table(set_path, EVALSET, columns=["source"])["source"]
    sides, rules = borrowed_sources(augmented_path)
    found = coverage(sources, read_known_words(filtered_path), sides, max_length)
    return SetCoverage(evalset, variant, found, rules, len(sides))


def tune_scores(log_paths: Sequence[str | os.PathLike]) -> dict[str, list[float]]:
    """Per condition, its runs' tune scores (× 100): the tuning metric of the returned
    weights' decode of the tune set (:data:`~circle.core.schemas.TUNING_LOG`), the score MERT
    maximised, in replicate order."""
    scores: dict[str, dict[int, float]] = {}
    for path in log_paths:
        log = read_table(path, TUNING_LOG)
        run = TuningRun.parse(os.path.basename(os.fspath(path)).removesuffix(".parquet"))
        returned = log.loc[log["returned"], "decode_score"]
        if len(returned) != 1:
            raise ValueError(f"{path}: {len(returned)} iterations are marked as returned")
        scores.setdefault(run.condition.name, {})[run.replicate] = 100 * float(returned.iloc[0])
    return {name: [runs[r] for r in sorted(runs)] for name, runs in scores.items()}


def score_table(conditions: pd.DataFrame, tune: Mapping[str, Sequence[float]],
                variants: Mapping[str, str]) -> pd.DataFrame:
    """One row per condition of the run set, kH before its kH_oov and its kH_oov-<variant> in
    the order of ``variants`` (variant -> what its settings are): scores over replicates, the
    tune score (``tune``: :func:`tune_scores`) and, for the augmented conditions, the test
    against kH (the evaluation also tests kH against 1H, a question of reference counts this
    page does not ask)."""
    order = list(variants)
    rows = []
    for row in conditions.to_dict("records"):
        condition = Condition.parse(row["condition"])
        scores = pd.Series(tune.get(row["condition"], []), dtype=float)
        rows.append({
            "condition": row["condition"],
            "grammar": "augmented" if condition.oov else "filtered",
            "variant": condition.oov_variant if condition.oov else None,
            "settings": variants[condition.oov_variant] if condition.oov else "",
            "order": (condition.human, condition.metric or "", condition.oov,
                      order.index(condition.oov_variant)),
            "replicates": row["replicates"],
            "tune_mean": scores.mean() if len(scores) else float("nan"),
            "tune_sd": scores.std() if len(scores) > 1 else float("nan"),
            **{f"{metric}_{stat}": row[f"{metric}_{stat}"]
               for metric in ("bleu", "ter", "chrf", "matched_bleu") for stat in ("mean", "sd")},
            "length_ratio": row["length_ratio_mean"],
            "baseline": row["baseline_condition"] if condition.oov else None,
            **{f"{metric}_{stat}": row[f"{metric}_{stat}"]
               for metric in ("bleu", "ter", "matched_bleu")
               for stat in ("difference", "p_value", "significant")},
        })
    table = pd.DataFrame(rows).sort_values("order", kind="stable").drop(columns="order")
    return table.reset_index(drop=True)


def _cell(mean: float, sd: float) -> str:
    return "–" if pd.isna(mean) else (f"{mean:.2f}" if pd.isna(sd) else f"{mean:.2f} ± {sd:.2f}")


def _difference(row: Mapping, metric: str) -> str:
    if row["grammar"] != "augmented" or pd.isna(row[f"{metric}_difference"]):
        return ""
    mark = "*" if row[f"{metric}_significant"] else ""
    return (f"{row[f'{metric}_difference']:+.2f}{mark} "
            f"({p_value_text(row[f'{metric}_p_value'])})")


def scores_markdown(table: pd.DataFrame, level: float, shuffles: int) -> list[str]:
    """The score table and the line on its test."""
    lines = ["| condition | grammar | tune BLEU | BLEU | TER | chrF | length "
             "| BLEU at common length | Δ BLEU (p) | Δ TER (p) | Δ BLEU at common length (p) |",
             "|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in table.to_dict("records"):
        grammar = row["grammar"] + (f" ({row['settings']})" if row["settings"] else "")
        lines.append("| " + " | ".join([
            row["condition"], grammar, _cell(row["tune_mean"], row["tune_sd"]),
            _cell(row["bleu_mean"], row["bleu_sd"]),
            _cell(row["ter_mean"], row["ter_sd"]), _cell(row["chrf_mean"], row["chrf_sd"]),
            f"{row['length_ratio']:.3f}",
            _cell(row["matched_bleu_mean"], row["matched_bleu_sd"]),
            _difference(row, "bleu"), _difference(row, "ter"),
            _difference(row, "matched_bleu")]) + " |")
    replicates = sorted(set(table["replicates"]))
    lines += ["", f"Test set; mean ± sd over {'/'.join(map(str, replicates))} tuning replicates "
              "per condition, each with its own MERT run; tune BLEU: the tune set's score at "
              "each run's returned weights (what MERT maximised, on the condition's own "
              "grammar). Δ: an augmented condition minus kH on the replicates' "
              "pooled output, the statistic of the test (TER: lower is better), approximate "
              "randomisation over all replicates (Clark et al. 2011), "
              f"{shuffles:,} shuffles; * p < {level:g}. Length: output length over the effective "
              "reference length. BLEU at common length: each run's n-best re-ranked to the "
              "references' mean length (circle.experiments.length_matching), a diagnostic, not "
              "the seed's metric."]
    return lines


def stoplist_markdown(table: pd.DataFrame, candidates: Mapping[str, int]) -> list[str]:
    """The stoplist threshold the seed leaves open, chosen by the tune set: per candidate
    (``candidates``: variant -> threshold, "" oov_paraphrase's own), the mean tune score of its
    kH's augmented runs. The best is chosen only when its mean exceeds every other candidate's
    by more than the larger of the two replicate sds; otherwise the tune set cannot tell them
    apart and oov_paraphrase's own threshold stays. The test scores are shown, never used.
    Empty with one candidate."""
    if len(candidates) < 2:
        return []
    lines = ["| condition | stoplist threshold | tune BLEU | test BLEU |",
             "|:---|---:|---:|---:|"]
    tuned = []
    for row in table[table["grammar"] == "augmented"].to_dict("records"):
        if row["variant"] in candidates:
            lines.append(f"| {row['condition']} | {candidates[row['variant']]:,} "
                         f"| {_cell(row['tune_mean'], row['tune_sd'])} "
                         f"| {_cell(row['bleu_mean'], row['bleu_sd'])} |")
            if not pd.isna(row["tune_mean"]):
                tuned.append((row["tune_mean"], 0.0 if pd.isna(row["tune_sd"]) else
                              row["tune_sd"], row["condition"], candidates[row["variant"]]))
    rule = ("StoplistThreshold is not given by the seed: each candidate's runs are tuned, and "
            "the threshold is the one whose runs score best on the tune set, if the margin "
            "over every other candidate exceeds the replicates' sd (the larger of the two).")
    if len(tuned) < 2:
        return [rule, "", *lines]
    best, *others = sorted(tuned, reverse=True)
    close = [other for other in others if best[0] - other[0] <= max(best[1], other[1])]
    if close:
        verdict = (f" The tune set does not tell them apart: the best mean, {best[3]:,} "
                   f"({best[2]}, {best[0]:.2f}), is within the replicates' sd of "
                   + ", ".join(f"{other[3]:,} ({other[0]:.2f})" for other in close)
                   + f"; no threshold is chosen and oov_paraphrase's own, {candidates['']:,}, "
                   "stays.")
    else:
        verdict = f" Chosen: {best[3]:,} ({best[2]})."
    return [rule + verdict + " The test column is shown, never used.", "", *lines]


def coverage_markdown(sets: Sequence[SetCoverage], variants: Mapping[str, str]) -> list[str]:
    """The OOV-rate table: per variant and set, OOV tokens and types before and after."""
    lines = ["| grammar | set | words | OOV tokens before | after | OOV types before | after "
             "| borrowed rules (phrases) |", "|:---|:---|---:|---:|---:|---:|---:|---:|"]
    for found in sets:
        c = found.coverage
        lines.append(
            f"| augmented ({variants[found.variant]}) "
            f"| {found.evalset} | {c.words:,} | {c.tokens:,} ({100 * c.tokens / c.words:.2f} %) "
            f"| {c.tokens_after:,} ({100 * c.tokens_after / c.words:.2f} %) | {c.types:,} "
            f"| {c.types_after:,} | {found.borrowed_rules:,} ({found.borrowed_phrases:,}) |")
    return ["A word is OOV when no one-word phrase rule of the set's filtered grammar translates "
            "it (the decoder passes it through); it stays OOV after augmentation unless an "
            "n-gram over it is the source side of a borrowed rule. That a rule exists says "
            "nothing of whether the decoder uses it or translates the word well.", "", *lines]


def samples_markdown(test_path: str | os.PathLike, baseline_path: str | os.PathLike,
                     augmented_path: str | os.PathLike, baseline: str, augmented: str,
                     known: set[str], count: int = SAMPLES) -> list[str]:
    """The test verses in which ``augmented``'s replicate-0 1-best no longer has an OOV word
    that ``baseline``'s passes through (the first ``count`` of them: source, both outputs and
    the first reference), and how many there are."""
    test = read_table(test_path, EVALSET, columns=["source", "references"])
    with open(baseline_path, encoding="utf-8") as f:
        before = f.read().splitlines()
    with open(augmented_path, encoding="utf-8") as f:
        after = f.read().splitlines()
    if not len(before) == len(after) == len(test):
        raise ValueError(f"{baseline_path} ({len(before)} lines) and {augmented_path} "
                         f"({len(after)}) do not have the test set's {len(test)} lines")
    lines, found, passed_total, gone_total = [], 0, 0, 0
    for source, references, old, new in zip(test["source"], test["references"], before, after,
                                            strict=True):
        passed = dict.fromkeys(w for w in source.split() if w not in known and w in old.split())
        gone = [word for word in passed if word not in new.split()]
        passed_total, gone_total = passed_total + len(passed), gone_total + len(gone)
        if not gone:
            continue
        found += 1
        if found <= count:
            lines += [f"- source: {source}", f"  - translated now: {', '.join(gone)}",
                      f"  - {baseline}: {old}", f"  - {augmented}: {new}",
                      f"  - reference: {references[0]}"]
    return [f"Replicate 0: of the {passed_total:,} OOV words (distinct per verse) that "
            f"{baseline} passes through, {augmented}'s output drops {gone_total:,}, in "
            f"{found:,} of {len(test):,} test verses; the first {min(found, count)}:", "",
            *lines]


@dataclass(frozen=True)
class VariantFiles:
    """What the page shows of one OOV variant ("" oov_paraphrase's own settings): its settings
    in words, its longest OOV phrase, its stoplist threshold, and per set its augmented
    grammar."""

    settings: str
    max_length: int
    stoplist_threshold: int
    augmented: Mapping[str, str]
    stoplist_candidate: bool


def write_oov_translation_report(conditions_path: str | os.PathLike,
                                 sets: Mapping[str, Mapping[str, str]],
                                 variants: Mapping[str, VariantFiles],
                                 tuning_logs: Sequence[str | os.PathLike],
                                 outputs: Mapping[str, str],
                                 markdown_path: str | os.PathLike,
                                 html_path: str | os.PathLike,
                                 csv_path: str | os.PathLike) -> pd.DataFrame:
    """The page: the score table of the run set's
    :data:`~circle.core.schemas.CONDITION_SUMMARY` (``conditions_path``) with the tune scores
    of its augmented runs' ``tuning_logs``, the stoplist threshold they choose, the OOV rates
    of each set (``sets``: per set name, its ``set`` and ``filtered`` tables) under each
    variant's augmented grammars (``variants``), and sample test verses (``outputs``: the
    ``baseline`` and ``augmented`` conditions' replicate-0 1-best files, keys
    ``<condition>``). Returns the score table (also written as CSV)."""
    summary = read_table(conditions_path, CONDITION_SUMMARY)
    settings = {name: files.settings for name, files in variants.items()}
    table = score_table(summary, tune_scores(tuning_logs), settings)
    level = float(summary["significance_level"].iloc[0])
    shuffles = int(summary["shuffles"].iloc[0])
    found = [set_coverage(name, variant, paths["set"], paths["filtered"],
                          files.augmented[name], files.max_length)
             for variant, files in variants.items() for name, paths in sets.items()]
    candidates = {name: files.stoplist_threshold for name, files in variants.items()
                  if files.stoplist_candidate}
    stoplist = stoplist_markdown(table, candidates)
    test = sets["test"]
    baseline, augmented = list(outputs)
    text = [f"# {PAGE_TITLE}", "",
            "The MT system tuned on the filtered grammars (kH) and, with its own MERT runs, on "
            "the same grammars augmented with phrase rules that OOV phrases borrow from their "
            "distributional paraphrases in the monolingual source text (kH_oov; "
            "circle.grammar.oov_paraphrase).", "",
            *scores_markdown(table, level, shuffles), "",
            *(["## The stoplist threshold", "", *stoplist, ""] if stoplist else []),
            "## OOV rate", "", *coverage_markdown(found, settings),
            "", "## Sample translations", "",
            *samples_markdown(test["set"], outputs[baseline], outputs[augmented], baseline,
                              augmented, read_known_words(test["filtered"])), ""]
    write_page("\n".join(text), markdown_path, html_path, PAGE_TITLE)
    write_text_atomically(csv_text(table), csv_path)
    return table

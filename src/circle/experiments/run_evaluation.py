"""The test scores of a set of tuning runs (thesis §4.3.1): BLEU, TER and chrF of every run and
of the untuned system, significance against each run's baseline, the per-condition summary over
replicates, and each run's output at a common length (a diagnostic)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

import pandas as pd

from circle.core.schemas import EVALSET, TUNING_LOG
from circle.core.tables import read_metadata, read_table
from circle.corpus.preprocess import detokenize
from circle.decoder.nbest import NBEST, best_hypotheses
from circle.experiments.conditions import UNTUNED, TuningRun
from circle.experiments.evaluate import (
    AR_SHUFFLES,
    CHRF_METRIC,
    MATCHED_BLEU,
    SIGNIFICANCE_LEVEL,
    SUMMARY_METRICS,
    check_tuning_log,
    chrf_statistics,
    condition_summary,
    corpus_bleu,
    detokenised_scores,
    evaluate_system,
    write_condition_summary,
    write_evaluation,
)
from circle.experiments.length_matching import match_length, reference_length
from circle.tune.metrics import get_metric


def length_matched(nbest: pd.DataFrame, metadata: Mapping[str, str],
                   segment_ids: Sequence[int], target: float,
                   path: str | os.PathLike) -> tuple[float, list[str]]:
    """A run's test output at a common length (:mod:`circle.experiments.length_matching`, a
    diagnostic): the word-penalty shift and the re-ranked 1-best of each of ``segment_ids`` from its
    n-best table (model scores, word counts = −``word_penalty``), nearest ``target`` words in
    all."""
    position = json.loads(metadata["feature_names"]).index("word_penalty")
    lists = dict(iter(nbest.sort_values(["segment_id", "rank"]).groupby("segment_id")))
    missing = [s for s in segment_ids if s not in lists]
    if missing:
        raise ValueError(f"{path}: no n-best list for test segments {list(missing)[:5]}")
    ordered = [lists[s] for s in segment_ids]
    match = match_length([rows["score"].to_numpy() for rows in ordered],
                         [[-features[position] for features in rows["features"]]
                          for rows in ordered], target)
    return match.delta, [rows["hypothesis"].iloc[choice]
                         for rows, choice in zip(ordered, match.choices, strict=True)]

def evaluate_runs(experiment: str, test_path: str | os.PathLike,
                  runs: Sequence[tuple[TuningRun, int, str, str]],
                  samples: int, seed: int, out_path: str | os.PathLike,
                  provenance: Mapping[str, str] | None = None, *,
                  conditions_path: str | os.PathLike | None = None,
                  shuffles: int = AR_SHUFFLES,
                  significance_level: float = SIGNIFICANCE_LEVEL,
                  lowercased: bool = False, untuned: str | os.PathLike | None = None,
                  untuned_seed: int = 0, lang: str | None = None) -> pd.DataFrame:
    """BLEU/TER/chrF of every tuning run's test output against all test references (sacrebleu),
    with a paired bootstrap p-value against the same replicate of its condition's baseline
    (:attr:`Condition.baseline`: 1H with the same single reference and tuning metric);
    ``lowercased``: the text was lowercased (the signatures say ``case:lc``).

    ``untuned``: the test n-best table of the untuned weights, scored as one more row, condition
    :data:`UNTUNED` (replicate 0, no tuning log, ``untuned_seed``), which no test and no
    condition summary includes. ``lang``: the target language, with which every output and
    reference is also detokenised and scored as papers do (``detok_bleu``, ``detok_chrf``:
    :func:`circle.experiments.evaluate.detokenised_scores`); without it those columns are null.

    ``runs`` holds (run, seed, test n-best table, tuning log) per run. Every
    tuning log is checked first (:func:`circle.experiments.evaluate.check_tuning_log`): a run that
    returned weights scoring worse on the tune set than its untuned start is refused before anything
    is scored. With ``conditions_path``, the per-condition summary over replicates
    (:func:`circle.experiments.evaluate.condition_summary`: mean, standard deviation, approximate
    randomisation against the baseline with ``shuffles`` shuffles from ``seed``, significance
    at ``significance_level``) is written there too.
    """
    logs = {}
    for run, _, _, log_path in runs:
        log = read_table(log_path, TUNING_LOG)
        check_tuning_log(log, log_path, run.name)
        logs[run.condition.name, run.replicate] = log
    baselines = {run.condition.name: run.condition.baseline.name for run, *_ in runs}
    if conditions_path is not None:
        for missing in sorted(set(baselines.values()) - set(baselines)):
            raise ValueError(f"the baseline condition {missing} is not among the evaluated runs")
    table = read_table(test_path, EVALSET)
    references = [list(refs) for refs in table["references"]]
    target = reference_length(references)
    outputs, matched = {}, {}

    def decoded(nbest_path: str | os.PathLike) -> tuple[list[str], tuple[float, list[str]]]:
        """A decode's 1-best test output and its output at the common length."""
        nbest = read_table(nbest_path, NBEST)
        best = best_hypotheses(nbest)
        return ([best.get(s, "") for s in table["segment_id"]],
                length_matched(nbest, read_metadata(nbest_path), table["segment_id"], target,
                               nbest_path))

    def at_common_length(shift: float, hypotheses: Sequence[str]) -> dict:
        score = corpus_bleu(hypotheses, references, lowercased)
        return {"matched_bleu": score.value, "matched_length_ratio": score.length_ratio,
                "matched_shift": shift}

    for run, _, nbest_path, _ in runs:
        key = run.condition.name, run.replicate
        outputs[key], matched[key] = decoded(nbest_path)
    stats = {metric: {run: get_metric(metric).stats(hypotheses, references)
                      for run, hypotheses in outputs.items()} for metric in SUMMARY_METRICS}
    stats[MATCHED_BLEU] = {run: get_metric("bleu").stats(hypotheses, references)
                           for run, (_, hypotheses) in matched.items()}
    stats[CHRF_METRIC] = {run: chrf_statistics(hypotheses, references, lowercased)
                          for run, hypotheses in outputs.items()}
    plain_references = None if lang is None else [[detokenize(r, lang) for r in refs]
                                                   for refs in references]

    def detokenised(hypotheses: Sequence[str]) -> dict:
        if plain_references is None:
            return {}
        return detokenised_scores([detokenize(h, lang) for h in hypotheses], plain_references,
                                  lowercased)

    rows = []
    for run, tuning_seed, _, _ in runs:
        parsed, condition, replicate = run.condition, run.condition.name, run.replicate
        baseline = baselines[condition]
        base = outputs.get((baseline, replicate)) if condition != baseline else None
        log = logs[condition, replicate]
        row = evaluate_system(outputs[condition, replicate], references, base, samples,
                              seed + replicate, stats["ter"][condition, replicate], lowercased)
        row.update(at_common_length(*matched[condition, replicate]))
        row.update(experiment=experiment, condition=condition,
                   reference_type=parsed.reference_type, human_references=parsed.human,
                   paraphrase_references=parsed.added_references,
                   references_used=parsed.human + parsed.added_references, replicate=replicate,
                   seed=tuning_seed, tune_metric=str(log["metric"].iloc[0]),
                   tune_iterations=len(log), eval_set="test",
                   baseline_condition=None if base is None else baseline)
        row.update(detokenised(outputs[condition, replicate]))
        rows.append(row)
    if untuned is not None:
        hypotheses, at_length = decoded(untuned)
        row = evaluate_system(hypotheses, references, lowercased=lowercased)
        row.update(at_common_length(*at_length))
        row.update(experiment=experiment, condition=UNTUNED,
                   reference_type=UNTUNED, human_references=0, paraphrase_references=0,
                   references_used=0, replicate=0, seed=untuned_seed, tune_metric="none",
                   tune_iterations=0, eval_set="test", baseline_condition=None)
        row.update(detokenised(hypotheses))
        rows.append(row)
    frame = pd.DataFrame(rows)
    write_evaluation(frame, out_path, provenance)
    if conditions_path is not None:
        tuned = frame[frame["condition"] != UNTUNED]
        summary = condition_summary(tuned, stats, baselines, shuffles, significance_level, seed)
        write_condition_summary(summary, conditions_path, provenance)
    return frame

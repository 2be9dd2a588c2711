"""The reference-sparsity experiments of thesis ch. 4 as functions over pipeline tables.

Conditions name the reference set the MT system is tuned with (thesis §4.3, Fig. 4.3):
``kH`` is the first k human references in the set's seeded per-document order (``1H`` is the
simulated single reference), ``1H+kP`` is the single reference plus the k-best untargeted
paraphrases of it by the tuned paraphraser (§4.3.2). The paraphraser itself is tuned by MERT on
the paraphraser-tuning set, where per document one human translation is the input and the
others are its references (§3.2.3). ``1H+1X_<extra>`` adds one fixed extra reference of known
quality per segment (:mod:`circle.experiments.dose_response`, beyond the thesis); ``kH+mL`` adds to
kH m sentences of the word lattice of those k references (:mod:`circle.lattice.references`,
Pang, Knight & Marcu 2003, beyond the thesis).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from circle.core.pages import write_page
from circle.core.schemas import (
    EVALSET,
    EXTRA_REFERENCE,
    IDENTITY_FEATURE,
    LATTICE_REFERENCES,
    TUNING_LOG,
)
from circle.core.tables import atomic_path, read_metadata, read_table, write_table
from circle.corpus.preprocess import detokenize
from circle.decoder import (
    DecoderSettings,
    Grammar,
    decode_corpus,
    grammar_features,
    load_grammar,
    read_weights,
    write_weights,
)
from circle.decoder.model import Model
from circle.decoder.nbest import NBEST
from circle.decoder.sets import RecordedDecode, write_nbest
from circle.experiments.conditions import UNTUNED, UNTUNED_TRANSLATION, Condition, TuningRun
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
from circle.experiments.heldout import TUNING_SETS, tuning_set_rows
from circle.experiments.length_matching import match_length, reference_length
from circle.paraphrase.paraphraser import Paraphraser
from circle.paraphrase.targeted import TargetedReferences, TargetedSetup, targeted_setup
from circle.tune import fanout
from circle.tune.checkpoint import Checkpoint, SavedIteration, read_iteration
from circle.tune.loop import (
    PoolBuilder,
    TuningProblem,
    TuningResult,
    TuningSettings,
    default_hook,
    ordered_references,
    single_references,
    tune,
    write_tuning_log,
)
from circle.tune.metrics import get_metric

TUNING_FIXED: tuple[str, ...] = ("target", "oov")
"""Weights MERT leaves at their initial values in these experiments: the targeting feature
(untargeted here) and the pass-through penalty. Passing a word through is the decoder's fallback,
not a choice to tune (Moses' ``UnknownWordPenalty`` is not tuneable either): left free, MERT
gave the paraphraser a positive ``oov`` weight, a reward for copying that would compete with the
self-paraphrase bias, the knob of the thesis for how much the paraphraser copies (§5.2.2)."""


def paraphraser_fixed(grammar: Grammar) -> tuple[str, ...]:
    """The weights the paraphraser's MERT leaves at their initial values: :data:`TUNING_FIXED`,
    and φ_ident (Ganitkevitch & Callison-Burch, draft §4.1) if no rule of ``grammar`` has it
    (bias 0 has no identity rules). Its weight there could only drift, untested, and the tuned
    paraphraser also decodes the biased grammars, where identity rules would then get it."""
    names = grammar.feature_names
    if IDENTITY_FEATURE in names and not grammar.features(
            slice(None))[:, names.index(IDENTITY_FEATURE)].any():
        return (*TUNING_FIXED, IDENTITY_FEATURE)
    return TUNING_FIXED


def run_tuning_settings(run: TuningRun, tuning: Mapping, seed: int) -> TuningSettings:
    """``run``'s :class:`~circle.tune.loop.TuningSettings` from the config's ``tuning``
    section and the run's ``seed``.

    A run that starts from the untuned weights keeps ``tuning.replicate_pool``: its first
    iteration also decodes that many perturbations of them drawn from its own seed and
    optimises from the first (:mod:`circle.tune.loop`), so that the replicates of a
    condition take different paths and sample the optimiser, as the test over replicates
    assumes (Clark et al. 2011). The seed alone draws MERT's restarts, and when none beats
    the continuing point a run is a function of its start: every replicate would be the
    same run. The thesis reports single runs; this goes beyond it. A 1H+kT run starts from
    its replicate's 1H weights (§5.3), which differ by construction, and draws none: each
    perturbation would cost a targeted paraphrase of every new hypothesis."""
    settings = TuningSettings.from_config(tuning, seed)
    if run.start == UNTUNED_TRANSLATION:
        return settings
    return replace(settings, replicate_pool=0)


def select_segments(evalset_path: str | os.PathLike, max_segments: int | None,
                    out_path: str | os.PathLike,
                    provenance: Mapping[str, str] | None = None) -> int:
    """Keep the first whole documents of a set, up to ``max_segments`` segments (None: all).

    Whole documents keep the per-document single-reference simulation intact; a limit below the
    first document's size is refused, as it would keep nothing. A held-out system's tune set
    (:mod:`circle.experiments.heldout`) is kept whole, its tuning sets with it.
    """
    table = read_table(evalset_path, EVALSET)
    source_metadata = read_metadata(evalset_path)
    if max_segments is not None and TUNING_SETS not in source_metadata:
        sizes = table.groupby("document", sort=False).size()
        if sizes.iloc[0] > max_segments:
            raise ValueError(
                f"{evalset_path}: its first document '{sizes.index[0]}' has {sizes.iloc[0]} "
                f"segments, more than the sets.max_segments limit {max_segments} of this set; "
                "only whole documents are kept: raise the limit or set it to null")
        table = table[table["document"].isin(sizes.index[sizes.cumsum() <= max_segments])]
    metadata = {key: value for key, value in source_metadata.items()
                if key in ("reference_names", TUNING_SETS)}
    metadata["max_segments"] = str(max_segments)
    write_table(table, out_path, EVALSET, provenance, metadata)
    return len(table)


def tune_paraphraser(paratune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                     lm_path: str | os.PathLike, weights_path: str | os.PathLike,
                     settings: DecoderSettings, tuning: TuningSettings, workers: int,
                     out_weights: str | os.PathLike, out_log: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None,
                     checkpoint: Checkpoint | None = None) -> dict[str, float]:
    """MERT of the English-to-English model (§3.2.3): input = the first reference in the seeded
    order, references = the others; :func:`paraphraser_fixed` weights stay. ``checkpoint``: see
    :func:`write_tuning_run`."""
    table = read_table(paratune_path, EVALSET)
    if min(len(refs) for refs in table["references"]) < 2:
        raise ValueError(f"{paratune_path}: paraphraser tuning needs at least two references "
                         "per segment (one is the input)")
    ordered = ordered_references(table)
    sources, references = [refs[0] for refs in ordered], [refs[1:] for refs in ordered]
    grammar = load_grammar(grammar_path)
    result = tune(sources, references, grammar, lm_path, read_weights(weights_path),
                  settings, tuning, workers, fixed=paraphraser_fixed(grammar),
                  checkpoint=checkpoint)
    return write_tuning_run(result, out_weights, out_log, provenance, checkpoint)


def write_tuning_run(result: TuningResult, out_weights: str | os.PathLike,
                     out_log: str | os.PathLike, provenance: Mapping[str, str] | None,
                     checkpoint: Checkpoint | None) -> dict[str, float]:
    """Write a finished run's weights and log, then remove the checkpoint it resumed from or
    saved its iterations to (:mod:`circle.tune.checkpoint`)."""
    write_weights(out_weights, result.weights)
    write_tuning_log(result, out_log, provenance)
    if checkpoint is not None:
        checkpoint.remove()
    return result.weights


def paraphrase_references(tune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                          lm_path: str | os.PathLike, weights_path: str | os.PathLike, k: int,
                          settings: DecoderSettings, workers: int, out_path: str | os.PathLike,
                          provenance: Mapping[str, str] | None = None,
                          reference: int | None = None) -> None:
    """The k-best untargeted paraphrases of each segment's single reference (§4.3.2; which
    one: :func:`single_references`)."""
    table = read_table(tune_path, EVALSET)
    singles = single_references(table, reference)
    paraphraser = Paraphraser(grammar_path, lm_path, read_weights(weights_path), settings,
                              workers)
    outputs = paraphraser.paraphrase(singles, k=k)
    names = Model(paraphraser.grammar.feature_names, paraphraser.weights).names
    write_nbest(table["segment_id"].tolist(), outputs, names, out_path, provenance,
                {"weights": json.dumps(paraphraser.weights, sort_keys=True),
                 "input": "single reference" if reference is None
                 else f"reference set {reference}"})


def paraphraser_report(log_path: str | os.PathLike, nbest_path: str | os.PathLike,
                       tune_path: str | os.PathLike, out_path: str | os.PathLike,
                       html_path: str | os.PathLike, samples: int = 10, seed: int = 0) -> str:
    """A Markdown page (and its HTML) on the tuned paraphraser: its tune score per iteration
    against the untuned start, and ``samples`` seeded random single references of the tune set
    with their 1-best untargeted paraphrase, so a reader sees what the paraphrases look like."""
    log = read_table(log_path, TUNING_LOG)
    metric = str(log["metric"].iloc[0])
    chosen_row = log[log["returned"]].iloc[0]
    start, returned = log["decode_score"].iloc[0], chosen_row["decode_score"]
    curve = ", ".join(f"{100 * value:.2f}" for value in log["decode_score"])
    table = read_table(tune_path, EVALSET)
    singles = dict(zip(table["segment_id"], single_references(table), strict=True))
    nbest = read_table(nbest_path, NBEST)
    best = nbest[nbest["rank"] == 0].set_index("segment_id")["hypothesis"]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(best.index.to_numpy(), size=min(samples, len(best)),
                               replace=False))
    lines = ["# The tuned paraphraser (thesis §3.2.3)", "",
             f"Tune {metric.upper()} (%) of the decoded 1-best per iteration, on the "
             f"paraphraser-tuning set: {curve}. Returned: iteration "
             f"{int(chosen_row['iteration'])} "
             f"({100 * returned:.2f} against {100 * start:.2f} untuned).", ""]
    if not get_metric(metric).better(returned, start):
        lines += ["**Warning: tuning did not improve on the untuned weights; the paraphraser "
                  "runs with its untuned start.**", ""]
    lines += [f"{len(chosen)} random tune-set references (seed {seed}) and their 1-best "
              "untargeted paraphrase:", "", "| segment | single reference | 1-best paraphrase |",
              "|---|---|---|"]
    lines += [f"| {segment} | {singles[segment]} | {best[segment]} |" for segment in chosen]
    text = "\n".join(lines) + "\n"
    write_page(text, out_path, html_path, "The tuned paraphraser")
    return text


def condition_references(table: pd.DataFrame, condition: Condition,
                         paraphrases: pd.DataFrame | None,
                         extra: pd.DataFrame | None = None,
                         lattice: pd.DataFrame | None = None) -> list[list[str]]:
    """Each tune segment's reference set under ``condition`` (for 1H+kT the single reference:
    the targeted paraphrases are per hypothesis,
    :class:`circle.paraphrase.targeted.TargetedReferences`; for 1H+1X the single reference and the
    segment's row of ``extra``, an :data:`~circle.core.schemas.EXTRA_REFERENCE` table; for kH+mL
    the k references and the segment's first m rows of ``lattice``, a
    :data:`~circle.core.schemas.LATTICE_REFERENCES` table of the same k, fewer where the
    segment's lattice has fewer new sentences)."""
    if condition.extra is not None:
        if extra is None:
            raise ValueError(f"condition {condition.name} needs its extra reference table")
        by_segment = dict(zip(extra["segment_id"], extra["reference"], strict=True))
        missing = [s for s in table["segment_id"] if s not in by_segment]
        if missing:
            raise ValueError(f"condition {condition.name}: no extra reference for segments "
                             f"{missing[:5]}")
        return [[single, by_segment[segment]] for single, segment
                in zip(single_references(table), table["segment_id"], strict=True)]
    if condition.reference is None:
        references = ordered_references(table, condition.human)
    else:
        references = [[single] for single in single_references(table, condition.reference)]
    if condition.paraphrases and not condition.targeted:
        if paraphrases is None:
            raise ValueError(f"condition {condition.name} needs the paraphrased references")
        return _with_ranked(references, table, paraphrases, condition.paraphrases, "hypothesis")
    if condition.lattice:
        if lattice is None:
            raise ValueError(f"condition {condition.name} needs its lattice references")
        return _with_ranked(references, table, lattice, condition.lattice, "reference")
    return references


def _with_ranked(references: Sequence[list[str]], table: pd.DataFrame, ranked: pd.DataFrame,
                 count: int, column: str) -> list[list[str]]:
    """Each segment's ``references`` and the text (``column``) of its first ``count`` rows by
    ``rank`` in ``ranked`` (none for a segment it lacks)."""
    best = ranked[ranked["rank"] < count].sort_values(["segment_id", "rank"])
    by_segment = best.groupby("segment_id")[column].apply(list)
    return [refs + by_segment.get(segment, [])
            for refs, segment in zip(references, table["segment_id"], strict=True)]


@dataclass(frozen=True)
class ConditionTuning:
    """One MT tuning run of a condition (thesis ch. 4; for 1H+kT, §5.3) and what it reads: the
    tune set, its filtered grammar, the LM, the start weights (for 1H+kT the pipeline gives the
    1H-tuned ones), the untargeted paraphrases (1H+kP) or the targeted set-up (1H+kT), and the
    decoder and tuning settings; for :meth:`tune`, optionally the decode stage's n-best lists
    of the tune set at the start weights (``start_decode_path``), which stand in for iteration
    1's decode. :meth:`tune` runs it in one process; :meth:`decode_shard`,
    :meth:`optimise_iteration` and :meth:`finish` are the jobs of the same run fanned out
    (:mod:`circle.tune.fanout`)."""

    run: TuningRun
    tune_path: str | os.PathLike
    grammar_path: str | os.PathLike
    lm_path: str | os.PathLike
    weights_path: str | os.PathLike
    paraphrases_path: str | os.PathLike | None
    settings: DecoderSettings
    tuning: TuningSettings
    targeted: TargetedSetup | None = None
    start_decode_path: str | os.PathLike | None = None
    extra_path: str | os.PathLike | None = None
    """1H+1X: the :data:`~circle.core.schemas.EXTRA_REFERENCE` table of the extra references."""
    lattice_path: str | os.PathLike | None = None
    """kH+mL: the :data:`~circle.core.schemas.LATTICE_REFERENCES` table of the k references'
    lattices."""

    @classmethod
    def from_job(cls, job: Any) -> ConditionTuning:
        """The run of a Snakemake tuning job (``snakemake`` in its script): wildcards
        ``condition`` and ``replicate``, the inputs of ``tuning_inputs`` (and
        ``start_decode`` of ``fanned_out_tuning_inputs``) and the params
        ``settings``, ``tuning``, ``seed`` and ``targeted`` (workflow/rules/tune.smk)."""
        settings = DecoderSettings(**job.params.settings)
        targeted = None
        if job.params.targeted is not None:
            targeted = targeted_setup(job.params.targeted, job.input.get("choice"),
                                      job.input.paraphrase_grammars, job.input.paraphraser_lm,
                                      job.input.paraphraser_weights,
                                      job.input.paraphraser_reranking_lm, settings)
        run = TuningRun.of(job.wildcards.condition, job.wildcards.replicate)
        return cls(run, job.input.evalset, job.input.grammar, job.input.lm, job.input.weights,
                   job.input.get("paraphrases"), settings,
                   run_tuning_settings(run, job.params.tuning, job.params.seed), targeted,
                   job.input.get("start_decode"), job.input.get("extra"),
                   job.input.get("lattice"))

    def __post_init__(self) -> None:
        if self.run.condition.targeted and self.targeted is None:
            raise ValueError(f"condition {self.run.condition.name} needs the targeted "
                             "paraphraser set-up")

    def _inputs(self) -> tuple[list[str], list[list[str]], RecordedDecode | None]:
        """The tune sentences, each one's references, and the recorded start decode if any."""
        table = tuning_set_rows(read_table(self.tune_path, EVALSET), self.run.condition.tuning_set,
                                self.tune_path)
        paraphrases = (None if self.paraphrases_path is None
                       else read_table(self.paraphrases_path, NBEST))
        recorded = (None if self.start_decode_path is None
                    else RecordedDecode.read(self.start_decode_path, table["segment_id"].tolist()))
        extra = (None if self.extra_path is None
                 else read_table(self.extra_path, EXTRA_REFERENCE))
        lattice = None
        if self.lattice_path is not None:
            lattice = read_table(self.lattice_path, LATTICE_REFERENCES)
            made_from = int(read_metadata(self.lattice_path)["human"])
            if made_from != self.run.condition.human:
                raise ValueError(f"{self.lattice_path} holds the lattices of {made_from}H, not "
                                 f"of condition {self.run.condition.name}'s references")
        return (list(table["source"]),
                condition_references(table, self.run.condition, paraphrases, extra, lattice),
                recorded)

    def _problem(self, feature_names: Sequence[str]) -> TuningProblem:
        return TuningProblem(feature_names, read_weights(self.weights_path), self.tuning,
                             TUNING_FIXED)

    def _hook(self, stack: contextlib.ExitStack, references: Sequence[Sequence[str]],
              writer: str, workers: int) -> TargetedReferences | None:
        if not self.run.condition.targeted:
            return None
        return stack.enter_context(self.targeted.references(
            [refs[0] for refs in references], self.run.condition.paraphrases, writer, workers))

    def tune(self, workers: int, out_weights: str | os.PathLike, out_log: str | os.PathLike,
             provenance: Mapping[str, str] | None = None,
             checkpoint: Checkpoint | None = None) -> dict[str, float]:
        """The whole run in this process (``workers`` decoding processes), resuming from and
        saving to ``checkpoint``; writes the weights and the tuning log."""
        sentences, references, recorded = self._inputs()
        with contextlib.ExitStack() as stack:
            hook = self._hook(stack, references, self.run.name, workers)
            result = tune(sentences, references, self.grammar_path, self.lm_path,
                          read_weights(self.weights_path), self.settings, self.tuning, workers,
                          fixed=TUNING_FIXED, references_for=hook, checkpoint=checkpoint,
                          recorded=recorded)
        return write_tuning_run(result, out_weights, out_log, provenance, checkpoint)

    def iterations(self, directory: str | os.PathLike) -> Checkpoint:
        """The iteration files of this run fanned out, in ``directory``: keyed by its grammar,
        LM and targeted set-up (Snakemake reruns the iterations when an input changes)."""
        targeted = None if self.targeted is None else self.targeted.key
        return Checkpoint(directory, json.dumps([str(self.grammar_path), str(self.lm_path),
                                                 targeted]))

    def _job_state(self, directory: str | os.PathLike, feature_names: Sequence[str],
                   previous: Sequence[str | os.PathLike]) -> _JobState:
        problem = self._problem(feature_names)
        sentences, references, _ = self._inputs()
        iterations = self.iterations(directory)
        fingerprint = iterations.fingerprint(
            problem.run_arguments(sentences, references, self.settings))
        return _JobState(problem, sentences, references, iterations, fingerprint,
                         [read_iteration(path, fingerprint) for path in previous])

    def decode_shard(self, directory: str | os.PathLike,
                     previous: Sequence[str | os.PathLike], shard: int, shards: int,
                     workers: int, out_path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> None:
        """Shard ``shard`` of ``shards`` of iteration ``len(previous) + 1``, whose earlier
        iterations are the files ``previous`` in ``directory``: decoded, its new pairs scored
        (for 1H+kT paraphrased here, flushed to the cache as this shard's part)."""
        grammar = load_grammar(self.grammar_path)
        state = self._job_state(directory, grammar.feature_names, previous)
        with contextlib.ExitStack() as stack:
            hook = self._hook(stack, state.references,
                              f"{self.run.name}.it{len(previous) + 1}.shard{shard}", workers)
            builder = PoolBuilder(state.problem, hook or default_hook(state.references))

            def decode(sources: list[str], weights: dict[str, float]) -> list:
                return decode_corpus(sources, grammar, self.lm_path, weights, self.settings,
                                     workers)

            found = fanout.decode_shard(builder, state.saved, state.sentences,
                                        fanout.shard_sentences(state.references, shards, shard),
                                        decode)
        fanout.write_shard(found, out_path, state.problem.names, state.fingerprint, provenance)

    def optimise_iteration(self, directory: str | os.PathLike,
                           previous: Sequence[str | os.PathLike],
                           shard_paths: Sequence[str | os.PathLike],
                           provenance: Mapping[str, str] | None = None) -> SavedIteration:
        """Iteration ``len(previous) + 1`` from its shards, saved in ``directory`` (its stop
        reason says whether another iteration follows)."""
        state = self._job_state(directory, grammar_features(self.grammar_path), previous)
        shards = [fanout.read_shard(path, state.fingerprint, state.problem.metric.n_stats)
                  for path in shard_paths]
        finished = fanout.optimise_iteration(
            PoolBuilder(state.problem, default_hook(state.references)), state.saved,
            shards)
        state.iterations.save(state.fingerprint, finished, provenance)
        return finished

    def finish(self, directory: str | os.PathLike, paths: Sequence[str | os.PathLike],
               out_weights: str | os.PathLike, out_log: str | os.PathLike,
               provenance: Mapping[str, str] | None = None) -> dict[str, float]:
        """The weights and tuning log of the run whose iteration files in ``directory`` are
        ``paths``, the last one having ended it."""
        state = self._job_state(directory, grammar_features(self.grammar_path), paths)
        return write_tuning_run(fanout.finish(state.problem, state.saved), out_weights, out_log,
                                provenance, None)


class _JobState(NamedTuple):
    """What a job of a fanned-out run starts from: the run's problem, sentences and
    references, its iteration files' checkpoint and fingerprint, and the iterations read."""

    problem: TuningProblem
    sentences: list[str]
    references: list[list[str]]
    iterations: Checkpoint
    fingerprint: str
    saved: list[SavedIteration]


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


def write_reference_texts(evalset_path: str | os.PathLike,
                          tokenised_paths: Sequence[str | os.PathLike],
                          detokenised_paths: Sequence[str | os.PathLike], lang: str) -> None:
    """An evaluation set's references as plain text, one file per reference stream (stream k
    holds every segment's k-th reference in the set's order, an empty line where a segment has
    fewer), tokenised as the pipeline scores them and detokenised (Moses), so that any tool
    scores the decoder's ``<set>.1best.txt`` / ``.1best.detok.txt`` against them, e.g. with the
    ``sacrebleu`` command. As many paths as the set's most references per segment."""
    table = read_table(evalset_path, EVALSET)
    references = [list(refs) for refs in table["references"]]
    width = max((len(refs) for refs in references), default=0)
    if len(tokenised_paths) != width or len(detokenised_paths) != width:
        raise ValueError(f"{evalset_path}: {width} reference streams, but "
                         f"{len(tokenised_paths)} tokenised and {len(detokenised_paths)} "
                         "detokenised paths to write them to")
    for k, (tokenised, detokenised) in enumerate(zip(tokenised_paths, detokenised_paths,
                                                     strict=True)):
        stream = [refs[k] if k < len(refs) else "" for refs in references]
        for path, lines in ((tokenised, stream),
                            (detokenised, [detokenize(r, lang) if r else "" for r in stream])):
            text = "".join(f"{line}\n" for line in lines)
            with atomic_path(path) as tmp:
                tmp.write_text(text, encoding="utf-8")


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
        best = nbest[nbest["rank"] == 0].set_index("segment_id")["hypothesis"]
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

"""The MT system's tuning runs of the reference-sparsity experiments (thesis ch. 4 and §5.3):
each condition's references and the run, in one job or fanned out.

Conditions name the reference set the MT system is tuned with (thesis §4.3, Fig. 4.3):
``kH`` is the first k human references in the set's seeded per-document order (``1H`` is the
simulated single reference), ``1H+kP`` is the single reference plus the k-best untargeted
paraphrases of it by the tuned paraphraser (§4.3.2, :mod:`circle.paraphrase.untargeted`),
``1H+kT`` targeted paraphrases of it towards each hypothesis (§5.3,
:mod:`circle.paraphrase.targeted`). ``1H+1X_<extra>`` adds one fixed extra reference of known
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

import pandas as pd

from circle.core.schemas import EVALSET, EXTRA_REFERENCE, LATTICE_REFERENCES
from circle.core.tables import read_metadata, read_table
from circle.corpus.references import ordered_references, single_references
from circle.decoder import (
    DecoderSettings,
    decode_corpus,
    grammar_features,
    load_grammar,
    read_weights,
)
from circle.decoder.nbest import NBEST
from circle.decoder.sets import RecordedDecode
from circle.experiments.conditions import UNTUNED_TRANSLATION, Condition, TuningRun
from circle.experiments.heldout import tuning_set_rows
from circle.paraphrase.targeted import TargetedReferences, TargetedSettings, TargetedSetup
from circle.tune import fanout
from circle.tune.checkpoint import Checkpoint, SavedIteration, read_iteration
from circle.tune.loop import (
    TUNING_FIXED,
    PoolBuilder,
    TuningProblem,
    TuningSettings,
    default_hook,
    tune,
    write_tuning_run,
)


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


@dataclass(frozen=True)
class RunSettings:
    """What an MT tuning run's jobs are told besides their files, typed once per job: the
    decoder's search settings, the run's :class:`~circle.tune.loop.TuningSettings`
    (:func:`run_tuning_settings`) and a 1H+kT run's targeted paraphraser settings at the
    configuration the plan chose for it (None: the grid's choice, or no targeted
    paraphraser)."""

    decoder: DecoderSettings
    tuning: TuningSettings
    targeted: TargetedSettings | None

    @classmethod
    def from_params(cls, run: TuningRun, params: Mapping[str, Any]) -> RunSettings:
        """``run``'s settings from the params of
        :meth:`circle.pipeline.runs.ResolvedRun.to_params` (keys ``settings``, ``tuning``,
        ``seed`` and ``targeted``), which stay plain values so that Snakemake can record
        them."""
        targeted = params["targeted"]
        return cls(DecoderSettings.from_config(params["settings"]),
                   run_tuning_settings(run, params["tuning"], params["seed"]),
                   None if targeted is None else TargetedSettings.from_config(targeted))


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
    tune set, its filtered grammar, the LM (and with lm.rerank_nbest the reranking LM), the start
    weights (for 1H+kT the pipeline gives the 1H-tuned ones), the untargeted paraphrases (1H+kP)
    or the targeted set-up (1H+kT), and the decoder and tuning settings; for :meth:`tune` and
    iteration 1's :meth:`decode_shard`, optionally the decode stage's n-best lists of the tune
    set at the start weights (``start_decode_path``), which stand in for decoding them again.
    :meth:`tune` runs it in one process; :meth:`decode_shard`, :meth:`optimise_iteration` and
    :meth:`finish` are the jobs of the same run fanned out (:mod:`circle.tune.fanout`)."""

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
    rerank_lm_path: str | os.PathLike | None = None
    """With lm.rerank_nbest: the reranking LM of every decode's n-best lists, whose feature is
    tuned with the others (:mod:`circle.decoder.rerank`)."""

    @classmethod
    def from_job(cls, job: Any) -> ConditionTuning:
        """The run of a Snakemake tuning job (``snakemake`` in its script): wildcards
        ``condition`` and ``replicate``, the inputs of ``tuning_inputs`` (and
        ``start_decode`` of ``fanned_out_tuning_inputs``) and the params of
        :meth:`RunSettings.from_params` (workflow/rules/tune.smk)."""
        run = TuningRun.of(job.wildcards.condition, job.wildcards.replicate)
        settings = RunSettings.from_params(run, job.params)
        targeted = (None if settings.targeted is None
                    else TargetedSetup.from_job(job, settings.decoder, settings.targeted))
        return cls(run, job.input.evalset, job.input.grammar, job.input.lm, job.input.weights,
                   job.input.get("paraphrases"), settings.decoder, settings.tuning, targeted,
                   job.input.get("start_decode"), job.input.get("extra"),
                   job.input.get("lattice"), job.input.get("rerank_lm"))

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
                             TUNING_FIXED, rerank=self.rerank_lm_path is not None)

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
                          recorded=recorded, rerank_lm=self.rerank_lm_path)
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
        sentences, references, recorded = self._inputs()
        iterations = self.iterations(directory)
        fingerprint = iterations.fingerprint(
            problem.run_arguments(sentences, references, self.settings))
        return _JobState(problem, sentences, references, iterations, fingerprint,
                         [read_iteration(path, fingerprint) for path in previous], recorded)

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
                                     workers, rerank_lm=self.rerank_lm_path)

            found = fanout.decode_shard(builder, state.saved, state.sentences,
                                        fanout.shard_sentences(state.references, shards, shard),
                                        decode, state.recorded)
        fanout.write_shard(found, out_path, state.problem.names, state.fingerprint, provenance)

    def optimise_iteration(self, directory: str | os.PathLike,
                           previous: Sequence[str | os.PathLike],
                           shard_paths: Sequence[str | os.PathLike], workers: int = 1,
                           provenance: Mapping[str, str] | None = None) -> SavedIteration:
        """Iteration ``len(previous) + 1`` from its shards, saved in ``directory`` (its stop
        reason says whether another iteration follows; MERT in ``workers`` processes)."""
        state = self._job_state(directory, grammar_features(self.grammar_path), previous)
        shards = [fanout.read_shard(path, state.fingerprint, state.problem.metric.n_stats)
                  for path in shard_paths]
        finished = fanout.optimise_iteration(
            PoolBuilder(state.problem, default_hook(state.references)), state.saved,
            shards, workers)
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
    references, its iteration files' checkpoint and fingerprint, the iterations read, and the
    recorded decode at the start weights (given to the first iteration's shards)."""

    problem: TuningProblem
    sentences: list[str]
    references: list[list[str]]
    iterations: Checkpoint
    fingerprint: str
    saved: list[SavedIteration]
    recorded: RecordedDecode | None

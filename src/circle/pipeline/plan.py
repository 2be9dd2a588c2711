"""What a config asks the workflow to build, as tested code: the tuning runs of each run set,
the files each system's jobs read, the systems of the paraphrase grammar's pivot bitexts, and the
settings the rules pass as params.

The rules reach a :class:`Plan` of the run's config through one-line helpers in
``workflow/rules/common.smk`` that take a job's wildcards; a ``system`` here is the value of the
``{experiment}`` wildcard: the experiment itself, its held-out system
(``<experiment>/heldout``, Fig. 4.11/4.12), or a system that aligns a pivot bitext or extracts
a pivot language's grammar. Nothing here reads a file but the frozen alignment's config check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from circle.core.layout import (
    ALIGNMENT_LINKS,
    BILINGUAL_GRAMMAR,
    COLLAPSED_PARAPHRASE_GRAMMAR,
    COLLAPSED_SELF_PARAPHRASE,
    DECODE_NBEST,
    DECODE_ONEBEST,
    EFLOMAL_ALIGNMENT,
    EVALSET_TABLE,
    EVALUATION_CONDITIONS,
    EVALUATION_TABLE,
    EXTRA_REFERENCES,
    GRID_CHOICE,
    LABELLED_PARAPHRASE_GRAMMAR_FILE,
    LABELLED_SELF_PARAPHRASE,
    LM_BINARY,
    PARAPHRASE_GRAMMAR,
    PARAPHRASER_LM_BINARY,
    PARAPHRASER_RUN,
    PIVOT_SELF_PARAPHRASE,
    PIVOTED_PART,
    TARGETED_CACHE_DIR,
    TOKENIZED_TABLE,
    TUNING_LOG,
    WEIGHTS,
)
from circle.corpus.pivots import (
    REFREEZE_TRAINING,
    PivotBitext,
    frozen_alignments,
    paraphraser_lm_bitexts,
    pivot_bitexts,
    pivot_languages,
    training_bitext,
)
from circle.corpus.prepare import EVAL_SETS, PER_DOCUMENT, UNUSED_TRAINING, reference_names
from circle.decoder.model import SEARCH_SETTINGS
from circle.experiments.conditions import (
    Condition,
    TuningRun,
    oov_variant_tag,
    run_seed,
    tuning_params,
)
from circle.experiments.dose_runs import dose_conditions, dose_controls, dose_extras, dose_runs
from circle.experiments.lattice_tuning import lattice_conditions, lattice_counts, lattice_runs
from circle.experiments.oov_translation import (
    oov_conditions,
    oov_runs,
    stoplist_candidates,
    variant_description,
    variant_feature_split,
    variant_search_settings,
)
from circle.experiments.paper_runs import PaperFigure, figure_runs, focus_runs, paper_figures
from circle.grammar.oov_paraphrase import paraphrase_features
from circle.paraphrase.config import ParaphraserConfig, bias_name
from circle.pipeline.config import ConfigError, frozen_alignment_problems, labelled_decoding
from circle.pipeline.runs import (
    ResolvedRun,
    augmented_weights,
    configured_point,
    oov_paraphrased,
    resolve_run,
    translation_grammar,
    untargeted_paraphrases,
)
from circle.pipeline.shared_system import shared_mt_files

NOT_PIVOT_OPTIONS: tuple[str, ...] = ("biases", "identity_feature", "language_models")
"""Keys of the paraphrase section that the pivoting jobs do not read: the bias grid and φ_ident
(bias_grammar's) and the paraphraser's LMs (estimate_paraphraser_lm's and the decoders')."""


@dataclass(frozen=True)
class RunSet:
    """A family of tuning runs evaluated together (rule evaluate_runs), registered in
    :data:`RUN_SETS`."""

    prefix: str
    """Its ``{run_set}`` in ``evaluation/{run_set}results.parquet``: "" the config's own
    runs, else the family's directory (``dose/``)."""
    description: str
    """What its runs are, in a line (an unknown run set's error lists them)."""
    runs: Callable[[Plan], list[TuningRun]]
    """Its runs in a plan (a :class:`Plan` method)."""


class Plan:
    """The workflow's plan for one config (after the schema filled in its defaults)."""

    def __init__(self, config: Mapping[str, Any]):
        self.config = config
        self.experiment: str = config["experiment"]
        self.heldout_system = f"{self.experiment}/heldout"
        self.mt_systems = [self.experiment, self.heldout_system]
        """The systems that translate with the MT grammar: the experiment's and its held-out
        one (the pivot systems only extract grammars)."""
        self.oov_paraphrased = oov_paraphrased(config)
        """oov_paraphrase.translate: the MT systems decode and tune with the grammars augmented
        for OOV phrases (:meth:`translation_grammar`)."""
        self.oov_variants = ["", *config["oov_paraphrase"]["variants"]]
        """The OOV variants whose augmented grammars the OOV run set uses: "" oov_paraphrase's
        own settings, then oov_paraphrase.variants."""
        self.conditions = [Condition.parse(name) for name in config["tuning"]["conditions"]]
        self.replicates: int = config["tuning"]["replicates"]
        self.pivot_languages = pivot_languages(pivot_bitexts(config))
        """The paraphrase grammar's pivot bitexts by foreign language (paraphrase.pivots);
        empty: the paraphrase grammar pivots from the MT grammar alone."""
        self.training_bitext = training_bitext(config)
        self.paraphraser_lm_pivots = paraphraser_lm_bitexts(config)
        """The pivot bitexts whose English is the text of the paraphraser's own LMs
        (paraphrase.language_models: pivots); empty: it shares the MT system's LMs."""
        self.pivot_pairs = {self.pivot_pair_system(bitext): bitext
                            for bitexts in self.pivot_languages.values() for bitext in bitexts
                            if bitext != self.training_bitext}
        """The pivot bitexts other than the training bitext, by the system that tokenises and
        aligns them."""
        self.pivot_language_systems = [self.pivot_language_system(language)
                                       for language, bitexts in self.pivot_languages.items()
                                       if bitexts != [self.training_bitext]]
        self.mt_system: str | None = config["mt_system"]
        """The experiment whose MT system this one shares (:mod:`circle.pipeline.shared_system`);
        None: its own."""
        self.shared_mt_files = shared_mt_files(config) if self.mt_system else []
        """The shared system's files, under either experiment's results/<experiment>/."""
        self.targeted_point = configured_point(config)
        """The targeted paraphraser's configuration grid_search.point fixes (None: the grid's
        choice), decided once: the 1H+kT runs without their own and the pages that paraphrase
        take it."""
        self.lattice_conditions = lattice_conditions(config)
        """The kH+mL conditions of lattice.tuning_conditions."""
        self.lattice_counts = lattice_counts(self.lattice_conditions)
        """Per k, the most lattice sentences a kH+mL condition takes: the rows per segment of
        its lattice table."""
        self._resolved: dict[tuple[str, int], ResolvedRun] = {}
        self._job_params: dict[tuple[str, str, int], dict[str, Any]] = {}

    # -- tuning runs ---------------------------------------------------------------------------

    def resolve(self, condition: str, replicate: int | str) -> ResolvedRun:
        """The run of a condition name and replicate, resolved once
        (:func:`circle.pipeline.runs.resolve_run`)."""
        key = condition, int(replicate)
        if key not in self._resolved:
            self._resolved[key] = resolve_run(condition, replicate, self.config)
        return self._resolved[key]

    def tuning_seed(self, run: str) -> int:
        """The tuning seed of one run ('1H.rep0', 'paraphraser-bias0') from the config seed."""
        return run_seed(self.config["seed"], run)

    def max_paraphrases(self, targeted: bool = False) -> int:
        """The largest k of the config's 1H+kP conditions, or with ``targeted`` of its 1H+kT
        conditions (0 if none)."""
        return max((c.paraphrases for c in self.conditions if c.targeted == targeted),
                   default=0)

    def tuning_runs(self) -> list[TuningRun]:
        """Every run of the config: each condition, each replicate."""
        return [TuningRun(c, r) for c in self.conditions for r in range(self.replicates)]

    def reference_count(self, evalset: str) -> int:
        """How many references each segment of an evaluation set has."""
        return len(reference_names(self.config["corpus"])[evalset])

    @cached_property
    def figures(self) -> list[PaperFigure]:
        """The thesis figures with tuning runs of their own
        (:mod:`circle.experiments.paper_runs`)."""
        tuning, figures = self.config["tuning"], self.config["figures"]
        return paper_figures(tuning["conditions"], self.reference_count("tune"), tuning["metric"],
                             figures["metric"], figures["untargeted_biases"],
                             figures["heldout_blocks"])

    def figure(self, key: str) -> PaperFigure:
        """The paper figure ``key`` names ('fig4_10')."""
        return next(f for f in self.figures if f.key == key)

    def dose_response_runs(self) -> list[TuningRun]:
        """The dose-response's runs (:mod:`circle.experiments.dose_response`)."""
        conditions = dose_conditions(dose_extras(self.config), dose_controls(self.config))
        return dose_runs(conditions, self.replicates)

    def oov_tuning_runs(self) -> list[TuningRun]:
        """The OOV page's runs: each kH of oov_paraphrase.tuning_conditions and its kH_oov
        (:mod:`circle.experiments.oov_translation`)."""
        return oov_runs(oov_conditions(self.config), self.replicates, self.oov_variants[1:])

    def lattice_tuning_runs(self) -> list[TuningRun]:
        """The lattice page's runs: 1H .. nH and every kH+mL of lattice.tuning_conditions."""
        return lattice_runs(self.lattice_conditions, self.reference_count("tune"),
                            self.replicates)

    def paper_runs(self, heldout: bool = False) -> list[TuningRun]:
        """The paper figures' runs (:func:`circle.experiments.paper_runs.figure_runs`): the
        experiment's, or with ``heldout`` the held-out system's (Fig. 4.11/4.12)."""
        return figure_runs(self.figures, self.replicates, heldout)

    def evaluated_runs(self, system: str, run_set: str) -> list[TuningRun]:
        """The runs an evaluation of ``system`` covers: its run set's (:data:`RUN_SETS`); the
        held-out system's are its figures' (Fig. 4.11/4.12) whatever the run set."""
        if run_set not in RUN_SETS:
            raise ValueError(f"unknown run set {run_set!r}; the run sets are " + "; ".join(
                f"{spec.prefix!r} {spec.description}" for spec in RUN_SETS.values()))
        if system == self.heldout_system:
            return self.paper_runs(heldout=True)
        return RUN_SETS[run_set].runs(self)

    def curve_runs(self) -> list[TuningRun]:
        """The runs of Fig. 5.4 (targeted.curves): 1H+1T replicate 0 with the paraphraser at
        the curves' bias and each of their targeting weights."""
        curves = self.config["targeted"]["curves"]
        return [TuningRun(Condition.targeted_at(1, ParaphraserConfig(float(curves["bias"]),
                                                                     float(weight))), 0)
                for weight in curves["weights"]]

    def dose_extras(self) -> list[str]:
        """The dose-response's extra references
        (:func:`circle.experiments.dose_runs.dose_extras`)."""
        return dose_extras(self.config)

    def focus_runs(self) -> list[TuningRun]:
        """Every replicate of the Fig. 6.2 runs, if the config tunes all three conditions."""
        return focus_runs(self.config["tuning"]["conditions"], self.replicates)

    # -- settings passed as params ---------------------------------------------------------------

    def decoder_settings(self) -> dict[str, Any]:
        """The config's search settings, as keyword arguments of
        :meth:`circle.decoder.model.DecoderSettings.from_config`."""
        return {key: self.config["decoder"][key] for key in SEARCH_SETTINGS}

    def oov_paraphrase_settings(self, variant: str) -> dict[str, Any]:
        """The distributional paraphrase search's settings
        (:class:`circle.distributional.DistributionalSettings`) of oov_paraphrase ("") or one
        of its variants: the search keys
        (:meth:`~circle.distributional.DistributionalSettings.search_keys`; the others only
        say which runs decode with the augmented grammars, so that changing them does not
        search again), and the config seed that draws its samples."""
        return variant_search_settings(self.config, variant)

    def oov_feature_split(self, variant: str) -> int | None:
        """The augmented grammars' paraphrase features of oov_paraphrase ("") or a variant
        (:func:`circle.experiments.oov_translation.variant_feature_split`)."""
        return variant_feature_split(self.config, variant)

    def paraphraser_tuning_settings(self) -> dict[str, Any]:
        """The paraphraser's tuning job's settings (:func:`tuning_params`)."""
        return tuning_params(self.config["tuning"])

    def targeted_settings(self, system: str, point: ParaphraserConfig | None
                          ) -> dict[str, Any]:
        """The targeted paraphraser's settings besides its inputs
        (:meth:`circle.paraphrase.targeted.TargetedSettings.from_config` reads them) at the
        configuration ``point`` (:meth:`~circle.paraphrase.config.ParaphraserConfig.to_point`;
        None: the grid's choice): a 1H+kT run's own (:attr:`ResolvedRun.paraphraser`), else
        the configured one (:attr:`targeted_point`)."""
        targeted = self.config["targeted"]
        return {
            "biases": [float(b) for b in self.config["paraphrase"]["biases"]],
            "point": None if point is None else point.to_point(),
            "nbest": targeted["nbest"],
            "search": targeted["search"],
            "forest_beam": targeted["forest_beam"],
            "rerank": targeted["rerank"],
            "depth": self.max_paraphrases(targeted=True),
            "cache": TARGETED_CACHE_DIR.format(experiment=system),
        }

    def tuning_job_params(self, system: str, condition: str, replicate: int | str
                          ) -> dict[str, Any]:
        """The params every job of an MT tuning run shares
        (:meth:`circle.pipeline.runs.ResolvedRun.to_params`), built once per run: the rules
        take one key of them per param."""
        key = system, condition, int(replicate)
        if key not in self._job_params:
            run = self.resolve(condition, replicate)
            targeted = (self.targeted_settings(system, run.paraphraser)
                        if run.condition.targeted else None)
            self._job_params[key] = run.to_params(system, self.decoder_settings(), targeted)
        return self._job_params[key]

    def pivot_options(self) -> dict[str, Any]:
        """The config's paraphrase section as the pivoting jobs see it: without the keys
        only later jobs read (:data:`NOT_PIVOT_OPTIONS`), so that changing the bias grid,
        turning φ_ident on or off or giving the paraphraser its own LMs does not pivot again,
        and without foreign_bibles, a table the pivot bitexts' jobs read as input."""
        return {key: value for key, value in self.config["paraphrase"].items()
                if key not in (*NOT_PIVOT_OPTIONS, "foreign_bibles")}

    def labelled_pivot_options(self) -> dict[str, Any]:
        """The labelled (SAMT) pivot's :class:`~circle.grammar.pivot.PivotOptions` but the
        span limit: the paraphrase section's pivot choice and feature method, with the samt
        section's pruning (draft §4.2) and identity pairs."""
        samt = self.config["samt"]
        return {"labelled": True,
                **{key: self.config["paraphrase"][key] for key in ("top_pivots", "method")},
                **{key: samt[key] for key in ("min_count", "min_probability",
                                              "top_paraphrases", "keep_identity")}}

    def alignment_options(self) -> dict[str, Any]:
        """The config's alignment section as eflomal's jobs see it: without frozen_pivots and
        refreeze, which say which alignments are replayed and rewritten, not how eflomal aligns
        (so that freezing one does not align the others again)."""
        return {key: value for key, value in self.config["alignment"].items()
                if key not in ("frozen_pivots", "refreeze")}

    def corpus_params(self) -> dict[str, Any]:
        """The corpus section as prepare_corpus's params, without corpus.single_reference when
        it is the default rule and without corpus.train_segments when it is null (every
        training segment): the default experiment's job keeps the params it always had, so
        that Snakemake does not rebuild its results for a key that changes nothing."""
        corpus = dict(self.config["corpus"])
        if corpus.get("single_reference") == PER_DOCUMENT:
            del corpus["single_reference"]
        if corpus.get("train_segments") is None:
            corpus.pop("train_segments", None)
        return corpus

    # -- files ---------------------------------------------------------------------------------

    def corpus_files(self) -> list[str]:
        """Every file the corpus is read from, so that Snakemake notices when one changes."""
        corpus = self.config["corpus"]
        if corpus["kind"] == "bible":
            return [corpus["bible"]["table"]]
        files = corpus["files"]
        paths = [files["train"]["source"], files["train"]["target"]]
        for name in EVAL_SETS:
            spec = files[name]
            paths += [spec["source"], *spec["references"]]
            paths += [spec["documents"]] if spec.get("documents") else []
        return paths

    def oov_monolingual(self, system: str) -> list[str]:
        """The tokenised tables whose source side is the monolingual text of ``system``'s OOV
        paraphrases: every split of the system and, with corpus.train_segments, the training
        segments the experiment's sample leaves out of the bitext (Marton et al. 2009 keep the
        monolingual corpus fixed while the bitext shrinks)."""
        tables = [TOKENIZED_TABLE.format(experiment=system, split=split)
                  for split in ("train", *EVAL_SETS)]
        if self.config["corpus"].get("train_segments") is not None:
            tables.append(TOKENIZED_TABLE.format(experiment=self.experiment,
                                                 split=UNUSED_TRAINING))
        return tables

    def lm(self, system: str, order: int) -> str:
        return LM_BINARY.format(experiment=system, order=order)

    def translation_grammar(self, system: str, evalset: str, weights: str | None = None) -> str:
        """The grammar an MT system decodes an evaluation set with, in every job that
        translates with it (test and start decodes, tuning runs, the grid sample, the test
        decodes of every iteration): the filtered grammar or, with oov_paraphrase.translate or
        for the weights of a kH_oov run (``weights``: a weights file's name,
        :func:`circle.pipeline.runs.augmented_weights`), the filtered grammar augmented for the
        set's OOV phrases (:func:`circle.pipeline.runs.translation_grammar`)."""
        variant = None if weights is None else augmented_weights(weights)
        if variant is None and self.oov_paraphrased:
            variant = ""
        return translation_grammar(system, evalset, variant)

    def untuned_weights(self, model: str) -> dict[str, float]:
        """The untuned weights of ``model``: the config's translation or paraphrase weights,
        or for ``translation_oov`` or ``translation_oov-<variant>``
        (``untuned-translation_oov[-<variant>]``, where kH_oov and kH_oov-<variant> runs start) the
        translation weights and oov_paraphrase.untuned_weight for each paraphrase feature of
        the variant's grammars."""
        variant = augmented_weights(f"untuned-{model}")
        if variant is not None:
            weight = float(self.config["oov_paraphrase"]["untuned_weight"])
            features = paraphrase_features(self.oov_feature_split(variant))
            return {**self.config["decoder"]["translation_weights"],
                    **dict.fromkeys(features, weight)}
        return self.config["decoder"][f"{model}_weights"]

    def decoding_lm(self, system: str) -> str:
        """The KenLM binary the decoder uses (lm.decoding_order)."""
        return self.lm(system, self.config["lm"]["decoding_order"])

    def nbest_reranking_inputs(self, system: str, paraphraser: bool = False) -> dict[str, str]:
        """With lm.rerank_nbest, the LM that reranks the n-best lists of a decoding or tuning
        job (``rerank_lm``: the MT system's reranking LM, or with ``paraphraser`` the
        paraphraser's, :meth:`paraphraser_lm`); without it nothing, so that the jobs of a
        config without the option keep their inputs."""
        if not self.config["lm"]["rerank_nbest"]:
            return {}
        order = self.config["lm"]["reranking_order"]
        return {"rerank_lm": self.paraphraser_lm(system, order) if paraphraser
                else self.lm(system, order)}

    def unbiased_paraphrase_grammar(self) -> dict[str, Any]:
        """What the self-paraphrase bias reads (rule bias_grammar): the unbiased paraphrase
        grammar's ``parts`` and its ``self_paraphrase`` table, those of the Hiero pivot, or with
        samt.paraphraser those of the labelled grammar collapsed to X (rule
        collapse_labelled_grammar), or with samt.decoding labelled the labelled grammar's
        own (rule pivot_labelled_grammar)."""
        if labelled_decoding(self.config):
            return {"parts": [LABELLED_PARAPHRASE_GRAMMAR_FILE.format(experiment=self.experiment)],
                    "self_paraphrase": LABELLED_SELF_PARAPHRASE.format(
                        experiment=self.experiment)}
        if self.config["samt"]["paraphraser"]:
            return {"parts": [COLLAPSED_PARAPHRASE_GRAMMAR.format(experiment=self.experiment)],
                    "self_paraphrase": COLLAPSED_SELF_PARAPHRASE.format(
                        experiment=self.experiment)}
        return {"parts": [PIVOTED_PART.format(experiment=self.experiment, job=job)
                          for job in range(self.config["paraphrase"]["pivot_jobs"])],
                "self_paraphrase": PIVOT_SELF_PARAPHRASE.format(experiment=self.experiment)}

    def paraphrase_grammars(self) -> list[str]:
        """The biased paraphrase grammar of every bias of the config (the experiment's: the
        held-out system paraphrases with them too)."""
        return [PARAPHRASE_GRAMMAR.format(experiment=self.experiment, bias=bias_name(b))
                for b in self.config["paraphrase"]["biases"]]

    def paraphraser_weights(self, system: str) -> str:
        """The tuned paraphraser's weights (tuned on tuning.paraphraser_bias's grammar)."""
        return WEIGHTS.format(experiment=system, weights=PARAPHRASER_RUN.format(
            bias=bias_name(self.config["tuning"]["paraphraser_bias"])))

    def default_untargeted_paraphrases(self, system: str) -> str:
        """The untargeted k-best paraphrases of the tune set's single reference at
        tuning.paraphraser_bias, which 1H+kP conditions add."""
        return untargeted_paraphrases(system, self.config["tuning"]["paraphraser_bias"])

    def paraphraser_lm(self, system: str, order: int) -> str:
        """The paraphraser's LM of an order: its own (paraphrase.language_models: pivots; the
        experiment's system only, the held-out system keeps sharing its LMs) or the MT
        system's."""
        if self.paraphraser_lm_pivots and system == self.experiment:
            return PARAPHRASER_LM_BINARY.format(experiment=system, order=order)
        return self.lm(system, order)

    def targeted_paraphraser_inputs(self, system: str, point: ParaphraserConfig | None
                                    ) -> dict[str, Any]:
        """What the targeted paraphraser at configuration ``point`` is built from (a 1H+kT
        run's :attr:`ResolvedRun.paraphraser`, else :attr:`targeted_point`): every paraphrase
        grammar (the chosen bias is known only once the grid has run), the tuned paraphraser's
        weights, its decoding and reranking LMs and, where ``point`` is None, the grid's
        choice."""
        lm = self.config["lm"]
        inputs: dict[str, Any] = {
            "paraphrase_grammars": self.paraphrase_grammars(),
            "paraphraser_weights": self.paraphraser_weights(system),
            "paraphraser_lm": self.paraphraser_lm(system, lm["decoding_order"]),
            "paraphraser_reranking_lm": self.paraphraser_lm(system, lm["reranking_order"]),
        }
        if point is None:
            inputs["choice"] = GRID_CHOICE.format(experiment=system)
        return inputs

    def tuning_inputs(self, system: str, condition: str, replicate: int | str
                      ) -> dict[str, Any]:
        """The files one MT tuning run reads (:meth:`ResolvedRun.inputs`; with lm.rerank_nbest
        the reranking LM, :meth:`nbest_reranking_inputs`), and for 1H+kT the
        targeted paraphraser's, with the grid's choice unless the run has its own
        configuration."""
        run = self.resolve(condition, replicate)
        inputs: dict[str, Any] = run.inputs(system, self.decoding_lm(system))
        inputs.update(self.nbest_reranking_inputs(system))
        if run.condition.targeted:
            inputs.update(self.targeted_paraphraser_inputs(system, run.paraphraser))
        return inputs

    def start_decode(self, system: str, condition: str, replicate: int | str) -> str:
        """The decode stage's tune-set n-best lists at a run's start weights."""
        return DECODE_NBEST.format(experiment=system, evalset="tune",
                                   weights=self.resolve(condition, replicate).start)

    def focus_inputs(self, system: str) -> dict[str, Any]:
        """Thesis Fig. 6.2's inputs: the tune-set n-best lists of the 2H, 1H+1P and 1H+1T runs'
        start and tuned weights, the untargeted paraphrases and the targeted paraphraser's
        parts."""
        runs = self.focus_runs()
        return {
            "starts": [DECODE_NBEST.format(experiment=system, weights=run.start, evalset="tune")
                       for run in runs],
            "tuned": [DECODE_NBEST.format(experiment=system, weights=run.name, evalset="tune")
                      for run in runs],
            "paraphrases": self.default_untargeted_paraphrases(system),
            **self.targeted_paraphraser_inputs(system, self.targeted_point),
        }

    def reference_quality_inputs(self, system: str) -> dict[str, Any]:
        """What the reference-quality table reads: the tune set, the untuned and every 1H
        replicate's tune-set n-best lists, both LMs, the untargeted paraphrases if the config
        has a 1H+kP condition and, with 1H+kT conditions, the targeted paraphraser's parts and
        every 1H+kT run (whose cache holds the targeted paraphrases)."""
        inputs: dict[str, Any] = {
            "tune": EVALSET_TABLE.format(experiment=system, evalset="tune"),
            "untuned": DECODE_NBEST.format(experiment=system, weights="untuned-translation",
                                           evalset="tune"),
            "tuned": [DECODE_NBEST.format(experiment=system, evalset="tune",
                                          weights=TuningRun(Condition(1), r).name)
                      for r in range(self.replicates)],
            "lm": self.decoding_lm(system),
            "reranking_lm": self.lm(system, self.config["lm"]["reranking_order"]),
        }
        if self.max_paraphrases():
            inputs["paraphrases"] = self.default_untargeted_paraphrases(system)
        if any(c.targeted for c in self.conditions):
            inputs.update(self.targeted_paraphraser_inputs(system, self.targeted_point))
            inputs["targeted_runs"] = [
                WEIGHTS.format(experiment=system, weights=TuningRun(c, r).name)
                for c in self.conditions if c.targeted for r in range(self.replicates)]
        return inputs

    def extra_reference_inputs(self, system: str, extra: str) -> dict[str, Any]:
        """What an extra reference is made from: the tune set, and for kjv the Bible verse
        table, for mt the untuned system's tune-set n-best lists."""
        inputs = {"tune": EVALSET_TABLE.format(experiment=system, evalset="tune")}
        if extra == "kjv":
            inputs["verses"] = self.config["corpus"]["bible"]["table"]
        elif extra == "mt":
            inputs["untuned"] = DECODE_NBEST.format(experiment=system, evalset="tune",
                                                    weights="untuned-translation")
        return inputs

    def dose_response_inputs(self, system: str) -> dict[str, Any]:
        """What the dose-response page reads: the tune set, every extra reference table, the
        untargeted paraphrases (for the 1H+1P control), the dose run set's evaluation and the
        decoder's LM."""
        inputs: dict[str, Any] = {
            "tune": EVALSET_TABLE.format(experiment=system, evalset="tune"),
            "extra": [EXTRA_REFERENCES.format(experiment=system, extra=extra)
                      for extra in self.dose_extras()],
            "table": EVALUATION_TABLE.format(experiment=system, run_set="dose/"),
            "conditions": EVALUATION_CONDITIONS.format(experiment=system, run_set="dose/"),
            "lm": self.decoding_lm(system),
        }
        if "1H+1P" in dose_controls(self.config):
            inputs["paraphrases"] = self.default_untargeted_paraphrases(system)
        return inputs

    def oov_report_inputs(self, system: str) -> dict[str, str]:
        """The OOV page's inputs: the run set's condition summary, the tune and test sets with
        their filtered and augmented grammars, and the replicate-0 test 1-best of the first
        condition of oov_paraphrase.tuning_conditions and of its kH_oov."""
        inputs = {"conditions": EVALUATION_CONDITIONS.format(experiment=system, run_set="oov/")}
        for evalset in ("tune", "test"):
            inputs[f"{evalset}_set"] = EVALSET_TABLE.format(experiment=system, evalset=evalset)
            inputs[f"{evalset}_filtered"] = translation_grammar(system, evalset, None)
            for variant in self.oov_variants:
                inputs[f"{evalset}_augmented{oov_variant_tag(variant)}"] = translation_grammar(
                    system, evalset, variant)
        inputs["tuning_logs"] = [TUNING_LOG.format(experiment=system, run=run.name)
                                 for run in self.oov_tuning_runs() if run.condition.oov]
        for key, run in zip(("baseline", "augmented"), self.oov_sample_runs(), strict=True):
            inputs[key] = DECODE_ONEBEST.format(experiment=system, weights=run.name,
                                                evalset="test")
        return inputs

    def oov_report_variants(self) -> dict[str, dict[str, Any]]:
        """What the OOV page needs of each variant besides its grammars
        (:class:`circle.figures.oov_translation.VariantFiles` without ``augmented``)."""
        candidates = stoplist_candidates(self.config)
        described = {}
        for variant in self.oov_variants:
            settings = self.oov_paraphrase_settings(variant)
            described[variant] = {"settings": variant_description(self.config, variant),
                                  "max_length": settings["max_phrase_length"],
                                  "stoplist_threshold": settings["stoplist_threshold"],
                                  "stoplist_candidate": variant in candidates}
        return described

    def oov_sample_runs(self) -> tuple[TuningRun, TuningRun]:
        """The runs whose test output the OOV page compares verse by verse: replicate 0 of
        the first condition of oov_paraphrase.tuning_conditions and of its kH_oov."""
        baseline = oov_conditions(self.config)[0]
        return TuningRun(baseline, 0), TuningRun(replace(baseline, oov=True), 0)

    def paper_figure_inputs(self, system: str, key: str) -> dict[str, str]:
        """A paper figure's evaluation tables (the paper runs', or the held-out system's for
        Fig. 4.11/4.12) and the tune set that names its reference or tuning sets."""
        if self.figure(key).heldout:
            system, run_set = self.heldout_system, ""
        else:
            run_set = "paper/"
        return {"table": EVALUATION_TABLE.format(experiment=system, run_set=run_set),
                "conditions": EVALUATION_CONDITIONS.format(experiment=system, run_set=run_set),
                "tune": EVALSET_TABLE.format(experiment=system, evalset="tune")}

    # -- pivot bitexts -------------------------------------------------------------------------

    def pivot_pair_system(self, bitext: PivotBitext) -> str:
        """Where a pivot bitext's tokenised table and eflomal alignment are made, as a system
        of its own (tokenized/train.parquet, align/eflomal.parquet)."""
        return f"{self.experiment}/pivots/{bitext.name}"

    def pivot_language_system(self, language: str) -> str:
        """Where a pivot language's grammar is extracted from its bitexts' concatenation, as a
        system of its own (tokenized/train.parquet, align/links.parquet, grammar/...)."""
        return f"{self.experiment}/pivot/{language}"

    def alignment_path(self, system: str) -> str:
        """The alignment of a system's training bitext: the held-out system's links (its share
        of the experiment's) and a pivot language's (its bitexts' joined), a pivot bitext's
        frozen alignment (``alignment.frozen_pivots``) or eflomal output, else the frozen
        alignment table if the config names one (each checked against the config's alignment
        settings), else eflomal's fresh output."""
        if system == self.heldout_system or system in self.pivot_language_systems:
            return ALIGNMENT_LINKS.format(experiment=system)
        pair = self.pivot_pairs[system].name if system in self.pivot_pairs else None
        frozen = (self.config["alignment"]["frozen"] if pair is None
                  else self.config["alignment"]["frozen_pivots"].get(pair))
        if not frozen:
            return EFLOMAL_ALIGNMENT.format(experiment=system)
        if problems := frozen_alignment_problems(self.config, pair):
            raise ConfigError(problems)
        return frozen

    def refrozen_alignments(self) -> dict[str, str]:
        """What the target refreeze_alignment writes: each frozen alignment the config names
        (``alignment.frozen`` as ``training``, ``alignment.frozen_pivots`` by pair name) and
        ``alignment.refreeze`` chooses (null: all) by the eflomal output that replaces it."""
        chosen = self.config["alignment"].get("refreeze")
        systems = {REFREEZE_TRAINING: self.experiment,
                   **{bitext.name: system for system, bitext in self.pivot_pairs.items()}}
        return {EFLOMAL_ALIGNMENT.format(experiment=systems[name]): path
                for name, path in frozen_alignments(self.config).items()
                if chosen is None or name in chosen}

    def pivot_bitext_files(self, bitext: PivotBitext) -> tuple[str, str]:
        """The tokenised table and alignment of a pivot bitext: the experiment's own for its
        training bitext, else those of its :meth:`pivot_pair_system`."""
        system = (self.experiment if bitext == self.training_bitext
                  else self.pivot_pair_system(bitext))
        return (TOKENIZED_TABLE.format(experiment=system, split="train"),
                self.alignment_path(system))

    def pivot_language_inputs(self, system: str) -> dict[str, list[str]]:
        """The tokenised tables and alignments of a pivot language's bitexts, in config
        order."""
        language = system.removeprefix(f"{self.experiment}/pivot/")
        files = [self.pivot_bitext_files(bitext) for bitext in self.pivot_languages[language]]
        return {"bitexts": [bitext for bitext, _ in files],
                "alignments": [alignment for _, alignment in files]}

    def pivot_grammars(self) -> list[str]:
        """The bilingual grammars the paraphrase grammar is pivoted from, one per pivot
        language (:mod:`circle.grammar.pivot`): the MT grammar alone by default and for a
        language whose only bitext is the training bitext, else the language's own."""
        mt_grammar = BILINGUAL_GRAMMAR.format(experiment=self.experiment)
        return [mt_grammar if bitexts == [self.training_bitext]
                else BILINGUAL_GRAMMAR.format(experiment=self.pivot_language_system(language))
                for language, bitexts in self.pivot_languages.items()] or [mt_grammar]

    def paraphraser_lm_texts(self) -> list[str]:
        """The tokenised tables of :attr:`paraphraser_lm_pivots`: the paraphraser's own LM
        text."""
        return [self.pivot_bitext_files(bitext)[0] for bitext in self.paraphraser_lm_pivots]


RUN_SETS: dict[str, RunSet] = {run_set.prefix: run_set for run_set in (
    RunSet("", "the config's conditions (tuning.conditions), each replicate", Plan.tuning_runs),
    RunSet("paper/", "the runs the thesis figures tune for themselves (Fig. 4.8-4.10, 5.14)",
           Plan.paper_runs),
    RunSet("dose/", "the dose-response's extra references and controls (target dose_response)",
           Plan.dose_response_runs),
    RunSet("lattice/", "1H .. nH and the kH+mL of lattice.tuning_conditions (target "
           "lattice_tuning)", Plan.lattice_tuning_runs),
    RunSet("oov/", "each kH of oov_paraphrase.tuning_conditions and its kH_oov (target "
           "oov_translation)", Plan.oov_tuning_runs),
)}
"""The evaluation run sets by prefix."""

RUN_SET_PATTERN = "(?:" + "|".join(re.escape(prefix) for prefix in RUN_SETS if prefix) + ")?"
"""The ``{run_set}`` wildcard's constraint: a registered run set's prefix, or none."""

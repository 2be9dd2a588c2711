# Validation, wildcard constraints and the rules' one-line helpers (no rules here): what the
# config asks to build is circle.pipeline.plan.Plan, tested code; the helpers below hand it a
# job's wildcards.
import functools
import itertools
import os
import re

from snakemake.common.tbdstring import TBDString
from snakemake.exceptions import WorkflowError
from snakemake.io import IOFile
from snakemake.logging import logger

from circle.core.layout import (
    ALIGNMENT_LINKS,
    BILINGUAL_GRAMMAR,
    COLLAPSED_PARAPHRASE_GRAMMAR,
    COLLAPSED_SELF_PARAPHRASE,
    CORPUS_TABLE,
    DECODE_NBEST,
    DECODE_NBEST_TEXT,
    DECODE_ONEBEST,
    DECODE_ONEBEST_DETOK,
    EFFECTIVE_CONFIG_FILE,
    EFLOMAL_ALIGNMENT,
    EVALSET_TABLE,
    EVALUATION_CONDITIONS,
    EVALUATION_TABLE,
    EXTRA_REFERENCES,
    FILTERED_GRAMMAR,
    GRID_CHOICE,
    GRID_ROW,
    LABELLED_BILINGUAL_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR_FILE,
    LABELLED_SELF_PARAPHRASE,
    LATTICE_REFERENCES,
    LEXICAL_TABLE,
    LM_BINARY,
    OOV_MASKING_TABLE,
    OOV_PARAPHRASE_TABLE,
    OOV_PARAPHRASED_GRAMMAR,
    PARAPHRASE_GRAMMAR,
    PARAPHRASER_LM_BINARY,
    PARAPHRASER_RUN,
    PIVOT_SELF_PARAPHRASE,
    PIVOTED_PART,
    REFERENCE_TEXT,
    REFERENCE_TEXT_DETOK,
    RESULTS,
    RUN,
    TOKENIZED_TABLE,
    TRAINING_PARSES,
    TUNING_ITERATION,
    TUNING_ITERATIONS,
    TUNING_LOG,
    UNTARGETED_PARAPHRASES,
    UNTUNED_PARAPHRASE,
    WEIGHTS,
    report_file,
)
from circle.core.tables import config_hash, parquet_rows, remove_unreadable_tables
from circle.corpus import prepare
from circle.corpus.prepare import EVAL_SETS, UNUSED_TRAINING
from circle.experiments.conditions import (
    CONDITION_PATTERN,
    EXTRA_PATTERN,
    OOV_VARIANT_TAG_PATTERN,
    REFERENCE_TAG_PATTERN,
    tagged_oov_variant,
    tagged_reference,
)
from circle.paraphrase.config import bias_name
from circle.pipeline.config import check_config, own_data_warnings, thesis_numbers
from circle.pipeline.plan import RUN_SET_PATTERN, Plan
from circle.pipeline.resources import MEMORY, input_mb, runtime_model
from circle.pipeline.shared_system import mt_system_mismatch
from circle.pipeline.stale import stale_results_problem
from circle.tune.checkpoint import ended


check_config(config, workflow.configfiles,
             os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
if not (workflow.remote_exec or workflow.subprocess_exec):  # once, not in each job
    for warning in own_data_warnings(config):
        logger.warning(f"Own data ({config['experiment']}): {warning}.")
    if config["mt_system"] and (mismatch := mt_system_mismatch(config)):
        raise WorkflowError(mismatch)
PLAN = Plan(config)
"""What this config asks the workflow to build (circle.pipeline.plan)."""
THESIS_NUMBERS = thesis_numbers(config)
"""Whether the report tables and plots show the thesis's numbers (report.thesis_numbers)."""

EXPERIMENT = PLAN.experiment
HELDOUT_SYSTEM = PLAN.heldout_system
"""The experiment's held-out system (circle.experiments.heldout, Fig. 4.11/4.12): built by the same
rules under results/<experiment>/heldout/ from the tables the hold_out_blocks job writes."""
EFFECTIVE_CONFIG = EFFECTIVE_CONFIG_FILE.format(experiment=EXPERIMENT)
"""The experiment's effective configuration (written by effective_config): an input of every
named target that ends in results/, so that no result is without the record of what ran."""
MAIN_SYSTEM = re.escape(EXPERIMENT)
"""Wildcard constraint of the rules that only the experiment's own system has (its corpus,
tokenisation, alignment and set selection are the held-out system's hold_out_blocks job)."""
SPLITS = ("train", *EVAL_SETS)
PIVOT_PAIRS = PLAN.pivot_pairs
"""The pivot bitexts other than the training bitext, by the system that tokenises and aligns
them."""
PIVOT_PAIR_SYSTEMS = list(PIVOT_PAIRS)
PIVOT_LANGUAGE_SYSTEMS = PLAN.pivot_language_systems
LATTICE_COUNTS = PLAN.lattice_counts
"""Per k, the most lattice sentences a kH+mL condition of lattice.tuning_conditions takes: the
rows per segment of its lattice table."""


def one_of(systems):
    """A wildcard constraint matching exactly ``systems`` (none: nothing)."""
    return "|".join(re.escape(system) for system in systems) or "(?!)"


ALIGNED_SYSTEM = one_of([EXPERIMENT, *PIVOT_PAIR_SYSTEMS])
"""Wildcard constraint of the eflomal alignment: the experiment's bitext and the pivot
bitexts other than it."""
MT_SYSTEM = one_of(PLAN.mt_systems)
"""Wildcard constraint of the rules only the systems that translate have: the experiment's and
its held-out one (the OOV paraphrases and augmented grammars they may decode with)."""


wildcard_constraints:
    experiment=one_of([EXPERIMENT, HELDOUT_SYSTEM, *PIVOT_PAIR_SYSTEMS,
                       *PIVOT_LANGUAGE_SYSTEMS]),
    split="|".join(SPLITS),
    evalset="|".join(EVAL_SETS),
    order=r"\d+",
    bias=r"0|0?\.\d+",
    shard=r"\d+",
    job=r"\d+",
    iteration=r"\d{4}",
    replicate=r"\d+",
    condition=CONDITION_PATTERN,
    reference=REFERENCE_TAG_PATTERN,
    run_set=RUN_SET_PATTERN,
    extra=EXTRA_PATTERN,
    model=f"translation(?:_oov{OOV_VARIANT_TAG_PATTERN})?|paraphrase",
    oov_variant=OOV_VARIANT_TAG_PATTERN,
    weights=r"[A-Za-z0-9_.+-]+",
    grammar_table=r"grammar/bilingual|paraphrase/bias(?:0|0?\.\d+)",


def is_workflow_output(path):
    """Whether a rule of the workflow makes the file ``path`` (an output, log or benchmark)."""
    return any(rule.is_producer(path) for rule in workflow.rules)


def sweep_unreadable_tables():
    """Remove the workflow's unreadable tables under results/<experiment>/
    (circle.core.tables.remove_unreadable_tables) and force their jobs, as --forcerun would, so
    that the outputs made from them are rebuilt too: Snakemake would not rebuild a missing table
    whose dependent outputs are up to date. Whether the run is a dry run (which removes nothing,
    and shows the jobs a run would force) is known, and the run's DAG settings are set, only
    after the Snakefile is read, so the sweep runs when Snakemake prepares the DAG; only a run
    that executes jobs removes files (not --touch, --summary, --unlock, ...)."""
    prepare_dag = workflow._prepare_dag

    def prepare_after_sweep(*args, **kwargs):
        executes = workflow.executor_plugin is not None and not (workflow.dryrun or
                                                                 workflow.touch)
        unreadable = remove_unreadable_tables(RESULTS.format(experiment=EXPERIMENT), is_workflow_output,
                                              dry_run=not executes)
        rebuilds = "this run rebuilds" if executes else "a run would rebuild"
        for problem in unreadable.values():
            logger.warning(f"{problem}, so that {rebuilds} it and what was made from it")
        settings = workflow.dag_settings
        settings.forcerun = {*settings.forcerun, *unreadable}
        return prepare_dag(*args, **kwargs)

    workflow._prepare_dag = prepare_after_sweep


def refuse_stale_results():
    """Refuse, before any job, results made with another configuration when Snakemake has no
    record of how they were made (circle.pipeline.stale): with .snakemake/ gone it would rerun
    nothing for the change. --forceall rebuilds them. Checked when the DAG is prepared, once
    the run's records are open, and only by runs and dry runs (not --unlock, --touch, ...)."""
    prepare_dag = workflow._prepare_dag

    def prepare_and_check(*args, **kwargs):
        prepared = prepare_dag(*args, **kwargs)
        checks = workflow.executor_plugin is not None and not (workflow.touch or
                                                               workflow.dag_settings.forceall)
        if checks and workflow.persistence.metadata(IOFile(EFFECTIVE_CONFIG)) is None:
            if problem := stale_results_problem(EFFECTIVE_CONFIG, config):
                raise WorkflowError(problem)
        return prepared

    workflow._prepare_dag = prepare_and_check


def shared_mt_sources(wildcards):
    """The shared MT system's files (rule share_mt_system) once every one exists; none before,
    so that the job is still this experiment's only producer of them (Snakemake would turn to
    the rules that build them if its input were missing) and refuses, naming what is missing,
    when it runs (circle.pipeline.shared_system.share_mt_system)."""
    sources = [f"{RESULTS.format(experiment=PLAN.mt_system)}/{path}"
               for path in PLAN.shared_mt_files]
    return sources if all(os.path.exists(source) for source in sources) else []


def memory_mb(wildcards, input, threads, rulename):
    """The job's memory request from its rule's model (circle.pipeline.resources.MEMORY), at the
    job's final thread count and, where the model asks, the training pairs (for the split of the
    training bitext: rows of the bitext or, before that exists, of the alignment, one row per
    pair), the rules of the paraphrase grammar the job loads (the largest of its input
    ``rules_input``) and the size of its inputs. Until those tables exist the request is to be
    determined, like Snakemake's own input-size defaults: it is evaluated again when the job is
    ready."""
    model = MEMORY[rulename]
    pairs = rules = size = 0
    if model.per_pair_mb:
        tables = [table for table in (input.bitext, input.alignment) if os.path.exists(table)]
        if not tables:
            return TBDString()
        pairs = parquet_rows(tables[0])
    if model.per_rule_mb:
        grammars = input.get(model.rules_input, [])
        grammars = [grammars] if isinstance(grammars, str) else list(grammars)
        if not all(os.path.exists(grammar) for grammar in grammars):
            return TBDString()
        rules = max((parquet_rows(grammar) for grammar in grammars), default=0)
    if model.per_input_mb:
        size = input_mb(list(input))
        if size is None:
            return TBDString()
    return model.request_mb(threads, pairs, rules, size)


def runtime_minutes(wildcards, input, threads, rulename):
    """The job's time limit in minutes (Snakemake's ``runtime``, the Slurm executor's --time)
    from its rule's model (circle.pipeline.resources.RUNTIME), at the summed size of its inputs and
    its final thread count. Until every input exists the limit is to be determined, like the
    memory of the jobs that load a paraphrase grammar: it is evaluated again when the job is
    ready."""
    size = input_mb(list(input))
    if size is None:
        return TBDString()
    return runtime_model(rulename).request_min(threads, size)


def corpus_params():
    return PLAN.corpus_params()


def ancient_corpus_files(wildcards):
    """Every corpus file, its modification time ignored: the corpus jobs rerun on their
    split_digest param."""
    return [ancient(path) for path in PLAN.corpus_files()]


@functools.cache
def corpus_digest(split):
    return prepare.split_digest(PLAN.corpus_params(), split)


def split_digest(wildcards):
    """The digest of what the job's split is made from (circle.corpus.prepare.split_digest),
    computed once per split."""
    return corpus_digest(wildcards.get("split", UNUSED_TRAINING))


def alignment_path(system):
    return PLAN.alignment_path(system)


def alignment_source(wildcards):
    """The alignment of the job's system (Plan.alignment_path)."""
    return PLAN.alignment_path(wildcards.experiment)


def pivot_language_inputs(wildcards):
    return PLAN.pivot_language_inputs(wildcards.experiment)


def pivot_grammars(wildcards):
    return PLAN.pivot_grammars()


def paraphraser_lm_bitexts(wildcards):
    return PLAN.paraphraser_lm_texts()


def paraphraser_lm(experiment, order):
    return PLAN.paraphraser_lm(experiment, order)


def paraphraser_decoding_lm(wildcards):
    """The LM the paraphraser decodes with (order lm.decoding_order)."""
    return PLAN.paraphraser_lm(wildcards.experiment, config["lm"]["decoding_order"])


def reference_count(evalset):
    return PLAN.reference_count(evalset)


def lm_orders():
    return sorted({config["lm"]["decoding_order"], config["lm"]["reranking_order"]})


def decoding_lm(wildcards):
    """The KenLM binary the decoder uses (order lm.decoding_order)."""
    return PLAN.decoding_lm(wildcards.experiment)


def nbest_reranking_lm(wildcards):
    """With lm.rerank_nbest, {rerank_lm: the MT system's reranking LM}, else nothing
    (Plan.nbest_reranking_inputs)."""
    return PLAN.nbest_reranking_inputs(wildcards.experiment)


def paraphraser_nbest_reranking_lm(wildcards):
    """With lm.rerank_nbest, {rerank_lm: the paraphraser's reranking LM}, else nothing."""
    return PLAN.nbest_reranking_inputs(wildcards.experiment, paraphraser=True)


def pivot_options():
    return PLAN.pivot_options()


def unbiased_paraphrase_grammar(wildcards):
    return PLAN.unbiased_paraphrase_grammar()


def labelled_pivot_options():
    return PLAN.labelled_pivot_options()


def paraphrase_grammars():
    return PLAN.paraphrase_grammars()


def decoder_settings():
    return PLAN.decoder_settings()


def grid_decoder_settings():
    """The decoder settings, with grid_search.nbest as the paraphrase n-best size."""
    return {**PLAN.decoder_settings(), "k": config["grid_search"]["nbest"]}


def oov_paraphrase_settings(wildcards):
    return PLAN.oov_paraphrase_settings(tagged_oov_variant(wildcards.oov_variant))


def oov_feature_split(wildcards):
    return PLAN.oov_feature_split(tagged_oov_variant(wildcards.oov_variant))


def oov_monolingual(wildcards):
    return PLAN.oov_monolingual(wildcards.experiment)


def masking_params(wildcards):
    """The masking experiment's settings, checked when the job is planned (MaskingSettings: the
    band, the fractions' order); its module is imported here, so that building the workflow
    does not load the OOV paraphrase search for the other jobs."""
    from circle.experiments.oov_masking import MaskingSettings

    return MaskingSettings.from_config(config["oov_paraphrase"]["masking"]).to_params()


def translation_grammar(wildcards):
    """The grammar the MT system decodes the job's evaluation set with at the job's weights
    (Plan.translation_grammar: filtered, or augmented for a kH_oov run or with
    oov_paraphrase.translate)."""
    return PLAN.translation_grammar(wildcards.experiment, wildcards.evalset, wildcards.weights)


def oov_report_inputs(wildcards):
    return PLAN.oov_report_inputs(wildcards.experiment)


def untuned_weights(wildcards):
    return PLAN.untuned_weights(wildcards.model)


def grid_sample_grammar(wildcards):
    """The grammar the grid search's sample is translated with (at 1H's weights)."""
    return PLAN.translation_grammar(wildcards.experiment, "tune")


def run_test_grammar(wildcards):
    """The grammar the test set is decoded with at the weights of the job's tuning run."""
    return PLAN.translation_grammar(wildcards.experiment, "test", run_name(wildcards))


def tuning_seed(run):
    return PLAN.tuning_seed(run)


def paraphraser_tuning_settings():
    return PLAN.paraphraser_tuning_settings()


def max_paraphrases(targeted=False):
    return PLAN.max_paraphrases(targeted)


def tuning_runs():
    """Every tuning run of the config (Plan.tuning_runs), as TuningRun: the rules name its
    files with run.name and give the runs themselves to their scripts as params."""
    return PLAN.tuning_runs()


def figures():
    return PLAN.figures


def figure(key):
    return PLAN.figure(key)


def evaluated_runs(wildcards):
    """The runs an evaluation covers (Plan.evaluated_runs), as TuningRun."""
    return PLAN.evaluated_runs(wildcards.experiment, wildcards.run_set)


def paper_figure_inputs(wildcards):
    return PLAN.paper_figure_inputs(wildcards.experiment, wildcards.figure)


def run_name(wildcards):
    """The name of the tuning run a job's wildcards name."""
    return PLAN.resolve(wildcards.condition, wildcards.replicate).name


def tuning_inputs(wildcards):
    return PLAN.tuning_inputs(wildcards.experiment, wildcards.condition, wildcards.replicate)


def fanned_out_tuning_inputs(wildcards):
    """tuning_inputs, and with tuning.fan_out the run's iteration files up to the one that ended
    it: each iteration job is a Snakemake checkpoint, so the DAG grows an iteration at a time.
    A run in one job reads instead the decode stage's tune-set n-best lists at its start weights
    (shared by every run that starts there) for its first iteration, as its first iteration's
    shards do when fanned out (shard_inputs)."""
    inputs = tuning_inputs(wildcards)
    if not config["tuning"]["fan_out"]:
        inputs["start_decode"] = PLAN.start_decode(wildcards.experiment, wildcards.condition,
                                                   wildcards.replicate)
    else:
        inputs["iterations"] = []
        for iteration in itertools.count(1):
            path = checkpoints.tune_iteration.get(
                **wildcards, iteration=f"{iteration:04d}").output.iteration
            inputs["iterations"].append(path)
            if ended(path):
                break
    return inputs


def shard_inputs(wildcards):
    """tuning_inputs, and for iteration 1 the decode stage's tune-set n-best lists at the run's
    start weights, which stand in for decoding them (as in a run in one job)."""
    inputs = tuning_inputs(wildcards)
    if int(wildcards.iteration) == 1:
        inputs["start_decode"] = PLAN.start_decode(wildcards.experiment, wildcards.condition,
                                                   wildcards.replicate)
    return inputs


def previous_iterations(wildcards):
    """The iteration files before iteration {iteration} of a fanned-out tuning run."""
    return [TUNING_ITERATION.format(**{**wildcards, "iteration": f"{i:04d}"})
            for i in range(1, int(wildcards.iteration))]


def focus_inputs(wildcards):
    return PLAN.focus_inputs(wildcards.experiment)


def targeted_paraphraser_inputs(wildcards):
    return PLAN.targeted_paraphraser_inputs(wildcards.experiment, PLAN.targeted_point)


def paraphraser_weights(wildcards):
    return PLAN.paraphraser_weights(wildcards.experiment)


def grid_rows(kind):
    """An input function: the ``kind`` table ('distances' or 'nbest') of every bias's grid
    row."""
    return lambda wildcards: [
        GRID_ROW.format(experiment=wildcards.experiment, bias=bias_name(b), kind=kind)
        for b in config["paraphrase"]["biases"]
    ]


def reference_quality_inputs(wildcards):
    return PLAN.reference_quality_inputs(wildcards.experiment)


def tuning_run_params():
    """The params every job of an MT tuning run shares (tune_translation, and tune_shard and
    tune_iteration when the run fans out): Plan.tuning_job_params."""

    def param(key):
        return lambda wildcards: PLAN.tuning_job_params(
            wildcards.experiment, wildcards.condition, wildcards.replicate)[key]

    return {key: param(key) for key in ("settings", "tuning", "seed", "targeted", "iterations")}


def curve_runs():
    """The runs of Fig. 5.4 (Plan.curve_runs), as TuningRun ('1H+1T_b0_w-0.5.rep0')."""
    return PLAN.curve_runs()


def targeted_conditions():
    """The names of the config's 1H+kT conditions."""
    return [c.name for c in PLAN.conditions if c.targeted]


def targeted_settings(wildcards):
    return PLAN.targeted_settings(wildcards.experiment, PLAN.targeted_point)


def extra_reference_inputs(wildcards):
    return PLAN.extra_reference_inputs(wildcards.experiment, wildcards.extra)


def dose_response_inputs(wildcards):
    return PLAN.dose_response_inputs(wildcards.experiment)


def default_target_summary_inputs(wildcards):
    """The report pages the default target makes (its named targets' pages), the pages their
    rules write beside them and their plots."""
    from circle.figures.summary import summary_inputs  # here: only report_summary's job needs it

    report_dir = os.path.dirname(report_file("", wildcards.experiment))
    stems = [os.path.basename(path)[: -len(".md")] for path in rules.all.input
             if isinstance(path, str) and os.path.dirname(path) == report_dir
             and path.endswith(".md")]
    return summary_inputs(report_dir, stems)

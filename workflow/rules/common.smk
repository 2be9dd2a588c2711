# Validation, helpers and wildcard constraints shared by every rule file (no rules here).
import functools
import itertools
import os
import re

from snakemake.common.tbdstring import TBDString
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from circle.core.tables import config_hash, parquet_rows
from circle.corpus.pivots import (
    paraphraser_lm_bitexts as paraphraser_lm_pivots,
    pivot_bitexts,
    pivot_languages,
    training_bitext,
)
from circle.corpus.prepare import EVAL_SETS, PER_DOCUMENT, reference_names
from circle.decoder.model import SEARCH_SETTINGS
from circle.experiments.conditions import (
    CONDITION_PATTERN,
    EXTRA_PATTERN,
    REFERENCE_TAG_PATTERN,
    Condition,
    TuningRun,
    run_seed,
    tagged_reference,
    tuning_params,
)
from circle.experiments.dose_response import dose_conditions, dose_controls, dose_extras, dose_runs
from circle.experiments.lattice_tuning import lattice_conditions, lattice_counts, lattice_runs
from circle.experiments.paper_runs import figure_runs, focus_runs, paper_figures
from circle.figures.summary import summary_inputs
from circle.paraphrase.config import ParaphraserConfig, bias_name
from circle.pipeline.config import (
    ConfigError,
    config_problems,
    duplicate_key_problems,
    frozen_alignment_problems,
    own_data_warnings,
    schema_problem,
    thesis_numbers,
)
from circle.pipeline.resources import MEMORY, input_mb, runtime_model
from circle.pipeline.runs import (
    DECODE_NBEST,
    LATTICE_REFERENCES,
    TUNING_ITERATIONS,
    WEIGHTS,
    resolve_run,
    untargeted_paraphrases,
)
from circle.tune.checkpoint import ended


if problems := duplicate_key_problems(workflow.configfiles):
    raise ConfigError(problems)
try:
    validate(config, schema="../schemas/config.schema.yaml")
except WorkflowError as error:
    raise ConfigError([schema_problem(error)]) from None
if problems := config_problems(config):
    raise ConfigError(problems)
if not (workflow.remote_exec or workflow.subprocess_exec):  # once, not in each job
    for warning in own_data_warnings(config):
        logger.warning(f"Own data ({config['experiment']}): {warning}.")
CONDITIONS = [Condition.parse(name) for name in config["tuning"]["conditions"]]
"""The config's tuning conditions (tuning.conditions), parsed once."""
THESIS_NUMBERS = thesis_numbers(config)
"""Whether the report tables and plots show the thesis's numbers (report.thesis_numbers)."""

EXPERIMENT = config["experiment"]
HELDOUT_SYSTEM = f"{EXPERIMENT}/heldout"
"""The experiment's held-out system (circle.experiments.heldout, Fig. 4.11/4.12): built by the same
rules under results/<experiment>/heldout/ from the tables the hold_out_blocks job writes."""
EFFECTIVE_CONFIG = f"results/{EXPERIMENT}/config.yaml"
"""The experiment's effective configuration (written by effective_config): an input of every
named target that ends in results/, so that no result is without the record of what ran."""
MAIN_SYSTEM = re.escape(EXPERIMENT)
"""Wildcard constraint of the rules that only the experiment's own system has (its corpus,
tokenisation, alignment and set selection are the held-out system's hold_out_blocks job)."""
SPLITS = ("train", *EVAL_SETS)
PIVOT_LANGUAGES = pivot_languages(pivot_bitexts(config))
"""The paraphrase grammar's pivot bitexts by foreign language (paraphrase.pivots,
circle.corpus.pivots); empty: the paraphrase grammar pivots from the MT grammar alone."""
TRAINING_BITEXT = training_bitext(config)
PARAPHRASER_LM_PIVOTS = paraphraser_lm_pivots(config)
"""The pivot bitexts whose English is the text of the paraphraser's own LMs
(paraphrase.language_models: pivots); empty: the paraphraser shares the MT system's LMs."""


def pivot_pair_system(bitext):
    """Where a pivot bitext's tokenised table and eflomal alignment are made, as a system of
    its own (tokenized/train.parquet, align/eflomal.parquet)."""
    return f"{EXPERIMENT}/pivots/{bitext.name}"


def pivot_language_system(language):
    """Where a pivot language's grammar is extracted from its bitexts' concatenation, as a
    system of its own (tokenized/train.parquet, align/links.parquet, grammar/...)."""
    return f"{EXPERIMENT}/pivot/{language}"


PIVOT_PAIRS = {pivot_pair_system(bitext): bitext
               for bitexts in PIVOT_LANGUAGES.values() for bitext in bitexts
               if bitext != TRAINING_BITEXT}
"""The pivot bitexts other than the training bitext, by the system that tokenises and aligns
them."""
PIVOT_PAIR_SYSTEMS = list(PIVOT_PAIRS)
PIVOT_LANGUAGE_SYSTEMS = [pivot_language_system(language)
                          for language, bitexts in PIVOT_LANGUAGES.items()
                          if bitexts != [TRAINING_BITEXT]]


def one_of(systems):
    """A wildcard constraint matching exactly ``systems`` (none: nothing)."""
    return "|".join(re.escape(system) for system in systems) or "(?!)"


ALIGNED_SYSTEM = one_of([EXPERIMENT, *PIVOT_PAIR_SYSTEMS])
"""Wildcard constraint of the eflomal alignment: the experiment's bitext and the pivot
bitexts other than it."""


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
    run_set=r"(?:paper/|dose/|lattice/)?",
    extra=EXTRA_PATTERN,
    model="translation|paraphrase",
    weights=r"[A-Za-z0-9_.+-]+",
    grammar_table=r"grammar/bilingual|paraphrase/bias(?:0|0?\.\d+)",


def force_rebuild(paths):
    """Force the jobs of the files ``paths`` in this run, as --forcerun would, so that the
    outputs made from them are rebuilt too. Snakemake sets the run's DAG settings only after the
    Snakefile is read, so they are amended when it prepares the DAG."""
    if not paths:
        return
    prepare_dag = workflow._prepare_dag

    def prepare_with_forced(*args, **kwargs):
        settings = workflow.dag_settings
        settings.forcerun = {*settings.forcerun, *paths}
        return prepare_dag(*args, **kwargs)

    workflow._prepare_dag = prepare_with_forced


def memory_mb(wildcards, input, threads, rulename):
    """The job's memory request from its rule's model (circle.pipeline.resources.MEMORY), at the
    job's final thread count and, where the model asks, the training pairs (for the split of the
    training bitext: rows of the bitext or, before that exists, of the alignment, one row per
    pair) and the rules of the paraphrase grammar the job loads (the largest of its input
    ``rules_input``). Until those tables exist the request is to be determined, like Snakemake's
    own input-size defaults: it is evaluated again when the job is ready."""
    model = MEMORY[rulename]
    pairs = rules = 0
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
    return model.request_mb(threads, pairs, rules)


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
    """The corpus section as prepare_corpus's params, without corpus.single_reference when it
    is the default rule: the default experiment's job keeps the params it always had, so that
    Snakemake does not rebuild its results for a key that changes nothing."""
    corpus = dict(config["corpus"])
    if corpus.get("single_reference") == PER_DOCUMENT:
        del corpus["single_reference"]
    return corpus


def corpus_files(wildcards):
    """Every file the corpus is read from, so that Snakemake notices when one changes."""
    corpus = config["corpus"]
    if corpus["kind"] == "bible":
        return [corpus["bible"]["table"]]
    files = corpus["files"]
    paths = [files["train"]["source"], files["train"]["target"]]
    for name in EVAL_SETS:
        spec = files[name]
        paths += [spec["source"], *spec["references"]]
        paths += [spec["documents"]] if spec.get("documents") else []
    return paths


def alignment_path(experiment):
    """The alignment of a system's training bitext: the held-out system's links (its share of
    the experiment's), else the frozen alignment table if the config names one (checked
    against the config's alignment settings), else eflomal's fresh output."""
    if experiment == HELDOUT_SYSTEM or experiment in PIVOT_LANGUAGE_SYSTEMS:
        return f"results/{experiment}/align/links.parquet"
    if experiment in PIVOT_PAIR_SYSTEMS:
        return f"results/{experiment}/align/eflomal.parquet"
    frozen = config["alignment"]["frozen"]
    if not frozen:
        return f"results/{EXPERIMENT}/align/eflomal.parquet"
    if problems := frozen_alignment_problems(config):
        raise ConfigError(problems)
    return frozen


def pivot_bitext_files(bitext):
    """The tokenised table and alignment of a pivot bitext: the experiment's own for its
    training bitext, else those of its pivot_pair_system."""
    system = EXPERIMENT if bitext == TRAINING_BITEXT else pivot_pair_system(bitext)
    return f"results/{system}/tokenized/train.parquet", alignment_path(system)


def pivot_language_inputs(wildcards):
    """The tokenised tables and alignments of a pivot language's bitexts, in config order."""
    language = wildcards.experiment.removeprefix(f"{EXPERIMENT}/pivot/")
    files = [pivot_bitext_files(bitext) for bitext in PIVOT_LANGUAGES[language]]
    return {"bitexts": [bitext for bitext, _ in files],
            "alignments": [alignment for _, alignment in files]}


def pivot_grammars(wildcards):
    """The bilingual grammars the paraphrase grammar is pivoted from, one per pivot language
    (circle.grammar.pivot): the MT grammar alone by default and for a language whose only
    bitext is the training bitext, else the language's own."""
    mt_grammar = f"results/{EXPERIMENT}/grammar/bilingual.parquet"
    return [mt_grammar if bitexts == [TRAINING_BITEXT]
            else f"results/{pivot_language_system(language)}/grammar/bilingual.parquet"
            for language, bitexts in PIVOT_LANGUAGES.items()] or [mt_grammar]


def paraphraser_lm_bitexts(wildcards):
    """The tokenised tables of PARAPHRASER_LM_PIVOTS: the paraphraser's own LM text."""
    return [pivot_bitext_files(bitext)[0] for bitext in PARAPHRASER_LM_PIVOTS]


def paraphraser_lm(experiment, order):
    """The paraphraser's LM of an order: its own (paraphrase.language_models: pivots; the
    experiment's system only, the held-out system keeps sharing its LMs) or the MT system's."""
    if PARAPHRASER_LM_PIVOTS and experiment == EXPERIMENT:
        return f"results/{experiment}/paraphrase/lm/{order}gram.binary"
    return f"results/{experiment}/lm/{order}gram.binary"


def paraphraser_decoding_lm(wildcards):
    """The LM the paraphraser decodes with (order lm.decoding_order): input of every rule that
    paraphrases."""
    return paraphraser_lm(wildcards.experiment, config["lm"]["decoding_order"])


def paraphraser_reranking_lm(wildcards):
    """The LM that reranks the targeted paraphraser's n-best lists (lm.reranking_order)."""
    return paraphraser_lm(wildcards.experiment, config["lm"]["reranking_order"])


def alignment_source(wildcards):
    """:func:`alignment_path` of the job's system."""
    return alignment_path(wildcards.experiment)


def reference_count(evalset):
    """How many references each segment of an evaluation set has, from the config."""
    return len(reference_names(config["corpus"])[evalset])


def lm_orders():
    return sorted({config["lm"]["decoding_order"], config["lm"]["reranking_order"]})


def decoding_lm(wildcards):
    """The KenLM binary the decoder uses (order lm.decoding_order): input of every decoding rule."""
    return f"results/{wildcards.experiment}/lm/{config['lm']['decoding_order']}gram.binary"


def pivot_options():
    """The config's paraphrase section as the pivoting jobs see it: without identity_feature,
    which only biasing reads, so that turning φ_ident on or off does not pivot again."""
    return {
        key: value for key, value in config["paraphrase"].items() if key != "identity_feature"
    }


def paraphrase_grammars():
    """The biased paraphrase grammar of every bias value in the config."""
    return [
        f"results/{EXPERIMENT}/paraphrase/bias{bias_name(b)}.parquet"
        for b in config["paraphrase"]["biases"]
    ]


def decoder_settings():
    """The search settings of the config, as keyword arguments of DecoderSettings."""
    return {key: config["decoder"][key] for key in SEARCH_SETTINGS}


def oov_paraphrase_settings():
    """The distributional paraphrase search's settings (circle.distributional), with the
    config seed that draws its samples."""
    return {**config["oov_paraphrase"], "seed": config["seed"]}


def tuning_seed(run):
    """The tuning seed of one run ('1H.rep0', 'paraphraser-bias0'), derived from the config seed."""
    return run_seed(config["seed"], run)


def paraphraser_tuning_settings():
    """The paraphraser's tuning job's params from the config's tuning section
    (circle.experiments.conditions.tuning_params)."""
    return tuning_params(config["tuning"])


def max_paraphrases(targeted=False):
    """The largest k of the config's 1H+kP conditions, or with ``targeted`` of its 1H+kT
    conditions (0 if none)."""
    return max((c.paraphrases for c in CONDITIONS if c.targeted == targeted), default=0)


def tuning_runs():
    """The name of every tuning run (condition x replicate) of the config, '1H+2P.rep0'."""
    return [
        TuningRun(condition, replicate).name
        for condition in CONDITIONS
        for replicate in range(config["tuning"]["replicates"])
    ]


def figures():
    """The thesis figures with tuning runs of their own (circle.experiments.paper_runs), for this
    config."""
    return paper_figures(
        config["tuning"]["conditions"], reference_count("tune"), config["tuning"]["metric"],
        config["figures"]["metric"], config["figures"]["untargeted_biases"],
        config["figures"]["heldout_blocks"])


def figure(key):
    """The paper figure ``key`` names ('fig4_10')."""
    return next(f for f in figures() if f.key == key)


def dose_response_runs():
    """The run names of the dose-response (circle.experiments.dose_response): 1H, the controls 2H
    and 1H+1P where the experiment has them, and every 1H+1X_<extra>, each replicate."""
    conditions = dose_conditions(dose_extras(config), dose_controls(config))
    return [run.name for run in dose_runs(conditions, config["tuning"]["replicates"])]


LATTICE_CONDITIONS = lattice_conditions(config)
"""The kH+mL conditions of lattice.tuning_conditions (circle.experiments.lattice_tuning)."""

LATTICE_COUNTS = lattice_counts(LATTICE_CONDITIONS)
"""Per k, the most lattice sentences a kH+mL condition of lattice.tuning_conditions takes: the
rows per segment of its lattice table."""


def lattice_tuning_runs():
    """The run names of the lattice page: 1H .. nH for the tune set's n references and every
    kH+mL of lattice.tuning_conditions, each replicate."""
    return [run.name for run in lattice_runs(LATTICE_CONDITIONS, reference_count("tune"),
                                             config["tuning"]["replicates"])]


def evaluated_runs(wildcards):
    """The run names an evaluation covers: the config's runs ('' run set), every paper
    figure's ('paper/'), the dose-response's ('dose/') or the lattice page's ('lattice/'); the
    held-out system's are its figure's (Fig. 4.11/4.12)."""
    heldout = wildcards.experiment == HELDOUT_SYSTEM
    if wildcards.run_set == "dose/" and not heldout:
        return dose_response_runs()
    if wildcards.run_set == "lattice/" and not heldout:
        return lattice_tuning_runs()
    if wildcards.run_set == "" and not heldout:
        return tuning_runs()
    return [run.name for run in figure_runs(figures(), config["tuning"]["replicates"], heldout)]


def paper_figure_inputs(wildcards):
    """A circle.figures.paper figure's evaluation tables (the paper runs', or the held-out system's
    for Fig. 4.11/4.12) and the tune set that names its reference or tuning sets."""
    if figure(wildcards.figure).heldout:
        system, run_set = HELDOUT_SYSTEM, ""
    else:
        system, run_set = wildcards.experiment, "paper/"
    return {"table": f"results/{system}/evaluation/{run_set}results.parquet",
            "conditions": f"results/{system}/evaluation/{run_set}conditions.parquet",
            "tune": f"results/{system}/sets/tune.parquet"}


@functools.cache
def resolved(condition, replicate):
    """The tuning run of a condition name and replicate number under the config, resolved once
    (circle.pipeline.runs.resolve_run)."""
    return resolve_run(condition, replicate, config)


def resolved_run(wildcards):
    """The tuning run a job's wildcards name (circle.pipeline.runs.ResolvedRun)."""
    return resolved(wildcards.condition, int(wildcards.replicate))


def run_name(wildcards):
    """The name of the tuning run a job's wildcards name."""
    return resolved_run(wildcards).name


def tuning_inputs(wildcards):
    """Inputs of one MT tuning run (circle.pipeline.runs.ResolvedRun.inputs), and for 1H+kT
    the targeted paraphraser's parts, with the grid's choice unless the run has a
    configuration of its own."""
    run = resolved_run(wildcards)
    inputs = run.inputs(wildcards.experiment, decoding_lm(wildcards))
    if run.condition.targeted:
        inputs.update(targeted_paraphraser_inputs(wildcards, run.grid_choice))
    return inputs


def fanned_out_tuning_inputs(wildcards):
    """tuning_inputs, and with tuning.fan_out the run's iteration files up to the one that ended
    it: each iteration job is a Snakemake checkpoint, so the DAG grows an iteration at a time.
    A run in one job reads instead the decode stage's tune-set n-best lists at its start weights
    (shared by every run that starts there) for its first iteration."""
    inputs = tuning_inputs(wildcards)
    if not config["tuning"]["fan_out"]:
        inputs["start_decode"] = DECODE_NBEST.format(
            experiment=wildcards.experiment, weights=resolved_run(wildcards).start,
            evalset="tune")
    else:
        inputs["iterations"] = []
        for iteration in itertools.count(1):
            path = checkpoints.tune_iteration.get(
                **wildcards, iteration=f"{iteration:04d}").output.iteration
            inputs["iterations"].append(path)
            if ended(path):
                break
    return inputs


def previous_iterations(wildcards):
    """The iteration files before iteration {iteration} of a fanned-out tuning run."""
    directory = TUNING_ITERATIONS.format(**wildcards)
    return [f"{directory}/iteration-{i:04d}.parquet" for i in range(1, int(wildcards.iteration))]


def focus_inputs(wildcards):
    """Thesis Fig. 6.2's inputs: the tune-set n-best lists of the 2H, 1H+1P and 1H+1T runs'
    start and tuned weights, the untargeted paraphrases and the targeted paraphraser's parts."""
    runs = focus_runs(config["tuning"]["conditions"], config["tuning"]["replicates"])
    decode = f"results/{wildcards.experiment}/decode/{{}}/tune.nbest.parquet"
    return {
        "starts": [decode.format(run.start) for run in runs],
        "tuned": [decode.format(run.name) for run in runs],
        "paraphrases": default_untargeted_paraphrases(wildcards.experiment),
        **targeted_paraphraser_inputs(wildcards),
    }


def default_untargeted_paraphrases(experiment):
    """The untargeted k-best paraphrases of the tune set's single reference at
    tuning.paraphraser_bias, which 1H+kP conditions add."""
    return untargeted_paraphrases(experiment, config["tuning"]["paraphraser_bias"])


def targeted_paraphraser_inputs(wildcards, grid_choice=True):
    """What the targeted paraphraser of the 1H+kT runs is built from: every paraphrase grammar
    (the chosen bias is known only once the grid has run), the tuned paraphraser's weights, its
    decoding and reranking LMs and, with ``grid_choice`` unless grid_search.point overrides it,
    the grid's choice (a 1H+kT_b<bias>_w<weight> run brings its own configuration)."""
    inputs = {
        "paraphrase_grammars": paraphrase_grammars(),
        "paraphraser_weights": paraphraser_weights(wildcards),
        "paraphraser_lm": paraphraser_decoding_lm(wildcards),
        "paraphraser_reranking_lm": paraphraser_reranking_lm(wildcards),
    }
    if grid_choice and config["grid_search"]["point"] is None:
        inputs["choice"] = f"results/{wildcards.experiment}/grid/chosen.parquet"
    return inputs


def paraphraser_weights(wildcards):
    """The tuned paraphraser's weights (tuned on the untargeted paraphraser's grammar)."""
    bias = bias_name(config["tuning"]["paraphraser_bias"])
    return f"results/{wildcards.experiment}/weights/paraphraser-bias{bias}.txt"


def grid_rows(kind):
    """An input function: the ``kind`` table ('distances' or 'nbest') of every bias's grid
    row."""
    return lambda wildcards: [
        f"results/{wildcards.experiment}/grid/grid/bias{bias_name(b)}.{kind}.parquet"
        for b in config["paraphrase"]["biases"]
    ]


def grid_decoder_settings():
    """The decoder settings, with grid_search.nbest as the paraphrase n-best size."""
    return {**decoder_settings(), "k": config["grid_search"]["nbest"]}


def reference_quality_inputs(wildcards):
    """What the reference-quality table reads: the tune set, the untuned and every 1H replicate's
    tune-set n-best lists, both LMs, the untargeted paraphrases of the config's largest 1H+kP
    and, with 1H+kT conditions, the targeted paraphraser's parts and every 1H+kT run (whose
    cache holds the targeted paraphrases)."""
    results = f"results/{wildcards.experiment}"
    inputs = {
        "tune": f"{results}/sets/tune.parquet",
        "untuned": f"{results}/decode/untuned-translation/tune.nbest.parquet",
        "tuned": [DECODE_NBEST.format(experiment=wildcards.experiment,
                                      weights=TuningRun(Condition(1), r).name, evalset="tune")
                  for r in range(config["tuning"]["replicates"])],
        "lm": decoding_lm(wildcards),
        "reranking_lm": f"{results}/lm/{config['lm']['reranking_order']}gram.binary",
    }
    if max_paraphrases():
        inputs["paraphrases"] = default_untargeted_paraphrases(wildcards.experiment)
    if targeted_conditions():
        inputs.update(targeted_paraphraser_inputs(wildcards))
        inputs["targeted_runs"] = [
            WEIGHTS.format(experiment=wildcards.experiment, weights=TuningRun(c, r).name)
            for c in CONDITIONS if c.targeted for r in range(config["tuning"]["replicates"])]
    return inputs


def tuning_run_params():
    """The params every job of an MT tuning run shares (tune_translation, and tune_shard and
    tune_iteration when the run fans out): circle.pipeline.runs.ResolvedRun.job_params."""

    def param(key):
        return lambda wildcards: resolved_run(wildcards).job_params(
            wildcards.experiment, decoder_settings(), targeted_settings(wildcards))[key]

    return {key: param(key) for key in ("settings", "tuning", "seed", "targeted", "iterations")}


def curve_runs():
    """The tuning runs of Fig. 5.4 (targeted.curves): 1H+1T replicate 0 with the paraphraser at
    the curves' bias (default 0, unbiased) and each of their targeting weights,
    '1H+1T_b0_w-0.5.rep0'."""
    curves = config["targeted"]["curves"]
    return [
        TuningRun(Condition.targeted_at(1, ParaphraserConfig(float(curves["bias"]), float(w))),
                  0).name
        for w in curves["weights"]
    ]


def targeted_conditions():
    """The config's 1H+kT conditions."""
    return [c.name for c in CONDITIONS if c.targeted]


def targeted_settings(wildcards):
    """The targeted paraphraser's settings besides its inputs, as params
    (circle.paraphrase.targeted.TargetedSettings.from_config reads them)."""
    return {
        "biases": [float(b) for b in config["paraphrase"]["biases"]],
        "point": config["grid_search"]["point"],
        "nbest": config["targeted"]["nbest"],
        "search": config["targeted"]["search"],
        "forest_beam": config["targeted"]["forest_beam"],
        "rerank": config["targeted"]["rerank"],
        "depth": max_paraphrases(targeted=True),
        "cache": f"results/{wildcards.experiment}/targeted/cache",
    }


def extra_reference_inputs(wildcards):
    """What an extra reference is made from: the tune set, and for kjv the Bible verse table,
    for mt the untuned system's tune-set n-best lists."""
    inputs = {"tune": f"results/{wildcards.experiment}/sets/tune.parquet"}
    if wildcards.extra == "kjv":
        inputs["verses"] = config["corpus"]["bible"]["table"]
    elif wildcards.extra == "mt":
        inputs["untuned"] = (f"results/{wildcards.experiment}/decode/untuned-translation/"
                             "tune.nbest.parquet")
    return inputs


def dose_response_inputs(wildcards):
    """What the dose-response page reads: the tune set, every extra reference table, the
    untargeted paraphrases (for the 1H+1P control), the dose run set's evaluation and the
    decoder's LM."""
    results = f"results/{wildcards.experiment}"
    inputs = {
        "tune": f"{results}/sets/tune.parquet",
        "extra": [f"{results}/references/{extra}.parquet" for extra in dose_extras(config)],
        "table": f"{results}/evaluation/dose/results.parquet",
        "conditions": f"{results}/evaluation/dose/conditions.parquet",
        "lm": decoding_lm(wildcards),
    }
    if "1H+1P" in dose_controls(config):
        inputs["paraphrases"] = default_untargeted_paraphrases(wildcards.experiment)
    return inputs


def default_target_summary_inputs(wildcards):
    """The report pages the default target makes (its named targets' pages), the pages their
    rules write beside them and their plots."""
    report_dir = f"results/{wildcards.experiment}/report"
    stems = [os.path.basename(path)[: -len(".md")] for path in rules.all.input
             if isinstance(path, str) and os.path.dirname(path) == report_dir
             and path.endswith(".md")]
    return summary_inputs(report_dir, stems)

# circle: Madnani's "Circle of Meaning" as a Snakemake workflow.
#
# Outputs: results/<experiment>/<stage>/...; logs under logs/<experiment>/, benchmarks under
# benchmarks/<experiment>/. Stages: corpus -> tokenized -> align, lm -> grammar, paraphrase
# -> decode.
import os

from snakemake.utils import min_version

from circle.core.layout import Results
from circle.core.pages import finished_line

min_version("9.0")

# numpy's OpenBLAS picks its kernels by CPU, and its AVX-512 (SkylakeX) kernels round MERT's
# products differently from the AVX2 (Haswell) ones: on an AVX-512 machine a tuning run can take
# another path (README "Reproducibility"). Every job inherits the Haswell kernels, which every
# x86-64 machine with AVX2 runs, unless the environment names others.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")


# The default experiment applies only when no --configfile is given: a config file named on the
# command line is a whole experiment (with the schema's defaults), not an overlay of this one.
# Name config/config.yaml first to overlay it (config/README.md).
if not workflow.config_settings.configfiles:

    configfile: "config/config.yaml"



include: "workflow/rules/common.smk"
include: "workflow/rules/config.smk"
include: "workflow/rules/shared.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/lm.smk"
include: "workflow/rules/grammar.smk"
include: "workflow/rules/decode.smk"
include: "workflow/rules/tune.smk"
include: "workflow/rules/grid.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/dose.smk"
include: "workflow/rules/summary.smk"
include: "workflow/rules/lattice.smk"
include: "workflow/rules/oov.smk"
include: "workflow/rules/samt.smk"


# Once, not in each cluster job: the workflow's unreadable tables are removed and their jobs
# forced when the DAG is prepared (sweep_unreadable_tables), and results made with another
# config that Snakemake has no record of are refused (refuse_stale_results).
if not (workflow.remote_exec or workflow.subprocess_exec):
    sweep_unreadable_tables()
    refuse_stale_results()


rule all:
    default_target: True
    input:
        EFFECTIVE_CONFIG,
        rules.aligned_corpus.input,
        rules.language_models.input,
        rules.grammars.input,
        rules.untuned_translations.input,
        rules.reference_sparsity.input,
        rules.grid_search.input,
        rules.targeted_tuning.input if targeted_conditions() else [],
        rules.reference_quality.input if reference_count("tune") > 1 else [],
        report_file("index.html", EXPERIMENT),
        # What the circle command reads from the results beside the named targets' files (the
        # weights circle translate and circle paraphrase choose from, the test set): Snakemake
        # rebuilds a missing file only when it is a target or a job that reads it reruns, so
        # without these a plain rerun would leave one deleted by hand missing, and the command
        # would fall back to other weights.
        PLAN.paraphraser_weights(EXPERIMENT),
        [WEIGHTS.format(experiment=EXPERIMENT, weights=name)
         for name in ("untuned-translation", "untuned-paraphrase",
                      *(run.name for run in tuning_runs()))],
        EVALSET_TABLE.format(experiment=EXPERIMENT, evalset="test"),


onsuccess:
    if not (workflow.remote_exec or workflow.subprocess_exec):  # not in each cluster job
        from circle.pipeline.work import DecodingWork  # here: the workflow build needs it not

        results = Results.of(".", EXPERIMENT)
        print(DecodingWork.of(results.directory).line())
        print(finished_line(results.report_directory))

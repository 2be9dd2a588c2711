from circle.core.jobs import start_job
from circle.experiments.mt_tuning import ConditionTuning
from circle.tune.checkpoint import Checkpoint

provenance = start_job(snakemake)
run = ConditionTuning.from_job(snakemake)
if "iterations" in snakemake.input.keys():  # fanned out: the iteration jobs tuned it
    run.finish(snakemake.params.iterations, snakemake.input.iterations, snakemake.output.weights,
               snakemake.output.log, provenance)
else:
    run.tune(snakemake.threads, snakemake.output.weights, snakemake.output.log, provenance,
             Checkpoint.for_output(snakemake.output.log, snakemake.input,
                                   dict(snakemake.params.items())))

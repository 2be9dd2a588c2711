from circle.core.jobs import start_job
from circle.experiments.mt_tuning import ConditionTuning

provenance = start_job(snakemake)
ConditionTuning.from_job(snakemake).optimise_iteration(
    snakemake.params.iterations, snakemake.input.previous, snakemake.input.shards,
    snakemake.threads, provenance)

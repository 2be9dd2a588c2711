from circle.experiments import ConditionTuning
from circle.jobs import start_job

provenance = start_job(snakemake)
ConditionTuning.from_job(snakemake).optimise_iteration(
    snakemake.params.iterations, snakemake.input.previous, snakemake.input.shards, provenance)

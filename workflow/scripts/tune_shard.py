from circle.core.jobs import start_job
from circle.experiments.mt_tuning import ConditionTuning

provenance = start_job(snakemake)
ConditionTuning.from_job(snakemake).decode_shard(
    snakemake.params.iterations, snakemake.input.previous, int(snakemake.wildcards.shard),
    snakemake.params.shards, snakemake.threads, snakemake.output.shard, provenance)

from circle.core.jobs import start_job
from circle.pipeline.config import write_effective_config

start_job(snakemake)
write_effective_config(snakemake.config, snakemake.output.config)

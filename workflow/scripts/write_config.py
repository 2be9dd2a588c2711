from circle.config import write_effective_config
from circle.jobs import start_job

start_job(snakemake)
write_effective_config(snakemake.config, snakemake.output.config)

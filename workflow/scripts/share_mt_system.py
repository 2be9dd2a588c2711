from circle.core.jobs import start_job
from circle.pipeline.shared_system import share_mt_system

start_job(snakemake)
share_mt_system(snakemake.config, list(snakemake.output))

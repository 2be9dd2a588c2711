from circle.align import freeze_alignment
from circle.core.jobs import start_job

start_job(snakemake)
freeze_alignment(snakemake.input.alignment, snakemake.params.frozen)

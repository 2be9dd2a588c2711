from circle.align import freeze_alignment
from circle.jobs import start_job

start_job(snakemake)
freeze_alignment(snakemake.input.alignment, snakemake.params.frozen)

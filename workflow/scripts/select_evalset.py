from circle.experiments import select_segments
from circle.jobs import start_job

provenance = start_job(snakemake)
select_segments(snakemake.input.table, snakemake.params.max_segments, snakemake.output.table,
                provenance)

from circle.core.jobs import start_job
from circle.experiments.sets import select_segments

provenance = start_job(snakemake)
select_segments(snakemake.input.table, snakemake.params.max_segments, snakemake.output.table,
                provenance)

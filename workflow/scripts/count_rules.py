from circle.core.jobs import start_job
from circle.grammar.extract import count_part, extraction_limits

provenance = start_job(snakemake)
count_part(snakemake.input.part, snakemake.input.lexical, snakemake.output.counts,
           extraction_limits(snakemake.params.options), provenance)

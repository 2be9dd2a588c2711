from circle.grammar.extract import count_part, extraction_limits
from circle.jobs import start_job

provenance = start_job(snakemake)
count_part(snakemake.input.part, snakemake.input.lexical, snakemake.output.counts,
           extraction_limits(snakemake.params.options), provenance)

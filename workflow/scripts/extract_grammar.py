from circle.core.jobs import start_job
from circle.grammar.extract import merge_counts
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
merge_counts(snakemake.input.counts, snakemake.output.grammar, snakemake.threads, provenance,
             duckdb_limit(snakemake.resources.mem_mb))

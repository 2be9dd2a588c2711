from circle.core.jobs import start_job
from circle.grammar.pivot import PivotOptions, PivotWork, pivot_part
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
pivot_part(PivotWork(snakemake.input.rules, snakemake.input.sources, snakemake.input.lookup),
           int(snakemake.wildcards.job), snakemake.output.part, snakemake.input.self_paraphrase,
           PivotOptions.from_config(snakemake.params.options, snakemake.params.span_limit),
           threads=snakemake.threads, memory_limit=duckdb_limit(snakemake.resources.mem_mb),
           provenance=provenance)

from circle.core.jobs import start_job
from circle.grammar.bias import bias_grammar
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
bias_grammar(snakemake.input.parts, snakemake.input.self_paraphrase, snakemake.output.grammar,
             float(snakemake.wildcards.bias), threads=snakemake.threads,
             memory_limit=duckdb_limit(snakemake.resources.mem_mb), provenance=provenance,
             identity_feature=snakemake.params.identity_feature)

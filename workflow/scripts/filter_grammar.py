from circle.core.jobs import start_job
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.grammar.filter import filter_grammar
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
inputs = read_table(snakemake.input.evalset, EVALSET, columns=["source"])["source"]
filter_grammar(snakemake.input.grammar, inputs, snakemake.output.grammar,
               span_limit=snakemake.params.span_limit, threads=snakemake.threads,
               memory_limit=duckdb_limit(snakemake.resources.mem_mb), provenance=provenance)

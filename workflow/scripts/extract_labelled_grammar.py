from circle.core.jobs import start_job
from circle.grammar.extract import extract_grammar, extraction_limits
from circle.grammar.parse import read_bracketings
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
options = snakemake.params.options
extract_grammar(snakemake.input.bitext, snakemake.input.alignment, snakemake.output.grammar,
                extraction_limits(options), workers=snakemake.threads, provenance=provenance,
                batch_size=options["batch_size"],
                memory_limit=duckdb_limit(snakemake.resources.mem_mb),
                parses=read_bracketings(snakemake.input.parses))

from circle.core.jobs import start_job
from circle.grammar.parse import parse_evalset

provenance = start_job(snakemake)
parse_evalset(snakemake.input.table, snakemake.output.parses, provenance)

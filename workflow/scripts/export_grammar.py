from circle.grammar.thrax import export_thrax
from circle.jobs import start_job

start_job(snakemake)
export_thrax(snakemake.input.grammar, snakemake.output.text)

from circle.core.jobs import start_job
from circle.grammar.thrax import export_thrax

start_job(snakemake)
export_thrax(snakemake.input.grammar, snakemake.output.text)

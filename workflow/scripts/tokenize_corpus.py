from circle.jobs import start_job
from circle.preprocess import tokenize_table

provenance = start_job(snakemake)
tokenize_table(snakemake.input.table, snakemake.output.table, provenance=provenance,
               **snakemake.params.options)

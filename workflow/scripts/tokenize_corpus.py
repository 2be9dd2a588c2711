from circle.core.jobs import start_job
from circle.corpus.preprocess import tokenize_table

provenance = start_job(snakemake)
tokenize_table(snakemake.input.table, snakemake.output.table, provenance=provenance,
               **snakemake.params.options)

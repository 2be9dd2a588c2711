from circle.core.jobs import start_job
from circle.experiments.sets import write_reference_texts

start_job(snakemake)
write_reference_texts(snakemake.input.table, snakemake.output.tokenized,
                      snakemake.output.detokenized, snakemake.params.lang)

from circle.experiments import write_reference_texts
from circle.jobs import start_job

start_job(snakemake)
write_reference_texts(snakemake.input.table, snakemake.output.tokenized,
                      snakemake.output.detokenized, snakemake.params.lang)

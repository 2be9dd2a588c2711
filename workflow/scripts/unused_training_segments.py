from circle.core.jobs import start_job
from circle.corpus.prepare import write_unused_training

provenance = start_job(snakemake)
write_unused_training(snakemake.params.corpus, snakemake.params.max_line_chars,
                      snakemake.params.seed, snakemake.output.table, provenance)

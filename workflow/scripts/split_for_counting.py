from circle.core.jobs import start_job
from circle.grammar.extract import split_for_counting

provenance = start_job(snakemake)
split_for_counting(snakemake.input.bitext, snakemake.input.alignment, snakemake.output.lexical,
                   snakemake.output.parts, snakemake.params.batch_size, provenance)

from circle.core.jobs import start_job
from circle.corpus.pivots import join_language

provenance = start_job(snakemake)
join_language(list(zip(snakemake.input.bitexts, snakemake.input.alignments, strict=True)),
              snakemake.output.bitext, snakemake.output.alignment, provenance=provenance)

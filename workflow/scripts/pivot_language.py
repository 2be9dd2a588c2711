from circle.align import join_pivot_language
from circle.core.jobs import start_job

provenance = start_job(snakemake)
join_pivot_language(list(zip(snakemake.input.bitexts, snakemake.input.alignments, strict=True)),
                    snakemake.output.bitext, snakemake.output.alignment, provenance=provenance)

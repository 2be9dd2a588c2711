from circle.corpus.pivots import PivotBitext, write_pivot_bitext
from circle.jobs import start_job

provenance = start_job(snakemake)
write_pivot_bitext(snakemake.input.table,
                   PivotBitext(snakemake.params.source, snakemake.params.target),
                   snakemake.output.bitext, provenance=provenance, **snakemake.params.options)

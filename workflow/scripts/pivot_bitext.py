from circle.core.jobs import start_job
from circle.corpus.pivots import PivotBitext, write_pivot_bitext

provenance = start_job(snakemake)
write_pivot_bitext(snakemake.input.table,
                   PivotBitext(snakemake.params.source, snakemake.params.target),
                   snakemake.output.bitext, provenance=provenance,
                   foreign_path=snakemake.input.foreign, **snakemake.params.options)

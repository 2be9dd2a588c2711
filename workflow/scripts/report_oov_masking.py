from circle.core.jobs import start_job
from circle.figures.oov_masking import write_oov_masking_report

start_job(snakemake)
write_oov_masking_report(snakemake.input.table, snakemake.output.markdown,
                         snakemake.output.html, snakemake.output.csv)

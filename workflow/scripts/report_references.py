from circle.jobs import start_job
from circle.report import write_report

start_job(snakemake)
write_report(snakemake.input.table, snakemake.output.markdown, snakemake.output.csv,
             snakemake.output.plot, experiment=snakemake.wildcards.experiment)

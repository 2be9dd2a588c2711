from circle.core.jobs import start_job
from circle.figures.single_reference import single_reference_report

start_job(snakemake)
single_reference_report(snakemake.input.tune, snakemake.params.rule, snakemake.output.markdown,
                        snakemake.output.html, snakemake.output.csv)

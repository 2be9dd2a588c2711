from circle.core.jobs import start_job
from circle.figures.paper import write_figure

start_job(snakemake)
write_figure(snakemake.params.figure, snakemake.input.table, snakemake.input.conditions,
             snakemake.input.tune, snakemake.output.markdown, snakemake.output.html,
             snakemake.output.csv, snakemake.output.plot,
             thesis_numbers=snakemake.params.thesis_numbers)

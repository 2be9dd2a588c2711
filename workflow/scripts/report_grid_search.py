from circle.core.jobs import start_job
from circle.figures.grid_figures import write_grid_report

start_job(snakemake)
write_grid_report(snakemake.input.points, snakemake.input.sweep, snakemake.input.weights,
                  snakemake.input.choice, snakemake.input.nbest, snakemake.output.markdown,
                  snakemake.output.html, snakemake.output.sweep_csv, snakemake.output.grid_csv,
                  snakemake.output.sweep_plot, snakemake.output.grid_plot)

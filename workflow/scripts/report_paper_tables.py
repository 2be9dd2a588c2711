from circle.core.jobs import start_job
from circle.figures.paper import write_paper_tables

start_job(snakemake)
write_paper_tables(snakemake.wildcards.experiment, snakemake.params.figures,
                   snakemake.input.figures, snakemake.input.fig4_3, snakemake.input.grid,
                   snakemake.input.chosen, snakemake.input.fig5_4,
                   snakemake.input.fig5_10[0] if snakemake.input.fig5_10 else None,
                   snakemake.input.fig6_2[0] if snakemake.input.fig6_2 else None,
                   snakemake.output.markdown, snakemake.output.html)

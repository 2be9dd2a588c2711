from circle.core.jobs import start_job
from circle.figures.lattice_tuning import write_lattice_tuning_report

start_job(snakemake)
write_lattice_tuning_report(snakemake.input.table, snakemake.input.conditions,
                            snakemake.input.lattices, snakemake.output.markdown,
                            snakemake.output.html, snakemake.output.csv, snakemake.output.plot,
                            experiment=snakemake.wildcards.experiment)

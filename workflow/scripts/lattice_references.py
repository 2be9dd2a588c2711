from circle.core.jobs import start_job
from circle.lattice.references import write_lattice_references

provenance = start_job(snakemake)
write_lattice_references(snakemake.input.tune, snakemake.input.parses, snakemake.input.lm,
                         int(snakemake.wildcards.human), snakemake.params.sentences,
                         snakemake.params.lang, snakemake.output.table, provenance)

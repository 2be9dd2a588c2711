from circle.core.jobs import start_job
from circle.lattice.pairs import write_paraphrase_pairs

provenance = start_job(snakemake)
write_paraphrase_pairs(snakemake.input.parses, snakemake.output.table, provenance)

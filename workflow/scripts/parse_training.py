from circle.core.jobs import start_job
from circle.grammar.parse import parse_bitext

provenance = start_job(snakemake)
options = snakemake.params.options
parse_bitext(snakemake.input.raw, snakemake.input.bitext, snakemake.output.parses, provenance,
             options["target_lang"], options["lowercase"])

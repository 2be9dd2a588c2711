from circle.core.jobs import start_job
from circle.experiments.dose_response import write_extra_references

provenance = start_job(snakemake)
write_extra_references(snakemake.wildcards.extra, snakemake.input.tune, snakemake.output.table,
                       snakemake.params.seed, verses_path=snakemake.input.get("verses"),
                       untuned_path=snakemake.input.get("untuned"),
                       target_lang=snakemake.params.target_lang,
                       lowercase=snakemake.params.lowercase, provenance=provenance)

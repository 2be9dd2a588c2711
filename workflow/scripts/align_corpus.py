from circle.align import align_table
from circle.core.jobs import start_job

provenance = start_job(snakemake)
align_table(snakemake.input.bitext, snakemake.output.alignment, samplers=snakemake.threads,
            model=snakemake.params.options["model"],
            symmetrization=snakemake.params.options["symmetrization"],
            log_path=snakemake.log[0], provenance=provenance)

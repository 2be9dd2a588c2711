from circle.core.jobs import start_job
from circle.lm import estimate_lm

start_job(snakemake)
estimate_lm([snakemake.input.text], int(snakemake.wildcards.order), snakemake.output.binary,
            discount_fallback=snakemake.params.discount_fallback,
            memory=f"{snakemake.resources.mem_mb}M",
            log_path=snakemake.log[0])

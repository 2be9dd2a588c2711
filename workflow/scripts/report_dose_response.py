from circle.core.jobs import start_job
from circle.experiments.dose_response import dose_response_report

provenance = start_job(snakemake)
dose_response_report(snakemake.input.tune,
                     dict(zip(snakemake.params.extras, snakemake.input.extra, strict=True)),
                     snakemake.input.get("paraphrases"), snakemake.input.table,
                     snakemake.input.conditions, snakemake.input.lm, snakemake.output.table,
                     snakemake.output.markdown, snakemake.output.html, snakemake.output.csv,
                     snakemake.output.plot, snakemake.params.lowercased, provenance)

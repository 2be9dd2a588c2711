from circle.core.jobs import start_job
from circle.experiments.dose_response import dose_response
from circle.figures.dose_response import write_dose_page

provenance = start_job(snakemake)
table, single = dose_response(snakemake.input.tune,
                              dict(zip(snakemake.params.extras, snakemake.input.extra,
                                       strict=True)),
                              snakemake.input.get("paraphrases"), snakemake.input.table,
                              snakemake.input.conditions, snakemake.input.lm,
                              snakemake.output.table, snakemake.params.lowercased, provenance)
write_dose_page(table, single, snakemake.output.markdown, snakemake.output.html,
                snakemake.output.csv, snakemake.output.plot)

from circle.experiments import paraphraser_report
from circle.jobs import start_job

start_job(snakemake)
paraphraser_report(snakemake.input.log, snakemake.input.nbest, snakemake.input.evalset,
                   snakemake.output.markdown, snakemake.output.html, snakemake.params.samples,
                   snakemake.params.seed)

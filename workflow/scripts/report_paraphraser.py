from circle.core.jobs import start_job
from circle.figures.paraphraser import paraphraser_report

start_job(snakemake)
paraphraser_report(snakemake.input.log, snakemake.input.nbest, snakemake.input.evalset,
                   snakemake.input.untuned, snakemake.input.weights, snakemake.output.markdown,
                   snakemake.output.html, snakemake.params.samples, snakemake.params.seed)

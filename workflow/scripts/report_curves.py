from circle.core.jobs import start_job
from circle.experiments.conditions import TuningRun
from circle.figures.iterations import write_curves_report

start_job(snakemake)
labels = {}
for run in snakemake.params.runs:
    paraphraser = TuningRun.parse(run).condition.paraphraser
    labels[run] = f"bias {paraphraser.bias:g}, weight {paraphraser.targeting_weight:g}"
write_curves_report(snakemake.input.scores, labels, snakemake.output.markdown,
                    snakemake.output.html, snakemake.output.csv, snakemake.output.plot)

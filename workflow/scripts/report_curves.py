from circle.core.jobs import start_job
from circle.figures.iterations import write_curves_report

start_job(snakemake)
labels = {run.name: f"bias {run.condition.paraphraser.bias:g}, "
                    f"weight {run.condition.paraphraser.targeting_weight:g}"
          for run in snakemake.params.runs}
write_curves_report(snakemake.input.scores, labels, snakemake.output.markdown,
                    snakemake.output.html, snakemake.output.csv, snakemake.output.plot)

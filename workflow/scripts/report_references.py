from circle.core.jobs import start_job
from circle.experiments.conditions import TuningRun
from circle.figures.report import plot_tuning_curves, write_report

start_job(snakemake)
write_report(snakemake.input.table, snakemake.output.markdown, snakemake.output.html,
             snakemake.output.csv, snakemake.output.plot, experiment=snakemake.wildcards.experiment,
             conditions=snakemake.input.conditions, figure="4.3",
             thesis_numbers=snakemake.params.thesis_numbers)
logs = {}
for run, path in zip(snakemake.params.runs, snakemake.input.logs, strict=True):
    parsed = TuningRun.parse(run)
    logs[parsed.condition.name, parsed.replicate] = path
plot_tuning_curves(logs, snakemake.output.curves,
                   title=f"Tune-set score per tuning iteration ({snakemake.wildcards.experiment})")

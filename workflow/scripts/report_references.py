from circle.core.jobs import start_job
from circle.figures.report import plot_tuning_curves, write_report

start_job(snakemake)
write_report(snakemake.input.table, snakemake.output.markdown, snakemake.output.html,
             snakemake.output.csv, snakemake.output.plot, experiment=snakemake.wildcards.experiment,
             conditions=snakemake.input.conditions, figure="4.3",
             thesis_numbers=snakemake.params.thesis_numbers)
logs = {(run.condition.name, run.replicate): path
        for run, path in zip(snakemake.params.runs, snakemake.input.logs, strict=True)}
plot_tuning_curves(logs, snakemake.output.curves,
                   title=f"Tune-set score per tuning iteration ({snakemake.wildcards.experiment})")

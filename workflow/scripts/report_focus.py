from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.figures.focus import write_focus_figure
from circle.paraphrase.targeted import TargetedSetup

start_job(snakemake)
settings = DecoderSettings.from_config(snakemake.params.settings)
setup = TargetedSetup.from_job(snakemake, settings)
outputs = {(run.condition.name, run.replicate): (start, tuned)
           for run, start, tuned in zip(snakemake.params.runs, snakemake.input.starts,
                                        snakemake.input.tuned, strict=True)}
write_focus_figure(snakemake.input.tune, outputs, snakemake.input.paraphrases, setup,
                   snakemake.threads, snakemake.output.markdown, snakemake.output.html,
                   snakemake.output.csv, snakemake.output.plot, snakemake.params.lowercased)

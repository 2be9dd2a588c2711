from circle.decoder import DecoderSettings
from circle.experiments import tune_paraphraser
from circle.jobs import start_job
from circle.tune.mert import MertSettings

provenance = start_job(snakemake)
tune_paraphraser(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
                 snakemake.input.weights, DecoderSettings(**snakemake.params.settings),
                 MertSettings(**snakemake.params.mert), snakemake.threads,
                 snakemake.output.weights, snakemake.output.log, provenance)

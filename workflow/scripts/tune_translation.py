from circle.decoder import DecoderSettings
from circle.experiments import TuningRun, tune_condition
from circle.jobs import start_job
from circle.targeted import targeted_setup
from circle.tune.checkpoint import Checkpoint
from circle.tune.loop import TuningSettings

provenance = start_job(snakemake)
tuning = TuningSettings.from_config(snakemake.params.tuning, snakemake.params.seed)
settings = DecoderSettings(**snakemake.params.settings)
targeted = None
if snakemake.params.targeted is not None:
    targeted = targeted_setup(snakemake.params.targeted, snakemake.input.get("choice"),
                              snakemake.input.paraphrase_grammars, snakemake.input.lm,
                              snakemake.input.paraphraser_weights, snakemake.input.reranking_lm,
                              settings)
tune_condition(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
               snakemake.input.weights,
               TuningRun.of(snakemake.wildcards.condition, snakemake.wildcards.replicate),
               snakemake.input.get("paraphrases"), settings, tuning, snakemake.threads,
               snakemake.output.weights, snakemake.output.log, provenance, targeted,
               Checkpoint.for_output(snakemake.output.log, snakemake.input,
                                     dict(snakemake.params.items())))

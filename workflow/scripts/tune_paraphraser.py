from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.paraphrase.untargeted import tune_paraphraser
from circle.tune.checkpoint import Checkpoint
from circle.tune.loop import TuningSettings

provenance = start_job(snakemake)
tuning = TuningSettings.from_config(snakemake.params.tuning, snakemake.params.seed)
tune_paraphraser(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
                 snakemake.input.weights, DecoderSettings.from_config(snakemake.params.settings),
                 tuning, snakemake.threads,
                 snakemake.output.weights, snakemake.output.log, provenance,
                 Checkpoint.for_output(snakemake.output.log, snakemake.input,
                                       dict(snakemake.params.items())),
                 snakemake.input.get("rerank_lm"))

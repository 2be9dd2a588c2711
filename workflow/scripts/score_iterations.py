from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.experiments.iterations import score_iterations

provenance = start_job(snakemake)
score_iterations(snakemake.input.log, snakemake.input.test, snakemake.input.grammar,
                 snakemake.input.lm, DecoderSettings.from_config(snakemake.params.settings),
                 snakemake.threads, snakemake.params.run, snakemake.output.scores, provenance,
                 lowercased=snakemake.params.lowercased,
                 rerank_lm_path=snakemake.input.get("rerank_lm"))

from circle.decoder import DecoderSettings
from circle.iterations import score_iterations
from circle.jobs import start_job

provenance = start_job(snakemake)
score_iterations(snakemake.input.log, snakemake.input.test, snakemake.input.grammar,
                 snakemake.input.lm, DecoderSettings(**snakemake.params.settings),
                 snakemake.threads, snakemake.params.run, snakemake.output.scores, provenance,
                 lowercased=snakemake.params.lowercased)

from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.paraphrase.grid_search import paraphrase_sample, read_grid_weights

provenance = start_job(snakemake)
if "targeting_weights" in snakemake.input.keys():
    weights = read_grid_weights(snakemake.input.targeting_weights)
else:
    weights = snakemake.params.targeting_weights
paraphrase_sample(snakemake.input.sample, snakemake.input.grammar, snakemake.input.lm,
                  snakemake.input.weights, float(snakemake.wildcards.bias), weights,
                  DecoderSettings.from_config(snakemake.params.settings), snakemake.threads,
                  snakemake.output.nbest, snakemake.output.distances, provenance)

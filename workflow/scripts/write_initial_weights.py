from circle.decoder.model import write_weights
from circle.jobs import start_job

start_job(snakemake)
write_weights(snakemake.output.weights, snakemake.params.weights)

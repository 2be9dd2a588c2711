from circle.core.jobs import start_job
from circle.decoder.model import write_weights

start_job(snakemake)
write_weights(snakemake.output.weights, snakemake.params.weights)

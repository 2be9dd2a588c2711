from circle.core.jobs import start_job
from circle.paraphrase.grid_search import WeightRange, write_grid_weights

provenance = start_job(snakemake)
rule = WeightRange(snakemake.params.weight_count, snakemake.params.effective_share,
                   snakemake.params.saturation_share)
write_grid_weights(snakemake.input.distances, rule, snakemake.output.weights, provenance)

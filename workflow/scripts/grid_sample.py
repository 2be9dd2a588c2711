from circle.core.jobs import start_job
from circle.decoder import DecoderSettings
from circle.paraphrase.grid_search import make_grid_sample

provenance = start_job(snakemake)
make_grid_sample(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
                 snakemake.input.weights, snakemake.params.size, snakemake.params.seed,
                 DecoderSettings.from_config(snakemake.params.settings), snakemake.threads,
                 snakemake.output.sample, provenance, snakemake.input.get("rerank_lm"))

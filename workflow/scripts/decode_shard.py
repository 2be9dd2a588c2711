from circle.core.jobs import start_job
from circle.decoder.model import DecoderSettings
from circle.decoder.sets import decode_shard

provenance = start_job(snakemake)
decode_shard(snakemake.input.evalset, snakemake.input.grammar, snakemake.input.lm,
             snakemake.input.weights, snakemake.output.nbest, int(snakemake.wildcards.shard),
             snakemake.params.shards, DecoderSettings.from_config(snakemake.params.settings),
             workers=snakemake.threads, provenance=provenance,
             rerank_lm_path=snakemake.input.get("rerank_lm"))

from circle.core.jobs import start_job
from circle.decoder.sets import gather_nbest

provenance = start_job(snakemake)
gather_nbest(snakemake.input.shards, snakemake.output.nbest, snakemake.output.text,
             snakemake.output.onebest, snakemake.output.detokenized, snakemake.params.lang,
             provenance=provenance)

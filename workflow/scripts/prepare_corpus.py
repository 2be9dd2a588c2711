from circle.core.jobs import start_job
from circle.corpus.prepare import prepare_corpus

provenance = start_job(snakemake)
prepare_corpus(snakemake.params.corpus, snakemake.params.max_line_chars, snakemake.params.seed,
               outputs={snakemake.wildcards.split: snakemake.output.table},
               provenance=provenance, overlap=snakemake.params.overlap)

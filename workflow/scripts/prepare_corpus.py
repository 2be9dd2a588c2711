from circle.corpus.prepare import prepare_corpus
from circle.jobs import start_job

provenance = start_job(snakemake)
prepare_corpus(snakemake.params.corpus, snakemake.params.max_line_chars, snakemake.params.seed,
               outputs=dict(snakemake.output.items()), provenance=provenance,
               overlap=snakemake.params.overlap)

from pathlib import Path

from circle.core.jobs import start_job
from circle.grammar.pivot import pivot_grammar, reference_sentences
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
sentences = (reference_sentences(snakemake.input.evalsets) if snakemake.params.phrases_from
             else None)
pivot_grammar(snakemake.input.grammar, Path(snakemake.output.grammar).parent,
              snakemake.output.self_paraphrase, sentences, threads=snakemake.threads,
              memory_limit=duckdb_limit(snakemake.resources.mem_mb), provenance=provenance,
              span_limit=snakemake.params.span_limit, **snakemake.params.options)

from circle.core.jobs import start_job
from circle.grammar.collapse import collapse_labels
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
collapse_labels([snakemake.input.grammar], snakemake.input.self_paraphrase,
                snakemake.input.bilingual, snakemake.output.grammar,
                snakemake.output.self_paraphrase, snakemake.params.lexical_feature,
                threads=snakemake.threads, memory_limit=duckdb_limit(snakemake.resources.mem_mb),
                provenance=provenance)

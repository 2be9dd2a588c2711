from circle.grammar.extract import ExtractionLimits, extract_grammar
from circle.jobs import start_job

provenance = start_job(snakemake)
options = dict(snakemake.params.limits)
shard_size = options.pop("shard_size")
extract_grammar(snakemake.input.bitext, snakemake.input.alignment, snakemake.output.grammar,
                ExtractionLimits(**options), workers=snakemake.threads, provenance=provenance,
                shard_size=shard_size, memory_limit=f"{snakemake.resources.mem_mb}MB")

from circle.grammar.bias import bias_grammar
from circle.jobs import start_job

provenance = start_job(snakemake)
bias_grammar(snakemake.input.parts, snakemake.input.self_paraphrase, snakemake.output.grammar,
             float(snakemake.wildcards.bias), threads=snakemake.threads,
             memory_limit=f"{snakemake.resources.mem_mb}MB", provenance=provenance)

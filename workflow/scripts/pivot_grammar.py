from circle.grammar.pivot import PivotOptions, gather_pivot
from circle.jobs import start_job

provenance = start_job(snakemake)
gather_pivot(snakemake.input.parts, snakemake.input.sources, snakemake.input.self_paraphrase,
             snakemake.output.grammar,
             PivotOptions.from_config(snakemake.params.options, snakemake.params.span_limit),
             provenance)

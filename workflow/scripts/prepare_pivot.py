from circle.core.jobs import start_job
from circle.grammar.pivot import PivotOptions, PivotWork, prepare_pivot, reference_sentences
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
options = snakemake.params.options
sentences = reference_sentences(snakemake.input.evalsets) if options["phrases_from"] else None
prepare_pivot(snakemake.input.grammar,
              PivotWork(snakemake.output.rules, snakemake.output.sources, snakemake.output.lookup),
              snakemake.output.self_paraphrase,
              PivotOptions.from_config(options, snakemake.params.span_limit), sentences,
              jobs=options["pivot_jobs"], threads=snakemake.threads,
              memory_limit=duckdb_limit(snakemake.resources.mem_mb), provenance=provenance)

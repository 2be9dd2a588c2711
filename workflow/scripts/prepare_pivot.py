from circle.core.jobs import start_job
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.grammar.pivot import PivotOptions, PivotWork, prepare_pivot
from circle.pipeline.resources import duckdb_limit

provenance = start_job(snakemake)
options = snakemake.params.options
sentences = None
if options["phrases_from"]:
    sentences = sorted({reference for path in snakemake.input.evalsets
                        for references in read_table(path, EVALSET, columns=["references"])
                        ["references"] for reference in references})
prepare_pivot(snakemake.input.grammar,
              PivotWork(snakemake.output.rules, snakemake.output.sources, snakemake.output.lookup),
              snakemake.output.self_paraphrase,
              PivotOptions.from_config(options, snakemake.params.span_limit), sentences,
              jobs=options["pivot_jobs"], threads=snakemake.threads,
              memory_limit=duckdb_limit(snakemake.resources.mem_mb), provenance=provenance)

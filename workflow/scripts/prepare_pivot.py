from circle.grammar.pivot import PivotOptions, PivotWork, prepare_pivot
from circle.jobs import start_job
from circle.resources import duckdb_limit
from circle.schemas import EVALSET
from circle.tables import read_table

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

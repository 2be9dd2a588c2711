from circle.grammar.pivot import pivot_grammar
from circle.jobs import start_job
from circle.schemas import EVALSET
from circle.tables import read_table

provenance = start_job(snakemake)
options = snakemake.params.options
sentences = None
if options["phrases_from"]:
    sentences = sorted({reference for path in snakemake.input.evalsets
                        for references in read_table(path, EVALSET, columns=["references"])
                        ["references"] for reference in references})
pivot_grammar(snakemake.input.grammar, snakemake.output.grammar,
              snakemake.output.self_paraphrase, top_pivots=options["top_pivots"],
              method=options["method"], keep_identity=options["keep_identity"],
              lexical_feature=options["lexical_feature"], min_count=options["min_count"],
              min_probability=options["min_probability"], sentences=sentences,
              span_limit=snakemake.params.span_limit, threads=snakemake.threads,
              memory_limit=f"{snakemake.resources.mem_mb}MB", provenance=provenance)

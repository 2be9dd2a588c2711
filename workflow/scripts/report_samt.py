from circle.core.jobs import start_job
from circle.core.pages import write_page
from circle.figures.samt import samt_page

start_job(snakemake)
text = samt_page(snakemake.input.hiero, snakemake.input.labelled, snakemake.input.paraphrases,
                 snakemake.params.examples)
write_page(text, snakemake.output.markdown, snakemake.output.html,
           "Labelled paraphrase grammars")

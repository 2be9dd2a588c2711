from circle.core.jobs import start_job
from circle.grammar.oov_paraphrase import augment_grammar

provenance = start_job(snakemake)
augment_grammar(snakemake.input.grammar, snakemake.input.bilingual, snakemake.input.paraphrases,
                snakemake.output.grammar, provenance, snakemake.params.feature_split)

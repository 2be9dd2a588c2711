from circle.core.jobs import start_job
from circle.distributional import DistributionalSettings
from circle.grammar.oov_paraphrase import find_paraphrases, source_texts

provenance = start_job(snakemake)
find_paraphrases(snakemake.input.grammar, source_texts([snakemake.input.evalset]),
                 source_texts(snakemake.input.monolingual),
                 DistributionalSettings(**snakemake.params.settings),
                 snakemake.output.paraphrases, provenance)

from circle.distributional import DistributionalSettings
from circle.grammar.oov_paraphrase import find_paraphrases, source_texts
from circle.jobs import start_job

provenance = start_job(snakemake)
find_paraphrases(snakemake.input.grammar, source_texts([snakemake.input.evalset]),
                 source_texts(snakemake.input.monolingual),
                 DistributionalSettings(**snakemake.params.settings),
                 snakemake.output.paraphrases, provenance)

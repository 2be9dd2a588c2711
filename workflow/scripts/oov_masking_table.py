from circle.core.jobs import start_job
from circle.distributional import DistributionalSettings
from circle.experiments.oov_masking import MaskingSettings, write_masked_word_table

provenance = start_job(snakemake)
write_masked_word_table([snakemake.input.test], [snakemake.input.train],
                        snakemake.input.monolingual, snakemake.input.grammar,
                        DistributionalSettings(**snakemake.params.search),
                        MaskingSettings.from_config(snakemake.params.masking),
                        snakemake.output.table, provenance)

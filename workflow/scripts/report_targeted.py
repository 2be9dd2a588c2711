from circle.core.jobs import start_job
from circle.core.pages import write_page
from circle.decoder import DecoderSettings
from circle.figures.report import write_report
from circle.figures.targeted_samples import triples_page
from circle.paraphrase.targeted import TargetedSetup, sample_triples

start_job(snakemake)
write_report(snakemake.input.table, snakemake.output.markdown, snakemake.output.html,
             snakemake.output.csv, snakemake.output.plot, experiment=snakemake.wildcards.experiment,
             conditions=snakemake.input.conditions, figure="5.10",
             thesis_numbers=snakemake.params.thesis_numbers)
setup = TargetedSetup.from_job(snakemake, DecoderSettings.from_config(snakemake.params.settings))
cache = setup.cache()
write_page(triples_page(sample_triples(cache, snakemake.params.samples, snakemake.params.seed),
                        setup, len(cache.lists)),
           snakemake.output.samples_markdown, snakemake.output.samples_html,
           "Targeted paraphrases inside the tuning loop")

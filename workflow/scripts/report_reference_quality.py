from circle.core.jobs import start_job
from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.decoder import DecoderSettings
from circle.experiments.reference_quality import quality_of_run, write_reference_quality
from circle.figures.reference_quality import PAGE_TITLE, quality_markdown
from circle.paraphrase.targeted import TargetedSetup

provenance = start_job(snakemake)
targeted = None
if snakemake.params.targeted is not None:
    setup = TargetedSetup.from_job(snakemake,
                                   DecoderSettings.from_config(snakemake.params.settings))
    targeted = (setup.cache().lists, setup.mode == "forest")
table = quality_of_run(snakemake.input.tune, snakemake.input.untuned,
                       dict(zip(snakemake.params.replicates, snakemake.input.tuned, strict=True)),
                       snakemake.input.get("paraphrases"), targeted, snakemake.input.lm,
                       snakemake.input.reranking_lm, snakemake.params.lowercased)
write_reference_quality(table, snakemake.output.table, provenance)
write_page(quality_markdown(table), snakemake.output.markdown, snakemake.output.html, PAGE_TITLE)
write_text_atomically(csv_text(table), snakemake.output.csv)

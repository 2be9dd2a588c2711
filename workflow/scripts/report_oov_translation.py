from circle.core.jobs import start_job
from circle.figures.oov_translation import write_oov_translation_report

start_job(snakemake)
inputs = snakemake.input
baseline, augmented = snakemake.params.samples
write_oov_translation_report(
    inputs.conditions,
    {evalset: {"set": inputs[f"{evalset}_set"], "filtered": inputs[f"{evalset}_filtered"],
               "augmented": inputs[f"{evalset}_augmented"]} for evalset in ("tune", "test")},
    {baseline: inputs.baseline, augmented: inputs.augmented}, snakemake.params.max_length,
    snakemake.output.markdown, snakemake.output.html, snakemake.output.csv)

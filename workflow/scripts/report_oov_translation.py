from circle.core.jobs import start_job
from circle.experiments.conditions import oov_variant_tag
from circle.figures.oov_translation import VariantFiles, write_oov_translation_report

start_job(snakemake)
inputs = snakemake.input
evalsets = ("tune", "test")
baseline, augmented = snakemake.params.samples
write_oov_translation_report(
    inputs.conditions,
    {evalset: {"set": inputs[f"{evalset}_set"], "filtered": inputs[f"{evalset}_filtered"]}
     for evalset in evalsets},
    {variant: VariantFiles(**described, augmented={
        evalset: inputs[f"{evalset}_augmented{oov_variant_tag(variant)}"] for evalset in evalsets})
     for variant, described in snakemake.params.variants.items()},
    list(inputs.tuning_logs), {baseline: inputs.baseline, augmented: inputs.augmented},
    snakemake.output.markdown, snakemake.output.html, snakemake.output.csv)

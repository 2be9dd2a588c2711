from circle.core.jobs import start_job
from circle.experiments.heldout import hold_out_blocks

provenance = start_job(snakemake)
outputs = {name: getattr(snakemake.output, name)
           for name in ("train", "alignment", "tune", "test", "paratune")}
hold_out_blocks(snakemake.input.train, snakemake.input.alignment, snakemake.input.tune,
                {"test": snakemake.input.test, "paratune": snakemake.input.paratune},
                snakemake.params.fractions, snakemake.params.seed, outputs, provenance)

from circle.align import AlignmentError, freeze_alignment
from circle.core.jobs import start_job

start_job(snakemake)
if not snakemake.params.frozen:
    raise AlignmentError("alignment.frozen is null and alignment.frozen_pivots empty: this "
                         "config has no frozen alignment to rebuild; set it to the path the "
                         "alignment should be written to")
for alignment, frozen in zip(snakemake.input.alignments, snakemake.params.frozen, strict=True):
    freeze_alignment(alignment, frozen)

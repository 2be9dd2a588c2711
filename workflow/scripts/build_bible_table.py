import sys

from circle.core.jobs import start_job
from circle.corpus.bible import write_bible_table

start_job(snakemake)
frame = write_bible_table(snakemake.output.table, shift_flags_path=snakemake.params.shift_flags,
                          seed=snakemake.params.seed, rule=snakemake.rule)
print(frame["split"].value_counts().to_string(), file=sys.stderr)

from pathlib import Path

from circle.core.jobs import start_job
from circle.figures.summary import write_summary

start_job(snakemake)
write_summary(snakemake.params.results,
              [Path(path).stem for path in snakemake.input.files if path.endswith(".md")],
              snakemake.output.markdown, snakemake.output.html)

import json

from circle.core.jobs import start_job
from circle.core.pages import write_page
from circle.core.tables import read_metadata
from circle.figures.lattice import draw, lattice_page, pick_group
from circle.grammar.parse import read_groups

start_job(snakemake)
group, fitting, total = pick_group(read_groups(snakemake.input.parses))
names = json.loads(read_metadata(snakemake.input.parses)["reference_names"])
draw(group.lattice if group is not None else None, snakemake.output.dot, snakemake.output.png,
     snakemake.log[0])
text = lattice_page(group, fitting, total, names, "lattice.png")
write_page(text, snakemake.output.markdown, snakemake.output.html, "A word lattice of one verse")

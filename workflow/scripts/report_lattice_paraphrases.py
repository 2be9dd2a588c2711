import json

from circle.core.jobs import start_job
from circle.core.pages import write_page
from circle.core.schemas import LATTICE_PARAPHRASES
from circle.core.tables import read_metadata, read_table
from circle.grammar.parse import read_groups
from circle.lattice.pairs_page import lattice_pairs_page
from circle.lattice.wordnet import WordNet

start_job(snakemake)
sets = snakemake.params.evalsets
frames = {name: read_table(path, LATTICE_PARAPHRASES)
          for name, path in zip(sets, snakemake.input.pairs, strict=True)}
groups = {name: read_groups(path) for name, path in zip(sets, snakemake.input.parses, strict=True)}
names = json.loads(read_metadata(snakemake.input.parses[0])["reference_names"])
text = lattice_pairs_page(frames, groups, names, WordNet.read())
write_page(text, snakemake.output.markdown, snakemake.output.html,
           "Paraphrase pairs of the word lattices")

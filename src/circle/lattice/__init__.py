"""Word lattices from several translations of a sentence: Pang, Knight & Marcu (2003)'s
syntax-based alignment (their Fig. 4). Stages: the parser stage, :mod:`circle.grammar.parse`
(parse trees, a cached Parquet table; it sits with the grammars, which come first and whose
SAMT labels read the same parser), :mod:`~circle.lattice.merge` (top-down merging with keyword
checking) and :mod:`~circle.lattice.fsa` (the word lattice, squeezing, path counts and
LM-ranked paths).
"""

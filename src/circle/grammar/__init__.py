"""Hierarchical translation grammars and the paraphrase grammars pivoted from them.

Stages, each an entry function over Parquet tables (:mod:`circle.core.schemas`):
:func:`~circle.grammar.extract.extract_grammar` (Hiero extraction, thesis eq. 3.3),
:func:`~circle.grammar.pivot.pivot_grammar` (eq. 3.4-3.13),
:func:`~circle.grammar.bias.bias_grammar` (self-paraphrase bias, eq. 5.2-5.10),
:func:`~circle.grammar.filter.filter_grammar` (rules usable on given sentences),
:func:`~circle.grammar.thrax.export_thrax` (Joshua/Thrax text) and
:func:`~circle.grammar.inspect.top_paraphrases`. The project's English parser,
:mod:`~circle.grammar.parse` (trees of :mod:`~circle.grammar.tree`), gives the labelled (SAMT)
grammars their constituents (:mod:`~circle.grammar.samt`) and the word lattices their trees.
"""

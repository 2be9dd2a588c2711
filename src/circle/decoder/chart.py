"""CKY+ rule matching over an input sentence (Chappelier & Rajman 1998; Chiang 2007 §5.1).

A dot chart holds, per span (i, j), the partial source sides that cover exactly f[i:j]: trie
nodes reached by reading terminals and nonterminals, each with the spans of its nonterminals.
A nonterminal may cover a span only if some rule covers it (or it is a single word, which the
pass-through rule of an uncovered word covers), so matching proceeds by increasing span length.
The result depends on the grammar, the sentence and the span limit only — not on weights or a
targeting string — so one match serves every decoding of the same input.

A labelled (SAMT) grammar's chart cells are (span, label), and a nonterminal labelled L may
cover a span only if a rule with left-hand side L covers it (Zollmann & Venugopal 2006 §3).
"""

from __future__ import annotations

from dataclasses import dataclass

from circle.decoder.grammar import UNLABELLED, Grammar, nonterminal_symbol

Span = tuple[int, int]
Cell = tuple[int, int, str]
"""A labelled chart cell: a span and a left-hand side label."""


@dataclass(frozen=True)
class Matches:
    """Rule applications per span: ``(source-side key, nonterminal spans in source order)``,
    or for a labelled grammar ``(key, nonterminal cells)``.

    ``spans`` is ordered by span length, then start; ``oov`` lists the positions of words that
    no one-word rule covers.
    """

    words: tuple[str, ...]
    spans: dict[Span, list[tuple[int, tuple[Span, ...] | tuple[Cell, ...]]]]
    oov: tuple[int, ...]


def match(grammar: Grammar, words: tuple[str, ...], span_limit: int) -> Matches:
    """All applications of ``grammar``'s rules to ``words`` over spans of ≤ ``span_limit``.

    A labelled grammar's nonterminal labelled L extends a dot item over span (p, j) only if
    some rule with left-hand side L covers (p, j) (a pass-through word has the label X), and
    records the cell (p, j, L); its applications are per key, i.e. per (left-hand side, source
    side). Hiero's grammar has the one label X, and its nonterminals record spans."""
    root = grammar.trie
    labelled = grammar.labelled
    key_labels = grammar.key_labels
    symbols: dict[str, str] = {}  # label → its trie symbol
    n = len(words)
    dots: dict[Span, list[tuple[dict, tuple]]] = {(i, i): [(root, ())] for i in range(n)}
    covering: dict[Span, list[str]] = {}  # span → the left-hand sides of the rules covering it
    spans: dict[Span, list[tuple[int, tuple]]] = {}
    oov: list[int] = []
    for length in range(1, min(span_limit, n) + 1):
        for i in range(n - length + 1):
            j = i + length
            extended = []
            word = words[j - 1]
            for node, nonterminals in dots[(i, j - 1)]:
                child = node.get(word)
                if child is not None:
                    extended.append((child, nonterminals))
            for p in range(i + 1, j):
                for label in covering.get((p, j), ()):
                    symbol, cell = symbols[label], (p, j, label) if labelled else (p, j)
                    for node, nonterminals in dots[(i, p)]:
                        child = node.get(symbol)
                        if child is not None:
                            extended.append((child, nonterminals + (cell,)))
            found = [(key, nonterminals) for node, nonterminals in extended if None in node
                     for key in (node[None] if labelled else (node[None],))]
            if found:
                spans[(i, j)] = found
                covering[(i, j)] = list(dict.fromkeys(key_labels[key] for key, _ in found))
            elif length == 1:
                oov.append(i)
                spans[(i, j)] = []
                covering[(i, j)] = [UNLABELLED]
            for label in covering.get((i, j), ()):
                symbol = symbols.setdefault(label, nonterminal_symbol(label))
                if symbol in root:
                    extended.append((root[symbol], ((i, j, label) if labelled else (i, j),)))
            dots[(i, j)] = [(node, nonterminals) for node, nonterminals in extended
                            if len(node) > (None in node)]  # nodes with children only
    return Matches(words, spans, tuple(oov))

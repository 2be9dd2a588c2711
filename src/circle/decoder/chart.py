"""CKY+ rule matching over an input sentence (Chappelier & Rajman 1998; Chiang 2007 §5.1).

A dot chart holds, per span (i, j), the partial source sides that cover exactly f[i:j]: trie
nodes reached by reading terminals and nonterminals, each with the spans of its nonterminals.
A nonterminal may cover a span only if some rule covers it (or it is a single word, which the
pass-through rule of an uncovered word covers), so matching proceeds by increasing span length.
The result depends on the grammar, the sentence and the span limit only — not on weights or a
targeting string — so one match serves every decoding of the same input.
"""

from __future__ import annotations

from dataclasses import dataclass

from circle.decoder.grammar import NT, Grammar

Span = tuple[int, int]


@dataclass(frozen=True)
class Matches:
    """Rule applications per span: ``(source-side key, nonterminal spans in source order)``.

    ``spans`` is ordered by span length, then start; ``oov`` lists the positions of words that
    no one-word rule covers.
    """

    words: tuple[str, ...]
    spans: dict[Span, list[tuple[int, tuple[Span, ...]]]]
    oov: tuple[int, ...]


def match(grammar: Grammar, words: tuple[str, ...], span_limit: int) -> Matches:
    """All applications of ``grammar``'s rules to ``words`` over spans of ≤ ``span_limit``."""
    root = grammar.trie
    root_nt = root.get(NT)
    n = len(words)
    dots: dict[Span, list[tuple[dict, tuple[Span, ...]]]] = {(i, i): [(root, ())]
                                                               for i in range(n)}
    spans: dict[Span, list[tuple[int, tuple[Span, ...]]]] = {}
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
                if (p, j) in spans:
                    for node, nonterminals in dots[(i, p)]:
                        child = node.get(NT)
                        if child is not None:
                            extended.append((child, nonterminals + ((p, j),)))
            found = [(node[None], nonterminals) for node, nonterminals in extended
                     if None in node]
            if found:
                spans[(i, j)] = found
            elif length == 1:
                oov.append(i)
                spans[(i, j)] = []
            if root_nt is not None and (i, j) in spans:
                extended.append((root_nt, ((i, j),)))
            dots[(i, j)] = [(node, nonterminals) for node, nonterminals in extended
                            if len(node) > (None in node)]  # nodes with children only
    return Matches(words, spans, tuple(oov))

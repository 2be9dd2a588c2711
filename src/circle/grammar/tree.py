"""Phrase-structure trees, the parser stage's output (:mod:`circle.grammar.parse`): the
constituents of SAMT's labels (:class:`circle.grammar.samt.Bracketing`) and the input of Pang,
Knight & Marcu (2003)'s merging (their §3, :mod:`circle.lattice.merge`).

A :class:`Tree` is either a preterminal (a Penn Treebank part-of-speech ``label`` over one
``word``) or a phrase (a ``label`` over child trees). Its *rule* is the label with the labels of
its children, e.g. ``S -> NP VP``: two nodes merge when they expand with the same rule. Trees are
stored as Penn bracket strings, ``(S (NP (CD 12) (NNS people)) (VP (VBD died)))``; brackets inside
words are escaped as ``-LRB-`` / ``-RRB-`` as in the Penn Treebank (also inside a word, such as
spaCy's token ``:)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEYWORD_TAG_PREFIXES = ("NN", "VB", "JJ")
"""Penn tags of the keywords of the seed's keyword check: "all the nouns, verbs, and adjectives
that are spanned by a syntactic node" (§3)."""

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class Tree:
    """A node of a phrase-structure tree: a preterminal when ``word`` is set, else a phrase."""

    label: str
    children: tuple[Tree, ...] = ()
    word: str | None = None

    def __post_init__(self) -> None:
        if (self.word is None) == (not self.children):
            raise ValueError(f"a {self.label} node needs either a word or children, not both")
        if self.word is not None and (not self.word or any(c.isspace() for c in self.word)):
            raise ValueError(f"a {self.label} word must be non-empty without spaces: "
                             f"{self.word!r}")

    @property
    def rule(self) -> tuple[str, ...]:
        """The node's expansion: its label, then its children's labels (a preterminal's rule is
        its tag alone)."""
        return (self.label, *(child.label for child in self.children))

    def words(self) -> list[str]:
        """The words the node spans, left to right."""
        if self.word is not None:
            return [self.word]
        return [word for child in self.children for word in child.words()]

    def keywords(self) -> frozenset[str]:
        """The lowercased nouns, verbs and adjectives the node spans (§3, keyword checking)."""
        if self.word is not None:
            return (frozenset([self.word.lower()]) if self.label.startswith(KEYWORD_TAG_PREFIXES)
                    else frozenset())
        return frozenset().union(*(child.keywords() for child in self.children))

    def to_string(self) -> str:
        """The Penn bracket string of the tree (inverse of :func:`parse_tree`)."""
        if self.word is not None:
            return f"({self.label} {self.word.replace('(', '-LRB-').replace(')', '-RRB-')})"
        return f"({self.label} {' '.join(child.to_string() for child in self.children)})"


def parse_tree(text: str) -> Tree:
    """Read a Penn bracket string written by :meth:`Tree.to_string`."""
    tokens = _TOKEN.findall(text)
    tree, end = _read(tokens, 0)
    if end != len(tokens):
        raise ValueError(f"trailing text after the tree: {text!r}")
    return tree


def _read(tokens: list[str], at: int) -> tuple[Tree, int]:
    if at + 2 >= len(tokens) or tokens[at] != "(" or tokens[at + 1] in "()":
        raise ValueError(f"not a bracketed tree at token {at}: {' '.join(tokens[at:at + 5])}")
    label, at = tokens[at + 1], at + 2
    if tokens[at] not in "()":
        if at + 1 >= len(tokens) or tokens[at + 1] != ")":
            raise ValueError(f"preterminal {label} must hold exactly one word")
        word = tokens[at].replace("-LRB-", "(").replace("-RRB-", ")")
        return Tree(label, word=word), at + 2
    children = []
    while at < len(tokens) and tokens[at] == "(":
        child, at = _read(tokens, at)
        children.append(child)
    if at >= len(tokens) or tokens[at] != ")":
        raise ValueError(f"unclosed {label} node")
    return Tree(label, tuple(children)), at + 1

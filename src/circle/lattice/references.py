"""New tuning references from word lattices: the sentences of a group's lattice that none of its
translators wrote, ranked by a language model (Pang, Knight & Marcu 2003, §1: the lattice
"represents compactly" renderings beyond its inputs; §4.2.1 generates them from its paths), for
the tuning conditions ``kH+mL`` (:class:`circle.experiments.conditions.Condition`).

The seed generates new sentences but does not rank them or tune with them; both are this
module's (issue 39): a segment's group is its first k references in the tune set's seeded
per-document order (those of kH), its lattice is merged, built and squeezed as the seed's
Fig. 4 does (:func:`circle.lattice.evaluate.group_lattice`), and its m best sentences by the LM
(:func:`circle.lattice.fsa.best_paths`) that are none of the k inputs become m more references.
A lattice with fewer new sentences gives its segment fewer (most lattices of four verse
translations have none, docs/lattice.md).

The lattice's words are the parser's tokens, lowercased; the pipeline's references are Moses
tokens. A path is scored by the LM as Moses tokens (:class:`PipelineTokensLM`) and written as
the tune set's references are tokenised (:func:`reference_text`). The parser stage's trees have
their tokens as leaves in order (:func:`circle.grammar.parse.project` lifts non-projective
dependencies), so each input is a path of the lattice.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from functools import cache

import pandas as pd

from circle.core.schemas import EVALSET, LATTICE_REFERENCES
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.preprocess import normalize
from circle.corpus.references import select_references
from circle.grammar.parse import read_groups
from circle.grammar.tree import Tree
from circle.lattice.evaluate import group_lattice
from circle.lattice.fsa import KenLMModel, LanguageModel, best_paths, count_paths

logger = logging.getLogger(__name__)

MAX_BEAM = 10_000
"""The beam of :func:`best_paths`: the lattice's number of paths up to this, so that the ranking
is exact for every lattice with at most this many paths (the default experiment's groups of
four have at most 288, docs/lattice.md); the table records each lattice's paths."""

MAX_GLUED = 7
"""The most lattice words (and reference tokens) :func:`reference_text` respells as one run
(``daughters - in - law`` is five words)."""


@cache
def pipeline_tokens(word: str, lang: str) -> tuple[str, ...]:
    """A lattice word as the pipeline tokenises it (:func:`circle.corpus.preprocess.normalize`:
    Moses tokens, XML-escaped, lowercased): ``n't`` is ``n &apos;t``."""
    return tuple(normalize(word, lang).split())


class PipelineTokensLM:
    """A :class:`~circle.lattice.fsa.LanguageModel` over lattice words that scores each word as
    its :func:`pipeline_tokens`, the text the pipeline's LM was estimated on."""

    def __init__(self, lm: LanguageModel, lang: str) -> None:
        self.lm = lm
        self.lang = lang

    def begin(self) -> object:
        return self.lm.begin()

    def advance(self, state: object, word: str) -> tuple[object, float]:
        total = 0.0
        for token in pipeline_tokens(word, self.lang):
            state, logprob = self.lm.advance(state, token)
            total += logprob
        return state, total

    def finish(self, state: object) -> float:
        return self.lm.finish(state)


def spellings(references: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Every run of up to :data:`MAX_GLUED` consecutive tokens of the tokenised ``references``
    by its characters without spaces (the first run wins), for :func:`reference_text`."""
    found: dict[str, tuple[str, ...]] = {}
    for reference in references:
        tokens = reference.split()
        for start in range(len(tokens)):
            for end in range(start + 1, min(len(tokens), start + MAX_GLUED) + 1):
                found.setdefault("".join(tokens[start:end]), tuple(tokens[start:end]))
    return found


def reference_text(words: Sequence[str], spelt_as: Mapping[str, tuple[str, ...]],
                   lang: str) -> str:
    """A lattice path tokenised like the pipeline's references: a run of up to
    :data:`MAX_GLUED` words whose :func:`pipeline_tokens` spell, without spaces, a run of the
    group's reference tokens (``spelt_as``, :func:`spellings`) is those tokens, the longest run
    first; any other word is its own :func:`pipeline_tokens`. The parser and Moses cut words
    differently (``daughters - in - law`` against ``daughters-in-law``, ``do n't`` against
    ``don 't``), and Moses splits a full stop off a word only before a capital, which the
    lowercased lattice has lost: the references' own tokens decide."""
    spelt = ["".join(pipeline_tokens(word, lang)) for word in words]
    tokens: list[str] = []
    at = 0
    while at < len(words):
        run = next((end for end in range(min(len(words), at + MAX_GLUED), at, -1)
                    if "".join(spelt[at:end]) in spelt_as), None)
        if run is None:
            tokens += pipeline_tokens(words[at], lang)
            at += 1
        else:
            tokens += spelt_as["".join(spelt[at:run])]
            at = run
    return " ".join(tokens)


def lattice_sentences(trees: Sequence[Tree], lm: LanguageModel, count: int
                      ) -> tuple[list[tuple[tuple[str, ...], float]], int]:
    """The ``count`` best sentences by ``lm`` (log10 probability with ``</s>``, best first, ties
    by the words) of the squeezed lattice of ``trees`` (the seed's Fig. 4) that are none of the
    trees' own sentences; fewer when the lattice has fewer. Also the lattice's number of
    BEGIN-END paths: the ranking is exact when it is at most :data:`MAX_BEAM`."""
    _, squeezed, _ = group_lattice(trees)
    paths = count_paths(squeezed)
    own = {tuple(word.lower() for word in tree.words()) for tree in trees}
    ranked = best_paths(squeezed, lm, count + len(own), min(paths, MAX_BEAM))
    return [(words, score) for words, score in ranked if words not in own][:count], paths


def lattice_references(tune: pd.DataFrame, groups: Mapping[int, Sequence[Tree]],
                       lm: LanguageModel, human: int, count: int, lang: str
                       ) -> tuple[pd.DataFrame, int]:
    """A :data:`~circle.core.schemas.LATTICE_REFERENCES` frame for the tune set ``tune`` (an
    :data:`~circle.core.schemas.EVALSET` frame, references tokenised) and the parse trees of its
    references (``groups``, per segment in the set's reference order): per segment up to
    ``count`` sentences of the lattice of its first ``human`` references in the seeded order
    (:func:`lattice_sentences` scored by ``lm`` over :func:`pipeline_tokens`). A path whose
    tokens (:func:`reference_text`) are one of those references or a better path's is skipped;
    returns the frame and the number of paths skipped so."""
    if human < 2:
        raise ValueError(f"a word lattice needs at least two references, not {human}")
    rows, dropped = [], 0
    scored = PipelineTokensLM(lm, lang)
    for segment, document, references, order in zip(
            tune["segment_id"], tune["document"], tune["references"], tune["ref_order"],
            strict=True):
        if int(segment) not in groups:
            raise ValueError(f"tune segment {segment} has no parse trees")
        own = select_references(references, order, human)
        trees = select_references(groups[int(segment)], order, human)
        spelt_as = spellings(own)
        found, paths = lattice_sentences(trees, scored, count + human)
        kept: list[tuple[str, tuple[str, ...], float]] = []
        seen = set(own)
        for words, score in found:
            if len(kept) == count:
                break
            text = reference_text(words, spelt_as, lang)
            if text in seen:
                dropped += 1
                continue
            seen.add(text)
            kept.append((text, words, score))
        rows += [{"segment_id": int(segment), "document": document, "rank": rank,
                  "reference": text, "words": " ".join(words), "lm_log10": score,
                  "lattice_paths": paths}
                 for rank, (text, words, score) in enumerate(kept)]
    frame = pd.DataFrame(rows, columns=LATTICE_REFERENCES.arrow.names)
    return frame.astype({"segment_id": "int64", "rank": "int32", "lm_log10": "float64",
                         "lattice_paths": "int64"}), dropped


def write_lattice_references(tune_path: str | os.PathLike, parses_path: str | os.PathLike,
                             lm_path: str | os.PathLike, human: int, count: int, lang: str,
                             out_path: str | os.PathLike,
                             provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Write the lattice references of kH+mL (m <= ``count``, k = ``human``) for the tune set
    at ``tune_path`` from its references' parse table (the lattice stage's ``parses_path``, of
    the same references in the same order) and the KenLM binary ``lm_path``."""
    names = json.loads(read_metadata(tune_path)["reference_names"])
    parsed = json.loads(read_metadata(parses_path)["reference_names"])
    if names != parsed:
        raise ValueError(f"{parses_path} parses the references {parsed}, the tune set "
                         f"{tune_path} has {names}")
    tune = read_table(tune_path, EVALSET)
    frame, dropped = lattice_references(tune, read_groups(parses_path),
                                       KenLMModel(str(lm_path)), human, count, lang)
    write_table(frame, out_path, LATTICE_REFERENCES, provenance,
                {"human": str(human), "count": str(count), "segments": str(len(tune)),
                 "dropped": str(dropped),
                 "max_beam": str(MAX_BEAM)})
    logger.info("%d lattice sentences of %dH for %d tune segments (%d with none); %d paths "
                "skipped as a reference's or a better path's tokens", len(frame), human,
                len(tune), len(tune) - frame["segment_id"].nunique(), dropped)
    return frame

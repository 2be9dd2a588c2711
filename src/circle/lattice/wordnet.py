"""WordNet's synonymy relation, read offline from the WordNet 3.0 database files, for the seed's
recall of WordNet-consistent synonyms (Pang, Knight & Marcu 2003, §4.1.2, Table 2).

The files are Debian's ``wordnet-base`` (installed by ``envs/setup.sh``, pinned by the Debian
release; :data:`WORDNET_DIR`). Two files a part of speech are read, in the formats of WordNet's
``wndb(5WN)`` manual page (shipped with the package):

* ``index.<pos>``: one line a lemma (lowercased, collocations joined by ``_``), ``lemma pos
  synset_cnt p_cnt [ptr_symbol ...] sense_cnt tagsense_cnt synset_offset ...``, its last
  ``synset_cnt`` fields the byte offsets in ``data.<pos>`` of the synsets holding the lemma;
  lines starting with a space are the licence.
* ``<pos>.exc``: the morphological exception lists, ``inflected_form base_form ...``.

Two lemmas of a part of speech are synonyms when a synset holds both: they share an offset in
its index. A word form is reduced to its lemmas as WordNet's ``morphy(7WN)`` does
(:meth:`WordNet.lemmas`), so that the seed's example of a pair WordNet calls synonyms,
"follow/be", is also found as "followed/was". The data files (glosses, pointers) are not needed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

WORDNET_DIR = Path("/usr/share/wordnet")
"""Where Debian's ``wordnet-base`` puts the database files."""

PARTS_OF_SPEECH = ("noun", "verb", "adj", "adv")

DETACHMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
             ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
             ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
"""morphy(7WN)'s rules of detachment: a suffix and what replaces it."""


class WordNet:
    """The synsets of every lemma and the exception lists, per part of speech."""

    def __init__(self, synsets: dict[str, dict[str, frozenset[int]]],
                 exceptions: dict[str, dict[str, tuple[str, ...]]]) -> None:
        self.synsets = synsets
        self.exceptions = exceptions
        self._senses: dict[str, list[tuple[str, str, frozenset[int]]]] = {}

    @classmethod
    def read(cls, directory: str | os.PathLike = WORDNET_DIR) -> WordNet:
        """Read ``index.<pos>`` and ``<pos>.exc`` of the four parts of speech."""
        directory = Path(directory)
        if not (directory / "index.noun").is_file():
            raise FileNotFoundError(f"no WordNet database in {directory}: install the Debian "
                                    "package wordnet-base (envs/setup.sh does)")
        synsets = {pos: _read_index(directory / f"index.{pos}") for pos in PARTS_OF_SPEECH}
        exceptions = {pos: _read_exceptions(directory / f"{pos}.exc")
                      for pos in PARTS_OF_SPEECH}
        return cls(synsets, exceptions)

    def lemmas(self, word: str, pos: str) -> set[str]:
        """The lemmas of part of speech ``pos`` that ``word`` (lowercased) is a form of, as
        morphy(7WN) finds them: the word itself and its exception list's base forms if it has
        one, else the word and every rule of detachment's result, kept where they are
        lemmas."""
        word = word.lower()
        known = self.synsets[pos]
        if word in self.exceptions[pos]:
            candidates: Iterable[str] = (word, *self.exceptions[pos][word])
        else:
            candidates = (word, *(word[:-len(suffix)] + ending
                                  for suffix, ending in DETACHMENTS[pos]
                                  if word.endswith(suffix) and len(word) > len(suffix)))
        return {candidate for candidate in candidates if candidate in known}

    def senses(self, word: str) -> list[tuple[str, str, frozenset[int]]]:
        """Every (part of speech, lemma, its synsets) of a word form's :meth:`lemmas`
        (remembered: a corpus asks for the same words again and again)."""
        if word not in self._senses:
            self._senses[word] = [(pos, lemma, self.synsets[pos][lemma])
                                  for pos in PARTS_OF_SPEECH
                                  for lemma in sorted(self.lemmas(word, pos))]
        return self._senses[word]

    def synonyms(self, first: str, second: str) -> bool:
        """Whether WordNet's synonymy relation holds between two word forms: for some part of
        speech, a lemma of each, the two lemmas different, share a synset (two forms of one
        lemma, "kill"/"killed", are not synonyms)."""
        return any(pos == other_pos and lemma != other_lemma and synsets & other_synsets
                   for pos, lemma, synsets in self.senses(first)
                   for other_pos, other_lemma, other_synsets in self.senses(second))


def _read_index(path: Path) -> dict[str, frozenset[int]]:
    synsets = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.startswith(" "):
                continue
            fields = line.split()
            count = int(fields[2])
            synsets[fields[0]] = frozenset(int(offset) for offset in fields[-count:])
    return synsets


def _read_exceptions(path: Path) -> dict[str, tuple[str, ...]]:
    with path.open(encoding="utf-8") as lines:
        return {fields[0]: tuple(fields[1:]) for fields in map(str.split, lines) if fields}

"""Tokenisation and lowercasing, applied identically to every text the pipeline reads, and
detokenisation of its output.

The Moses tokeniser (sacremoses) with its default escaping, so that ``[``, ``]`` and ``|`` become
``&#91;``, ``&#93;`` and ``&#124;`` and can never be mistaken for the grammar's ``[X,1]``
nonterminals or ``|||`` separators (the convention of Moses, Joshua and cdec). Text is brought
to Unicode NFC first, so that a decomposed accent (NFD) reads as the letter it belongs to.
:func:`detokenize` undoes the escaping and the tokenisation, not the lowercasing.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pandas as pd
from sacremoses import MosesDetokenizer, MosesTokenizer
from sacremoses.corpus import NonbreakingPrefixes

from circle.core.schemas import BITEXT, EVALSET
from circle.core.tables import read_metadata, read_table, write_table

LANGUAGES = frozenset({*NonbreakingPrefixes().available_langs.values(), "ja", "ko"})
"""The language codes the Moses tokeniser knows: those with a list of non-breaking prefixes
(sacremoses), and Japanese and Korean, which it segments by script. It takes any other code
without a word and tokenises it by no language's rules."""


def language_problem(lang: str) -> str | None:
    """Why the tokeniser cannot take the language code ``lang``, or None if it can."""
    if lang in LANGUAGES:
        return None
    return (f"'{lang}' is not a language code the Moses tokeniser knows; it knows "
            f"{', '.join(sorted(LANGUAGES))}")


def _checked(lang: str) -> str:
    if problem := language_problem(lang):
        raise ValueError(problem)
    return lang


@cache
def _tokenizer(lang: str) -> MosesTokenizer:
    return MosesTokenizer(lang=_checked(lang))


def normalize(text: str, lang: str, lowercase: bool = True) -> str:
    """Bring one sentence to Unicode NFC (a decomposed accent would be a token of its own),
    tokenise it (space-separated tokens) and lowercase it."""
    text = unicodedata.normalize("NFC", text)
    tokens = _tokenizer(lang).tokenize(text, escape=True, return_str=True)
    return tokens.lower() if lowercase else tokens


@cache
def _detokenizer(lang: str) -> MosesDetokenizer:
    return MosesDetokenizer(lang=_checked(lang))


def detokenize(tokens: str, lang: str) -> str:
    """Plain text of a tokenised, escaped sentence (Moses detokeniser; XML escapes such as
    ``&apos;`` and ``&#91;`` undone). The case stays as it is."""
    return _detokenizer(lang).detokenize(tokens.split(), unescape=True)


def has_tokens(text: str) -> bool:
    """Whether tokenising ``text`` leaves a token. The tokeniser deletes ASCII control characters
    and whitespace and nothing else, in every language, so the language does not matter here."""
    return bool(_tokenizer("en").tokenize(text, escape=False))


def normalize_all(texts: list[str], lang: str, lowercase: bool = True) -> list[str]:
    return [normalize(text, lang, lowercase) for text in texts]


def tokenize_bitext(bitext: pd.DataFrame, source_lang: str, target_lang: str,
                    lowercase: bool = True) -> pd.DataFrame:
    """A copy of a BITEXT table with ``source`` and ``target`` tokenised."""
    out = bitext.copy()
    out["source"] = normalize_all(list(bitext["source"]), source_lang, lowercase)
    out["target"] = normalize_all(list(bitext["target"]), target_lang, lowercase)
    return out


def tokenize_evalset(evalset: pd.DataFrame, source_lang: str, target_lang: str,
                     lowercase: bool = True) -> pd.DataFrame:
    """A copy of an EVALSET table with the source and every reference tokenised."""
    out = evalset.copy()
    out["source"] = normalize_all(list(evalset["source"]), source_lang, lowercase)
    out["references"] = [normalize_all(list(refs), target_lang, lowercase)
                         for refs in evalset["references"]]
    return out


def tokenize_table(in_path: str | Path, out_path: str | Path, provenance: Mapping[str, str],
                   source_lang: str, target_lang: str, lowercase: bool) -> None:
    """Tokenise a BITEXT or EVALSET table file, keeping its table metadata."""
    meta = read_metadata(in_path)
    if meta.get("schema") == BITEXT.name:
        table = tokenize_bitext(read_table(in_path, BITEXT), source_lang, target_lang, lowercase)
        write_table(table, out_path, BITEXT, provenance)
    else:
        table = tokenize_evalset(read_table(in_path, EVALSET), source_lang, target_lang, lowercase)
        write_table(table, out_path, EVALSET, provenance,
                    metadata={"reference_names": meta["reference_names"]})

"""A translation grammar augmented with rules for OOV phrases borrowed from their distributional
paraphrases (Marton, Callison-Burch & Resnik 2009, "MCR", §5; the paraphrases come from
:mod:`circle.distributional`).

For an OOV source phrase f, a paraphrase f′ of it with psim(f′, f) and a phrase rule f′ → e
(terminals only: the seed's systems are phrase-based, and a hierarchical rule's gaps would be
filled around an f it never saw), the rule f → e is added. Several f′_i may lead to the same
e: one rule is added, with the paraphrase feature

    h(e, f) = asim = 1 − Π_i (1 − psim(f′_i, f))

(MCR's "quasi-online" asim_i = asim_{i−1} + (1 − asim_{i−1}) psim(f′_i, f), asim_0 = 0: the
seed prints asim_i = (1 − asim_{i−1}) psim(f′_i, f), which depends on the order it says the
aggregate does not depend on), and the other features of the rule of the f′_i with the highest
psim (ties: the alphabetically first f′). The grammar's own rules get h = 1. The decoder feature
is ln h, so that its weight acts as MCR's log-linear weight on h; with no OOV paraphrase the
feature is 0 everywhere and the grammar decodes as before.

MCR's variants (§5, Table 4): one feature for every phrase length (the default), paraphrases of
unigrams only (``max_phrase_length`` 1, :mod:`circle.distributional`), and one feature for short
and another for long phrases (``feature_split`` n: f of at most n words, "1-2 + 3-4grams" with
n = 2; :data:`~circle.core.schemas.GRAMMAR_OOV_PARAPHRASED_BY_LENGTH`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from circle.core.schemas import (
    BITEXT,
    EVALSET,
    GRAMMAR,
    GRAMMAR_OOV_PARAPHRASED,
    GRAMMAR_OOV_PARAPHRASED_BY_LENGTH,
    OOV_PARAPHRASES,
    TableSchema,
)
from circle.core.tables import read_metadata, read_table, schema_by_name, write_table
from circle.distributional import DistributionalSettings, MonolingualCorpus, oov_phrases
from circle.grammar.io import carried_metadata, grammar_schema

FEATURE = "log_paraphrase_similarity"
"""The paraphrase feature's column: ln h(e, f)."""

SHORT_FEATURE, LONG_FEATURE = GRAMMAR_OOV_PARAPHRASED_BY_LENGTH.features[-2:]
"""The two paraphrase features of ``feature_split``: ln h(e, f) for an f of at most that many
words, and for a longer one."""


def augmented_schema(feature_split: int | None) -> TableSchema:
    """The augmented grammar's schema: one paraphrase feature, or two by phrase length."""
    return GRAMMAR_OOV_PARAPHRASED if feature_split is None else GRAMMAR_OOV_PARAPHRASED_BY_LENGTH


def paraphrase_features(feature_split: int | None) -> tuple[str, ...]:
    """The decoder features the augmentation adds (their untuned weights are
    oov_paraphrase.untuned_weight)."""
    return tuple(f for f in augmented_schema(feature_split).features if f not in GRAMMAR.features)

logger = logging.getLogger(__name__)


def phrase_rules(grammar: pd.DataFrame) -> pd.DataFrame:
    """The grammar's terminal-only rules (no nonterminal on the source side)."""
    return grammar[~grammar["source"].str.contains("[", regex=False)]


def known_words(grammar: pd.DataFrame) -> set[str]:
    """The source words some one-word phrase rule translates (the decoder passes the others
    through as OOV)."""
    rules = phrase_rules(grammar)
    return set(rules.loc[~rules["source"].str.contains(" ", regex=False), "source"])


def read_known_words(path: str | os.PathLike) -> set[str]:
    """:func:`known_words` of a grammar table, read as Arrow (a bilingual grammar's millions
    of source sides are never Python strings)."""
    grammar_schema(path, (GRAMMAR,))
    return one_word_sources(
        pq.read_table(path, columns=["source"], page_checksum_verification=True)["source"])


def one_word_sources(sources: pa.Array | pa.ChunkedArray) -> set[str]:
    """The one-word terminal source sides among a grammar's ``sources`` (:func:`known_words`
    in Arrow)."""
    one_word = pc.invert(pc.or_(pc.match_substring(sources, "["),
                                pc.match_substring(sources, " ")))
    return set(pc.unique(pc.filter(sources, one_word)).to_pylist())


def borrowed_rules(paraphrases: pd.DataFrame, rules: pd.DataFrame,
                   feature_split: int | None = None) -> pd.DataFrame:
    """One rule f → e per OOV phrase f (``paraphrases.phrase``) and English side e of a phrase
    rule of one of its paraphrases f′ (``paraphrases.paraphrase``, ``similarity``), with
    h = asim and the features of the most similar f′'s rule; in the augmented schema
    (:func:`augmented_schema`: with ``feature_split``, ln h in the short or the long feature by
    the length of f, 0 in the other)."""
    joined = paraphrases[["phrase", "paraphrase", "similarity"]].merge(
        phrase_rules(rules), left_on="paraphrase", right_on="source")
    columns = list(augmented_schema(feature_split).arrow.names)
    joined = joined[joined["similarity"] > 0]  # h = 0 would be no evidence, and ln h = -inf
    keys = ["phrase", "target"]
    miss = (1.0 - joined["similarity"].clip(upper=1.0)).groupby(
        [joined[key] for key in keys], sort=False).transform("prod")
    joined = joined.assign(**{FEATURE: np.log1p(-miss)})  # ln(1 − Π (1 − psim))
    best = joined.sort_values(["similarity", "paraphrase"], ascending=[False, True],
                              kind="stable").drop_duplicates(keys)
    best = best.assign(source=best["phrase"], paraphrase_of=best["paraphrase"])
    if feature_split is not None:
        short = best["source"].str.count(" ") < feature_split
        best = best.assign(**{SHORT_FEATURE: best[FEATURE].where(short, 0.0),
                              LONG_FEATURE: best[FEATURE].where(~short, 0.0)})
    return best[columns].sort_values(["source", "target"]).reset_index(drop=True)


def augment(grammar: pd.DataFrame, paraphrases: pd.DataFrame, rules: pd.DataFrame,
            feature_split: int | None = None) -> pd.DataFrame:
    """The grammar (h = 1) with the rules :func:`borrowed_rules` makes of ``rules`` for
    ``paraphrases``, except for phrases the grammar already has rules for (not OOV)."""
    own = grammar.assign(**dict.fromkeys(paraphrase_features(feature_split), 0.0),
                         paraphrase_of=None)
    borrowed = borrowed_rules(paraphrases, rules, feature_split)
    borrowed = borrowed[~borrowed["source"].isin(set(grammar["source"]))]
    columns = list(augmented_schema(feature_split).arrow.names)
    if borrowed.empty:
        return own[columns]
    return pd.concat([own[columns], borrowed], ignore_index=True)


def read_phrase_rules(path: str | os.PathLike, sources: set[str]) -> pd.DataFrame:
    """The rules of a bilingual grammar table whose source side is one of ``sources``."""
    grammar_schema(path, (GRAMMAR,))
    table = pq.read_table(path, filters=pc.field("source").isin(sorted(sources)),
                          page_checksum_verification=True)
    return table.to_pandas()


def augment_grammar(grammar_path: str | os.PathLike, bilingual_path: str | os.PathLike,
                    paraphrases_path: str | os.PathLike, out_path: str | os.PathLike,
                    provenance: Mapping[str, str] | None = None,
                    feature_split: int | None = None) -> dict[str, int]:
    """Write a set's filtered grammar augmented with the borrowed rules of its OOV phrases'
    paraphrases, whose rules are looked up in the whole bilingual grammar (one paraphrase
    feature, or two with ``feature_split``); returns counts."""
    grammar = read_table(grammar_path, GRAMMAR)
    paraphrases = read_table(paraphrases_path, OOV_PARAPHRASES)
    rules = read_phrase_rules(bilingual_path, set(paraphrases["paraphrase"]))
    augmented = augment(grammar, paraphrases, rules, feature_split)
    added = augmented["paraphrase_of"].notna()
    counts = {"rules": len(grammar), "borrowed_rules": int(added.sum()),
              "phrases": int(augmented.loc[added, "source"].nunique())}
    logger.info("%d rules; %d borrowed for %d OOV phrases", counts["rules"],
                counts["borrowed_rules"], counts["phrases"])
    metadata = carried_metadata(grammar_path)
    write_table(augmented, out_path, augmented_schema(feature_split), provenance,
                {**metadata, **{f"oov_{k}": str(v) for k, v in counts.items()}})
    return counts


@dataclass(frozen=True)
class Coverage:
    """OOV words of a set's input (no one-word phrase rule) before and after augmentation:
    a token stays OOV unless an n-gram over it is the source side of a borrowed rule."""

    types: int
    tokens: int
    types_after: int
    tokens_after: int
    words: int


def coverage(sentences: Iterable[str], known: set[str], borrowed: set[str],
             max_length: int) -> Coverage:
    """The :class:`Coverage` of tokenised sentences, given the words one-word rules translate
    and the source sides of the borrowed rules (n-grams of at most ``max_length`` words)."""
    before: list[str] = []
    after: list[str] = []
    words = 0
    for sentence in sentences:
        tokens = sentence.split()
        words += len(tokens)
        for i, token in enumerate(tokens):
            if token in known:
                continue
            before.append(token)
            if not any(" ".join(tokens[start:end]) in borrowed
                       for start in range(max(0, i - max_length + 1), i + 1)
                       for end in range(i + 1, min(len(tokens), start + max_length) + 1)):
                after.append(token)
    return Coverage(len(set(before)), len(before), len(set(after)), len(after), words)


def source_texts(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The ``source`` column of tokenised bitext and evaluation-set tables, one after another."""
    texts: list[str] = []
    for path in paths:
        schema = schema_by_name(read_metadata(path).get("schema", ""))
        if schema not in (BITEXT, EVALSET):
            raise ValueError(f"{path}: a {schema.name} table, not a bitext or evaluation set")
        texts += read_table(path, schema, columns=["source"])["source"].tolist()
    return texts


def paraphrase_table(corpus: MonolingualCorpus, phrases: Iterable[str]) -> pd.DataFrame:
    """The distributional paraphrases of ``phrases`` in ``corpus`` (MCR §4), ranked, as the
    columns of :data:`~circle.core.schemas.OOV_PARAPHRASES`."""
    rows = [(p.phrase, p.paraphrase, p.similarity, rank)
            for phrase in phrases
            for rank, p in enumerate(corpus.paraphrases(phrase), 1)]
    return pd.DataFrame(rows, columns=["phrase", "paraphrase", "similarity", "rank"])


def borrowed_for(sentences: Iterable[str], grammar_sources: set[str], known: set[str],
                 corpus: MonolingualCorpus, bilingual_path: str | os.PathLike) -> pd.DataFrame:
    """The rules the OOV phrases of tokenised ``sentences`` borrow (:func:`borrowed_rules`, in
    the augmented schema's columns), given the source sides of the grammar they are decoded
    with (``grammar_sources``; phrases among them are not borrowed for, as in :func:`augment`)
    and its one-word ones (``known``); the paraphrases' rules are looked up in the bilingual
    grammar. For new text (``circle translate``), one chunk at a time."""
    phrases = oov_phrases(sentences, known, corpus.settings.max_phrase_length)
    paraphrases = paraphrase_table(corpus, phrases)
    if paraphrases.empty:
        return pd.DataFrame(columns=list(GRAMMAR_OOV_PARAPHRASED.arrow.names))
    rules = read_phrase_rules(bilingual_path, set(paraphrases["paraphrase"]))
    borrowed = borrowed_rules(paraphrases, rules)
    return borrowed[~borrowed["source"].isin(grammar_sources)].reset_index(drop=True)


def find_paraphrases(grammar_path: str | os.PathLike, inputs: Iterable[str],
                     monolingual: Iterable[str], settings: DistributionalSettings,
                     out_path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Write the distributional paraphrases (MCR §4) of the OOV phrases of a set's tokenised
    ``inputs``: its n-grams of at most ``settings.max_phrase_length`` words over a word that
    no one-word phrase rule of its filtered grammar translates, searched in the tokenised
    ``monolingual`` sentences. Returns the table written."""
    started = time.perf_counter()
    corpus = MonolingualCorpus(monolingual, settings)
    indexed = time.perf_counter() - started
    known = read_known_words(grammar_path)
    phrases = oov_phrases(inputs, known, settings.max_phrase_length)
    table = paraphrase_table(corpus, phrases)
    seconds = time.perf_counter() - started
    logger.info("%d tokens, %d types, %d stoplisted, indexed in %.1f s; %d OOV phrases, %d "
                "with paraphrases, %d paraphrases in %.1f s", corpus.words,
                len(corpus.vocabulary) - 1, int(corpus.stopwords.sum()), indexed, len(phrases),
                table["phrase"].nunique(), len(table), seconds)
    write_table(table.astype({"rank": "int32"}), out_path, OOV_PARAPHRASES, provenance,
                {"monolingual_tokens": str(corpus.words),
                 "oov_phrases": str(len(phrases)),
                 "settings": repr(settings)})
    return table

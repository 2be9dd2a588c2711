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
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from circle.grammar.io import carried_metadata, grammar_schema
from circle.schemas import GRAMMAR, GRAMMAR_OOV_PARAPHRASED, OOV_PARAPHRASES
from circle.tables import read_table, write_table

FEATURE = "log_paraphrase_similarity"
"""The paraphrase feature's column: ln h(e, f)."""


def phrase_rules(grammar: pd.DataFrame) -> pd.DataFrame:
    """The grammar's terminal-only rules (no nonterminal on the source side)."""
    return grammar[~grammar["source"].str.contains("[", regex=False)]


def known_words(grammar: pd.DataFrame) -> set[str]:
    """The source words some one-word phrase rule translates (the decoder passes the others
    through as OOV)."""
    rules = phrase_rules(grammar)
    return set(rules.loc[~rules["source"].str.contains(" ", regex=False), "source"])


def borrowed_rules(paraphrases: pd.DataFrame, rules: pd.DataFrame) -> pd.DataFrame:
    """One rule f → e per OOV phrase f (``paraphrases.phrase``) and English side e of a phrase
    rule of one of its paraphrases f′ (``paraphrases.paraphrase``, ``similarity``), with
    h = asim and the features of the most similar f′'s rule; in the augmented schema."""
    joined = paraphrases[["phrase", "paraphrase", "similarity"]].merge(
        phrase_rules(rules), left_on="paraphrase", right_on="source")
    columns = list(GRAMMAR_OOV_PARAPHRASED.arrow.names)
    joined["log_miss"] = np.log1p(-joined["similarity"].clip(upper=1.0))
    keys = ["phrase", "target"]
    miss = joined.groupby(keys, sort=False)["log_miss"].transform("sum")
    joined[FEATURE] = np.log(-np.expm1(miss))  # ln(1 − Π (1 − psim)), -inf never: psim > 0
    best = joined.sort_values(["similarity", "paraphrase"], ascending=[False, True],
                              kind="stable").drop_duplicates(keys)
    best = best.assign(source=best["phrase"], paraphrase_of=best["paraphrase"])
    return best[columns].sort_values(["source", "target"]).reset_index(drop=True)


def augment(grammar: pd.DataFrame, paraphrases: pd.DataFrame,
            rules: pd.DataFrame) -> pd.DataFrame:
    """The grammar (h = 1) with the rules :func:`borrowed_rules` makes of ``rules`` for
    ``paraphrases``, except for phrases the grammar already has rules for (not OOV)."""
    own = grammar.assign(**{FEATURE: 0.0, "paraphrase_of": None})
    borrowed = borrowed_rules(paraphrases, rules)
    borrowed = borrowed[~borrowed["source"].isin(set(grammar["source"]))]
    columns = list(GRAMMAR_OOV_PARAPHRASED.arrow.names)
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
                    provenance: Mapping[str, str] | None = None) -> dict[str, int]:
    """Write a set's filtered grammar augmented with the borrowed rules of its OOV phrases'
    paraphrases, whose rules are looked up in the whole bilingual grammar; returns counts."""
    grammar = read_table(grammar_path, GRAMMAR)
    paraphrases = read_table(paraphrases_path, OOV_PARAPHRASES)
    rules = read_phrase_rules(bilingual_path, set(paraphrases["paraphrase"]))
    augmented = augment(grammar, paraphrases, rules)
    added = augmented["paraphrase_of"].notna()
    counts = {"rules": len(grammar), "borrowed_rules": int(added.sum()),
              "phrases": int(augmented.loc[added, "source"].nunique())}
    metadata = carried_metadata(grammar_path)
    write_table(augmented, out_path, GRAMMAR_OOV_PARAPHRASED, provenance,
                {**metadata, **{f"oov_{k}": str(v) for k, v in counts.items()}})
    return counts

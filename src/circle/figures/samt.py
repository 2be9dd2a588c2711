"""The labelled grammars' page (Ganitkevitch & Callison-Burch, draft): what SAMT's labels
(Zollmann & Venugopal 2006) make of the experiment's bilingual grammar, and which labelled
paraphrase rules pivoting gives, with the draft's kinds of structural rewrite first, in the
manner of its table of rules.

The draft's table lists structural paraphrases by kind: the possessive (``the NNP₁ 's NN₂`` |
``the NN₂ of the NNP₁``), the dative shift, the passive, and others. :data:`STRUCTURAL` finds
candidates of the first three by surface cues (the tokeniser writes the possessive ``'s`` as
``&apos;s``; a noun phrase followed by a noun on one side and ``of`` on the other is the
possessive whose ``'s`` lies inside the noun phrase) and then rules that reorder their
nonterminals or have two; the page shows each kind's most frequent rules (largest derived
count). The cues are ours, not the draft's, and find candidates, not certified rewrites: the
page shows every rule with its counts and features so that a reader judges them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import duckdb
import pandas as pd

from circle.core.schemas import LABELLED_GRAMMAR, LABELLED_PARAPHRASE_GRAMMAR
from circle.core.tables import parquet_rows, read_metadata
from circle.grammar.io import checked_parquet, grammar_schema
from circle.grammar.samt import FALLBACK, unescape_label

STRUCTURAL = {
    "possessive": "(contains(source, ' &apos;s ') AND contains(target, ' of ')) OR "
                  "(contains(target, ' &apos;s ') AND contains(source, ' of ')) OR "
                  "(regexp_matches(source, '\\[NP[^ ]*,[12]\\] \\[NNS?,[12]\\]') "
                  "AND contains(target, ' of '))",
    "dative shift": "(contains(source, ' to [') OR contains(target, ' to [')) AND reordered = 1",
    "passive": "(contains(target, ' by [') AND NOT contains(source, ' by [')) OR "
               "(contains(source, ' by [') AND NOT contains(target, ' by ['))",
    "reordering": "reordered = 1",
    "two nonterminals": "contains(source, ',2]')",
}
"""The kinds of labelled paraphrase rule the page looks for, in its order, as DuckDB conditions
on a rule (surface cues: ``'s``, or an NP followed by a noun, against ``of``; ``to`` before a
nonterminal with reordering; ``by`` before a nonterminal on one side only)."""

PER_KIND = 3
"""The most example rules of one kind."""

_NONTERMINAL_LABELS = r"regexp_extract_all(target, '\[([^ ]+),[0-9]+\]', 1)"


def label_counts(con: duckdb.DuckDBPyConnection, grammar_path: str | os.PathLike
                 ) -> pd.DataFrame:
    """Each label of a labelled grammar (escaped, as written) with the rules it is the
    left-hand side of and its nonterminals' occurrences on the English sides, most frequent
    first (the lhs count, then the label)."""
    return con.execute(f"""
        WITH rules AS (SELECT lhs, target FROM {checked_parquet([grammar_path])}),
             lhs AS (SELECT lhs AS label, count(*) AS rules FROM rules GROUP BY lhs),
             holes AS (SELECT label, count(*) AS nonterminals
                       FROM (SELECT unnest({_NONTERMINAL_LABELS}) AS label FROM rules)
                       GROUP BY label)
        SELECT label, coalesce(rules, 0) AS rules, coalesce(nonterminals, 0) AS nonterminals
        FROM lhs FULL OUTER JOIN holes USING (label)
        ORDER BY rules DESC, nonterminals DESC, label""").df()


def structural_examples(con: duckdb.DuckDBPyConnection,
                        paraphrase_paths: Sequence[str | os.PathLike], count: int
                        ) -> list[tuple[str, pd.Series]]:
    """Up to ``count`` labelled paraphrase rules with nonterminals and other than their
    source, by kind of :data:`STRUCTURAL` (at most :data:`PER_KIND` each, a rule once), each
    kind's largest derived count first."""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE structural AS
                    SELECT * FROM {checked_parquet(paraphrase_paths)}
                    WHERE identity = 0 AND contains(source, '[')""")
    chosen: list[tuple[str, pd.Series]] = []
    seen = set()
    for kind, condition in STRUCTURAL.items():
        frame = con.execute(f"""SELECT * FROM structural WHERE {condition}
                                ORDER BY count DESC, log_p_e2_given_e1 DESC, lhs, source,
                                         target LIMIT {4 * PER_KIND}""").df()
        taken = 0
        for _, rule in frame.iterrows():
            key = (rule["lhs"], rule["source"], rule["target"])
            if key in seen or len(chosen) >= count or taken >= PER_KIND:
                continue
            seen.add(key)
            chosen.append((kind, rule))
            taken += 1
    return chosen


def _readable(side: str) -> str:
    """A rule side with its labels unescaped, for the page (``[~COMMA~,1]`` as ``[,,1]``)."""
    words = []
    for word in side.split():
        if word.startswith("[") and word.endswith("]") and "," in word:
            label, index = word[1:-1].rsplit(",", 1)
            word = f"[{unescape_label(label)},{index}]"
        words.append(word)
    return " ".join(words)


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def samt_page(hiero_path: str | os.PathLike, labelled_path: str | os.PathLike,
              paraphrase_path: str | os.PathLike, examples: int, top_labels: int = 15) -> str:
    """The page (Markdown): sizes of the Hiero and labelled bilingual grammars and of the
    labelled paraphrase grammar with its pruning, the most frequent labels, and
    :func:`structural_examples`."""
    grammar_schema(labelled_path, (LABELLED_GRAMMAR,))
    grammar_schema(paraphrase_path, (LABELLED_PARAPHRASE_GRAMMAR,))
    con = duckdb.connect()
    hiero, labelled = parquet_rows(hiero_path), parquet_rows(labelled_path)
    labels = label_counts(con, labelled_path)
    fallback = labels.loc[labels["label"] == FALLBACK, "rules"].sum()
    rules = con.execute(f"""
        SELECT count(*) AS rules, count(DISTINCT lhs || chr(31) || source) AS phrases,
               sum(identity) AS identities,
               count(*) FILTER (WHERE contains(source, '[')) AS with_nonterminals,
               count(*) FILTER (WHERE reordered = 1) AS reordered
        FROM {checked_parquet([paraphrase_path])}""").df().iloc[0]
    pivot = read_metadata(paraphrase_path)
    lines = [
        "# Labelled paraphrase grammars (Ganitkevitch & Callison-Burch, draft)",
        "",
        "The experiment's bilingual grammar extracted again with SAMT labels (Zollmann & "
        "Venugopal 2006) on the English spans, from parses of the training bitext's English "
        "side (spaCy's dependencies projected to phrase structure), and pivoted into a "
        "labelled paraphrase grammar: two rules pair only when their label and foreign side "
        "match. X is the label of a span no SAMT category covers (Hiero's one label).",
        "",
        "| grammar | rules | |",
        "|---|---:|---|",
        f"| Hiero bilingual | {hiero:,} | |",
        f"| labelled bilingual | {labelled:,} | {labelled / max(hiero, 1):.2f}× Hiero; "
        f"{len(labels[labels['rules'] > 0]):,} left-hand-side labels, {len(labels):,} labels "
        f"in all; {fallback / max(labelled, 1):.1%} of the rules have the left-hand side X |",
        f"| labelled paraphrase | {int(rules['rules']):,} | {int(rules['phrases']):,} labelled "
        f"phrases; {int(rules['identities'] or 0):,} identity rules (φ_ident = 1), "
        f"{int(rules['with_nonterminals']):,} with nonterminals, {int(rules['reordered']):,} "
        "reordering them |",
        "",
        f"Pruning before pivoting (draft §4.2, which gives no values): fractional count at "
        f"least {float(pivot['min_count']):g}, p(e|f) and p(f|e) at least "
        f"{float(pivot['min_probability']):g}, the top {pivot.get('top_pivots')} foreign sides per "
        "English side; "
        + (f"after pivoting the best {pivot['top_paraphrases']} paraphrases per labelled "
           "phrase by p(e2|e1) lex(e2|e1). " if "top_paraphrases" in pivot
           else "every paraphrase kept after pivoting. ")
        + (f"Only the phrases of the {int(pivot['phrases_from_sentences']):,} references the "
           "paraphraser rewrites are pivoted (paraphrase.phrases_from)."
           if "phrases_from_sentences" in pivot else "Every phrase is pivoted."),
        "",
        f"## The {top_labels} most frequent labels",
        "",
        "| label | rules (left-hand side) | nonterminals (English sides) |",
        "|---|---:|---:|",
        *[f"| {_cell(unescape_label(row.label))} | {row.rules:,} | {row.nonterminals:,} |"
          for row in labels.head(top_labels).itertuples()],
        "",
        "## Structural paraphrase rules",
        "",
        "Labelled paraphrase rules with nonterminals, other than their source, by kind: "
        + ", ".join(STRUCTURAL) + f" (surface cues, at most {PER_KIND} of a kind, the most "
        "frequent first; the cues find candidates, the reader judges them). count is the "
        "derived count, p = p(e2|e1), lex = lex(e2|e1), bb p(e|f) = p(e1|f) p(e2|f) of the "
        "best pivot.",
        "",
        "| kind | rule | count | p | lex | bb p(e\\|f) | rarity | pivots |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    chosen = structural_examples(con, [paraphrase_path], examples)
    for kind, rule in chosen:
        text = (f"{unescape_label(rule['lhs'])} → {_readable(rule['source'])} | "
                f"{_readable(rule['target'])}")
        lines.append(
            f"| {kind} | {_cell(text)} | {rule['count']:.2f} | "
            f"{math.exp(rule['log_p_e2_given_e1']):.3f} | "
            f"{math.exp(rule['log_lex_e2_given_e1']):.3f} | "
            f"{math.exp(rule['log_bb_p_e_given_f']):.3f} | {rule['bb_rarity']:.2f} | "
            f"{int(rule['pivots'])} |")
    if not chosen:
        lines.append("| (none) | no labelled paraphrase rule with nonterminals | | | | | | |")
    con.close()
    return "\n".join(lines) + "\n"

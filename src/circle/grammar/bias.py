"""The self-paraphrase bias (thesis §5.2.2, eq. 5.2-5.10).

For every English phrase e1 with residual self-paraphrase probability r = p(e1|e1) = 1 -
sum_{e != e1} p(e|e1) (eq. 5.2, from the pivot's ``SELF_PARAPHRASE`` table) and bias b, the
biased grammar has:

* the identity rule e1 → e1 with p'(e1|e1) = b (eq. 5.3) in both directions,
  p'(e1) = p(e1) (1 - r) / (1 - b) (eq. 5.8) and p'(e1, e1) = p'(e1|e1) p'(e1) (eq. 5.9); its
  length feature is -T(e1) and its lexical weights are the identity pivot's;
* for every other rule e1 → e2: p'(e2|e1) = p(e2|e1) (1 - b) / (1 - r(e1)) (eq. 5.6) and
  p'(e1, e2) = p(e1, e2) (eq. 5.10). The reverse conditional p(e1|e2) is a conditional of e2's
  distribution (it is the forward probability of e2 → e1), which the same rescaling, carried out
  for all English phrases, turns into p(e1|e2) (1 - b) / (1 - r(e2)). This equals
  p'(e1, e2) / p'(e2), so eq. 3.13 still holds after biasing.

Identity rules are added for the phrases that have rules (a pivot restricted to some sentences
also lists the residuals of its targets). Σ_e p'(e|e1) = 1 for every e1, the identity included
(the thesis's worked example: r = 0.05, b = 0.5 gives the factors 10, 0.5/0.95, 0.95/0.5 and
0.95/0.05). Bias 0 is the unbiased grammar (no identity rules, nothing rescaled), the thesis's
"no bias" condition. Identity rules a ``keep_identity`` pivot left in the grammar are replaced.

With ``identity_feature``, every rule also gets φ_ident (Ganitkevitch & Callison-Burch, draft
§4.1): ``identity`` = 1 if source = target (the identity rules added above), else 0, a decoder
feature whose weight the paraphraser's MERT tunes; the other columns and the rules are those of
the grammar without it. Bias 0 has no identity rules, so there it is 0 throughout.

A labelled (SAMT) paraphrase grammar (``samt.decoding: labelled``) is decoded as pivoted, the
draft's model: its identity rules keep the pivot's probabilities and its own φ_ident, and its
"bias 0" grammar is the pivot's output, sorted. The thesis's bias b > 0 is not defined for it
here (the residual of eq. 5.2 would be per label); collapsing it to X (:mod:`circle.grammar.
collapse`) is the way to bias it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import duckdb

from circle.core.schemas import (
    IDENTITY_FEATURE,
    LABELLED_PARAPHRASE_GRAMMAR,
    PARAPHRASE_GRAMMAR,
    PARAPHRASE_GRAMMAR_LEX,
    SELF_PARAPHRASE,
    paraphrase_grammar_schema,
)
from circle.core.tables import scratch_directory
from circle.grammar.io import (
    GrammarInputError,
    carried_metadata,
    checked_parquet,
    connect,
    grammar_schema,
    write_relation,
)

IDENTITY_COLUMN = f"(source = target)::DOUBLE AS {IDENTITY_FEATURE}"
"""φ_ident (Ganitkevitch & Callison-Burch, draft §4.1) of a rule with columns ``source`` and
``target``, as a SQL column: 1 when the two sides are the same string (nonterminals in the same
order, so a swap is no identity), else 0. The biased grammars and the labelled pivot
(:mod:`circle.grammar.pivot`) both compute it so."""


def bias_grammar(paraphrase_parts: Sequence[str | os.PathLike],
                 self_paraphrase_path: str | os.PathLike, out_path: str | os.PathLike,
                 bias: float, threads: int = 1, memory_limit: str | None = None,
                 provenance: Mapping[str, str] | None = None,
                 identity_feature: bool = False) -> int:
    """Write the paraphrase grammar with self-paraphrase bias ``bias`` in [0, 1), sorted, from
    the unbiased grammar (the parts of :func:`circle.grammar.pivot.grammar_parts`, or any
    tables of its schema together), with φ_ident if ``identity_feature``; returns its rules.
    A labelled grammar is written as pivoted at bias 0 and refused at any other (see the module
    docstring)."""
    if not 0.0 <= bias < 1.0:
        raise ValueError(f"self-paraphrase bias must be in [0, 1), got {bias}")
    if not paraphrase_parts:
        raise ValueError("biasing needs the parts of an unbiased paraphrase grammar, got none")
    schemas = {grammar_schema(part, (PARAPHRASE_GRAMMAR, PARAPHRASE_GRAMMAR_LEX,
                                     LABELLED_PARAPHRASE_GRAMMAR))
               for part in paraphrase_parts}
    if len(schemas) > 1:
        raise GrammarInputError(f"{paraphrase_parts[0]}: the parts of a paraphrase grammar have "
                                f"different schemas {sorted(s.name for s in schemas)}")
    schema, = schemas
    if schema is LABELLED_PARAPHRASE_GRAMMAR:
        return _labelled_as_pivoted(paraphrase_parts, out_path, bias, threads, memory_limit,
                                    provenance)
    if identity_feature:
        schema = paraphrase_grammar_schema(schema == PARAPHRASE_GRAMMAR_LEX, True)
    grammar_schema(self_paraphrase_path, (SELF_PARAPHRASE,))
    metadata = carried_metadata(paraphrase_parts[0])
    if metadata.get("bias", "0") != "0":
        raise GrammarInputError(f"{paraphrase_parts[0]}: already biased (bias "
                                f"{metadata['bias']}); bias the unbiased pivot output")
    metadata["bias"] = repr(bias)
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        rules = _biased_rules(con, paraphrase_parts, self_paraphrase_path, bias)
        identity = f", {IDENTITY_COLUMN}" if identity_feature else ""
        relation = con.sql(f"SELECT *{identity} FROM ({rules}) ORDER BY source, target")
        return write_relation(relation, out_path, schema, provenance, metadata)


def _labelled_as_pivoted(paraphrase_parts: Sequence[str | os.PathLike],
                         out_path: str | os.PathLike, bias: float, threads: int,
                         memory_limit: str | None, provenance: Mapping[str, str] | None) -> int:
    """The labelled grammar's rules as pivoted, sorted, at bias 0 (the module docstring)."""
    if bias != 0.0:
        raise GrammarInputError(
            f"{paraphrase_parts[0]}: a labelled paraphrase grammar is decoded as pivoted (its "
            f"identity rules and φ_ident, the draft's model); the self-paraphrase bias {bias} "
            f"is not defined for it: use bias 0, or samt.decoding: collapsed to bias the "
            f"grammar collapsed to X")
    metadata = carried_metadata(paraphrase_parts[0])
    metadata["bias"] = repr(bias)
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        relation = con.sql(f"SELECT * FROM {checked_parquet(paraphrase_parts)} "
                           "ORDER BY lhs, source, target")
        return write_relation(relation, out_path, LABELLED_PARAPHRASE_GRAMMAR, provenance,
                              metadata)


def _biased_rules(con: duckdb.DuckDBPyConnection, paraphrase_parts: Sequence[str | os.PathLike],
                  self_paraphrase_path: str | os.PathLike, bias: float) -> str:
    """The query of the rules of the grammar with bias ``bias``, identity rules included, in no
    particular order."""
    con.execute(f"""
        CREATE TEMP VIEW rules AS SELECT * FROM {checked_parquet(paraphrase_parts)}
        WHERE source <> target""")
    if bias == 0.0:
        return "SELECT * FROM rules"
    con.execute(f"""
        CREATE TEMP VIEW phrases AS
        SELECT * FROM {checked_parquet(self_paraphrase_path)}""")
    scale = math.log1p(-bias)
    unmatched = con.execute("""
        SELECT count(*), any_value(source || ' -> ' || target) FROM rules r
        WHERE NOT EXISTS (SELECT 1 FROM phrases p WHERE p.phrase = r.source)
           OR NOT EXISTS (SELECT 1 FROM phrases p
                          WHERE p.phrase = canonical(r.target))""").fetchall()[0]
    if unmatched[0]:
        raise GrammarInputError(
            f"{self_paraphrase_path}: no residual for {unmatched[0]} rule(s) of the grammar "
            f"in {len(paraphrase_parts)} part(s) from {paraphrase_parts[0]} (e.g. "
            f"{unmatched[1]}); use the table written by the same pivot")
    return f"""
        SELECT r.lhs, r.source, r.target,
               r.log_p_e2_given_e1 + {scale} - ln(1 - s1.residual) AS log_p_e2_given_e1,
               r.log_p_e1_given_e2 + {scale} - ln(1 - s2.residual) AS log_p_e1_given_e2,
               r.log_p_e1_e2, r.neg_target_terminals, r.log_lex_e2_given_e1,
               r.log_lex_e1_given_e2, r.count, r.pivots
        FROM rules r JOIN phrases s1 ON s1.phrase = r.source
             JOIN phrases s2 ON s2.phrase = canonical(r.target)
        UNION ALL
        SELECT lhs, phrase, phrase, {math.log(bias)}, {math.log(bias)},
               {math.log(bias) - scale} + log_p_phrase + ln(1 - residual),
               -terminal_count(phrase)::DOUBLE, log_lex_identity, log_lex_identity, count, pivots
        FROM phrases WHERE phrase IN (SELECT source FROM rules)"""

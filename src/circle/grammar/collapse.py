"""A labelled (SAMT) paraphrase grammar collapsed to Hiero's one nonterminal X after pivoting,
so that the thesis's self-paraphrase bias and Hiero's chart apply to it (Ganitkevitch &
Callison-Burch, draft). "Decoding with labels" is the other way: the decoder also reads the
labelled grammar itself (:func:`circle.decoder.chart.match`, ``samt.decoding``).

The labels did their work in the pivot: two bilingual rules paired only when their label and
foreign side matched, and every probability was conditioned on the label. Collapsing keeps those
pairs and marginalises the labels out. A labelling ℓ of an English phrase e (written with X) is
a label of the phrase with labelled nonterminals that reads e once its labels are X; its share
is p(ℓ|e) = c(ℓ) / Σ_ℓ' c(ℓ'), from the fractional counts of the labelled bilingual grammar
(every rule of the English side, as the pivot's p(e) takes them). Then, for e1 → e2 with e1 ≠
e2 (our reading; the draft does not collapse):

* p(e2|e1) = Σ_ℓ p(ℓ|e1) p(e2|e1, ℓ), the labelled rules' forward probabilities (eq. 3.10 or
  3.4-3.8 within the label) weighted by the share of e1's labelling ℓ; p(e1|e2) the same
  with e2's labellings;
* p(e1) = Σ_ℓ c(ℓ) / Σ c, the pivot's p(e) (eq. 3.13's marginal) with the labels summed, and
  p(e1, e2) = p(e2|e1) p(e1);
* the residual p(e1|e1) of eq. 5.2, which the self-paraphrase bias rescales by, is
  1 - Σ_ℓ p(ℓ|e1) (1 - r_ℓ(e1)): a labelling without a paraphrase keeps all its mass (r = 1);
* −T(e2) is the labelled rules' own; the lexical weights and the identity pivot's are the
  best labelling's, the counts and pivots add up.

The draft's other features (black box, ``reordered``, φ_ident) are not carried: the collapsed
grammar has the columns of a Hiero paraphrase grammar, and the paraphraser tunes the thesis's
four features on it. Identity rules (``keep_identity``) are left out: their mass is the
residual, as in a Hiero pivot, and the bias adds identity rules again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from circle.core.schemas import (
    LABELLED_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR,
    SELF_PARAPHRASE,
    paraphrase_grammar_schema,
)
from circle.core.tables import scratch_directory
from circle.grammar.extract import LHS
from circle.grammar.io import (
    carried_metadata,
    checked_parquet,
    connect,
    grammar_schema,
    write_relation,
)

UNLABELLED = rf"regexp_replace({{side}}, '\[[^ \]]+,([12])\]', '[{LHS},\1]', 'g')"
"""SQL of a side with every labelled nonterminal ``[LABEL,k]`` written ``[X,k]``."""


def _unlabelled(side: str) -> str:
    return UNLABELLED.format(side=side)


def collapse_labels(paraphrase_parts: Sequence[str | os.PathLike],
                    self_paraphrase_path: str | os.PathLike,
                    bilingual_path: str | os.PathLike, out_path: str | os.PathLike,
                    out_self_paraphrase_path: str | os.PathLike, lexical_feature: bool = False,
                    threads: int = 1, memory_limit: str | None = None,
                    provenance: Mapping[str, str] | None = None) -> int:
    """Collapse the labelled paraphrase grammar ``paraphrase_parts`` (with the
    ``SELF_PARAPHRASE`` table of its pivot and the labelled bilingual grammar it was pivoted
    from) to X (module doc): a paraphrase grammar at ``out_path`` (unbiased, unsorted; the
    pivoted lexical weights decoder features if ``lexical_feature``, as
    ``paraphrase.lexical_feature`` makes them of a Hiero pivot) and its ``SELF_PARAPHRASE``
    table; returns the number of rules."""
    for part in paraphrase_parts:
        grammar_schema(part, (LABELLED_PARAPHRASE_GRAMMAR,))
    grammar_schema(self_paraphrase_path, (SELF_PARAPHRASE,))
    grammar_schema(bilingual_path, (LABELLED_GRAMMAR,))
    metadata = {**carried_metadata(self_paraphrase_path), "collapsed_labels": "true"}
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        con.execute(f"""
            CREATE TEMP TABLE rules AS
            SELECT lhs, source, target, canonical(target) AS e2, {_unlabelled('source')} AS x1,
                   {_unlabelled('target')} AS x2, log_p_e2_given_e1, log_p_e1_given_e2,
                   neg_target_terminals, log_lex_e2_given_e1, log_lex_e1_given_e2, count,
                   pivots
            FROM {checked_parquet(paraphrase_parts)} WHERE source <> target""")
        # every labelling of the phrases the rules and the residuals name, with its count
        con.execute(f"""
            CREATE TEMP TABLE named AS
            SELECT DISTINCT x1 AS phrase FROM rules
            UNION SELECT DISTINCT canonical(x2) FROM rules
            UNION SELECT DISTINCT {_unlabelled('phrase')} FROM {checked_parquet(
                self_paraphrase_path)}""")
        con.execute(f"""
            CREATE TEMP TABLE labellings AS
            WITH sides AS (SELECT lhs, canonical(target) AS labelled, count
                           FROM {checked_parquet(bilingual_path)})
            SELECT lhs, labelled, {_unlabelled('labelled')} AS phrase, sum(count) AS c
            FROM sides WHERE {_unlabelled('labelled')} IN (SELECT phrase FROM named)
            GROUP BY lhs, labelled""")
        total, = con.execute(f"SELECT sum(count) FROM {checked_parquet(bilingual_path)}"
                             ).fetchone()
        con.execute("""
            CREATE TEMP TABLE shares AS
            SELECT lhs, labelled, phrase, c / sum(c) OVER (PARTITION BY phrase) AS share
            FROM labellings""")
        con.execute(f"""
            CREATE TEMP TABLE marginals AS
            SELECT phrase, ln(sum(c) / {float(total)!r}) AS log_p_phrase
            FROM labellings GROUP BY phrase""")
        relation = con.sql(f"""
            WITH collapsed AS (
                SELECT r.x1 AS source, r.x2 AS target,
                       ln(sum(s1.share * exp(r.log_p_e2_given_e1))) AS log_p_e2_given_e1,
                       ln(sum(s2.share * exp(r.log_p_e1_given_e2))) AS log_p_e1_given_e2,
                       max(r.neg_target_terminals) AS neg_target_terminals,
                       max(r.log_lex_e2_given_e1) AS log_lex_e2_given_e1,
                       max(r.log_lex_e1_given_e2) AS log_lex_e1_given_e2,
                       sum(r.count) AS count, sum(r.pivots)::INTEGER AS pivots
                FROM rules r
                     JOIN shares s1 ON s1.lhs = r.lhs AND s1.labelled = r.source
                     JOIN shares s2 ON s2.lhs = r.lhs AND s2.labelled = r.e2
                GROUP BY r.x1, r.x2)
            SELECT '{LHS}' AS lhs, c.source, c.target, c.log_p_e2_given_e1,
                   c.log_p_e1_given_e2, c.log_p_e2_given_e1 + m.log_p_phrase AS log_p_e1_e2,
                   c.neg_target_terminals, c.log_lex_e2_given_e1, c.log_lex_e1_given_e2,
                   c.count, c.pivots
            FROM collapsed c JOIN marginals m ON m.phrase = c.source""")
        rules = write_relation(relation, out_path,
                               paraphrase_grammar_schema(lexical_feature, identity_feature=False),
                               provenance, metadata)
        residuals = con.sql(f"""
            WITH labelled AS (
                SELECT {_unlabelled('p.phrase')} AS phrase, s.share * (1 - p.residual) AS moved,
                       p.log_lex_identity, p.count, p.pivots
                FROM {checked_parquet(self_paraphrase_path)} p
                     JOIN shares s ON s.lhs = p.lhs AND s.labelled = p.phrase)
            SELECT '{LHS}' AS lhs, l.phrase, greatest(0.0, 1 - sum(l.moved)) AS residual,
                   any_value(m.log_p_phrase) AS log_p_phrase,
                   max(l.log_lex_identity) AS log_lex_identity, sum(l.count) AS count,
                   sum(l.pivots)::INTEGER AS pivots
            FROM labelled l JOIN marginals m USING (phrase)
            GROUP BY l.phrase ORDER BY l.phrase""")
        write_relation(residuals, out_self_paraphrase_path, SELF_PARAPHRASE, provenance,
                       metadata)
        con.close()
    return rules

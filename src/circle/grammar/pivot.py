"""Pivoting a bilingual grammar into an English paraphrase grammar (thesis §3.2, eq. 3.4-3.13).

For each foreign side f, every ordered pair of its English sides (e1, e2) gives a paraphrase rule
e1 → e2 (Bannard & Callison-Burch 2005; Thrax's ``PivotingReducer``). Nonterminals keep the
foreign side's co-indexing, then are renumbered left to right on e1: with f = ``[X,1] de [X,2]``,
e1 = ``[X,2] 's [X,1]`` and e2 = ``[X,1] of [X,2]`` the rule is ``[X,1] 's [X,2]`` →
``[X,2] of [X,1]``, so one foreign nonterminal binds the same span on both sides. English sides
are compared in this canonical numbering, with a flag for whether renumbering swapped them.

Only the ``top_pivots`` foreign phrases with the highest fractional count c(f, e) are used for
each English side e (thesis §3.2.1): a bilingual rule is pivoted only if its f is among the top
pivots of its e (ties broken by f), so both directions of a paraphrase see the same pivots.

Features (``method``):

* ``"features"`` (derived features, the thesis default): p(e2|e1) = sum_f p(e2|f) p(f|e1)
  (eq. 3.12), p(e1|e2) = sum_f p(e1|f) p(f|e2) (eq. 3.10), p(e1, e2) = p(e2|e1) p(e1) (eq. 3.13)
  with p(e1) = c(e1) / sum_e c(e) from the bilingual fractional counts (all rules, before the
  pivot cut). The bilingual probabilities are used as they are (not renormalised over the kept
  pivots), as in Thrax.
* ``"counts"`` (derived counts): c(e1, e2) = sum_f c(f, e1) c(f, e2) (eq. 3.4) over the kept
  rules, p(e1, e2) = c(e1, e2) / c(X) (eq. 3.6), p(e2|e1) and p(e1|e2) by eq. 3.8 and 3.7, whose
  denominators include the identity pair's count, so the conditionals of e1 sum to one with the
  identity; p(e1) = sum_e2 c(e1, e2) / c(X).

Both: ``neg_target_terminals`` = ln exp(-T(e2)); pivoted lexical weights
lex(e2|e1) = sum_f lex(e2|f) lex(f|e1) and the reverse (Thrax's pivoted lexical features), a
decoder feature only with ``lexical_feature=True``.

The pair of a rule with itself (e1 → e1 through the same bilingual rule) is the identity
paraphrase. By default it is dropped, as Madnani (2007) did; its mass stays as the residual
p(e1|e1) = 1 - sum_{e != e1} p(e|e1) (eq. 5.2), which is written with p(e1) and the identity's
lexical weight to a ``SELF_PARAPHRASE`` table for :mod:`circle.grammar.bias`.
``keep_identity=True`` keeps identity pairs as ordinary rules, as Thrax does.

Size: the pairs grow with the square of the English sides per foreign side: the default Bible
training set gives 20.5 M bilingual rules and 225 M (e1, f, e2) pairs, 102 M of them for the
phrases of the tune set's 3,460 references; hierarchical phrases such as ``[X,1] [X,2] ,`` pivot
through thousands of foreign sides. Beyond the thesis, and like Thrax and Ganitkevitch et al.
(2011, "count-threshold before pivoting"), bilingual rules can be pruned before pivoting:
``min_count`` on the fractional count and ``min_probability`` on both p(e|f) and p(f|e) (both
off by default; ``min_count=1`` leaves 250 k rules and 4 M pairs on the Bible set). The kept
rules' probabilities are not renormalised (as in Thrax), so pruned mass joins the residual
of eq. 5.2. Two exact reductions are always applied:
foreign sides with a single English side yield only identity pairs and are skipped, and with
``sentences`` only the phrases e1 that can match a span of those sentences (the English input
the paraphraser will see, as in :mod:`circle.grammar.filter`) are pivoted. The latter is exact
for every rule kept, because a rule's features depend only on the bilingual rules of its two
phrases; the residual of every phrase is likewise computed from the bilingual rules alone,
residual(e) = 1 - sum_{(f,e)} p(f|e) (sum_{(f,e')} p(e'|f) - p(e|f)), so biasing stays exact.

The work is a DuckDB self-join of the bilingual grammar on f followed by a group-by, out of core
(``memory_limit``, spilling next to the output) and streamed to Parquet. The join and group-by run
in partitions: consecutive ranges of the phrases e1, in the written grammar's order, each joining
at most ``partition_pairs`` (e1, f, e2) triples, so their memory is bounded whatever the grammar
and each partition's rules are written as soon as they are summed, without one sort of the whole
table (on the default Bible grammar without pruning, 70.5 M triples for the phrases of the
default 1,068 references, one join spilled 22 GB). The rules, their pivot counts and the phrase
statistics do not depend on the partitions; a feature summed over several foreign sides may
differ in its last bits (relative 2e-14 on that grammar), as each partition's join meets the
terms in another order. With ``threads=1`` (default) the sums are added in a fixed order and
reruns give identical tables; more threads are faster but the last bits of the features may then
differ between runs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb

from circle.grammar.extract import LHS
from circle.grammar.filter import matching_phrases
from circle.grammar.io import (
    GrammarInputError,
    RelationWriter,
    connect,
    grammar_schema,
    sql_string,
    write_relation,
)
from circle.progress import progress
from circle.schemas import GRAMMAR, PARAPHRASE_GRAMMAR, PARAPHRASE_GRAMMAR_LEX, SELF_PARAPHRASE
from circle.tables import scratch_directory

logger = logging.getLogger(__name__)

METHODS = ("features", "counts")

PARTITION_PAIRS = 4_000_000
"""(e1, f, e2) triples summed at once: bounds the memory of the pairing whatever the grammar."""

RULES = f"""
    SELECT '{LHS}' AS lhs, e1 AS source,
           CASE WHEN swap THEN swap_nonterminals(e2) ELSE e2 END AS target,
           ln(p21) AS log_p_e2_given_e1, ln(p12) AS log_p_e1_given_e2,
           ln(joint) AS log_p_e1_e2, -terminal_count(e2)::DOUBLE AS neg_target_terminals,
           ln(lex21) AS log_lex_e2_given_e1, ln(lex12) AS log_lex_e1_given_e2,
           count, pivots::INTEGER AS pivots
    FROM paraphrases ORDER BY source, target"""
"""The paraphrase rules of table ``paraphrases`` in the columns of the written grammar."""


@dataclass(frozen=True)
class PivotStats:
    """What :func:`pivot_grammar` did, from bilingual rules to paraphrase rules and phrases."""

    bilingual_rules: int
    kept_rules: int
    """Bilingual rules among their English side's top pivots."""
    pivot_pairs: int
    """(e1, f, e2) triples joined before summing over f."""
    paraphrase_rules: int
    phrases: int
    seconds: float


def pivot_grammar(grammar_path: str | os.PathLike, out_path: str | os.PathLike,
                  self_paraphrase_path: str | os.PathLike, top_pivots: int = 25,
                  method: str = "features", keep_identity: bool = False,
                  lexical_feature: bool = False, min_count: float = 0.0,
                  min_probability: float = 0.0, sentences: Iterable[str] | None = None,
                  span_limit: int = 10, threads: int = 1, memory_limit: str | None = None,
                  partition_pairs: int = PARTITION_PAIRS,
                  provenance: Mapping[str, str] | None = None) -> PivotStats:
    """Pivot the ``GRAMMAR`` table at ``grammar_path`` into a paraphrase grammar at ``out_path``.

    Writes ``PARAPHRASE_GRAMMAR`` (``PARAPHRASE_GRAMMAR_LEX`` with ``lexical_feature``) and the
    per-phrase ``SELF_PARAPHRASE`` table the bias needs. With ``sentences`` (tokenised English),
    only phrases matching a span of at most ``span_limit`` words of them are paraphrased.
    ``min_count``/``min_probability`` prune bilingual rules before pivoting (see module doc).
    The pairs are formed, summed and written in partitions of phrases e1 joining at most
    ``partition_pairs`` (e1, f, e2) triples each (see the module doc for what may depend on it).
    """
    if method not in METHODS:
        raise ValueError(f"unknown pivot feature method '{method}'; choose one of {METHODS}")
    if min_count < 0 or not 0 <= min_probability <= 1:
        raise ValueError("min_count must be >= 0 and min_probability in [0, 1]")
    if top_pivots < 1 or partition_pairs < 1:
        raise ValueError("top_pivots and partition_pairs must be at least 1")
    grammar_schema(grammar_path, (GRAMMAR,))
    started = time.perf_counter()
    metadata = {"method": method, "top_pivots": str(top_pivots),
                "keep_identity": str(keep_identity).lower(), "min_count": repr(min_count),
                "min_probability": repr(min_probability), "bias": "0"}
    if sentences is not None:
        sentences = list(sentences)
        metadata.update(phrases_from_sentences=str(len(sentences)),
                        phrase_span_limit=str(span_limit))
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        for name, step in (
                ("loaded the bilingual rules and chose the pivots",
                 lambda: _load_bilingual(con, grammar_path, top_pivots, min_count,
                                         min_probability)),
                ("computed the phrase statistics", lambda: _phrase_statistics(con, method)),
                ("chose the phrases to paraphrase",
                 lambda: _choose_sources(con, sentences, span_limit, keep_identity)),
                ("gathered what the pairing reads",
                 lambda: _pairing_inputs(con, keep_identity))):
            step_started = time.perf_counter()
            step()
            logger.info("%s in %.1f s", name, time.perf_counter() - step_started)
        partitions = _partitions(con, partition_pairs)
        schema = PARAPHRASE_GRAMMAR_LEX if lexical_feature else PARAPHRASE_GRAMMAR
        con.execute("CREATE TEMP TABLE paraphrased_phrases (e VARCHAR)")
        pairs = 0
        with RelationWriter(out_path, schema, provenance, metadata) as writer:
            for first, last in progress(partitions, logger, "pivoting", len(partitions),
                                        "partitions"):
                _pair(con, keep_identity, first, last)
                _features(con, method)
                writer.write(con.sql(RULES))
                pairs += con.execute("SELECT coalesce(sum(pivots), 0) FROM pairs").fetchone()[0]
                con.execute("""INSERT INTO paraphrased_phrases
                               SELECT e1 FROM paraphrases UNION SELECT e2 FROM paraphrases""")
                con.execute("DROP TABLE paraphrases; DROP TABLE pairs")
        phrases = write_relation(con.sql(f"""
            SELECT '{LHS}' AS lhs, e AS phrase, residual, ln(p_e) AS log_p_phrase,
                   ln(lex_identity) AS log_lex_identity, count_identity AS count,
                   pivots_identity::INTEGER AS pivots
            FROM phrases
            WHERE paraphrased AND e IN (SELECT e FROM paraphrased_phrases)
            ORDER BY phrase"""),
            self_paraphrase_path, SELF_PARAPHRASE, provenance, metadata)
        counts = con.execute("SELECT (SELECT count(*) FROM bilingual), (SELECT count(*) FROM kept)"
                             ).fetchall()[0]
    stats = PivotStats(counts[0], counts[1], int(pairs), writer.rows, phrases,
                       time.perf_counter() - started)
    logger.info("pivoted %d bilingual rules (%d among the top pivots, %d pairs) into %d "
                "paraphrase rules of %d phrases in %.1f s", stats.bilingual_rules,
                stats.kept_rules, stats.pivot_pairs, stats.paraphrase_rules, phrases,
                stats.seconds)
    return stats


def _load_bilingual(con: duckdb.DuckDBPyConnection, grammar_path: str | os.PathLike,
                    top_pivots: int, min_count: float, min_probability: float) -> None:
    """Tables ``bilingual`` (all rules, canonical English side, probabilities), ``kept`` (the
    rules that pass the pruning thresholds and are among their English side's top pivots, with
    c(f), sum_e p(e|f) and the number of English sides over the kept rules of f), ``totals``
    (c(X) of eq. 3.6) and ``marginals`` (p(e) from all bilingual counts)."""
    lhs = con.execute(f"SELECT DISTINCT lhs FROM read_parquet({sql_string(grammar_path)})"
                      ).fetchall()
    if lhs != [(LHS,)]:
        raise GrammarInputError(f"{grammar_path}: pivoting needs a Hiero grammar whose only "
                                f"left-hand side is {LHS}, found {sorted(x for x, in lhs)}")
    con.execute(f"""
        CREATE TEMP TABLE bilingual AS
        SELECT source AS f, canonical(target) AS e, is_swapped(target) AS swapped,
               count AS c, exp(log_p_e_given_f) AS p_e_f, exp(log_p_f_given_e) AS p_f_e,
               exp(log_lex_e_given_f) AS lex_e_f, exp(log_lex_f_given_e) AS lex_f_e
        FROM read_parquet({sql_string(grammar_path)})""")
    con.execute(f"""
        CREATE TEMP TABLE kept AS
        WITH pruned AS (
            SELECT * FROM bilingual
            WHERE c >= {min_count} AND p_e_f >= {min_probability} AND p_f_e >= {min_probability}),
        ranked AS (
            SELECT e, f, row_number() OVER (PARTITION BY e ORDER BY sum(c) DESC, f) AS rank
            FROM pruned GROUP BY e, f)
        SELECT b.*, sum(b.c) OVER (PARTITION BY b.f) AS c_f,
               sum(b.p_e_f) OVER (PARTITION BY b.f) AS p_kept_f,
               count(*) OVER (PARTITION BY b.f) AS senses
        FROM pruned b JOIN ranked r USING (e, f) WHERE r.rank <= {top_pivots}""")
    con.execute("""
        CREATE TEMP TABLE totals AS
        SELECT sum(c_f * c_f) AS pairs
        FROM (SELECT f, any_value(c_f) AS c_f FROM kept GROUP BY f)""")
    con.execute("""
        CREATE TEMP TABLE marginals AS
        SELECT e, sum(c) / (SELECT sum(c) FROM bilingual) AS p_bilingual
        FROM bilingual GROUP BY e""")


def _phrase_statistics(con: duckdb.DuckDBPyConnection, method: str) -> None:
    """Table ``phrases``: per English side, the residual of eq. 5.2, p(e), the identity pair's
    count, pivots and lexical weight, and whether it has a paraphrase other than itself, from
    the kept bilingual rules alone.

    Derived features: residual = 1 - sum_(f,e) p(f|e) (sum_(f,e') p(e'|f) - p(e|f)). Derived
    counts: residual = c(e, e) / sum_e' c(e, e') (eq. 3.8 for the identity pair)."""
    if method == "features":
        residual = "greatest(0.0, 1.0 - sum(k.p_f_e * (k.p_kept_f - k.p_e_f)))"
        p_e = "any_value(m.p_bilingual)"
    else:
        residual = "sum(k.c * k.c) / sum(k.c * k.c_f)"
        p_e = "sum(k.c * k.c_f) / any_value(t.pairs)"
    con.execute(f"""
        CREATE TEMP TABLE phrases AS
        SELECT k.e, {residual} AS residual, {p_e} AS p_e, sum(k.c * k.c_f) AS c_e_pairs,
               sum(k.c * k.c) AS count_identity, count(*) AS pivots_identity,
               sum(k.lex_e_f * k.lex_f_e) AS lex_identity, max(k.senses) > 1 AS paraphrased
        FROM kept k JOIN marginals m USING (e), totals t
        GROUP BY k.e""")


def _choose_sources(con: duckdb.DuckDBPyConnection, sentences: list[str] | None,
                    span_limit: int, keep_identity: bool) -> None:
    """Table ``sources``: the phrases to paraphrase (all, or those matching ``sentences``);
    without identity rules, only phrases that have another paraphrase."""
    eligible = "SELECT e FROM phrases" + ("" if keep_identity else " WHERE paraphrased")
    if sentences is None:
        con.execute(f"CREATE TEMP TABLE sources AS {eligible}")
        return
    wanted = matching_phrases(con, eligible.replace("SELECT e ", "SELECT e AS phrase "),
                              sentences, span_limit)
    con.register("wanted", wanted)
    con.execute("CREATE TEMP TABLE sources AS SELECT phrase AS e FROM wanted")
    con.unregister("wanted")


def _shared(keep_identity: bool) -> str:
    """The SQL condition on a kept rule for taking part in pairs: its foreign side has another
    English side (or, keeping identity pairs, any rule)."""
    return f"(senses > 1 OR {str(keep_identity).lower()})"


def _pairing_inputs(con: duckdb.DuckDBPyConnection, keep_identity: bool) -> None:
    """Tables ``source_rules`` (the shared kept rules of the phrases to paraphrase: what the
    partitions are cut from) and ``lookup`` (p(e) and the pair count of every English side
    their foreign sides pivot to: what the features read)."""
    shared = _shared(keep_identity)
    con.execute(f"""
        CREATE TEMP TABLE source_rules AS
        SELECT * FROM kept WHERE {shared} AND e IN (SELECT e FROM sources)""")
    con.execute(f"""
        CREATE TEMP TABLE lookup AS
        SELECT m.e, m.p_bilingual, s.c_e_pairs
        FROM marginals m JOIN phrases s USING (e)
        WHERE m.e IN (SELECT e FROM kept
                      WHERE {shared} AND f IN (SELECT f FROM source_rules))""")


def _partitions(con: duckdb.DuckDBPyConnection, partition_pairs: int
                ) -> list[tuple[str, str]]:
    """Consecutive ranges (first, last) of the phrases to paraphrase in sort order, each joining
    at most ``partition_pairs`` (e1, f, e2) triples (a phrase joining more is a range of its
    own). A phrase e1 joins, through each of its kept rules, every kept rule of that foreign
    side, so its triples are the sum of its foreign sides' senses; the ranges follow the order
    of the written grammar, whose partitions are therefore written one after the other."""
    loads = con.execute("SELECT e, sum(senses) FROM source_rules GROUP BY e ORDER BY e"
                        ).fetchall()
    partitions: list[list[str]] = []
    load = 0
    for phrase, triples in loads:
        if not partitions or load + triples > partition_pairs:
            partitions.append([phrase, phrase])
            load = 0
        partitions[-1][1] = phrase
        load += triples
    return [(first, last) for first, last in partitions]


def _pair(con: duckdb.DuckDBPyConnection, keep_identity: bool, first: str, last: str) -> None:
    """Table ``pairs``: per (e1, e2, swap) with e1 from ``first`` to ``last``, sums over the
    shared foreign sides."""
    distinct = "" if keep_identity else "AND NOT (a.e = b.e AND a.swapped = b.swapped)"
    con.execute(f"""
        CREATE TEMP TABLE pairs AS
        WITH shared AS (SELECT * FROM kept WHERE {_shared(keep_identity)})
        SELECT a.e AS e1, b.e AS e2, a.swapped <> b.swapped AS swap,
               sum(b.p_e_f * a.p_f_e) AS p21_features, sum(a.p_e_f * b.p_f_e) AS p12_features,
               sum(b.lex_e_f * a.lex_f_e) AS lex21, sum(a.lex_e_f * b.lex_f_e) AS lex12,
               sum(a.c * b.c) AS count, count(*) AS pivots
        FROM (SELECT * FROM shared WHERE e IN (SELECT e FROM sources)
                AND e BETWEEN {sql_string(first)} AND {sql_string(last)}) a
             JOIN shared b ON a.f = b.f {distinct}
        GROUP BY a.e, b.e, a.swapped <> b.swapped""")


def _features(con: duckdb.DuckDBPyConnection, method: str) -> None:
    """Table ``paraphrases``: the pairs with p(e2|e1), p(e1|e2), p(e1,e2) by ``method``."""
    if method == "features":
        columns = """p.p21_features AS p21, p.p12_features AS p12,
                     p.p21_features * l1.p_bilingual AS joint"""
    else:
        columns = """p.count / l1.c_e_pairs AS p21, p.count / l2.c_e_pairs AS p12,
                     p.count / t.pairs AS joint"""
    con.execute(f"""
        CREATE TEMP TABLE paraphrases AS
        SELECT p.e1, p.e2, p.swap, {columns}, p.lex21, p.lex12, p.count, p.pivots
        FROM pairs p JOIN lookup l1 ON l1.e = p.e1 JOIN lookup l2 ON l2.e = p.e2, totals t""")

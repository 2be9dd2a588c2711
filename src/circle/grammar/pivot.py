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

Several pivot languages (``grammars``, one bilingual grammar per foreign language c, each
extracted from all of that language's bitexts, so that within a language a foreign phrase f
pivots between the English phrases of every English version paired with it): a pivot is a
pair (c, f), and foreign phrases of different languages never meet. Bannard & Callison-Burch
(2005), pooling several Europarl languages, rank paraphrases by the sum over languages of the
single-language sums, sum_c sum_{f in c} p_c(f|e1) p_c(e2|f); the thesis's future work (§6.5)
describes this as averaging over the languages. Here each language's sum is weighted by
p(c|e1) = 1/|C(e1)|, C(e1) the languages whose grammar has a rule with English side e1:

    p(e2|e1) = 1/|C(e1)| sum_{c in C(e1)} sum_{f in c} p_c(e2|f) p_c(f|e1)

(eq. 3.12 per language), which orders the e2 of each e1 as B&CB's sum does and is again a
distribution, so the residual of eq. 5.2 and the bias stay in range; likewise p(e1|e2)
(eq. 3.10, with 1/|C(e2)|) and the pivoted lexical weights. p(e1) of eq. 3.13 pools the
bilingual counts of every language (the English phrase's relative frequency in all the English
seen). Derived counts pool the same way: c(e1, e2) = sum_c sum_{f in c} c_c(f, e1) c_c(f, e2)
(eq. 3.4 over the pivots of every language, B&CB's sum on counts) and c(X) over all of them, so
eq. 3.6-3.8 are unchanged and larger bitexts weigh more. ``top_pivots``, ``min_count`` and
``min_probability`` apply within each language, to its own p_c. The ``SELF_PARAPHRASE`` table is
computed from the combined features, so the bias (:mod:`circle.grammar.bias`) is applied after
combination. With one grammar every weight is 1 and the tables are the single pivot's.

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

**Labelled pivoting** (``labelled=True``; Ganitkevitch & Callison-Burch, draft §4 "SCFGs in
Paraphrasing"): the bilingual grammar is a ``LABELLED_GRAMMAR`` (SAMT labels,
:mod:`circle.grammar.extract`), and two rules C → ⟨γ, α1, ∼1⟩ and C → ⟨γ, α2, ∼2⟩ pair only when
their left-hand side C and foreign side γ (its nonterminals' labels included) match, giving
C → ⟨α1, α2, ∼⟩ with ∼ = ∼1⁻¹ ∘ ∼2. The same join does it: f and e are keyed by C
(``<C>PIVOT_MARK<side>``), so everything above (top pivots, thresholds, residuals, partitions)
holds per label, and ∼ is the composition the Hiero pivot already makes: e2 keeps γ's
co-indexing (∼2) and e1's nonterminals are renumbered left to right (∼1⁻¹), the labels staying
with their positions. The phrase table is keyed by (lhs, phrase). Features, by the draft's three
groups (§4.1 "Feature Computation"):

1. *Rule-local*, computed on ⟨α1, α2⟩: ``neg_target_terminals`` (-T(α2), thesis §3.2.2),
   ``reordered`` (the draft's "non-terminal reordering": 1 when ∼ swaps the two nonterminals)
   and φ_ident (``identity``, 1 when α1 = α2, the expression of the biased grammars,
   :data:`circle.grammar.bias.IDENTITY_COLUMN`). φ_ident only fires on identity pairs, so a
   labelled pivot meant for tuning φ_ident keeps them (``keep_identity=True``, as the draft).
2. *Aggregate counts the pivot approximates* (the draft's eq. 1, Bannard & Callison-Burch):
   the lexical weights lex(α2|α1) = Σ_γ lex(α2|γ) lex(γ|α1) and the reverse, summed within C.
   The thesis's p(e2|e1), p(e1|e2), p(e1, e2) (eq. 3.10-3.13, derived features or counts) are
   kept as in the Hiero grammar, conditioned on C: the pivot sum over the same γ.
3. *Black box*, which the pair cannot reconstruct; the draft multiplies the two rules' values
   for relative frequencies and adds them for penalties: ``log_bb_p_e_given_f`` = ln p(α1|C,γ)
   p(α2|C,γ), ``log_bb_p_f_given_e`` = ln p(γ|C,α1) p(γ|C,α2), ``log_bb_p_rule_given_lhs`` =
   ln p(r1|C) p(r2|C) with p(r|C) = c(r)/c(C) ("the rule's probability conditioned on the
   left-hand side"), and ``bb_rarity`` = exp(1 - c1) + exp(1 - c2) (Thrax's rarity penalty;
   SAMT's unbalancedness penalty has no counterpart in our bilingual grammar). The draft does
   not say how a pair reached through several γ combines them; we keep the best pivot's value
   per feature (the largest product, the smallest penalty), which does not depend on the
   order of the pivots. With several pivot languages p(γ|C,α) is the p(c|e)-weighted value.

Pruning (draft §4.2): the bilingual rules' count and probability thresholds are
``min_count`` and ``min_probability`` above; ``top_paraphrases`` keeps the n best paraphrases
α2 of each phrase α1 (the draft's "top n alternatives" per pattern) ranked by p(α2|α1)
lex(α2|α1), "a combination of translation and lexical probability"; 0 (default) keeps all. The
draft gives no values: ``bench/samt_grammar.py`` reports the ones we use.

The work is a DuckDB self-join of the bilingual grammar on f followed by a group-by, out of core
(``memory_limit``, spilling next to the output) and streamed to Parquet, in two steps that the
workflow runs as jobs (:func:`pivot_grammar` runs them in one process):

1. :func:`prepare_pivot` chooses the pivots, computes the phrase statistics (and writes the
   ``SELF_PARAPHRASE`` table), chooses the phrases to paraphrase and writes what the pairing
   reads (:class:`PivotWork`): the rules the pairs go through, the phrases e1 cut into
   partitions and the partitions dealt to ``jobs`` pairing jobs, and the phrase lookup.
2. :func:`pivot_part` (one per job, independent, so a cluster runs them side by side) pairs its
   partitions: consecutive ranges of the phrases e1 in sort order, each joining at most
   ``partition_pairs`` (e1, f, e2) triples (with several jobs, at most an even share of all
   triples, so every job gets work), so their memory is bounded whatever the grammar; each
   partition reads only the rules of the foreign sides its phrases pivot through, and its rules
   are written as soon as they are summed, unsorted (on the default Bible grammar without
   pruning, 70.5 M triples for the phrases of the default 1,068 references, one join spilled
   22 GB).

The paraphrase grammar is the jobs' parts together (:func:`grammar_parts`), each a table of the
grammar's schema with its rules in no particular order: the grammars the decoder reads are the
biased ones, which :func:`circle.grammar.bias.bias_grammar` writes from the parts, sorted
(a gathering job that rewrote the parts as one sorted table cost 45-50 s on the exact pivot of
the default grammar, a fifth of the pivot, for a table nothing reads as a whole).

The rules, their pivot counts and the phrase statistics do not depend on the partitions or the
jobs; a feature summed over several foreign sides may differ in its last bits (relative 2e-14 on
the default grammar), as each partition's join meets the terms in another order. With
``threads=1`` (default) the sums are added in a fixed order and reruns with the same
``memory_limit`` give identical tables; more threads are faster but the last bits of the
features may then differ between runs. So may another ``memory_limit`` when DuckDB spills, as a
spilled aggregate adds its partial sums in another order: the default pruned pivot's preparation
does not spill at the workflow's 6,000 MB (60 % of the job's request,
:data:`circle.pipeline.resources.DUCKDB_SHARE`); at 4,000 and at 3,500 MB it does, and the two
tables differ in the last bit of p(e1, e2) in 32,560 of the 2.17 M rules.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from circle.core.progress import progress
from circle.core.schemas import (
    EVALSET,
    GRAMMAR,
    LABELLED_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR,
    LABELLED_PIVOT_RULES,
    PIVOT_LOOKUP,
    PIVOT_RULES,
    PIVOT_SOURCES,
    SELF_PARAPHRASE,
    TableSchema,
    paraphrase_grammar_schema,
)
from circle.core.tables import (
    parquet_rows,
    read_metadata,
    read_table,
    scratch_directory,
    write_table,
)
from circle.grammar.bias import IDENTITY_COLUMN
from circle.grammar.extract import LHS
from circle.grammar.filter import matching_phrases
from circle.grammar.io import (
    GrammarInputError,
    RelationWriter,
    carried_metadata,
    checked_parquet,
    connect,
    grammar_schema,
    sql_string,
    write_relation,
)

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
    FROM paraphrases"""
"""The paraphrase rules of table ``paraphrases`` in the columns of the written grammar."""

LABELLED_RULES = f"""
    SELECT lhs, source, target, log_p_e2_given_e1, log_p_e1_given_e2, log_p_e1_e2,
           neg_target_terminals, log_lex_e2_given_e1, log_lex_e1_given_e2,
           log_bb_p_e_given_f, log_bb_p_f_given_e, log_bb_p_rule_given_lhs, bb_rarity,
           reordered, {IDENTITY_COLUMN}, count, pivots
    FROM (SELECT split_part(e1, chr(31), 1) AS lhs,
                 substr(e1, strpos(e1, chr(31)) + 1) AS source,
                 CASE WHEN swap THEN swap_nonterminals(phrase2) ELSE phrase2 END AS target,
                 ln(p21) AS log_p_e2_given_e1, ln(p12) AS log_p_e1_given_e2,
                 ln(joint) AS log_p_e1_e2,
                 -terminal_count(phrase2)::DOUBLE AS neg_target_terminals,
                 ln(lex21) AS log_lex_e2_given_e1, ln(lex12) AS log_lex_e1_given_e2,
                 ln(bb_p_ef) AS log_bb_p_e_given_f, ln(bb_p_fe) AS log_bb_p_f_given_e,
                 ln(bb_p_rule) AS log_bb_p_rule_given_lhs, bb_rarity,
                 swap::DOUBLE AS reordered, count, pivots::INTEGER AS pivots
          FROM (SELECT *, substr(e2, strpos(e2, chr(31)) + 1) AS phrase2 FROM paraphrases))"""
"""The labelled paraphrase rules of table ``paraphrases``: the key ``<lhs>\\x1f<phrase>`` of e1
split into the rule's label and source, and the draft's features (module doc)."""


PIVOT_MARK = "\x1f"
"""With several pivot languages, a foreign side is keyed ``<language number>PIVOT_MARK<f>``,
so that the pivots (c, f) of different languages never meet, whatever their text."""

Grammars = str | os.PathLike | Sequence[str | os.PathLike]
"""The bilingual ``GRAMMAR`` table(s) a paraphrase grammar is pivoted from: one, or one per
pivot language (module doc)."""


def pivot_languages(grammars: Grammars) -> list[Path]:
    """The pivot grammars ``grammars`` as a list, one per pivot language, each given once."""
    paths = ([Path(grammars)] if isinstance(grammars, str | os.PathLike)
             else [Path(grammar) for grammar in grammars])
    if not paths:
        raise ValueError("pivoting needs at least one bilingual grammar")
    if len(set(paths)) < len(paths):
        raise ValueError(f"a pivot grammar is given twice: {[str(p) for p in paths]}")
    return paths


@dataclass(frozen=True)
class PivotOptions:
    """How a bilingual grammar is pivoted (config key ``paraphrase`` and the decoder's span
    limit; the module doc explains each)."""

    top_pivots: int = 25
    method: str = "features"
    keep_identity: bool = False
    lexical_feature: bool = False
    min_count: float = 0.0
    min_probability: float = 0.0
    span_limit: int = 10
    """Longest span of the ``sentences`` a phrase to paraphrase may match."""
    partition_pairs: int = PARTITION_PAIRS
    labelled: bool = False
    """Pivot a ``LABELLED_GRAMMAR`` (SAMT) into a ``LABELLED_PARAPHRASE_GRAMMAR`` (module doc)."""
    top_paraphrases: int = 0
    """Keep only the n best paraphrases e2 of each phrase e1 (the draft's top-n per pattern, by
    p(e2|e1) lex(e2|e1)); 0 keeps them all."""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown pivot feature method '{self.method}'; choose one of "
                             f"{METHODS}")
        if self.min_count < 0 or not 0 <= self.min_probability <= 1:
            raise ValueError("min_count must be >= 0 and min_probability in [0, 1]")
        if self.top_pivots < 1 or self.partition_pairs < 1:
            raise ValueError("top_pivots and partition_pairs must be at least 1")
        if self.top_paraphrases < 0:
            raise ValueError("top_paraphrases must be 0 (all) or more")

    @classmethod
    def from_config(cls, paraphrase: Mapping, span_limit: int) -> PivotOptions:
        """The options of config section ``paraphrase`` (with ``decoder.span_limit``)."""
        return cls(top_pivots=paraphrase["top_pivots"], method=paraphrase["method"],
                   keep_identity=paraphrase["keep_identity"],
                   lexical_feature=paraphrase["lexical_feature"],
                   min_count=paraphrase["min_count"],
                   min_probability=paraphrase["min_probability"], span_limit=span_limit)

    @property
    def schema(self) -> TableSchema:
        """The schema of the paraphrase grammar written."""
        if self.labelled:
            return LABELLED_PARAPHRASE_GRAMMAR
        return paraphrase_grammar_schema(self.lexical_feature, identity_feature=False)

    def metadata(self, sentences: int | None) -> dict[str, str]:
        """What the grammar and the phrase table record of how they were made, from
        ``sentences`` sentences' phrases (None: every phrase)."""
        metadata = {"method": self.method, "top_pivots": str(self.top_pivots),
                    "keep_identity": str(self.keep_identity).lower(),
                    "min_count": repr(self.min_count),
                    "min_probability": repr(self.min_probability), "bias": "0"}
        if self.labelled:
            metadata["labelled"] = "true"
        if self.top_paraphrases:
            metadata["top_paraphrases"] = str(self.top_paraphrases)
        if sentences is not None:
            metadata.update(phrases_from_sentences=str(sentences),
                            phrase_span_limit=str(self.span_limit))
        return metadata


@dataclass(frozen=True)
class PivotWork:
    """The tables :func:`prepare_pivot` writes for the pairing jobs: ``rules`` (``PIVOT_RULES``,
    the kept rules the pairs go through), ``sources`` (``PIVOT_SOURCES``, the phrases e1 with
    their partition and job) and ``lookup`` (``PIVOT_LOOKUP``, what the features read of every
    phrase e1 or e2)."""

    rules: Path
    sources: Path
    lookup: Path

    @classmethod
    def inside(cls, directory: str | os.PathLike) -> PivotWork:
        directory = Path(directory)
        return cls(directory / "rules.parquet", directory / "sources.parquet",
                   directory / "lookup.parquet")


@dataclass(frozen=True)
class PivotStats:
    """What pivoting did, from bilingual rules to paraphrase rules and phrases."""

    bilingual_rules: int
    kept_rules: int
    """Bilingual rules among their English side's top pivots."""
    pivot_pairs: int
    """(e1, f, e2) triples joined before summing over f."""
    paraphrase_rules: int
    phrases: int


def reference_sentences(evalset_paths: Iterable[str | os.PathLike]) -> list[str]:
    """Every reference of the evaluation sets (``EVALSET`` tables, tokenised), each once, in
    sort order: the sentences whose phrases a pivot with ``paraphrase.phrases_from``
    paraphrases."""
    return sorted({reference for path in evalset_paths
                   for references in read_table(path, EVALSET, columns=["references"])
                   ["references"] for reference in references})


def grammar_parts(directory: str | os.PathLike, jobs: int) -> list[Path]:
    """The parts of a paraphrase grammar pivoted by ``jobs`` pairing jobs into ``directory``."""
    return [Path(directory) / f"part{job}.parquet" for job in range(jobs)]


def pivot_grammar(grammars: Grammars, out_dir: str | os.PathLike,
                  self_paraphrase_path: str | os.PathLike,
                  sentences: Iterable[str] | None = None, jobs: int = 1, threads: int = 1,
                  memory_limit: str | None = None,
                  provenance: Mapping[str, str] | None = None, **options) -> PivotStats:
    """Pivot the ``GRAMMAR`` table(s) ``grammars`` into a paraphrase grammar in ``jobs``
    parts in ``out_dir`` (:func:`grammar_parts`) and its ``SELF_PARAPHRASE`` table, in one
    process: the two steps of the module doc, the pairing jobs one after the other.
    ``options`` are :class:`PivotOptions`."""
    started = time.perf_counter()
    options = PivotOptions(**options)
    parts = grammar_parts(out_dir, jobs)
    with scratch_directory(Path(out_dir) / "pivoting") as scratch:
        work = PivotWork.inside(scratch)
        prepare_pivot(grammars, work, self_paraphrase_path, options, sentences, jobs,
                      threads, memory_limit, provenance)
        for job, part in enumerate(parts):
            pivot_part(work, job, part, self_paraphrase_path, options, threads, memory_limit,
                       provenance)
        stats = pivot_stats(parts, work.sources, self_paraphrase_path)
    logger.info("pivoting took %.1f s", time.perf_counter() - started)
    return stats


def prepare_pivot(grammars: Grammars, work: PivotWork,
                  self_paraphrase_path: str | os.PathLike, options: PivotOptions,
                  sentences: Iterable[str] | None = None, jobs: int = 1, threads: int = 1,
                  memory_limit: str | None = None,
                  provenance: Mapping[str, str] | None = None) -> None:
    """Step 1 (module doc): the ``SELF_PARAPHRASE`` table and the :class:`PivotWork` tables of
    ``jobs`` pairing jobs. With ``sentences`` (tokenised English), only phrases matching a span
    of at most ``options.span_limit`` words of them are paraphrased."""
    if jobs < 1:
        raise ValueError(f"pivoting needs at least one pairing job, got {jobs}")
    grammars = pivot_languages(grammars)
    for grammar in grammars:
        grammar_schema(grammar, (LABELLED_GRAMMAR,) if options.labelled else (GRAMMAR,))
    if sentences is not None:
        sentences = list(sentences)
    metadata = options.metadata(None if sentences is None else len(sentences))
    metadata["pivot_languages"] = str(len(grammars))
    # p(e) of the phrase table: from the bilingual counts, or by eq. 3.6 from the pair counts
    p_e = ("p_bilingual" if options.method == "features"
           else "c_e_pairs / (SELECT pairs FROM totals)")
    with scratch_directory(work.sources) as spill:
        con = connect(threads, memory_limit, spill)
        for name, step in (
                ("loaded the bilingual rules and chose the pivots",
                 lambda: _load_bilingual(con, grammars, options.top_pivots,
                                         options.min_count, options.min_probability,
                                         options.labelled)),
                ("computed the phrase statistics",
                 lambda: _phrase_statistics(con, options.method)),
                ("chose the phrases to paraphrase",
                 lambda: _choose_sources(con, sentences, options.span_limit,
                                         options.keep_identity, options.labelled)),
                ("gathered what the pairing reads",
                 lambda: _pairing_inputs(con, options.keep_identity))):
            step_started = time.perf_counter()
            step()
            logger.info("%s in %.1f s", name, time.perf_counter() - step_started)
        labelled = ", p_rule_lhs, rarity" if options.labelled else ""
        write_relation(con.sql(f"""
            SELECT f, e, swapped, c, p_e_f, weight * p_f_e AS p_f_e, lex_e_f,
                   weight * lex_f_e AS lex_f_e{labelled}
            FROM pairing_rules"""),
            work.rules, LABELLED_PIVOT_RULES if options.labelled else PIVOT_RULES, provenance)
        bilingual, kept, total_pairs = con.execute("""
            SELECT (SELECT count(*) FROM bilingual), kept_rules, pairs FROM totals"""
                                                   ).fetchall()[0]
        write_relation(con.sql("SELECT e, p_bilingual, c_e_pairs FROM lookup"), work.lookup,
                       PIVOT_LOOKUP, provenance, {"total_pairs": repr(total_pairs)})
        loads = con.execute("SELECT e, sum(senses) FROM source_rules GROUP BY e ORDER BY e"
                            ).fetchall()
        sources = _deal(loads, options.partition_pairs, jobs)
        write_table(sources, work.sources, PIVOT_SOURCES, provenance,
                    {"bilingual_rules": str(bilingual), "kept_rules": str(kept),
                     "jobs": str(jobs)})
        # every phrase of a written rule is in the lookup (the features join it), and every
        # phrase of the lookup is e1 or e2 of a written rule
        lhs_phrase = ("split_part(e, chr(31), 1) AS lhs, substr(e, strpos(e, chr(31)) + 1)"
                      if options.labelled else f"'{LHS}' AS lhs, e")
        phrases = write_relation(con.sql(f"""
            SELECT {lhs_phrase} AS phrase, residual, ln({p_e}) AS log_p_phrase,
                   ln(lex_identity) AS log_lex_identity, count_identity AS count,
                   pivots_identity::INTEGER AS pivots
            FROM phrases
            WHERE paraphrased AND e IN (SELECT e FROM lookup)
            ORDER BY phrase{", lhs" if options.labelled else ""}"""),
            self_paraphrase_path, SELF_PARAPHRASE, provenance, metadata)
    logger.info("%d bilingual rules, %d among the top pivots; %d phrases to paraphrase in %d "
                "partitions over %d jobs; %d phrases in the self-paraphrase table", bilingual,
                kept, len(sources), sources["partition"].nunique(), jobs, phrases)


def pivot_part(work: PivotWork, job: int, out_path: str | os.PathLike,
               self_paraphrase_path: str | os.PathLike, options: PivotOptions,
               threads: int = 1, memory_limit: str | None = None,
               provenance: Mapping[str, str] | None = None) -> None:
    """Step 2 (module doc): the paraphrase rules of job ``job``'s partitions at ``out_path``,
    a part of the grammar with the metadata of the ``SELF_PARAPHRASE`` table prepared with
    them."""
    sources = read_table(work.sources, PIVOT_SOURCES)
    jobs = int(read_metadata(work.sources)["jobs"])
    if not 0 <= job < jobs:
        raise ValueError(f"{work.sources}: pairing job {job} asked for, it was made for "
                         f"{jobs} jobs")
    mine = sources[sources["job"] == job]
    partitions = mine.groupby("partition", sort=True)["e"].agg(["min", "max"])
    with scratch_directory(out_path) as spill:
        con = connect(threads, memory_limit, spill)
        con.execute(f"""
            CREATE TEMP TABLE rules AS SELECT * FROM {checked_parquet(work.rules)};
            CREATE TEMP TABLE lookup AS SELECT * FROM {checked_parquet(work.lookup)}""")
        con.execute("CREATE TEMP TABLE totals AS SELECT ?::DOUBLE AS pairs",
                    [float(read_metadata(work.lookup)["total_pairs"])])
        con.register("job_sources", mine[["e"]])
        con.execute("CREATE TEMP TABLE sources AS SELECT e FROM job_sources")
        con.unregister("job_sources")
        with RelationWriter(out_path, options.schema, provenance,
                            carried_metadata(self_paraphrase_path)) as writer:
            for first, last in progress(partitions.itertuples(index=False, name=None), logger,
                                        f"pairing job {job}", len(partitions), "partitions"):
                _pair(con, options.keep_identity, first, last, options.labelled)
                _features(con, options.method, options.labelled)
                if options.top_paraphrases:
                    _keep_best(con, options.top_paraphrases)
                writer.write(con.sql(LABELLED_RULES if options.labelled else RULES))
                con.execute("DROP TABLE paraphrases; DROP TABLE pairs")


def pivot_stats(parts: Sequence[str | os.PathLike], sources: str | os.PathLike,
                self_paraphrase_path: str | os.PathLike) -> PivotStats:
    """What the pivot that wrote ``parts``, the ``PIVOT_SOURCES`` table ``sources`` and the
    ``SELF_PARAPHRASE`` table did."""
    pairs = sum(pc.sum(pq.read_table(part, columns=["pivots"])["pivots"]).as_py() or 0
                for part in parts)
    prepared = read_metadata(sources)
    stats = PivotStats(int(prepared["bilingual_rules"]), int(prepared["kept_rules"]), pairs,
                       sum(parquet_rows(part) for part in parts),
                       parquet_rows(self_paraphrase_path))
    logger.info("pivoted %d bilingual rules (%d among the top pivots, %d pairs) into %d "
                "paraphrase rules of %d phrases", stats.bilingual_rules, stats.kept_rules,
                stats.pivot_pairs, stats.paraphrase_rules, stats.phrases)
    return stats


def _deal(loads: list[tuple[str, int]], partition_pairs: int, jobs: int) -> pd.DataFrame:
    """The phrases e1 (in sort order, with the (e1, f, e2) triples each joins) cut into
    partitions of consecutive phrases joining at most ``partition_pairs`` triples, or an even
    share of all triples if that is less (a phrase joining more is a partition of its own), and
    the partitions dealt in order to ``jobs`` jobs by their share of the triples. A phrase e1
    joins, through each of its kept rules, every kept rule of that foreign side, so its triples
    are the sum of its foreign sides' senses."""
    total = sum(triples for _, triples in loads)
    cap = min(partition_pairs, -(-total // jobs)) if total else partition_pairs
    partitions, dealt_to = [], []
    partition, load, before = -1, 0, 0
    for _, triples in loads:
        if partition < 0 or load + triples > cap:
            partition, load = partition + 1, 0
            job = min(jobs - 1, before * jobs // total)
        partitions.append(partition)
        dealt_to.append(job)
        load += triples
        before += triples
    return pd.DataFrame({"e": pd.Series([phrase for phrase, _ in loads], dtype=object),
                         "triples": pd.Series([triples for _, triples in loads], dtype="int64"),
                         "partition": pd.Series(partitions, dtype="int32"),
                         "job": pd.Series(dealt_to, dtype="int32")})


def _load_bilingual(con: duckdb.DuckDBPyConnection, grammars: Sequence[Path],
                    top_pivots: int, min_count: float, min_probability: float,
                    labelled: bool = False) -> None:
    """Table ``bilingual`` (all rules of every pivot grammar ``grammars``, numbered by
    ``language``, the foreign side keyed by its language when there are several
    (:data:`PIVOT_MARK`): canonical English side, probabilities and the ``weight``
    p(c|e) = 1/|C(e)| of p(f|e) and lex(f|e), module doc) and views ``pivot_rules`` (the
    same rules with whether each is ``kept`` — it passes the pruning thresholds and its f is
    among the top pivots of its e in its language — and, for kept rules, c(f), sum_e p(e|f)
    and the number of English sides over the kept rules of f) and ``kept``.

    The rules are never sorted or windowed as a whole: the (e, f) counts are ranked only for the
    English sides with more than ``top_pivots`` foreign sides (few), and the statistics of f are
    kept only where f has more than one kept rule (for the others they are the rule's own).

    ``labelled`` (a SAMT grammar): f and e are keyed by the rule's left-hand side,
    ``<lhs>PIVOT_MARK<side>``, so that rules pair only when label and foreign side match, and
    an English side's statistics are those of the labelled phrase; the rules also carry p(r|C)
    (``p_rule_lhs``) and the rarity penalty exp(1 - c) (``rarity``) for the black-box features.
    """
    selects = []
    for language, path in enumerate(grammars):
        grammar = checked_parquet(path)
        if labelled:
            side = f"lhs || '{PIVOT_MARK}' || "
            extra = ", count / lhs_total AS p_rule_lhs, exp(1.0 - count) AS rarity"
            grammar = (f"{grammar} JOIN (SELECT lhs, sum(count) AS lhs_total FROM {grammar} "
                       f"GROUP BY lhs) USING (lhs)")
        else:
            side, extra = "", ""
            lhs = con.execute(f"SELECT DISTINCT lhs FROM {grammar}").fetchall()
            if lhs != [(LHS,)]:
                raise GrammarInputError(
                    f"{path}: pivoting needs a Hiero grammar whose only left-hand side is "
                    f"{LHS}, found {sorted(x for x, in lhs)}")
        pivot = (f"{side}source" if len(grammars) == 1
                 else f"'{language}{PIVOT_MARK}' || {side}source")
        selects.append(f"""
            SELECT {language}::INTEGER AS language, {pivot} AS f,
                   {side}canonical(target) AS e,
                   is_swapped(target) AS swapped, count AS c,
                   exp(log_p_e_given_f) AS p_e_f, exp(log_p_f_given_e) AS p_f_e,
                   exp(log_lex_e_given_f) AS lex_e_f, exp(log_lex_f_given_e) AS lex_f_e,
                   1.0::DOUBLE AS weight{extra}
            FROM {grammar}""")
    con.execute(f"CREATE TEMP TABLE bilingual AS {' UNION ALL '.join(selects)}")
    if len(grammars) > 1:  # p(c|e) = 1/|C(e)| (module doc); with one grammar it is 1
        con.execute("""
            UPDATE bilingual SET weight = 1.0 / n.languages
            FROM (SELECT e, count(DISTINCT language) AS languages FROM bilingual GROUP BY e
                  HAVING count(DISTINCT language) > 1) n
            WHERE bilingual.e = n.e""")
    passes = (f"c >= {min_count} AND p_e_f >= {min_probability} "
              f"AND p_f_e >= {min_probability}")
    con.execute(f"""
        CREATE TEMP TABLE dropped AS
        WITH pivot_counts AS (
            SELECT language, e, f, sum(c) AS c_ef FROM bilingual WHERE {passes}
            GROUP BY language, e, f),
        crowded AS (
            SELECT language, e FROM pivot_counts GROUP BY language, e
            HAVING count(*) > {top_pivots}),
        ranked AS (
            SELECT language, e, f,
                   row_number() OVER (PARTITION BY language, e ORDER BY c_ef DESC, f) AS rank
            FROM pivot_counts SEMI JOIN crowded USING (language, e))
        SELECT e, f FROM ranked WHERE rank > {top_pivots}""")
    kept = f"({passes}) AND d.e IS NULL"
    con.execute(f"""
        CREATE TEMP TABLE shared_sides AS
        SELECT f, sum(c) AS c_f, sum(p_e_f) AS p_kept_f, count(*) AS senses
        FROM bilingual LEFT JOIN dropped d USING (e, f) WHERE {kept}
        GROUP BY f HAVING count(*) > 1""")
    con.execute(f"""
        CREATE TEMP VIEW pivot_rules AS
        SELECT b.*, {kept} AS kept,
               coalesce(s.c_f, b.c) AS c_f, coalesce(s.p_kept_f, b.p_e_f) AS p_kept_f,
               coalesce(s.senses, 1) AS senses
        FROM bilingual b LEFT JOIN dropped d USING (e, f) LEFT JOIN shared_sides s USING (f)""")
    con.execute("CREATE TEMP VIEW kept AS SELECT * FROM pivot_rules WHERE kept")


def _phrase_statistics(con: duckdb.DuckDBPyConnection, method: str) -> None:
    """Table ``phrases``: per English side with a kept rule, p(e) from all its bilingual counts
    (``p_bilingual``), the residual of eq. 5.2, the identity pair's count, pivots and lexical
    weight, sum_f c(e, f) c(f) and whether it has a paraphrase other than itself, from the kept
    bilingual rules alone; table ``totals``: c(X) of eq. 3.6 (sum_f c(f)^2, the sum of every
    phrase's sum_f c(e, f) c(f)) and the kept rules.

    Derived features: residual = 1 - sum_(f,e) p(f|e) (sum_(f,e') p(e'|f) - p(e|f)). Derived
    counts: residual = c(e, e) / sum_e' c(e, e') (eq. 3.8 for the identity pair)."""
    residual = ("greatest(0.0, 1.0 - shared_mass)" if method == "features"
                else "count_identity / c_e_pairs")
    kept = "FILTER (WHERE kept)"
    con.execute(f"""
        CREATE TEMP TABLE phrases AS
        WITH per_phrase AS (
            SELECT e, sum(c) / (SELECT sum(c) FROM bilingual) AS p_bilingual,
                   sum(weight * p_f_e * (p_kept_f - p_e_f)) {kept} AS shared_mass,
                   sum(c * c_f) {kept} AS c_e_pairs, sum(c * c) {kept} AS count_identity,
                   count(*) {kept} AS pivots_identity,
                   sum(lex_e_f * (weight * lex_f_e)) {kept} AS lex_identity,
                   coalesce(max(senses) {kept} > 1, false) AS paraphrased
            FROM pivot_rules GROUP BY e)
        SELECT e, p_bilingual, {residual} AS residual, c_e_pairs, count_identity,
               pivots_identity, lex_identity, paraphrased
        FROM per_phrase WHERE pivots_identity > 0""")
    con.execute("""
        CREATE TEMP TABLE totals AS
        SELECT sum(c_e_pairs) AS pairs, sum(pivots_identity) AS kept_rules FROM phrases""")


def _choose_sources(con: duckdb.DuckDBPyConnection, sentences: list[str] | None,
                    span_limit: int, keep_identity: bool, labelled: bool = False) -> None:
    """Table ``sources``: the phrases to paraphrase (all, or those matching ``sentences``);
    without identity rules, only phrases that have another paraphrase. A labelled phrase
    matches where its words do, whatever its label."""
    eligible = "SELECT e FROM phrases" + ("" if keep_identity else " WHERE paraphrased")
    if sentences is None:
        con.execute(f"CREATE TEMP TABLE sources AS {eligible}")
        return
    phrase = "substr(e, strpos(e, chr(31)) + 1)" if labelled else "e"
    wanted = matching_phrases(con, eligible.replace("SELECT e ", f"SELECT {phrase} AS phrase "),
                              sentences, span_limit)
    con.register("wanted", wanted)
    con.execute(f"""CREATE TEMP TABLE sources AS
                    SELECT e FROM ({eligible}) WHERE {phrase} IN (SELECT phrase FROM wanted)"""
                if labelled else "CREATE TEMP TABLE sources AS SELECT phrase AS e FROM wanted")
    con.unregister("wanted")


def _shared(keep_identity: bool) -> str:
    """The SQL condition on a kept rule for taking part in pairs: its foreign side has another
    English side (or, keeping identity pairs, any rule)."""
    return f"(senses > 1 OR {str(keep_identity).lower()})"


def _pairing_inputs(con: duckdb.DuckDBPyConnection, keep_identity: bool) -> None:
    """Tables ``source_rules`` (the shared kept rules of the phrases to paraphrase: what the
    partitions are cut from), ``pairing_rules`` (every shared kept rule of their foreign sides:
    what the pairs go through) and ``lookup`` (p(e) and the pair count of every English side of
    those: what the features read)."""
    shared = _shared(keep_identity)
    con.execute(f"""
        CREATE TEMP TABLE source_rules AS
        SELECT * FROM kept WHERE {shared} AND e IN (SELECT e FROM sources)""")
    con.execute(f"""
        CREATE TEMP TABLE pairing_rules AS
        SELECT * FROM kept WHERE {shared} AND f IN (SELECT f FROM source_rules)""")
    con.execute("""
        CREATE TEMP TABLE lookup AS
        SELECT e, p_bilingual, c_e_pairs FROM phrases
        WHERE e IN (SELECT e FROM pairing_rules)""")


def _pair(con: duckdb.DuckDBPyConnection, keep_identity: bool, first: str, last: str,
          labelled: bool = False) -> None:
    """Table ``pairs``: per (e1, e2, swap) with e1 a phrase of table ``sources`` from ``first``
    to ``last``, sums over their foreign sides, read from table ``rules`` (the pairing rules)
    for those foreign sides only; ``labelled``, also the black-box features, the best over the
    foreign sides of the product of the two rules' relative frequencies and of the sum of their
    rarity penalties (module doc)."""
    distinct = "" if keep_identity else "AND NOT (a.e = b.e AND a.swapped = b.swapped)"
    black_box = """, max(a.p_e_f * b.p_e_f) AS bb_p_ef, max(a.p_f_e * b.p_f_e) AS bb_p_fe,
               max(a.p_rule_lhs * b.p_rule_lhs) AS bb_p_rule,
               min(a.rarity + b.rarity) AS bb_rarity""" if labelled else ""
    con.execute(f"""
        CREATE TEMP TABLE pairs AS
        WITH a AS (SELECT * FROM rules WHERE e IN (SELECT e FROM sources)
                     AND e BETWEEN {sql_string(first)} AND {sql_string(last)})
        SELECT a.e AS e1, b.e AS e2, a.swapped <> b.swapped AS swap,
               sum(b.p_e_f * a.p_f_e) AS p21_features, sum(a.p_e_f * b.p_f_e) AS p12_features,
               sum(b.lex_e_f * a.lex_f_e) AS lex21, sum(a.lex_e_f * b.lex_f_e) AS lex12,
               sum(a.c * b.c) AS count, count(*) AS pivots{black_box}
        FROM a JOIN (SELECT * FROM rules WHERE f IN (SELECT f FROM a)) b
             ON a.f = b.f {distinct}
        GROUP BY a.e, b.e, a.swapped <> b.swapped""")


def _features(con: duckdb.DuckDBPyConnection, method: str, labelled: bool = False) -> None:
    """Table ``paraphrases``: the pairs with p(e2|e1), p(e1|e2), p(e1,e2) by ``method`` (and,
    ``labelled``, the black-box features of the pairs)."""
    black_box = ", p.bb_p_ef, p.bb_p_fe, p.bb_p_rule, p.bb_rarity" if labelled else ""
    if method == "features":
        columns = """p.p21_features AS p21, p.p12_features AS p12,
                     p.p21_features * l1.p_bilingual AS joint"""
    else:
        columns = """p.count / l1.c_e_pairs AS p21, p.count / l2.c_e_pairs AS p12,
                     p.count / t.pairs AS joint"""
    con.execute(f"""
        CREATE TEMP TABLE paraphrases AS
        SELECT p.e1, p.e2, p.swap, {columns}, p.lex21, p.lex12, p.count, p.pivots{black_box}
        FROM pairs p JOIN lookup l1 ON l1.e = p.e1 JOIN lookup l2 ON l2.e = p.e2, totals t""")


def _keep_best(con: duckdb.DuckDBPyConnection, n: int) -> None:
    """Table ``paraphrases`` cut to the ``n`` best paraphrases of each e1 (the draft's top n
    per pattern, §4.2): ranked by p(e2|e1) lex(e2|e1), the combination of translation and
    lexical probability the draft names, ties by e2 and the swap. All the paraphrases of an
    e1 are in one partition, so the cut is exact."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE paraphrases AS
        SELECT * EXCLUDE (rank) FROM (
            SELECT *, row_number() OVER (PARTITION BY e1 ORDER BY ln(p21) + ln(lex21) DESC,
                                         e2, swap) AS rank
            FROM paraphrases)
        WHERE rank <= {n}""")

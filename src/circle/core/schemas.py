"""Every Parquet table of the pipeline, in one place.

Each schema has a name and a version that are written into the file's key/value metadata
(``circle.schema``, ``circle.schema_version``); :func:`circle.core.tables.read_table` refuses a file
whose name or version differs from what the reader asks for. Bump a version whenever a column
changes meaning or type.

Grammar tables (bilingual and paraphrase) share the Joshua/Thrax symbol conventions: ``lhs``
is ``X``; ``source`` and ``target`` are space-separated symbols where a nonterminal is written
``[X,1]`` or ``[X,2]`` (the index co-indexes source and target); terminals never contain ``[``
because the tokeniser escapes brackets as Moses does. Their ``features`` attribute names the
columns the decoder sums, each holding a natural-log feature value.

Conventions: ``segment_id`` is the row key of every per-sentence table (for the Bible corpus
it is the pythonbible verse id ``book*1e6 + chapter*1e3 + verse``); ``document`` groups segments (a
chapter for the Bible); token strings are space-separated, tokenised and lowercased.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True)
class TableSchema:
    """A named, versioned Arrow schema."""

    name: str
    version: int
    arrow: pa.Schema
    description: str
    features: tuple[str, ...] = ()
    """For grammar tables: the columns that are log-linear decoder features (natural-log values)."""


def _schema(name: str, version: int, description: str, fields: list[pa.Field],
            features: tuple[str, ...] = ()) -> TableSchema:
    return TableSchema(name, version, pa.schema(fields), description, features)


VERSES = _schema(
    "verses",
    1,
    "The verse-aligned multi-version Bible corpus (resources/bible/README.md documents columns).",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("book", pa.string(), nullable=False),
        pa.field("book_num", pa.int8(), nullable=False),
        pa.field("chapter", pa.int16(), nullable=False),
        pa.field("verse", pa.int16(), nullable=False),
        pa.field("document", pa.string(), nullable=False),
        pa.field("es", pa.string()),
        pa.field("kjv", pa.string()),
        pa.field("web", pa.string()),
        pa.field("dar", pa.string()),
        pa.field("ylt", pa.string()),
        pa.field("bbe", pa.string()),
        pa.field("shift_flag", pa.bool_(), nullable=False),
        pa.field("ps_title", pa.bool_(), nullable=False),
        pa.field("ref_versification_flag", pa.bool_(), nullable=False),
        pa.field("length_ok", pa.bool_(), nullable=False),
        pa.field("usable_train", pa.bool_(), nullable=False),
        pa.field("usable_eval", pa.bool_(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("single_ref", pa.string()),
    ],
)

FOREIGN_BIBLES = _schema(
    "foreign_bibles",
    1,
    "Foreign-language Bibles in the verse table's KJV slots, to pivot through "
    "(circle.corpus.foreign_bibles; resources/bible/README.md documents columns and licences).",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("fr", pa.string()),
        pa.field("it", pa.string()),
        pa.field("de", pa.string()),
        pa.field("ru", pa.string()),
        pa.field("shift_fr", pa.bool_(), nullable=False),
        pa.field("shift_it", pa.bool_(), nullable=False),
        pa.field("shift_de", pa.bool_(), nullable=False),
        pa.field("shift_ru", pa.bool_(), nullable=False),
    ],
)

BITEXT = _schema(
    "bitext",
    1,
    "Sentence-aligned training bitext: one row per sentence pair.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("document", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
    ],
)

EVALSET = _schema(
    "evalset",
    1,
    "An evaluation set (tune, test, paraphraser tuning): a source sentence and its N references. "
    "`references` is in the order of the set's reference names (table metadata "
    "`circle.reference_names`); `ref_order` is the seeded per-document permutation of reference "
    "indices used to simulate 1H, 2H, ... (the first index is the single reference).",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("document", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("references", pa.list_(pa.string()), nullable=False),
        pa.field("ref_order", pa.list_(pa.int8()), nullable=False),
    ],
)

ALIGNMENT = _schema(
    "alignment",
    1,
    "Word alignment of the tokenised training bitext, as Pharaoh `i-j` strings (0-based source "
    "index, target index): eflomal forward and reverse links and their symmetrisation.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("forward", pa.string(), nullable=False),
        pa.field("reverse", pa.string(), nullable=False),
        pa.field("links", pa.string(), nullable=False),
    ],
)

ALIGNED_BITEXT = _schema(
    "aligned_bitext",
    1,
    "A part of the training bitext with its symmetrised links (checked against the sentence "
    "lengths), in segment order: the input of one grammar-extraction counting job.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("links", pa.string(), nullable=False),
    ],
)

LEXICAL = _schema(
    "lexical",
    1,
    "Word translation probabilities of Koehn et al. (2003) from the training alignment: one row "
    "per (f, e) pair seen linked, or a word seen unaligned (the other side null = NULL). "
    "`e_given_f` is w(e|f) (null when e is NULL), `f_given_e` is w(f|e) (null when f is NULL).",
    [
        pa.field("f", pa.string()),
        pa.field("e", pa.string()),
        pa.field("e_given_f", pa.float64()),
        pa.field("f_given_e", pa.float64()),
    ],
)

RULE_COUNTS = _schema(
    "rule_counts",
    1,
    "Rule counts of one grammar-extraction counting job: per batch of sentence pairs, each rule's "
    "summed eq. 3.3 fractional count and its best ln lex(e|f), ln lex(f|e); a rule recurs once "
    "per batch it occurs in (the merge adds the batches up exactly).",
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("count", pa.float64(), nullable=False),
        pa.field("lex_ef", pa.float64(), nullable=False),
        pa.field("lex_fe", pa.float64(), nullable=False),
    ],
)

LABELLED_RULE_COUNTS = _schema(
    "labelled_rule_counts",
    1,
    RULE_COUNTS.description + " Labelled (SAMT) rules: `lhs` is the escaped SAMT label of the "
    "rule's English span, `source` and `target` carry labelled nonterminals [LABEL,k] "
    "(circle.grammar.samt); a rule is (lhs, source, target).",
    [pa.field("lhs", pa.string(), nullable=False), *RULE_COUNTS.arrow],
)

GRAMMAR = _schema(
    "grammar",
    1,
    "A bilingual Hiero grammar (Chiang 2007) extracted from the aligned training bitext: "
    "`source` is foreign (nonterminals numbered left to right), `target` English. `count` is the "
    "fractional count of thesis eq. 3.3; p(e|f) = count / c(f) and p(f|e) = count / c(e), where "
    "c(e) sums over English sides that differ only in nonterminal numbering; the lexical weights "
    "are Koehn et al. (2003)'s, the best over the rule's occurrences.",
    [
        pa.field("lhs", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("log_p_e_given_f", pa.float64(), nullable=False),
        pa.field("log_p_f_given_e", pa.float64(), nullable=False),
        pa.field("log_lex_e_given_f", pa.float64(), nullable=False),
        pa.field("log_lex_f_given_e", pa.float64(), nullable=False),
        pa.field("count", pa.float64(), nullable=False),
    ],
    features=("log_p_e_given_f", "log_p_f_given_e", "log_lex_e_given_f", "log_lex_f_given_e"),
)

LABELLED_GRAMMAR = _schema(
    "labelled_grammar",
    1,
    "A bilingual SAMT grammar (Zollmann & Venugopal 2006; Ganitkevitch & Callison-Burch, draft): "
    "the rules of the Hiero grammar of the same bitext with `lhs` the escaped SAMT label of the "
    "English span and labelled nonterminals [LABEL,k] on both sides (circle.grammar.samt "
    "escapes Penn's punctuation in labels), the label of a nonterminal that of its hole's "
    "English span. Columns as in `grammar`, per labelled rule (lhs, source, target): `count` "
    "the eq. 3.3 fractional count, p(e|f) = count / c(lhs, f) and p(f|e) = count / c(lhs, e) "
    "(c(lhs, e) pooling English sides that differ only in nonterminal numbering), the lexical "
    "weights Koehn et al. (2003)'s.",
    list(GRAMMAR.arrow),
    features=GRAMMAR.features,
)

OOV_PARAPHRASES = _schema(
    "oov_paraphrases",
    1,
    "Distributional paraphrases of an evaluation set's OOV phrases (n-grams with a word no "
    "grammar rule covers) from monolingual source text (Marton, Callison-Burch & Resnik 2009, "
    "§3-4; circle.distributional): per `phrase`, its k best `paraphrase`s by `similarity` = "
    "cos of the log-likelihood-ratio profiles (eq. 3), at least minScore, `rank` 1 = best.",
    [
        pa.field("phrase", pa.string(), nullable=False),
        pa.field("paraphrase", pa.string(), nullable=False),
        pa.field("similarity", pa.float64(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
    ],
)

OOV_MASKING = _schema(
    "oov_masking",
    1,
    "Known source words masked as OOV (circle.experiments.oov_masking; Marton, Callison-Burch "
    "& Resnik 2009's augmentation scored without tuning): per amount of monolingual text "
    "(`fraction` of it, `text_words` tokens) and masked `word` (seen `train_count` times in "
    "the bitext's source side), its `true_targets` (its own one-word rules with p(e|f) at "
    "least the table's min_probability, and the most probable), the `paraphrases` found for it "
    "as an OOV phrase and the distinct English sides it borrows through them "
    "(`borrowed_targets`), the best of them by asim (`top_target`, borrowed from "
    "`top_paraphrase` with `top_asim`; null without any), whether that is a true translation "
    "(`correct_at_1`) and the share of the true ones among the first recall_k "
    "(`recall_at_k`); the baseline borrows the rules of another masked word "
    "(`baseline_word`, its most probable `baseline_target`) instead.",
    [
        pa.field("fraction", pa.float64(), nullable=False),
        pa.field("text_words", pa.int64(), nullable=False),
        pa.field("word", pa.string(), nullable=False),
        pa.field("train_count", pa.int32(), nullable=False),
        pa.field("true_targets", pa.list_(pa.string()), nullable=False),
        pa.field("paraphrases", pa.int32(), nullable=False),
        pa.field("borrowed_targets", pa.int32(), nullable=False),
        pa.field("top_target", pa.string()),
        pa.field("top_paraphrase", pa.string()),
        pa.field("top_asim", pa.float64()),
        pa.field("correct_at_1", pa.bool_(), nullable=False),
        pa.field("recall_at_k", pa.float64(), nullable=False),
        pa.field("baseline_word", pa.string()),
        pa.field("baseline_target", pa.string()),
        pa.field("baseline_correct_at_1", pa.bool_(), nullable=False),
        pa.field("baseline_recall_at_k", pa.float64(), nullable=False),
    ],
)

GRAMMAR_OOV_PARAPHRASED = _schema(
    "grammar_oov_paraphrased",
    1,
    GRAMMAR.description + " Augmented with a rule f -> e for each OOV phrase f with a "
    "distributional paraphrase f' and a phrase rule f' -> e (Marton et al. 2009 §5; "
    "circle.grammar.oov_paraphrase): `log_paraphrase_similarity` is ln h(e, f), 0 for the "
    "grammar's own rules and ln asim for a borrowed one (asim = 1 - prod_i (1 - psim(f'_i, f)) "
    "over the paraphrases f'_i with a rule f'_i -> e); a borrowed rule copies the other "
    "features and the count of the rule of its most similar f', named in `paraphrase_of` "
    "(null for the grammar's own rules).",
    [
        *GRAMMAR.arrow,
        pa.field("log_paraphrase_similarity", pa.float64(), nullable=False),
        pa.field("paraphrase_of", pa.string()),
    ],
    features=GRAMMAR.features + ("log_paraphrase_similarity",),
)

GRAMMAR_OOV_PARAPHRASED_BY_LENGTH = _schema(
    "grammar_oov_paraphrased_by_length",
    1,
    GRAMMAR.description + " Augmented for OOV phrases as grammar_oov_paraphrased, with the "
    "paraphrase feature split by the OOV phrase's length (Marton et al. 2009's '1-2 + 3-4grams' "
    "variant): `log_paraphrase_similarity_short` is ln h(e, f) for a borrowed rule whose f has "
    "at most oov_paraphrase.feature_split words, `log_paraphrase_similarity_long` for a longer "
    "f; each is 0 elsewhere.",
    [
        *GRAMMAR.arrow,
        pa.field("log_paraphrase_similarity_short", pa.float64(), nullable=False),
        pa.field("log_paraphrase_similarity_long", pa.float64(), nullable=False),
        pa.field("paraphrase_of", pa.string()),
    ],
    features=GRAMMAR.features + ("log_paraphrase_similarity_short",
                                 "log_paraphrase_similarity_long"),
)

_PARAPHRASE_FIELDS = [
    pa.field("lhs", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("target", pa.string(), nullable=False),
    pa.field("log_p_e2_given_e1", pa.float64(), nullable=False),
    pa.field("log_p_e1_given_e2", pa.float64(), nullable=False),
    pa.field("log_p_e1_e2", pa.float64(), nullable=False),
    pa.field("neg_target_terminals", pa.float64(), nullable=False),
    pa.field("log_lex_e2_given_e1", pa.float64(), nullable=False),
    pa.field("log_lex_e1_given_e2", pa.float64(), nullable=False),
    pa.field("count", pa.float64(), nullable=False),
    pa.field("pivots", pa.int32(), nullable=False),
]
_PARAPHRASE_DESCRIPTION = (
    "An English-to-English paraphrase grammar pivoted from a bilingual grammar (thesis §3.2): "
    "`source` is the phrase e1 (nonterminals numbered left to right), `target` its paraphrase e2. "
    "p(e2|e1), p(e1|e2), p(e1,e2) follow eq. 3.4-3.13 (derived features or derived counts, "
    "table metadata `circle.method`), possibly rescaled by a self-paraphrase bias (eq. 5.3-5.10, "
    "metadata `circle.bias`); `neg_target_terminals` is ln exp(-T(e2)); the pivoted lexical "
    "weights are sum_f lex(e2|f) lex(f|e1) and the reverse; `count` is the derived count of "
    "eq. 3.4 and `pivots` the number of foreign phrases pivoted through.")
_PARAPHRASE_FEATURES = ("log_p_e2_given_e1", "log_p_e1_given_e2", "log_p_e1_e2",
                        "neg_target_terminals")

PARAPHRASE_GRAMMAR = _schema(
    "paraphrase_grammar", 1, _PARAPHRASE_DESCRIPTION + " Decoder features: the thesis's four.",
    _PARAPHRASE_FIELDS, features=_PARAPHRASE_FEATURES)

PARAPHRASE_GRAMMAR_LEX = _schema(
    "paraphrase_grammar_lex", 1,
    _PARAPHRASE_DESCRIPTION + " Decoder features: the thesis's four plus both pivoted lexical "
    "weights.",
    _PARAPHRASE_FIELDS,
    features=_PARAPHRASE_FEATURES + ("log_lex_e2_given_e1", "log_lex_e1_given_e2"))

IDENTITY_FEATURE = "identity"
"""The column and decoder feature of φ_ident (Ganitkevitch & Callison-Burch, draft §4.1)."""

_IDENTITY_DESCRIPTION = (
    " Plus φ_ident of Ganitkevitch & Callison-Burch (draft §4.1, Feature Computation) as a "
    f"decoder feature: `{IDENTITY_FEATURE}` is 1 for an identity rule (source = target, the "
    "bias's e1 -> e1 rules included) and 0 otherwise, an indicator rather than a log.")

PARAPHRASE_GRAMMAR_IDENT = _schema(
    "paraphrase_grammar_ident", 1,
    PARAPHRASE_GRAMMAR.description + _IDENTITY_DESCRIPTION,
    [*_PARAPHRASE_FIELDS, pa.field(IDENTITY_FEATURE, pa.float64(), nullable=False)],
    features=PARAPHRASE_GRAMMAR.features + (IDENTITY_FEATURE,))

PARAPHRASE_GRAMMAR_LEX_IDENT = _schema(
    "paraphrase_grammar_lex_ident", 1,
    PARAPHRASE_GRAMMAR_LEX.description + _IDENTITY_DESCRIPTION,
    [*_PARAPHRASE_FIELDS, pa.field(IDENTITY_FEATURE, pa.float64(), nullable=False)],
    features=PARAPHRASE_GRAMMAR_LEX.features + (IDENTITY_FEATURE,))

LABELLED_PARAPHRASE_GRAMMAR = _schema(
    "labelled_paraphrase_grammar", 1,
    "A syntactically labelled (SAMT) English-to-English paraphrase grammar pivoted from a "
    "`labelled_grammar` (Ganitkevitch & Callison-Burch, draft §4, circle.grammar.pivot): two "
    "bilingual rules pair only when their `lhs` label and foreign side (nonterminal labels "
    "included) match, the rule is lhs -> source | target with labelled nonterminals [LABEL,k] "
    "co-indexed by ∼ = ∼1⁻¹ ∘ ∼2 and renumbered left to right on `source`. Features by the "
    "draft's three groups: rule-local `neg_target_terminals`, `reordered` (1 when ∼ swaps the "
    f"two nonterminals) and φ_ident `{IDENTITY_FEATURE}` (1 when source = target); pivot sums "
    "(eq. 3.10-3.13 within the label, and the lexical weights sum_f lex(e2|f) lex(f|e1) and the "
    "reverse); black-box products of the two bilingual rules' relative frequencies "
    "(`log_bb_p_e_given_f` = ln p(e1|f) p(e2|f), `log_bb_p_f_given_e` = ln p(f|e1) p(f|e2), "
    "`log_bb_p_rule_given_lhs` = ln p(r1|C) p(r2|C)) and sum of their rarity penalties "
    "(`bb_rarity` = exp(1 - c1) + exp(1 - c2)), each the best over the pivots (largest product, "
    "smallest penalty); `count` and `pivots` as in `paraphrase_grammar`.",
    [*_PARAPHRASE_FIELDS[:-2],
     pa.field("log_bb_p_e_given_f", pa.float64(), nullable=False),
     pa.field("log_bb_p_f_given_e", pa.float64(), nullable=False),
     pa.field("log_bb_p_rule_given_lhs", pa.float64(), nullable=False),
     pa.field("bb_rarity", pa.float64(), nullable=False),
     pa.field("reordered", pa.float64(), nullable=False),
     pa.field(IDENTITY_FEATURE, pa.float64(), nullable=False),
     *_PARAPHRASE_FIELDS[-2:]],
    features=_PARAPHRASE_FEATURES + ("log_lex_e2_given_e1", "log_lex_e1_given_e2",
                                     "log_bb_p_e_given_f", "log_bb_p_f_given_e",
                                     "log_bb_p_rule_given_lhs", "bb_rarity", "reordered",
                                     IDENTITY_FEATURE))

PARAPHRASE_GRAMMARS = (PARAPHRASE_GRAMMAR, PARAPHRASE_GRAMMAR_LEX, PARAPHRASE_GRAMMAR_IDENT,
                       PARAPHRASE_GRAMMAR_LEX_IDENT)
"""Every paraphrase grammar schema: the thesis's four decoder features, plus the pivoted lexical
weights (``paraphrase.lexical_feature``) or the identity feature (``paraphrase.identity_feature``)
or both."""


def paraphrase_grammar_schema(lexical_feature: bool, identity_feature: bool) -> TableSchema:
    """The paraphrase grammar schema with or without the pivoted lexical weights and
    φ_ident as decoder features."""
    return {(False, False): PARAPHRASE_GRAMMAR, (True, False): PARAPHRASE_GRAMMAR_LEX,
            (False, True): PARAPHRASE_GRAMMAR_IDENT,
            (True, True): PARAPHRASE_GRAMMAR_LEX_IDENT}[(lexical_feature, identity_feature)]


SELF_PARAPHRASE = _schema(
    "self_paraphrase",
    1,
    "Per English phrase e1 of a paraphrase grammar, what the self-paraphrase bias needs (thesis "
    "§5.2.2): `residual` is p(e1|e1) = 1 - sum_{e != e1} p(e|e1) (eq. 5.2), `log_p_phrase` the "
    "marginal ln p(e1) used for p(e1,e2), and the identity pivot's lexical weight, count and "
    "number of pivots (the features an identity rule e1 -> e1 would get).",
    [
        pa.field("lhs", pa.string(), nullable=False),
        pa.field("phrase", pa.string(), nullable=False),
        pa.field("residual", pa.float64(), nullable=False),
        pa.field("log_p_phrase", pa.float64(), nullable=False),
        pa.field("log_lex_identity", pa.float64(), nullable=False),
        pa.field("count", pa.float64(), nullable=False),
        pa.field("pivots", pa.int32(), nullable=False),
    ],
)

PIVOT_RULES = _schema(
    "pivot_rules",
    1,
    "The bilingual rules a pivot's pairing jobs pair (thesis §3.2): the kept rules (top pivots, "
    "pruning) of the foreign sides the phrases to paraphrase pivot through, shared by at least "
    "two English sides. `e` is the English side with its nonterminals renumbered left to right, "
    "`swapped` whether that swapped them; probabilities and lexical weights as plain values "
    "(from several pivot languages, f is keyed by its language and p(f|e), lex(f|e) are "
    "weighted by 1/|C(e)|: circle.grammar.pivot).",
    [
        pa.field("f", pa.string(), nullable=False),
        pa.field("e", pa.string(), nullable=False),
        pa.field("swapped", pa.bool_(), nullable=False),
        pa.field("c", pa.float64(), nullable=False),
        pa.field("p_e_f", pa.float64(), nullable=False),
        pa.field("p_f_e", pa.float64(), nullable=False),
        pa.field("lex_e_f", pa.float64(), nullable=False),
        pa.field("lex_f_e", pa.float64(), nullable=False),
    ],
)

LABELLED_PIVOT_RULES = _schema(
    "labelled_pivot_rules",
    1,
    PIVOT_RULES.description + " Labelled (SAMT) rules: `f` and `e` are keyed by the rule's "
    "left-hand side (`<lhs>\\x1f<side>`), `p_rule_lhs` is p(r|C) = c / c(C) over all the "
    "rules of label C, `rarity` the rarity penalty exp(1 - c).",
    [*PIVOT_RULES.arrow,
     pa.field("p_rule_lhs", pa.float64(), nullable=False),
     pa.field("rarity", pa.float64(), nullable=False)],
)

PIVOT_SOURCES = _schema(
    "pivot_sources",
    1,
    "The phrases e1 a pivot paraphrases, in sort order: the (e1, f, e2) triples each joins, its "
    "partition (consecutive phrases summed at once) and the pairing job that pairs it; metadata "
    "`jobs`, `bilingual_rules`, `kept_rules`.",
    [
        pa.field("e", pa.string(), nullable=False),
        pa.field("triples", pa.int64(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("job", pa.int32(), nullable=False),
    ],
)

PIVOT_LOOKUP = _schema(
    "pivot_lookup",
    1,
    "What a pivot's features read of every phrase of its rules: p(e) from the bilingual counts "
    "(eq. 3.13) and sum_f c(f, e) c(f) (the denominator of eq. 3.8); metadata `total_pairs` is "
    "c(X) of eq. 3.6 (a Python float repr).",
    [
        pa.field("e", pa.string(), nullable=False),
        pa.field("p_bilingual", pa.float64(), nullable=False),
        pa.field("c_e_pairs", pa.float64(), nullable=False),
    ],
)

TUNING_LOG = _schema(
    "tuning_log",
    3,
    "One row per tuning iteration (Och 2003; thesis §3.2.3): `weights` are the weights this "
    "iteration decoded the tune set with, in the order of metadata `circle.feature_names` (JSON "
    "list; `circle.fixed_features` were not tuned); `decode_score` is the tuning metric "
    "(`metric`, a fraction, TER/TERBLEU lower-better) of that decode's 1-best (iteration 1: the "
    "untuned start), `pool_score` that of the pool's 1-best at the weights the optimiser chose "
    "next (null on the last row, which only decodes); `returned` marks the iteration whose "
    "weights the run returned (the best decoded tune score, Moses' --return-best-dev); "
    "`stop_reason` is set on the last row; `decoded_sentences` counts the tune-set sentences "
    "the decoder decoded in the iteration (lists recorded by the decode stage not counted). No "
    "timings: identical reruns give identical tables.",
    [
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("weights", pa.list_(pa.float64()), nullable=False),
        pa.field("decode_score", pa.float64(), nullable=False),
        pa.field("pool_score", pa.float64()),
        pa.field("new_hypotheses", pa.int64(), nullable=False),
        pa.field("pool_size", pa.int64(), nullable=False),
        pa.field("returned", pa.bool_(), nullable=False),
        pa.field("stop_reason", pa.string()),
        pa.field("decoded_sentences", pa.int64(), nullable=False),
    ],
)

TUNING_CHECKPOINT = _schema(
    "tuning_checkpoint",
    1,
    "One file per finished iteration of a tuning run, the last one included "
    "(`circle.tune.checkpoint`; a fanned-out run's iteration jobs write them too): the "
    "(sentence, hypothesis) pairs that joined the n-best pool "
    "in that iteration, in pool order, with their decoder `features` (order of the run's "
    "feature names) and the metric's sufficient `stats` against the hypothesis' own references, "
    "frozen when it joined. Metadata: `circle.iteration`, `circle.log` (the iteration's "
    "tuning-log row, JSON), `circle.next_weights` (JSON list: the weights the next iteration "
    "decodes with) and `circle.fingerprint` (the run's inputs and settings).",
    [
        pa.field("sentence", pa.int64(), nullable=False),
        pa.field("hypothesis", pa.string(), nullable=False),
        pa.field("features", pa.list_(pa.float64()), nullable=False),
        pa.field("stats", pa.list_(pa.float64()), nullable=False),
    ],
)

TUNING_SHARD = _schema(
    "tuning_shard",
    2,
    "What one shard job of a fanned-out tuning iteration adds (`circle.tune.fanout`): the "
    "(sentence, hypothesis) pairs of its sentences' n-best lists that the pool lacked, with the "
    "`decode` they came from (0: the iteration's weights, then the first pool's perturbations), "
    "their decoder `features` and the metric's `stats` against their own references. "
    "Metadata: `circle.feature_names` (JSON), `circle.one_best` (JSON: [sentence, stats] of each "
    "of the shard's sentences' 1-best under the iteration's weights), `circle.fingerprint` and "
    "`circle.decoded_sentences` (the sentences the shard decoded: a recorded start decode's "
    "lists are not).",
    [
        pa.field("decode", pa.int32(), nullable=False),
        pa.field("sentence", pa.int64(), nullable=False),
        pa.field("hypothesis", pa.string(), nullable=False),
        pa.field("features", pa.list_(pa.float64()), nullable=False),
        pa.field("stats", pa.list_(pa.float64()), nullable=False),
    ],
)

EVALUATION = _schema(
    "evaluation",
    4,
    "Test-set scores of tuned systems, one row per (experiment, condition, replicate) (thesis Fig. "
    "4.2/4.3): `condition` is e.g. 1H, 2H, 1H+1P, 1H_ref2 "
    "(circle.experiments.conditions.Condition); `reference_type` says how the extra tuning "
    "references were made (`human`, or a paraphrase kind such as `paraphrase`, `paraphrase_b0.25`, "
    "`targeted`, or `extra_<extra>` for a 1H+1X_<extra> condition, whose one extra reference "
    "`paraphrase_references` counts); `references_used` = `human_references` + "
    "`paraphrase_references`. `bleu`, `ter` and `chrf` are sacrebleu corpus scores in percent "
    "against all `eval_references` references, on the pipeline's tokenised (and, if configured, "
    "lowercased) text, each with its `<metric>_signature`; `detok_bleu` and `detok_chrf` score the "
    "detokenised output against the detokenised references with sacrebleu's default 13a tokeniser "
    "(lowercased where the pipeline lowercases; null where no detokenised text was given). The row "
    "with `condition` `untuned` (reference_type `untuned`, replicate 0, no references used, "
    "`tune_metric` `none`, `tune_iterations` 0) is the system with the config's untuned weights, "
    "the baseline tuning improves on; `bleu_precision` (geometric mean of the 1–4-gram precisions, "
    "percent) times `brevity_penalty` is `bleu` (thesis Fig. 4.8/4.9); `p_value_vs_baseline` is "
    "the paired bootstrap (Koehn 2004) p-value of BLEU against `baseline_condition` (same "
    "replicate: 1H with the run's single reference and tuning metric), null for the baseline "
    "itself. `length_ratio` is the output's length over the effective reference length "
    "(sacrebleu's, which the brevity penalty uses). A diagnostic beyond the thesis "
    "(circle.experiments.length_matching): `matched_bleu` is BLEU of the run's test n-best "
    "re-ranked with its word-penalty weight shifted by `matched_shift` so that the output has the "
    "references' mean length, `matched_length_ratio` its length ratio.",
    [
        pa.field("experiment", pa.string(), nullable=False),
        pa.field("condition", pa.string(), nullable=False),
        pa.field("reference_type", pa.string(), nullable=False),
        pa.field("human_references", pa.int32(), nullable=False),
        pa.field("paraphrase_references", pa.int32(), nullable=False),
        pa.field("references_used", pa.int32(), nullable=False),
        pa.field("replicate", pa.int32(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("tune_metric", pa.string(), nullable=False),
        pa.field("tune_iterations", pa.int32(), nullable=False),
        pa.field("eval_set", pa.string(), nullable=False),
        pa.field("eval_references", pa.int32(), nullable=False),
        pa.field("segments", pa.int32(), nullable=False),
        pa.field("bleu", pa.float64(), nullable=False),
        pa.field("ter", pa.float64(), nullable=False),
        pa.field("bleu_precision", pa.float64(), nullable=False),
        pa.field("brevity_penalty", pa.float64(), nullable=False),
        pa.field("length_ratio", pa.float64(), nullable=False),
        pa.field("matched_bleu", pa.float64(), nullable=False),
        pa.field("matched_length_ratio", pa.float64(), nullable=False),
        pa.field("matched_shift", pa.float64(), nullable=False),
        pa.field("bleu_signature", pa.string(), nullable=False),
        pa.field("ter_signature", pa.string(), nullable=False),
        pa.field("chrf", pa.float64(), nullable=False),
        pa.field("chrf_signature", pa.string(), nullable=False),
        pa.field("detok_bleu", pa.float64()),
        pa.field("detok_bleu_signature", pa.string()),
        pa.field("detok_chrf", pa.float64()),
        pa.field("detok_chrf_signature", pa.string()),
        pa.field("baseline_condition", pa.string()),
        pa.field("p_value_vs_baseline", pa.float64()),
        pa.field("bootstrap_samples", pa.int32()),
    ],
)

CONDITION_SUMMARY = _schema(
    "condition_summary",
    4,
    "Test-set scores per tuning condition over its tuning replicates (Clark et al. 2011), one row "
    "per (experiment, condition), from the runs of an `evaluation` table: `replicates` runs, mean "
    "and sample standard deviation (null for one run) of their sacrebleu BLEU, TER and chrF "
    "(percent; chrF is not tested against the baseline), and `<metric>_pooled`, the score of all "
    "replicates' outputs together (summed statistics); `length_ratio_mean` the replicates' mean "
    "output/reference length ratio; `matched_bleu_*` the same for BLEU at a common length "
    "(circle.experiments.length_matching, a diagnostic); `close_replicates`: two of the replicates "
    "scored within 0.01 BLEU and TER of each other (circle.experiments.evaluate.close_replicates: "
    "the same output or as good as, so the sd and the test over replicates are over-confident for "
    "the row). Against `baseline_condition` (null for the baseline itself): `<metric>_difference` "
    "= pooled score minus the baseline's (TER: negative is better), `<metric>_p_value` the "
    "two-sided approximate randomisation p-value over all replicates "
    "(circle.experiments.evaluate.approximate_randomisation; `shuffles` shuffles from "
    "`shuffle_seed`), and `<metric>_significant` = p-value < `significance_level`; the test whose "
    "unit is the tuning run: `<metric>_mean_difference` = mean over replicates minus the "
    "baseline's, `<metric>_welch_p_value` the two-sided Welch t-test over the replicates' scores "
    "(circle.experiments.replicates.welch_test; null with fewer than two replicates a side or no "
    "spread on either; version 4 added both).",
    [
        pa.field("experiment", pa.string(), nullable=False),
        pa.field("condition", pa.string(), nullable=False),
        pa.field("reference_type", pa.string(), nullable=False),
        pa.field("human_references", pa.int32(), nullable=False),
        pa.field("paraphrase_references", pa.int32(), nullable=False),
        pa.field("references_used", pa.int32(), nullable=False),
        pa.field("replicates", pa.int32(), nullable=False),
        pa.field("bleu_mean", pa.float64(), nullable=False),
        pa.field("bleu_sd", pa.float64()),
        pa.field("bleu_pooled", pa.float64(), nullable=False),
        pa.field("ter_mean", pa.float64(), nullable=False),
        pa.field("ter_sd", pa.float64()),
        pa.field("ter_pooled", pa.float64(), nullable=False),
        pa.field("chrf_mean", pa.float64(), nullable=False),
        pa.field("chrf_sd", pa.float64()),
        pa.field("chrf_pooled", pa.float64(), nullable=False),
        pa.field("matched_bleu_mean", pa.float64(), nullable=False),
        pa.field("matched_bleu_sd", pa.float64()),
        pa.field("matched_bleu_pooled", pa.float64(), nullable=False),
        pa.field("length_ratio_mean", pa.float64(), nullable=False),
        pa.field("close_replicates", pa.bool_(), nullable=False),
        pa.field("baseline_condition", pa.string()),
        pa.field("bleu_difference", pa.float64()),
        pa.field("bleu_p_value", pa.float64()),
        pa.field("bleu_significant", pa.bool_()),
        pa.field("ter_difference", pa.float64()),
        pa.field("ter_p_value", pa.float64()),
        pa.field("ter_significant", pa.bool_()),
        pa.field("matched_bleu_difference", pa.float64()),
        pa.field("matched_bleu_p_value", pa.float64()),
        pa.field("matched_bleu_significant", pa.bool_()),
        pa.field("bleu_mean_difference", pa.float64()),
        pa.field("bleu_welch_p_value", pa.float64()),
        pa.field("ter_mean_difference", pa.float64()),
        pa.field("ter_welch_p_value", pa.float64()),
        pa.field("matched_bleu_mean_difference", pa.float64()),
        pa.field("matched_bleu_welch_p_value", pa.float64()),
        pa.field("significance_level", pa.float64(), nullable=False),
        pa.field("shuffles", pa.int32(), nullable=False),
        pa.field("shuffle_seed", pa.int64(), nullable=False),
    ],
)

REFERENCE_QUALITY = _schema(
    "reference_quality",
    2,
    "The quality of every set of extra tuning references (circle.experiments.reference_quality), "
    "one row per candidate set: `candidate` (R, H<k>, P<k>, T<k>, MT untuned, MT 1H), its `kind`, "
    "`rank` within the kind and the tuning `replicate` it depends on (null: none); scored on "
    "`segments` tune segments against their held-out human references (`heldout_references` per "
    "segment on average: all but R and, for a human candidate, itself): `bleu`, `chrf`, `ter` in "
    "percent (sacrebleu); `length_ratio` = its words / R's; of the `added_ngrams` (distinct "
    "4-grams it has and R lacks) the `valid_share` in a held-out reference and the "
    "`reachable_wrong_share` in none but in the untuned system's n-best list; `new_share` of its "
    "4-grams in neither R nor a lower rank of its kind; `first_bleu` its BLEU against rank 1 of "
    "its kind; `lm_decoding` / `lm_reranking` log10 probability per word (end of sentence counted) "
    "under the decoder's and the reranker's language models; `input_bleu` its BLEU against R "
    "alone and `pp_bleu` = 0.9 `bleu` - 0.1 `input_bleu` (version 2 added both).",
    [
        pa.field("candidate", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("replicate", pa.int32()),
        pa.field("segments", pa.int32(), nullable=False),
        pa.field("heldout_references", pa.float64(), nullable=False),
        pa.field("bleu", pa.float64(), nullable=False),
        pa.field("chrf", pa.float64(), nullable=False),
        pa.field("ter", pa.float64(), nullable=False),
        pa.field("length_ratio", pa.float64(), nullable=False),
        pa.field("added_ngrams", pa.int64(), nullable=False),
        pa.field("valid_share", pa.float64()),
        pa.field("reachable_wrong_share", pa.float64()),
        pa.field("new_share", pa.float64()),
        pa.field("first_bleu", pa.float64()),
        pa.field("lm_decoding", pa.float64()),
        pa.field("lm_reranking", pa.float64()),
        pa.field("input_bleu", pa.float64(), nullable=False),
        pa.field("pp_bleu", pa.float64(), nullable=False),
    ],
)

EXTRA_REFERENCE = _schema(
    "extra_reference",
    1,
    "One fixed extra tuning reference per tune segment of a dose-response condition 1H+1X_<extra> "
    "(circle.experiments.dose_response), tokenised and lowercased like the tune set's references: "
    "`reference` the text, `changed` the share of its words a degraded reference (noise<p>, "
    "shuffle) has changed against the human reference it was made from (null for the others). "
    "Table metadata `circle.extra` names the kind, `circle.made_from` its origin.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("document", pa.string(), nullable=False),
        pa.field("reference", pa.string(), nullable=False),
        pa.field("changed", pa.float64()),
    ],
)

DOSE_RESPONSE = _schema(
    "dose_response",
    1,
    "Tuning on one extra reference of known quality (circle.experiments.dose_response), one row "
    "per condition that adds one reference to 1H: its `extra` reference (H2, P1, kjv, mt, "
    "noise<p>, shuffle) and that reference's adequacy on `adequacy_segments` tune segments against "
    "the human references held out from both R and H2 (`heldout_references` per segment; null "
    "without a third reference): `adequacy_bleu`, `adequacy_chrf`, `adequacy_ter` in percent "
    "(sacrebleu), `extra_length_ratio` its words / R's, `lm_decoding` log10 probability per word "
    "under the decoder's LM; the test scores of its `replicates` tuning runs: `bleu_mean`, "
    "`bleu_sd`, `gain_mean` / `gain_sd` the mean / sd over replicates of BLEU minus 1H's same "
    "replicate, `output_length_ratio` the mean output/reference length ratio, `matched_gain_mean` "
    "/ `matched_gain_sd` the same gain in BLEU at a common length "
    "(circle.experiments.length_matching, a diagnostic); against 1H over all replicates (the "
    "condition summary): `bleu_difference` (pooled), `bleu_p_value` (approximate randomisation), "
    "`bleu_significant`, and `matched_bleu_*` the same at a common length.",
    [
        pa.field("condition", pa.string(), nullable=False),
        pa.field("extra", pa.string(), nullable=False),
        pa.field("adequacy_segments", pa.int32(), nullable=False),
        pa.field("heldout_references", pa.float64()),
        pa.field("adequacy_bleu", pa.float64()),
        pa.field("adequacy_chrf", pa.float64()),
        pa.field("adequacy_ter", pa.float64()),
        pa.field("extra_length_ratio", pa.float64(), nullable=False),
        pa.field("lm_decoding", pa.float64()),
        pa.field("replicates", pa.int32(), nullable=False),
        pa.field("bleu_mean", pa.float64(), nullable=False),
        pa.field("bleu_sd", pa.float64()),
        pa.field("gain_mean", pa.float64(), nullable=False),
        pa.field("gain_sd", pa.float64()),
        pa.field("output_length_ratio", pa.float64(), nullable=False),
        pa.field("matched_gain_mean", pa.float64(), nullable=False),
        pa.field("matched_gain_sd", pa.float64()),
        pa.field("bleu_difference", pa.float64()),
        pa.field("bleu_p_value", pa.float64()),
        pa.field("bleu_significant", pa.bool_()),
        pa.field("matched_bleu_difference", pa.float64()),
        pa.field("matched_bleu_p_value", pa.float64()),
        pa.field("matched_bleu_significant", pa.bool_()),
    ],
)

GRID_SAMPLE = _schema(
    "grid_sample",
    1,
    "The sentences the targeted paraphraser is configured on (thesis §5.2.3): a seeded random "
    "sample of the tune set, each segment's single reference (1H) and the MT output for it "
    "(1-best of the system tuned with that reference, 1H).",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("reference", pa.string(), nullable=False),
        pa.field("mt_output", pa.string(), nullable=False),
    ],
)

TARGETED_NBEST = _schema(
    "targeted_nbest",
    1,
    "Paraphrase n-best lists of the grid sample's references, one row per (bias, "
    "targeting_weight, segment, rank): decoded with the paraphrase grammar of self-paraphrase "
    "bias `bias` (eq. 5.3) towards the segment's MT output with `targeting_weight` (eq. 5.1; 0 "
    "is untargeted); `score` is the paraphraser's model score.",
    [
        pa.field("bias", pa.float64(), nullable=False),
        pa.field("targeting_weight", pa.float64(), nullable=False),
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("hypothesis", pa.string(), nullable=False),
        pa.field("score", pa.float64(), nullable=False),
    ],
)

REFERENCE_DISTANCES = _schema(
    "reference_distances",
    1,
    "TER edit counts of paraphrase n-best lists in the space of references (thesis §5.2.3), one "
    "row per (bias, targeting_weight, segment): `best_edits_ref` / `best_edits_mt` of the 1-best "
    "paraphrase against the original reference / the MT output, `nbest_edits_*` their mean over "
    "the n-best list (`paraphrases` entries), `reference_edits_mt` the original reference's "
    "against the MT output; `reference_length` and `mt_length` are TER's reference lengths "
    "(circle.paraphrase.paraphraser.segment_distances).",
    [
        pa.field("bias", pa.float64(), nullable=False),
        pa.field("targeting_weight", pa.float64(), nullable=False),
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("paraphrases", pa.int32(), nullable=False),
        pa.field("reference_length", pa.float64(), nullable=False),
        pa.field("mt_length", pa.float64(), nullable=False),
        pa.field("reference_edits_mt", pa.float64(), nullable=False),
        pa.field("best_edits_ref", pa.float64(), nullable=False),
        pa.field("best_edits_mt", pa.float64(), nullable=False),
        pa.field("nbest_edits_ref", pa.float64(), nullable=False),
        pa.field("nbest_edits_mt", pa.float64(), nullable=False),
    ],
)

TARGETING_WEIGHTS = _schema(
    "targeting_weights",
    1,
    "The targeting weights of the grid search (thesis §5.2.3), from the targeting sweep at the "
    "untargeted paraphraser's bias by circle.paraphrase.grid_search.grid_weights; the weakest and "
    "strongest and how they were found are in the metadata `circle.weight_range` (JSON).",
    [pa.field("targeting_weight", pa.float64(), nullable=False)],
)

GRID_POINTS = _schema(
    "grid_points",
    1,
    "One row per point (bias, targeting_weight) of the targeting sweep (`stage` sweep) or of the "
    "bias × weight grid (`stage` grid), thesis Fig. 5.3, 5.6-5.8. Distances are corpus TER in "
    "percent (circle.paraphrase.paraphraser.ReferenceMove): `d_ref`, `d_mt` over the paraphrase "
    "n-best lists, `best_d_ref`, `best_d_mt` of the 1-best; `reference_d_mt` the original "
    "references' d_mt; `delta_ref` = d_ref, `delta_mt` = reference_d_mt - d_mt, `balance` = D = "
    "|delta_mt - delta_ref|; `eligible`: both movements reach the configured minimum.",
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("bias", pa.float64(), nullable=False),
        pa.field("targeting_weight", pa.float64(), nullable=False),
        pa.field("segments", pa.int32(), nullable=False),
        pa.field("paraphrases", pa.int64(), nullable=False),
        pa.field("d_ref", pa.float64(), nullable=False),
        pa.field("d_mt", pa.float64(), nullable=False),
        pa.field("best_d_ref", pa.float64(), nullable=False),
        pa.field("best_d_mt", pa.float64(), nullable=False),
        pa.field("reference_d_mt", pa.float64(), nullable=False),
        pa.field("delta_ref", pa.float64(), nullable=False),
        pa.field("delta_mt", pa.float64(), nullable=False),
        pa.field("balance", pa.float64(), nullable=False),
        pa.field("eligible", pa.bool_(), nullable=False),
    ],
)

GRID_CHOICE = _schema(
    "grid_choice",
    1,
    "The grid search's choice of the targeted paraphraser's configuration (thesis §5.2.3), one "
    "row: `bias` and `targeting_weight`, the point of smallest D = `balance` among the points "
    "that moved at least `min_ref_move` TER points away from the reference (`delta_ref`) and "
    "`min_mt_move` towards the MT output (`delta_mt`); beside it the plain argmin of D "
    "(`argmin_bias`, `argmin_weight`, `argmin_balance`).",
    [
        pa.field("bias", pa.float64(), nullable=False),
        pa.field("targeting_weight", pa.float64(), nullable=False),
        pa.field("balance", pa.float64(), nullable=False),
        pa.field("delta_ref", pa.float64(), nullable=False),
        pa.field("delta_mt", pa.float64(), nullable=False),
        pa.field("min_ref_move", pa.float64(), nullable=False),
        pa.field("min_mt_move", pa.float64(), nullable=False),
        pa.field("argmin_bias", pa.float64(), nullable=False),
        pa.field("argmin_weight", pa.float64(), nullable=False),
        pa.field("argmin_balance", pa.float64(), nullable=False),
    ],
)

TARGETED_CACHE = _schema(
    "targeted_cache",
    2,
    "A part of the targeted-paraphrase cache (circle.paraphrase.targeted.ParaphraseCache, thesis "
    "§5.3): per (original reference, MT hypothesis, forest words), the reranked paraphrases of the "
    "reference targeted to the hypothesis, best first (`rank` 0), with their reranking `score`; "
    "`forest_words` (space-separated, empty in exact mode) are what the forest-mode search of the "
    "reference was targeted to: the words of every hypothesis its tuning iteration added; metadata "
    "`circle.cache_key` names the paraphraser set-up (configuration, weights, n-best size, "
    "reranker) the lists belong to.",
    [
        pa.field("reference", pa.string(), nullable=False),
        pa.field("hypothesis", pa.string(), nullable=False),
        pa.field("forest_words", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("paraphrase", pa.string(), nullable=False),
        pa.field("score", pa.float64(), nullable=False),
    ],
)

ITERATION_SCORES = _schema(
    "iteration_scores",
    1,
    "One row per iteration of a tuning run (circle.experiments.iterations, thesis Fig. 5.4): "
    "`tune_score` is the tuning log's decode score in percent (metric `metric`, against the "
    "references the run tuned with), `test_bleu` / `test_ter` the sacrebleu scores (percent, all "
    "test references) of the test set's 1-best decoded with that iteration's weights; `returned` "
    "marks the iteration whose weights the run returned.",
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("tune_score", pa.float64(), nullable=False),
        pa.field("test_bleu", pa.float64(), nullable=False),
        pa.field("test_ter", pa.float64(), nullable=False),
        pa.field("returned", pa.bool_(), nullable=False),
    ],
)

PARSES = _schema(
    "parses",
    2,
    "Phrase-structure parses of the references of an evaluation set, or of the English side of "
    "a training bitext (reference `target`; SAMT's constituents) (circle.grammar.parse, the "
    "parser stage of Pang, Knight & Marcu 2003): one row per (segment, reference), `tree` a "
    "Penn bracket string whose leaves are the parser's tokens in their order and original case "
    "(brackets escaped as -LRB-/-RRB-; version 1 trees could move the words of a non-projective "
    "dependency); metadata `circle.parser` and `circle.model` name the parser, "
    "`circle.reference_names` (a JSON list, as in the evaluation sets) the references in their "
    "group order.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("reference", pa.string(), nullable=False),
        pa.field("tree", pa.string(), nullable=False),
    ],
)

LATTICE_REFERENCES = _schema(
    "lattice_references",
    1,
    "New tuning references drawn from word lattices (circle.lattice.references; Pang, Knight & "
    "Marcu 2003), for the conditions kH+mL: per tune segment, the best sentences by the LM of "
    "the squeezed lattice of its first k references in the seeded order that none of them is, "
    "one row each, best first (`rank` 0); a segment whose lattice has fewer has fewer rows. "
    "`reference` the sentence tokenised like the tune set's references, `words` the lattice "
    "path (the parser's tokens, lowercased), `lm_log10` its log10 probability under the LM "
    "(end of sentence included), `lattice_paths` the BEGIN-END paths of the segment's squeezed "
    "lattice. Metadata `circle.human` (k), `circle.count` (the most rows a segment has), "
    "`circle.segments` (tune segments), `circle.dropped` (paths skipped because their tokens "
    "are one of the k references or a better path's) and `circle.max_beam`.",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("document", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("reference", pa.string(), nullable=False),
        pa.field("words", pa.string(), nullable=False),
        pa.field("lm_log10", pa.float64(), nullable=False),
        pa.field("lattice_paths", pa.int64(), nullable=False),
    ],
)

LATTICE_PARAPHRASES = _schema(
    "lattice_paraphrases",
    1,
    "Paraphrase pairs read off word lattices (circle.lattice.pairs; Pang, Knight & Marcu 2003, "
    "§3 and §4.1): per segment, every unordered pair of different word sequences on two paths "
    "of the squeezed lattice of all its references that run between the same two states and "
    "meet nowhere in between, once a segment. `start` and `end` the states (BEGIN is 0), "
    "`phrase1` < `phrase2` the two sequences (the parser's tokens, lowercased), `whole` true "
    "when the paths run from BEGIN to END (two sentences of the lattice). Metadata "
    "`circle.reference_names` (the references merged, in order) and `circle.segments` (groups "
    "read, with or without pairs).",
    [
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("phrase1", pa.string(), nullable=False),
        pa.field("phrase2", pa.string(), nullable=False),
        pa.field("whole", pa.bool_(), nullable=False),
    ],
)

ALL_SCHEMAS: dict[str, TableSchema] = {
    s.name: s for s in (VERSES, FOREIGN_BIBLES, BITEXT, EVALSET, ALIGNMENT, ALIGNED_BITEXT, LEXICAL,
                        RULE_COUNTS, LABELLED_RULE_COUNTS, GRAMMAR, LABELLED_GRAMMAR,
                        OOV_PARAPHRASES, OOV_MASKING, GRAMMAR_OOV_PARAPHRASED,
                        GRAMMAR_OOV_PARAPHRASED_BY_LENGTH,
                        *PARAPHRASE_GRAMMARS, LABELLED_PARAPHRASE_GRAMMAR, SELF_PARAPHRASE,
                        PIVOT_RULES, LABELLED_PIVOT_RULES, PIVOT_SOURCES,
                        PIVOT_LOOKUP, TUNING_LOG, TUNING_CHECKPOINT,
                        TUNING_SHARD,
                        EVALUATION, CONDITION_SUMMARY, REFERENCE_QUALITY, EXTRA_REFERENCE,
                        DOSE_RESPONSE, GRID_SAMPLE,
                        TARGETED_NBEST, REFERENCE_DISTANCES, TARGETING_WEIGHTS, GRID_POINTS,
                        GRID_CHOICE, TARGETED_CACHE, ITERATION_SCORES, PARSES,
                        LATTICE_REFERENCES, LATTICE_PARAPHRASES)
}

"""Known words masked as OOV (target ``oov_masking``): Marton, Callison-Burch & Resnik (2009)'s
OOV augmentation scored against the grammar's own translations, at several amounts of
monolingual text, without MT tuning.

On the Bible the rules OOV phrases borrow from their distributional paraphrases lower BLEU
(docs/results.md, "Translating OOV words through distributional paraphrases"), which the docs put
down to too little monolingual text: 0.82 M Spanish words against the seed's 84-402 M. This
tests that explanation directly. A sample of source words the translation grammar knows is
treated as OOV, one word at a time, exactly as the augmentation treats an OOV phrase
(:func:`circle.grammar.oov_paraphrase.paraphrase_table` with the section's search settings,
then :func:`circle.grammar.oov_paraphrase.borrowed_rules` over the bilingual grammar's phrase
rules): its paraphrases never contain the word itself (:meth:`MonolingualCorpus.candidates`),
so none of its own rules is borrowed. Its own one-word phrase rules say what it really
translates to (:func:`true_translations`).

**The words** (:func:`masking_candidates`, :func:`draw_words`): the distinct words of the test
split's source text that a one-word phrase rule of the bilingual grammar translates, that occur
``min_count`` to ``max_count`` times in the bitext's source side (the band: enough occurrences
for the grammar's p(e|f) to say something, few enough to be like the rare words that are OOV),
alphabetic, and not stoplisted in the whole monolingual text; ``words`` of them drawn with the
config seed (all of them if there are fewer).

**The text** (:func:`text_sample`): the monolingual text of the OOV search (the source side of
every split, and the training verses ``corpus.train_segments`` leaves out). The test split's
sentences are always in it, as an OOV word always occurs in the set it is translated in; of the
other sentences, a seeded share ``text_fractions`` is kept, nested (the half holds the quarter),
so the largest fraction 1 is the OOV search's own text.

**The scores**, per amount of text (:func:`scores`): coverage, the share of masked words that
borrow any rule; accuracy@1, the share whose top borrowed target (by asim, then the copied
p(e|f), then alphabetically: :func:`ranked_borrowed`) is a true translation, uncovered words
counting as wrong; precision@1, the same among covered words; recall@k, the mean share of a
word's true translations among its top k borrowed targets. Targets match as strings: "the land"
is not "land". The baseline (:func:`random_baseline`) borrows instead the rules of another word
of the same sample drawn at random, ranked by its p(e|f): what borrowing from an unrelated word
of the same frequency gets.

**The reading rule** (:func:`reading`), fixed before the default data were run: precision@1,
the quality of what is borrowed (the OOV experiment showed coverage is not the problem), is
compared between the smallest and the largest amount of text with a margin of two standard
errors of the difference, sqrt(p₁(1 − p₁)/n₁ + p₂(1 − p₂)/n₂), n the covered words (the words
are shared across amounts, so this is conservative). It *rises* (the explanation is supported)
if the largest exceeds the smallest by more than the margin and no step from one amount to the
next falls by more than that step's margin; *rises unsteadily* if it exceeds it but some step
falls; *flat* (not supported) if the two are within the margin; *falls* otherwise.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from circle.core.schemas import OOV_MASKING
from circle.core.tables import write_table
from circle.distributional import DistributionalSettings, MonolingualCorpus
from circle.grammar.oov_paraphrase import (
    FEATURE,
    borrowed_rules,
    paraphrase_table,
    phrase_rules,
    read_known_words,
    read_phrase_rules,
    source_texts,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MaskingSettings:
    """``oov_paraphrase.masking``: the words masked, the amounts of text, what counts as a true
    translation and the k of recall@k."""

    words: int = 500
    min_count: int = 5
    max_count: int = 50
    text_fractions: tuple[float, ...] = (0.125, 0.25, 0.5, 1.0)
    min_probability: float = 0.1
    recall_k: int = 10

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> MaskingSettings:
        """The settings of a config's ``oov_paraphrase.masking`` section (the schema checks
        its keys and types); ValueError naming the section for values that do not go
        together."""
        values = dict(section)
        if "text_fractions" in values:
            values["text_fractions"] = tuple(float(f) for f in values["text_fractions"])
        try:
            return cls(**values)
        except ValueError as error:
            raise ValueError(f"oov_paraphrase.masking: {error}") from None

    def to_params(self) -> dict[str, Any]:
        """The settings as a job's plain params, read back by :meth:`from_config`."""
        return {**asdict(self), "text_fractions": list(self.text_fractions)}

    def __post_init__(self) -> None:
        if self.words < 1 or self.recall_k < 1:
            raise ValueError("words and recall_k must be at least 1")
        if not 1 <= self.min_count <= self.max_count:
            raise ValueError(f"the training-frequency band {self.min_count}..{self.max_count} "
                             "is empty or starts below 1")
        fractions = self.text_fractions
        if not fractions or list(fractions) != sorted(set(fractions)) \
                or not all(0 < f <= 1 for f in fractions):
            raise ValueError(f"text_fractions {list(fractions)} must increase, each in (0, 1]")


def masking_candidates(words: Iterable[str], train_counts: Mapping[str, int],
                       known: set[str], corpus: MonolingualCorpus,
                       settings: MaskingSettings) -> list[str]:
    """The distinct ``words`` that may be masked, sorted: translated by a one-word phrase rule
    (``known``), seen ``min_count`` to ``max_count`` times in the bitext's source side
    (``train_counts``), alphabetic, and in ``corpus`` but not stoplisted there."""
    return sorted(word for word in set(words)
                  if word in known and word.isalpha()
                  and settings.min_count <= train_counts.get(word, 0) <= settings.max_count
                  and word in corpus.index and not corpus.stopwords[corpus.index[word]])


def draw_words(candidates: Sequence[str], count: int, seed: int) -> list[str]:
    """``count`` of the sorted ``candidates`` drawn with ``seed`` (all if fewer), sorted."""
    if len(candidates) <= count:
        return list(candidates)
    chosen = np.random.default_rng([seed, count]).choice(len(candidates), count, replace=False)
    return sorted(candidates[i] for i in chosen)


def text_sample(sentences: Sequence[str], kept: Iterable[str], fraction: float,
                seed: int) -> list[str]:
    """The ``sentences`` (in their order) that a text of ``fraction`` of them holds: one
    occurrence of each of the ``kept`` sentences (the test split's) wherever it is, and the
    first ``fraction`` of the others in one permutation drawn with ``seed``, so that a larger
    fraction holds every smaller one."""
    wanted = Counter(kept)
    always = np.zeros(len(sentences), dtype=bool)
    for i, sentence in enumerate(sentences):
        if wanted[sentence] > 0:
            wanted[sentence] -= 1
            always[i] = True
    others = np.flatnonzero(~always)
    order = np.random.default_rng(seed).permutation(len(others))
    chosen = always.copy()
    chosen[others[order[:round(fraction * len(others))]]] = True
    return [sentence for sentence, keep in zip(sentences, chosen, strict=True) if keep]


def own_rules(rules: pd.DataFrame, words: Iterable[str]) -> pd.DataFrame:
    """The one-word phrase rules of ``words`` with p(e|f), the most probable first (ties in
    target order)."""
    own = phrase_rules(rules)
    own = own[own["source"].isin(set(words))]
    own = own.assign(p=np.exp(own["log_p_e_given_f"]))
    return own.sort_values(["source", "p", "target"], ascending=[True, False, True],
                           kind="stable")


def true_translations(rules: pd.DataFrame, words: Iterable[str],
                      min_probability: float) -> dict[str, list[str]]:
    """What each word really translates to: the English sides of its one-word phrase rules
    with p(e|f) at least ``min_probability``, and always the most probable one (most probable
    first)."""
    truth: dict[str, list[str]] = {}
    for word, group in own_rules(rules, words).groupby("source", sort=True):
        kept = group[group["p"] >= min_probability]["target"].tolist()
        truth[word] = kept or group["target"].iloc[:1].tolist()
    return truth


def ranked_borrowed(borrowed: pd.DataFrame) -> pd.DataFrame:
    """Borrowed rules (:func:`~circle.grammar.oov_paraphrase.borrowed_rules`) in the order of
    their OOV phrase and then best first: by asim (the paraphrase feature), then the p(e|f)
    copied from the most similar paraphrase's rule, then alphabetically by English side."""
    return borrowed.sort_values(["source", FEATURE, "log_p_e_given_f", "target"],
                                ascending=[True, False, False, True], kind="stable")


def hit_and_recall(ranked: Sequence[str], truth: Sequence[str], k: int) -> tuple[bool, float]:
    """Whether the first of ``ranked`` is a true translation, and the share of ``truth`` among
    the first ``k`` of ``ranked``."""
    true = set(truth)
    return bool(ranked) and ranked[0] in true, len(true & set(ranked[:k])) / len(true)


def random_baseline(words: Sequence[str], own: Mapping[str, Sequence[str]],
                    seed: int) -> list[str]:
    """For each of ``words``, another of them drawn with ``seed`` whose own rules it borrows in
    the baseline (``own``: each word's targets; words without any are never drawn)."""
    rng = np.random.default_rng([seed, len(words), 1])
    chosen = []
    for word in words:
        others = [other for other in words if other != word and own.get(other)]
        chosen.append(others[int(rng.integers(len(others)))] if others else "")
    return chosen


def masked_word_table(test_sentences: Sequence[str], train_sentences: Iterable[str],
                      monolingual: Sequence[str], bilingual_path: str | os.PathLike,
                      search: DistributionalSettings,
                      settings: MaskingSettings) -> tuple[pd.DataFrame, dict[str, str]]:
    """The :data:`~circle.core.schemas.OOV_MASKING` rows, one per amount of text and masked
    word, and the table's metadata: the words of ``test_sentences`` drawn as in
    :func:`draw_words` (the band counted in ``train_sentences``, the bitext's source side),
    each searched for as an OOV phrase in each :func:`text_sample` of ``monolingual`` and given
    the rules it borrows from the bilingual grammar's phrase rules, scored against its own."""
    started = time.perf_counter()
    full = MonolingualCorpus(monolingual, search)
    counts = Counter(word for sentence in train_sentences for word in sentence.split())
    known = read_known_words(bilingual_path)
    candidates = masking_candidates((w for s in test_sentences for w in s.split()), counts,
                                    known, full, settings)
    words = draw_words(candidates, settings.words, search.seed)
    found: dict[float, tuple[int, pd.DataFrame]] = {}
    for fraction in settings.text_fractions:
        corpus = full if fraction == 1 else MonolingualCorpus(
            text_sample(monolingual, test_sentences, fraction, search.seed), search)
        found[fraction] = corpus.words, paraphrase_table(corpus, words)
        logger.info("fraction %g: %d words, %d of %d masked words with paraphrases", fraction,
                    corpus.words, found[fraction][1]["phrase"].nunique(), len(words))
    sources = set(words).union(*(set(table["paraphrase"]) for _, table in found.values()))
    rules = read_phrase_rules(bilingual_path, sources)
    truth = true_translations(rules, words, settings.min_probability)
    own = {word: group["target"].tolist()
           for word, group in own_rules(rules, words).groupby("source", sort=True)}
    baseline = dict(zip(words, random_baseline(words, own, search.seed), strict=True))
    k = settings.recall_k
    rows = []
    for fraction, (text_words, paraphrases) in found.items():
        order = ranked_borrowed(borrowed_rules(paraphrases, rules))
        ranked = {word: group["target"].tolist()
                  for word, group in order.groupby("source", sort=False)}
        top = order.drop_duplicates("source").set_index("source")
        per_word = paraphrases.groupby("phrase").size()
        for word in words:
            targets = ranked.get(word, [])
            hit, recall = hit_and_recall(targets, truth[word], k)
            other = baseline[word]
            base_hit, base_recall = hit_and_recall(own.get(other, []), truth[word], k)
            rows.append({
                "fraction": fraction, "text_words": text_words, "word": word,
                "train_count": counts[word], "true_targets": truth[word],
                "paraphrases": int(per_word.get(word, 0)), "borrowed_targets": len(targets),
                "top_target": targets[0] if targets else None,
                "top_paraphrase": top.at[word, "paraphrase_of"] if targets else None,
                "top_asim": math.exp(top.at[word, FEATURE]) if targets else None,
                "correct_at_1": hit, "recall_at_k": recall,
                "baseline_word": other or None,
                "baseline_target": own[other][0] if other else None,
                "baseline_correct_at_1": base_hit, "baseline_recall_at_k": base_recall})
    logger.info("%d candidate words, %d masked, %d amounts of text in %.1f s", len(candidates),
                len(words), len(found), time.perf_counter() - started)
    metadata = {"candidates": str(len(candidates)),
                "band": f"{settings.min_count}-{settings.max_count}", "recall_k": str(k),
                "min_probability": str(settings.min_probability),
                "settings": repr(settings), "search": repr(search)}
    return pd.DataFrame(rows), metadata


def write_masked_word_table(test_paths: Sequence[str | os.PathLike],
                            train_paths: Sequence[str | os.PathLike],
                            monolingual_paths: Sequence[str | os.PathLike],
                            bilingual_path: str | os.PathLike, search: DistributionalSettings,
                            settings: MaskingSettings, out_path: str | os.PathLike,
                            provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Write :func:`masked_word_table` of tokenised tables (their ``source`` columns:
    :func:`~circle.grammar.oov_paraphrase.source_texts`); returns the rows."""
    table, metadata = masked_word_table(
        source_texts(test_paths), source_texts(train_paths), source_texts(monolingual_paths),
        bilingual_path, search, settings)
    write_table(table.astype({"train_count": "int32", "paraphrases": "int32",
                              "borrowed_targets": "int32"}), out_path, OOV_MASKING,
                provenance, metadata)
    return table


@dataclass(frozen=True)
class Reading:
    """What :func:`reading` makes of precision@1 against the amount of text."""

    verdict: str
    difference: float
    margin: float


def _margin(a: pd.Series, b: pd.Series) -> float:
    """Two standard errors of the difference of two amounts' precision@1."""
    return 2 * math.sqrt(sum(row["precision_at_1"] * (1 - row["precision_at_1"]) / row["covered"]
                             for row in (a, b)))


def scores(table: pd.DataFrame) -> pd.DataFrame:
    """Per amount of text: its words, the masked words, how many borrow a rule (coverage),
    accuracy@1 over all of them, precision@1 over the covered ones, recall@k, and the random
    baseline's accuracy@1 and recall@k."""
    rows = []
    for fraction, group in table.groupby("fraction", sort=True):
        covered = group[group["borrowed_targets"] > 0]
        rows.append({
            "fraction": fraction, "text_words": int(group["text_words"].iloc[0]),
            "masked_words": len(group), "covered": len(covered),
            "coverage": len(covered) / len(group),
            "accuracy_at_1": group["correct_at_1"].mean(),
            "precision_at_1": covered["correct_at_1"].mean() if len(covered) else math.nan,
            "recall_at_k": group["recall_at_k"].mean(),
            "baseline_accuracy_at_1": group["baseline_correct_at_1"].mean(),
            "baseline_recall_at_k": group["baseline_recall_at_k"].mean()})
    return pd.DataFrame(rows)


def reading(summary: pd.DataFrame) -> Reading:
    """The reading rule of the module's docstring on :func:`scores`' rows (in increasing
    fraction): "rises", "rises unsteadily", "flat" or "falls" for precision@1 from the smallest
    to the largest amount of text; "no reading" when an end has no covered word or there is
    one amount only."""
    rows = [row for _, row in summary.sort_values("fraction").iterrows()]
    if len(rows) < 2 or rows[0]["covered"] == 0 or rows[-1]["covered"] == 0:
        return Reading("no reading", math.nan, math.nan)
    first, last = rows[0], rows[-1]
    difference = last["precision_at_1"] - first["precision_at_1"]
    margin = _margin(first, last)
    if abs(difference) <= margin:
        return Reading("flat", difference, margin)
    if difference < 0:
        return Reading("falls", difference, margin)
    falls = any(b["covered"] and a["covered"]
                and a["precision_at_1"] - b["precision_at_1"] > _margin(a, b)
                for a, b in zip(rows, rows[1:], strict=False))
    return Reading("rises unsteadily" if falls else "rises", difference, margin)

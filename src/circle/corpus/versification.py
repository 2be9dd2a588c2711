"""Versification checks for the verse table: which verses sit in the wrong KJV slot.

Two detectors share one scorer (:func:`offset_scores`: how well the text in slot ``i`` matches the
pivot text in slot ``i+d`` of the same book, for ``d`` in ``-5..5``) and one decision rule
(:func:`flag_shifted`):

* **RV1909 shifts** (:func:`detect_shifts`, column ``shift_flag``). The SWORD module forces
  Hebrew/Spanish numbering into KJV slots, so some chapters run 1–5 verses off (Num 13, Job 39–40,
  Jonah 2, ...). Spanish and English words are linked by eflomal run on all es/KJV verse pairs;
  eflomal is GPL-3 and is only run as a separate process (``eflomal-align``). It is stochastic (no
  seed), so its result is frozen in ``resources/bible/shift_flags.tsv`` (:func:`write_flags`,
  :func:`read_flags`) and the builder reads that file.
* **English-reference shifts** (:func:`reference_shift_flags`, column
  ``ref_versification_flag``): Darby keeps Hebrew numbering in Num 30, Deut 29, 1Kgs 22, 1Chr 12,
  Rev 13; BBE is one verse off in John 1:39–51. Bag of words against KJV; deterministic, so it is
  recomputed at every build.

Decision rule: a verse is a candidate when some offset ``d != 0``, smoothed over 3 neighbouring
verses, beats ``d = 0`` by a margin; a candidate whose own, unsmoothed scores agree is flagged.
Forcing a text into KJV slots displaces everything from the first displaced verse to the chapter's
end, where the overflow is merged (Job 39:30 holds five verses). So when candidates fill at least
half of a chapter's tail (and number at least 3), the whole tail from the verse before its first
candidate (which usually holds a merged or split verse) is flagged. For RV1909, a verse followed
by an empty slot in its chapter is flagged too: the empty slot's text was merged into it
(2Sam 20:25, Job 35:15).
"""

from __future__ import annotations

import math
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from circle.core.external import run_tool

MAX_OFFSET = 5
"""Offsets tried on each side; Job 40 in RV1909 is 5 verses off."""
SMOOTHING_WINDOW = 3
MARGIN = 0.05
MIN_REGION = 3
"""Candidates a chapter needs before it is treated as a shifted region."""
MIN_ASSOCIATION = 0.01
"""Word pairs whose Dice association (over eflomal links) is lower are dropped."""

Bag = Mapping[str, float]


def tokens(text: str | None) -> list[str]:
    """Lowercased word tokens (a detector's view of a verse; not the pipeline's tokeniser)."""
    return re.findall(r"\w+", text.lower()) if isinstance(text, str) else []


def idf_weights(token_lists: Sequence[list[str]]) -> dict[str, float]:
    """Inverse document frequency of every word, over verses."""
    frequency = Counter(word for words in token_lists for word in set(words))
    return {word: math.log(len(token_lists) / count) for word, count in frequency.items()}


@dataclass(frozen=True)
class Pivot:
    """The pivot verses (KJV) as flat token arrays, shared by every version scored against them."""

    vocabulary: dict[str, int]
    slot: np.ndarray
    """Per pivot token: its verse slot."""
    word: np.ndarray
    weight: np.ndarray
    totals: np.ndarray
    """Per slot: the summed weight of its tokens."""
    book_ids: np.ndarray

    @classmethod
    def build(cls, targets: Sequence[list[str]], books: Sequence[str]) -> Pivot:
        """Index tokenised pivot verses, weighting words by inverse document frequency."""
        weights = idf_weights(targets)
        vocabulary = {word: n for n, word in enumerate(weights)}
        slot = np.repeat(np.arange(len(targets)), [len(words) for words in targets])
        word = np.array([vocabulary[w] for words in targets for w in words], dtype=np.int64)
        weight = np.array([weights[w] for words in targets for w in words])
        return cls(vocabulary, slot, word, weight,
                   np.bincount(slot, weight, minlength=len(targets)),
                   pd.factorize(pd.Series(books))[0])


def offset_scores(bags: Sequence[Bag | None], pivot: Pivot) -> np.ndarray:
    """``scores[i, MAX_OFFSET + d]``: weighted share of pivot slot ``i+d``'s words that slot ``i``
    covers (``bags[i]`` maps pivot words to a coverage in 0..1). NaN where slot ``i`` has no text
    or ``i+d`` is outside its book. Vectorised: every (slot, word) pair is one integer key."""
    size = len(pivot.vocabulary)
    keys, values = [], []
    for i, bag in enumerate(bags):
        for word, value in (bag or {}).items():
            if word in pivot.vocabulary:
                keys.append(i * size + pivot.vocabulary[word])
                values.append(value)
    order = np.argsort(keys)
    # A sentinel key (-1, never looked up) keeps the arrays non-empty.
    bag_keys = np.concatenate([[-1], np.asarray(keys, dtype=np.int64)[order]])
    bag_values = np.concatenate([[0.0], np.asarray(values, dtype=float)[order]])
    n_slots = len(pivot.totals)
    has_bag = np.flatnonzero([bag is not None for bag in bags])
    scores = np.full((len(bags), 2 * MAX_OFFSET + 1), np.nan)
    for k, d in enumerate(range(-MAX_OFFSET, MAX_OFFSET + 1)):
        source_slot = pivot.slot - d
        inside = (source_slot >= 0) & (source_slot < len(bags))
        query = np.where(inside, source_slot, 0) * size + pivot.word
        found = np.minimum(np.searchsorted(bag_keys, query), len(bag_keys) - 1)
        hit = inside & (bag_keys[found] == query)
        covered = np.bincount(pivot.slot, np.where(hit, pivot.weight * bag_values[found], 0.0),
                              minlength=n_slots)
        source, target = has_bag, has_bag + d
        keep = (target >= 0) & (target < n_slots)
        source, target = source[keep], target[keep]
        keep = (pivot.book_ids[target] == pivot.book_ids[source]) & (pivot.totals[target] > 0)
        scores[source[keep], k] = covered[target[keep]] / pivot.totals[target[keep]]
    return scores


def flag_shifted(scores: np.ndarray, frame: pd.DataFrame, flag_before_gaps: bool = False
                 ) -> np.ndarray:
    """Apply the decision rule (module docstring) to :func:`offset_scores`; one bool per row of
    ``frame`` (which needs ``book``, ``document`` and a default index, in canonical order)."""
    table = pd.DataFrame(scores)
    smoothed = table.groupby(frame["book"].to_numpy()).transform(
        lambda column: column.rolling(SMOOTHING_WINDOW, center=True, min_periods=1).mean())
    candidate = _beats_zero(smoothed)
    flagged = candidate & _beats_zero(table)
    for rows in frame.groupby("document", sort=False).indices.values():
        start = _shifted_region_start(candidate[rows])
        if start is not None:
            flagged[rows[max(start - 1, 0):]] = True
    present = ~np.isnan(scores[:, MAX_OFFSET])
    if flag_before_gaps:
        document = frame["document"].to_numpy()
        gap_follows = np.append(~present[1:] & (document[1:] == document[:-1]), False)
        flagged |= gap_follows
    return flagged & present


def _shifted_region_start(candidate: np.ndarray) -> int | None:
    """Position of the earliest candidate from which candidates fill at least half of the rest of
    the chapter (and number at least :data:`MIN_REGION`), or None."""
    remaining = np.cumsum(candidate[::-1])[::-1]
    length = np.arange(len(candidate), 0, -1)
    starts = np.flatnonzero(candidate & (remaining >= MIN_REGION) & (2 * remaining >= length))
    return int(starts[0]) if len(starts) else None


def _beats_zero(scores: pd.DataFrame) -> np.ndarray:
    others = scores.drop(columns=MAX_OFFSET).max(axis=1)
    return (others > scores[MAX_OFFSET] + MARGIN).to_numpy()


# --- RV1909 against KJV (eflomal) ---------------------------------------------------------------

def eflomal_forward_links(source: Sequence[list[str]], target: Sequence[list[str]],
                          samplers: int = 2) -> list[list[tuple[int, int]]]:
    """Forward word links from ``eflomal-align`` (run as a separate process; eflomal is GPL-3)."""
    with tempfile.TemporaryDirectory(prefix="circle-shifts-") as tmp:
        paths = {name: Path(tmp) / name for name in ("source", "target", "links", "log")}
        for name, lines in (("source", source), ("target", target)):
            paths[name].write_text("".join(" ".join(words) + "\n" for words in lines))
        run_tool("eflomal-align", ["-s", paths["source"], "-t", paths["target"],
                                   "-f", paths["links"], "--n-samplers", samplers,
                                   "--overwrite"], paths["log"])
        lines = paths["links"].read_text().split("\n")[:len(source)]
    return [[tuple(map(int, link.split("-"))) for link in line.split()] for line in lines]


def lexical_table(source: Sequence[list[str]], target: Sequence[list[str]],
                  links: Sequence[list[tuple[int, int]]]) -> dict[str, dict[str, float]]:
    """Per source word, its target words with their Dice association over the links."""
    pair_count: Counter[tuple[str, str]] = Counter()
    source_count: Counter[str] = Counter()
    target_count: Counter[str] = Counter()
    for src, tgt, sentence_links in zip(source, target, links, strict=True):
        pair_count.update((src[i], tgt[j]) for i, j in sentence_links)
        source_count.update(src)
        target_count.update(tgt)
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for (s, e), count in pair_count.items():
        association = 2 * count / (source_count[s] + target_count[e])
        if association >= MIN_ASSOCIATION:
            table[s][e] = association
    return table


def translation_bag(words: list[str], table: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Target words a source verse can explain, each with its best association."""
    bag: dict[str, float] = {}
    for word in words:
        for target, association in table.get(word, {}).items():
            if association > bag.get(target, 0.0):
                bag[target] = association
    return bag


def detect_shifts(frame: pd.DataFrame, source: str = "es", target: str = "kjv",
                  samplers: int = 2) -> set[int]:
    """Segment ids of ``source`` verses that sit in a shifted KJV slot (stochastic: freeze it)."""
    source_tokens = [tokens(text) for text in frame[source]]
    target_tokens = [tokens(text) for text in frame[target]]
    both = [i for i, (s, t) in enumerate(zip(source_tokens, target_tokens, strict=True)) if s and t]
    links = eflomal_forward_links([source_tokens[i] for i in both],
                                  [target_tokens[i] for i in both], samplers)
    table = lexical_table([source_tokens[i] for i in both], [target_tokens[i] for i in both],
                          links)
    bags: list[Bag | None] = [None] * len(frame)
    for i in both:
        bags[i] = translation_bag(source_tokens[i], table)
    scores = offset_scores(bags, Pivot.build(target_tokens, frame["book"].tolist()))
    flagged = flag_shifted(scores, frame.reset_index(drop=True), flag_before_gaps=True)
    return set(frame["segment_id"].to_numpy()[flagged].tolist())


def write_flags(path: str | Path, frame: pd.DataFrame, flagged: set[int],
                what: str = "RV1909 verses in shifted KJV slots; written by circle.corpus.bible "
                            "--detect-shifts") -> None:
    """Freeze detected shifts as a TSV: segment_id and a readable reference, one verse a line,
    under a comment saying ``what`` they are."""
    rows = frame[frame["segment_id"].isin(flagged)]
    lines = [f"# {what} (eflomal, stochastic: edit or regenerate deliberately)",
             "segment_id\treference"]
    lines += [f"{sid}\t{doc}.{verse}" for sid, doc, verse
              in zip(rows["segment_id"], rows["document"], rows["verse"], strict=True)]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n")


def read_flags(path: str | Path) -> set[int]:
    """The segment ids of a frozen flag file (see :func:`write_flags`)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: frozen shift flags missing; regenerate them with "
                                "`python -m circle.corpus.bible --detect-shifts`")
    table = pd.read_csv(path, sep="\t", comment="#")
    return set(table["segment_id"].astype(int).tolist())


# --- English references against KJV (bag of words) ----------------------------------------------

def reference_shift_flags(frame: pd.DataFrame, references: Sequence[str],
                          pivot: str = "kjv") -> pd.DataFrame:
    """Per reference column, which verses are in a shifted slot relative to ``pivot``."""
    frame = frame.reset_index(drop=True)
    index = Pivot.build([tokens(text) for text in frame[pivot]], frame["book"].tolist())
    flags = {}
    for reference in references:
        bags = [dict.fromkeys(tokens(text), 1.0) if isinstance(text, str) else None
                for text in frame[reference]]
        flags[reference] = flag_shifted(offset_scores(bags, index), frame)
    return pd.DataFrame(flags)

"""How good are the extra tuning references? Every set of references a condition adds to the
single reference R, measured against the human references the single-reference runs never see.

The thesis simulates a single reference per document (§4.3.1) and adds paraphrases of it
(§4.3.2) or paraphrases targeted to each hypothesis (§5.3); it explains what they do by
reachability (§6.3: n-grams the system can produce) and by "the sheer volume of changes" (§6.6).
It never measures a paraphrase as a translation. Here, for every tune segment with at least two
human references, each candidate extra reference is scored against the segment's *held-out*
human references: all of them but R and, for a human candidate, but itself. This goes beyond
the thesis; it answers whether a reference can teach the system anything a human would accept.

Per candidate set (one text per segment: the k-th human reference of the seeded order ``Hk``,
the k-th untargeted paraphrase ``Pk``, the k-th targeted paraphrase ``Tk`` towards a 1H run's
1-best, the MT output itself, and R for the ceiling):

* **adequacy**: corpus BLEU, chrF and TER (sacrebleu) against the held-out references;
* **added n-grams** (:data:`NGRAM_ORDER`-grams the candidate has and R lacks, distinct per
  segment): the share that is *valid* (in a held-out reference) and the share that is *wrong
  but reachable* (in no held-out reference, but in the untuned system's n-best list: what
  tuning against it can reward, §6.3);
* **fluency**: log10 probability per word (the end of sentence counted as a word) under the
  decoder's and the reranker's language models;
* **length** against R (candidate words over R's words);
* **diversity** among the k of a kind: BLEU of the k-th against the first (``first_bleu``) and
  the share of its n-grams in neither R nor a lower rank of its kind (``new_share``);
* **ppBLEU**, adequacy less closeness to the paraphrases' input: BLEU against R alone
  (``input_bleu``) and ``pp_bleu`` = α × BLEU against the held-out references − (1 − α) ×
  BLEU against R (:func:`circle.tune.metrics.ibleu`), α = 0.9
  (:data:`circle.tune.metrics.IBLEU_ALPHA`, the α Sun & Zhou 2012 report iBLEU with).
  Ganitkevitch & Callison-Burch's draft names "ppBLEU" in its evaluation plan but never
  defines it; this is our definition, Sun & Zhou (2012)'s iBLEU with R as the input: a
  paraphrase scores by how far it moves from R towards what other translators wrote, and
  copying R gains nothing over R itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from circle.core.schemas import EVALSET, REFERENCE_QUALITY
from circle.core.tables import read_table, write_table
from circle.corpus.references import ordered_references
from circle.decoder.lm import LanguageModel
from circle.decoder.nbest import NBEST
from circle.experiments.evaluate import corpus_bleu, corpus_chrf, corpus_ter
from circle.tune.metrics import IBLEU_ALPHA, ibleu

NGRAM_ORDER = 4
"""The n of the added-n-gram shares (BLEU's longest n-gram)."""

KINDS: tuple[str, ...] = ("single", "human", "paraphrase", "targeted", "mt")
"""Candidate kinds in table order: R itself, the other human references, untargeted and
targeted paraphrases of R, the system's own output."""


@dataclass(frozen=True)
class CandidateSet:
    """One candidate extra reference per tune segment (None where the set has none):
    ``name`` as the table prints it (``H2``, ``P1``, ``T1``, ``MT untuned``), its ``kind``
    (:data:`KINDS`), its 1-based ``rank`` within the kind, and the tuning ``replicate`` whose
    output it depends on (targeted paraphrases, tuned MT output; None otherwise)."""

    name: str
    kind: str
    rank: int
    texts: tuple[str | None, ...]
    replicate: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown candidate kind {self.kind!r}; one of {list(KINDS)}")


def ngram_set(text: str, order: int = NGRAM_ORDER) -> set[tuple[str, ...]]:
    """The distinct ``order``-grams of a tokenised text."""
    words = text.split()
    return {tuple(words[i:i + order]) for i in range(len(words) - order + 1)}


def human_sets(tune: pd.DataFrame) -> list[CandidateSet]:
    """R (the first reference of each segment's seeded order, §4.3.1) and H2..Hn, the further
    references in that order (the extra references of 2H..nH)."""
    ordered = ordered_references(tune)
    width = max(len(refs) for refs in ordered)
    sets = [CandidateSet("R", "single", 1, tuple(refs[0] for refs in ordered))]
    for k in range(2, width + 1):
        sets.append(CandidateSet(f"H{k}", "human", k - 1,
                                 tuple(refs[k - 1] if len(refs) >= k else None
                                       for refs in ordered)))
    return sets


def ranked_sets(lists: Sequence[Sequence[str] | None], prefix: str, kind: str,
                replicate: int | None = None) -> list[CandidateSet]:
    """Candidate sets from per-segment ranked lists (paraphrases of R, best first): the k-th
    entries make set ``<prefix>k``."""
    depth = max((len(entries) for entries in lists if entries), default=0)
    return [CandidateSet(f"{prefix}{k}", kind, k,
                         tuple(entries[k - 1] if entries and len(entries) >= k else None
                               for entries in lists), replicate)
            for k in range(1, depth + 1)]


def nbest_lists(nbest: pd.DataFrame, segment_ids: Sequence[int]) -> list[list[str]]:
    """Each segment's hypotheses, best first, in the order of ``segment_ids`` (empty where a
    segment has none)."""
    ordered = nbest.sort_values(["segment_id", "rank"], kind="stable")
    lists = ordered.groupby("segment_id", sort=False)["hypothesis"].agg(list).to_dict()
    return [lists.get(s, []) for s in segment_ids]


def targeted_lists(cached: Mapping[tuple[str, str, str], Sequence[str]],
                   single: Sequence[str], start: Sequence[Sequence[str]],
                   forest: bool) -> list[list[str] | None]:
    """The targeted paraphrases of each segment's single reference towards the 1-best of a 1H
    run, as that run's 1H+kT runs paraphrased them in their first iteration (§5.3): ``cached``
    is the targeted cache's lists by (reference, hypothesis, forest words), ``start`` each
    segment's n-best list at the 1H weights (the iteration's hypotheses, whose words a forest-
    mode search is targeted to). None where the cache has no list."""
    lists = []
    for reference, hypotheses in zip(single, start, strict=True):
        words = " ".join(sorted(set().union(*(h.split() for h in hypotheses)))) if forest else ""
        found = cached.get((reference, hypotheses[0], words)) if hypotheses else None
        lists.append(list(found) if found else None)
    return lists


def _log10_per_word(model, texts: Sequence[str]) -> float:
    words = sum(len(text.split()) + 1 for text in texts)  # + the end of sentence
    return float(sum(model.score(text, bos=True, eos=True) for text in texts) / words)


def reference_quality(tune: pd.DataFrame, sets: Sequence[CandidateSet],
                      reachable: Sequence[set[tuple[str, ...]]],
                      language_models: Mapping[str, object] | None = None,
                      lowercased: bool = False) -> pd.DataFrame:
    """One row per candidate set (see the module doc); ``tune`` is the tune set
    (:data:`~circle.core.schemas.EVALSET`), ``reachable[i]`` the :data:`NGRAM_ORDER`-grams of the
    untuned system's n-best list of segment i, ``language_models`` kenlm models by column name
    (``decoding`` and ``reranking``: columns ``lm_decoding``, ``lm_reranking``, the log10
    probability per word; NaN without the model). Only segments with at least two
    references count; a set is scored on those of them where it has a text and a held-out
    reference (a human candidate needs three references), and left out if there are none."""
    ordered = ordered_references(tune)
    if len(reachable) != len(ordered):
        raise ValueError(f"{len(reachable)} reachable n-gram sets for {len(ordered)} segments")
    usable = [i for i, refs in enumerate(ordered) if len(refs) >= 2]
    if not usable:
        raise ValueError("no tune segment has two references: nothing is held out from R")
    single = [refs[0] for refs in ordered]
    single_ngrams = [ngram_set(text) for text in single]
    seen_below: dict[tuple[str, int | None], list[set]] = {}
    firsts: dict[tuple[str, int | None], tuple[str | None, ...]] = {}
    rows = []
    for candidate in sets:
        if len(candidate.texts) != len(ordered):
            raise ValueError(f"candidate set {candidate.name}: {len(candidate.texts)} texts for "
                             f"{len(ordered)} segments")
        own = candidate.kind == "human"
        heldout_of = {i: [ref for k, ref in enumerate(ordered[i][1:], start=2)
                          if not (own and k == candidate.rank + 1)] for i in usable}
        segments = [i for i in usable if candidate.texts[i] is not None and heldout_of[i]]
        if not segments:
            continue
        texts = [candidate.texts[i] for i in segments]
        heldout = [heldout_of[i] for i in segments]
        added = valid = wrong_reachable = 0
        for i, text, refs in zip(segments, texts, heldout, strict=True):
            new = ngram_set(text) - single_ngrams[i]
            accepted = set().union(*(ngram_set(ref) for ref in refs))
            added += len(new)
            valid += len(new & accepted)
            wrong_reachable += len((new - accepted) & reachable[i])
        group = (candidate.kind, candidate.replicate)
        below = seen_below.setdefault(group, [set(single_ngrams[i]) for i in range(len(ordered))])
        fresh = total = 0
        for i in segments:
            grams = ngram_set(candidate.texts[i])
            fresh += len(grams - below[i])
            total += len(grams)
            below[i] |= grams
        first = firsts.setdefault(group, candidate.texts)
        first_bleu = np.nan
        if candidate.rank > 1 and candidate.kind != "single":
            pairs = [(candidate.texts[i], first[i]) for i in segments if first[i] is not None]
            first_bleu = corpus_bleu([t for t, _ in pairs], [[f] for _, f in pairs],
                                     lowercased).value
        row = {"candidate": candidate.name, "kind": candidate.kind, "rank": candidate.rank,
               "replicate": candidate.replicate, "segments": len(segments),
               "heldout_references": float(np.mean([len(refs) for refs in heldout])),
               "bleu": corpus_bleu(texts, heldout, lowercased).value,
               "chrf": corpus_chrf(texts, heldout, lowercased).value,
               "ter": corpus_ter(texts, heldout, lowercased).value,
               "length_ratio": sum(len(t.split()) for t in texts)
               / sum(len(single[i].split()) for i in segments),
               "added_ngrams": added,
               "valid_share": valid / added if added else np.nan,
               "reachable_wrong_share": wrong_reachable / added if added else np.nan,
               "new_share": fresh / total if total else np.nan,
               "first_bleu": first_bleu,
               "input_bleu": corpus_bleu(texts, [[single[i]] for i in segments],
                                         lowercased).value}
        row["pp_bleu"] = ibleu(row["bleu"], row["input_bleu"], IBLEU_ALPHA)
        for name in ("decoding", "reranking"):
            model = (language_models or {}).get(name)
            row[f"lm_{name}"] = np.nan if model is None else _log10_per_word(model, texts)
        rows.append(row)
    return pd.DataFrame(rows)


def write_reference_quality(table: pd.DataFrame, path: str | os.PathLike,
                            provenance: Mapping[str, str] | None = None) -> None:
    """Write a :func:`reference_quality` table as :data:`~circle.core.schemas.REFERENCE_QUALITY`."""
    frame = table.copy()
    frame["replicate"] = frame["replicate"].astype("Int32")
    write_table(frame, path, REFERENCE_QUALITY, provenance=provenance)


def quality_of_run(tune_path: str | os.PathLike, untuned_path: str | os.PathLike,
                   tuned_paths: Mapping[int, str | os.PathLike],
                   paraphrases_path: str | os.PathLike | None,
                   targeted: tuple[Mapping[tuple[str, str, str], Sequence[str]], bool] | None,
                   decoding_lm: str | os.PathLike, reranking_lm: str | os.PathLike,
                   lowercased: bool) -> pd.DataFrame:
    """:func:`reference_quality` of a pipeline run: R and H<k> from the tune set, P<k> from the
    untargeted paraphrases (None: no 1H+kP condition), the untuned output and its n-best lists
    (reachability), each 1H replicate's output (``tuned_paths``: the tune-set n-best tables by
    replicate) and, with ``targeted`` = (the targeted cache's lists, forest mode), T<k> towards
    each replicate's 1-best."""
    tune = read_table(tune_path, EVALSET)
    ids = tune["segment_id"].tolist()
    untuned = nbest_lists(read_table(untuned_path, NBEST), ids)
    single = [refs[0] for refs in ordered_references(tune, 1)]
    sets = human_sets(tune)
    if paraphrases_path is not None:
        sets += ranked_sets(nbest_lists(read_table(paraphrases_path, NBEST), ids), "P",
                            "paraphrase")
    sets.append(CandidateSet("MT untuned", "mt", 1, tuple(lists[0] for lists in untuned)))
    for replicate, path in sorted(tuned_paths.items()):
        start = nbest_lists(read_table(path, NBEST), ids)
        sets.append(CandidateSet("MT 1H", "mt", 1, tuple(lists[0] for lists in start),
                                 replicate))
        if targeted is not None:
            cached, forest = targeted
            sets += ranked_sets(targeted_lists(cached, single, start, forest), "T", "targeted",
                                replicate)
    reachable = [set().union(*(ngram_set(h) for h in lists)) for lists in untuned]
    models = {"decoding": LanguageModel(decoding_lm).model,
              "reranking": LanguageModel(reranking_lm).model}
    order = {kind: n for n, kind in enumerate(KINDS)}
    sets.sort(key=lambda s: (order[s.kind], s.rank, -1 if s.replicate is None else s.replicate))
    return reference_quality(tune, sets, reachable, models, lowercased)

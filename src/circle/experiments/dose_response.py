"""Tuning on references of known quality: how good must an extra reference be before it helps?

The thesis adds paraphrases of the single reference R to the tuning set (§4.3.2) and explains
what they do by reachability (§6.3: they add n-grams the system can produce) and by "the sheer
volume of changes" a targeted paraphraser makes (§6.6). It never varies the *quality* of an
added reference with everything else fixed. This module does, beyond the thesis: conditions
``1H+1X_<extra>`` add ONE fixed extra reference per tune segment to R, of a kind whose quality
is known or set on purpose, and the figure (:mod:`circle.figures.dose_response`) puts each
condition's test gain over 1H against that reference's adequacy (a dose-response; its
conditions and runs: :mod:`circle.experiments.dose_runs`):

* ``H2``, another human reference: the 2H control (the 2H runs themselves);
* ``P1``, the 1-best untargeted paraphrase of R: today's 1H+1P (its runs themselves);
* ``kjv``, the verse in the King James Version: adequate, and in the English the system is
  trained on (the KJV is the training target of the default experiment; a tune verse is in the
  tune split, never in the training bitext: :func:`circle.corpus.prepare.bible_tables`);
* ``mt``, the untuned system's own 1-best on the tune set;
* ``copy``, R itself: BLEU against R twice is BLEU against R (clipping takes the larger count of
  the two, the brevity penalty the closer length), so 1H+1X_copy optimises 1H's objective from
  other seeds, a control for MERT's draw, not a reference of another quality;
* ``noise<p>``, H2 with p % of its words (rounded, at least one) each replaced by a word drawn
  uniformly from the tune references' vocabulary (never the word itself), and ``shuffle``, H2's
  words in a random order: adequacy set on purpose, from H2 down.

Degraded references are drawn per segment from the config seed, the reference's name and the
segment id (:func:`circle.experiments.conditions.run_seed`): the same for a seed whatever
else the set holds, different across seeds. Every extra reference is tokenised and lowercased as the
tune set's references are (:func:`circle.corpus.preprocess.normalize`; degraded and MT references
are made from tokenised text already).

Adequacy is measured as :mod:`circle.experiments.reference_quality` measures every candidate
(sacrebleu BLEU, chrF and TER), here against the references held out from both R and H2: the same
references for every extra reference, none of them the one a degraded reference was made from.
It needs a third human reference per segment; with fewer the adequacy is left empty and the
page says so (the runs are still tuned and tested).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import kenlm
import numpy as np
import pandas as pd

from circle.core.schemas import (
    CONDITION_SUMMARY,
    DOSE_RESPONSE,
    EVALSET,
    EVALUATION,
    EXTRA_REFERENCE,
    VERSES,
)
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.preprocess import normalize
from circle.corpus.references import ordered_references, single_references
from circle.decoder.lm import LanguageModel
from circle.decoder.nbest import NBEST, best_of
from circle.experiments.conditions import Condition, run_seed
from circle.experiments.dose_runs import check_extra
from circle.experiments.reference_quality import (
    CandidateSet,
    nbest_lists,
    reference_quality,
)


def tune_vocabulary(table: pd.DataFrame) -> list[str]:
    """The distinct words of every reference of the tune set, sorted (the noise words)."""
    return sorted({word for refs in table["references"] for ref in refs
                   for word in ref.split()})


def degrade(text: str, extra: str, vocabulary: Sequence[str], rng: np.random.Generator
            ) -> tuple[str, float]:
    """``text`` degraded as ``extra`` (``noise<p>`` or ``shuffle``) says, with the share of its
    positions whose word changed. ``noise<p>``: round(p % of the words), at least one, each
    replaced by another word drawn uniformly from ``vocabulary``; ``shuffle``: a random
    permutation of the words."""
    words = text.split()
    if not words:
        return text, 0.0
    if extra == "shuffle":
        shuffled = [words[i] for i in rng.permutation(len(words))]
        changed = sum(a != b for a, b in zip(words, shuffled, strict=True))
        return " ".join(shuffled), changed / len(words)
    if not extra.startswith("noise"):
        raise ValueError(f"'{extra}' is not a degraded reference (noise<p> or shuffle)")
    share = int(extra[len("noise"):]) / 100
    if not 0 < share <= 1:
        raise ValueError(f"{extra}: the share of replaced words must be in (0, 100] %")
    count = min(len(words), max(1, round(share * len(words))))
    index = {word: i for i, word in enumerate(vocabulary)}
    out = list(words)
    for position in sorted(int(i) for i in rng.choice(len(words), size=count, replace=False)):
        own = index.get(words[position])
        choices = len(vocabulary) - (own is not None)
        if choices < 1:
            raise ValueError("the tune vocabulary has no other word to replace with")
        drawn = int(rng.integers(choices))
        out[position] = vocabulary[drawn + (own is not None and drawn >= own)]
    return " ".join(out), count / len(words)


def extra_reference_frame(table: pd.DataFrame, texts: Sequence[str],
                          changed: Sequence[float] | None = None) -> pd.DataFrame:
    """An :data:`~circle.core.schemas.EXTRA_REFERENCE` frame: one extra reference ``texts`` per
    segment of the tune ``table``, with the share of words a degraded one ``changed`` (null for
    the others)."""
    return pd.DataFrame({"segment_id": table["segment_id"].to_numpy(),
                         "document": table["document"].to_numpy(), "reference": list(texts),
                         "changed": [None] * len(table) if changed is None else list(changed)})


def degraded_references(table: pd.DataFrame, extra: str, seed: int) -> pd.DataFrame:
    """An :data:`~circle.core.schemas.EXTRA_REFERENCE` frame: each segment's H2 (the second
    reference of its seeded order, the one 2H adds) degraded as ``extra`` says, drawn from
    ``seed``, the name and the segment id."""
    ordered = ordered_references(table, 2)
    if min(len(refs) for refs in ordered) < 2:
        raise ValueError(f"{extra}: a degraded reference is made from a second human "
                         "reference, and a tune segment has only one")
    vocabulary = tune_vocabulary(table)
    texts, changed = [], []
    for segment, refs in zip(table["segment_id"], ordered, strict=True):
        rng = np.random.default_rng(run_seed(seed, f"{extra}:{int(segment)}"))
        text, share = degrade(refs[1], extra, vocabulary, rng)
        texts.append(text)
        changed.append(share)
    return extra_reference_frame(table, texts, changed)


def kjv_references(table: pd.DataFrame, verses: pd.DataFrame, target_lang: str,
                   lowercase: bool, column: str = "kjv") -> pd.DataFrame:
    """The tune verses in the ``column`` translation of the verse table (:data:`~circle.
    schemas.VERSES`), tokenised and lowercased as the tune set's references are. Refuses a
    verse the table lacks, has no text for, or trains on (a tune verse is never in the
    training split)."""
    rows = verses.set_index("segment_id")
    ids = table["segment_id"].tolist()
    missing = [s for s in ids if s not in rows.index]
    if missing:
        raise ValueError(f"tune segments {missing[:5]} are not verses of the verse table")
    found = rows.loc[ids]
    trained = found.index[found["split"] == "train"].tolist()
    if trained:
        raise ValueError(f"tune verses {trained[:5]} are in the training split")
    empty = found.index[found[column].isna()].tolist()
    if empty:
        raise ValueError(f"tune verses {empty[:5]} have no {column} text")
    return extra_reference_frame(table, [normalize(text, target_lang, lowercase)
                                         for text in found[column]])


def mt_references(table: pd.DataFrame, nbest: pd.DataFrame) -> pd.DataFrame:
    """Each tune segment's 1-best (rank 0) of an n-best table (the untuned system's)."""
    return extra_reference_frame(table, best_of(nbest, table["segment_id"].tolist()))


def write_extra_references(extra: str, tune_path: str | os.PathLike, out_path: str | os.PathLike,
                           seed: int, *, verses_path: str | os.PathLike | None = None,
                           untuned_path: str | os.PathLike | None = None,
                           target_lang: str = "en", lowercase: bool = True,
                           provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Write the extra reference table of ``1H+1X_<extra>`` (:data:`~circle.core.schemas.
    EXTRA_REFERENCE`): ``kjv`` from ``verses_path``, ``mt`` from the untuned tune-set n-best
    table ``untuned_path``, ``copy`` and degraded references from the tune set and ``seed``."""
    check_extra(extra)
    table = read_table(tune_path, EVALSET)
    if extra == "kjv":
        if verses_path is None:
            raise ValueError("the kjv extra reference needs the Bible verse table")
        frame = kjv_references(table, read_table(verses_path, VERSES), target_lang, lowercase)
        made_from = "the KJV text of the verse"
    elif extra == "mt":
        if untuned_path is None:
            raise ValueError("the mt extra reference needs the untuned tune-set n-best table")
        frame = mt_references(table, read_table(untuned_path, NBEST))
        made_from = "the untuned system's 1-best"
    elif extra == "copy":
        frame = extra_reference_frame(table, single_references(table))
        made_from = "R, the single reference itself"
    else:
        frame = degraded_references(table, extra, seed)
        made_from = "H2, the second reference of the seeded order"
    write_table(frame, out_path, EXTRA_REFERENCE, provenance,
                {"extra": extra, "made_from": made_from, "seed": str(seed)})
    return frame


def heldout_table(tune: pd.DataFrame) -> pd.DataFrame:
    """The tune set with only R (first) and the references held out from both R and H2, in
    their seeded order: the references every extra reference's adequacy is measured against."""
    ordered = ordered_references(tune)
    kept = [[refs[0], *refs[2:]] for refs in ordered]
    return tune.assign(references=kept, ref_order=[list(range(len(refs))) for refs in kept])


def adequacy(tune: pd.DataFrame, candidates: Mapping[str, Sequence[str]],
             lm: kenlm.Model | None = None, lowercased: bool = False) -> pd.DataFrame:
    """One row per candidate extra reference (one text per tune segment): its adequacy against
    the human references held out from R and H2 (:func:`heldout_table`; with :func:`circle.
    reference_quality.reference_quality`, columns ``adequacy_segments``, ``heldout_references``,
    ``adequacy_bleu``, ``adequacy_chrf``, ``adequacy_ter``; 0 segments and NaN without a third
    reference), and over every segment its ``extra_length_ratio`` (its words / R's) and
    ``lm_decoding`` (log10 probability per word under ``lm``, end of sentence counted; NaN
    without)."""
    single = single_references(tune)
    reduced = heldout_table(tune)
    scorable = any(len(refs) >= 2 for refs in reduced["references"])
    rows = []
    for name, texts in candidates.items():
        texts = list(texts)
        if len(texts) != len(single):
            raise ValueError(f"candidate {name}: {len(texts)} texts for {len(single)} segments")
        row = {"extra": name, "adequacy_segments": 0, "heldout_references": np.nan,
               "adequacy_bleu": np.nan, "adequacy_chrf": np.nan, "adequacy_ter": np.nan,
               "extra_length_ratio": sum(len(t.split()) for t in texts)
               / sum(len(r.split()) for r in single),
               "lm_decoding": np.nan}
        if scorable:
            scored = reference_quality(reduced, [CandidateSet(name, "mt", 1, tuple(texts))],
                                       [set()] * len(texts), None, lowercased)
            if not scored.empty:
                found = scored.iloc[0]
                row.update(adequacy_segments=int(found["segments"]),
                           heldout_references=float(found["heldout_references"]),
                           adequacy_bleu=float(found["bleu"]),
                           adequacy_chrf=float(found["chrf"]),
                           adequacy_ter=float(found["ter"]))
        if lm is not None:
            words = sum(len(t.split()) + 1 for t in texts)
            row["lm_decoding"] = sum(lm.score(t, bos=True, eos=True) for t in texts) / words
        rows.append(row)
    return pd.DataFrame(rows)


def dose_table(evaluation: pd.DataFrame, summary: pd.DataFrame, quality: pd.DataFrame,
               conditions: Mapping[str, str]) -> pd.DataFrame:
    """The :data:`~circle.core.schemas.DOSE_RESPONSE` table: per condition that adds one reference
    (``conditions``: condition name -> its extra reference's name in ``quality``, an
    :func:`adequacy` frame), its test BLEU over replicates (``evaluation``, an
    :data:`~circle.core.schemas.EVALUATION` frame), its gain over 1H's same replicate and the test
    over all replicates against 1H (``summary``, a :data:`~circle.core.schemas.CONDITION_SUMMARY`
    frame)."""
    baseline = Condition(1).name
    base = evaluation[evaluation["condition"] == baseline].set_index("replicate")
    if base.empty:
        raise ValueError("the dose-response needs the 1H runs, its baseline")
    by_extra = quality.set_index("extra")
    summaries = summary.set_index("condition")
    rows = []
    for condition, extra in conditions.items():
        runs = evaluation[evaluation["condition"] == condition]
        if runs.empty:
            raise ValueError(f"no evaluated runs of the dose-response condition {condition}")
        gains = {metric: np.array([value - base.loc[r, metric] for r, value
                                   in zip(runs["replicate"], runs[metric], strict=True)])
                 for metric in ("bleu", "matched_bleu")}
        found = summaries.loc[condition]
        row = {"condition": condition, "extra": extra, **by_extra.loc[extra].to_dict(),
               "replicates": len(runs), "bleu_mean": float(runs["bleu"].mean()),
               "bleu_sd": float(runs["bleu"].std(ddof=1)) if len(runs) > 1 else np.nan,
               "output_length_ratio": float(runs["length_ratio"].mean())}
        for metric, prefix in (("bleu", ""), ("matched_bleu", "matched_")):
            row[f"{prefix}gain_mean"] = float(gains[metric].mean())
            row[f"{prefix}gain_sd"] = (float(gains[metric].std(ddof=1))
                                       if len(runs) > 1 else np.nan)
            for part in ("difference", "p_value", "significant"):
                row[f"{metric}_{part}"] = found[f"{metric}_{part}"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["adequacy_segments"] = frame["adequacy_segments"].astype(int)
    return frame.sort_values("adequacy_bleu", ascending=False, kind="stable",
                             na_position="last").reset_index(drop=True)


def dose_response(tune_path: str | os.PathLike, extra_paths: Mapping[str, str | os.PathLike],
                  paraphrases_path: str | os.PathLike | None,
                  evaluation_path: str | os.PathLike, conditions_path: str | os.PathLike,
                  lm_path: str | os.PathLike | None, out_table: str | os.PathLike,
                  lowercased: bool = False, provenance: Mapping[str, str] | None = None
                  ) -> tuple[pd.DataFrame, dict[str, float]]:
    """The dose-response table of a pipeline run (written to ``out_table`` as
    :data:`~circle.core.schemas.DOSE_RESPONSE`) and R's own :func:`adequacy` row: the extra
    reference tables by name (``extra_paths``), the untargeted paraphrases (P1, rank 0; None:
    no 1H+1P row), the dose run set's evaluation and condition summary, the decoder's LM."""
    tune = read_table(tune_path, EVALSET)
    ids = tune["segment_id"].tolist()
    candidates: dict[str, list[str]] = {"R": single_references(tune)}
    conditions: dict[str, str] = {}
    if min(len(refs) for refs in tune["references"]) >= 2:
        candidates["H2"] = [refs[1] for refs in ordered_references(tune, 2)]
        conditions["2H"] = "H2"
    if paraphrases_path is not None:
        candidates["P1"] = [lists[0] if lists else ""
                            for lists in nbest_lists(read_table(paraphrases_path, NBEST), ids)]
        conditions["1H+1P"] = "P1"
    for extra, path in extra_paths.items():
        frame = read_table(path, EXTRA_REFERENCE)
        texts = dict(zip(frame["segment_id"], frame["reference"], strict=True))
        candidates[extra] = [texts[s] for s in ids]
        conditions[f"1H+1X_{extra}"] = extra
        if read_metadata(path).get("extra") != extra:
            raise ValueError(f"{path} is not the {extra} extra reference table")
    lm = None if lm_path is None else LanguageModel(lm_path).model
    quality = adequacy(tune, candidates, lm, lowercased)
    evaluation = read_table(evaluation_path, EVALUATION)
    summary = read_table(conditions_path, CONDITION_SUMMARY)
    conditions = {c: e for c, e in conditions.items() if c in set(evaluation["condition"])}
    table = dose_table(evaluation, summary, quality, conditions)
    write_table(table, out_table, DOSE_RESPONSE, provenance)
    return table, quality.set_index("extra").loc["R"].to_dict()

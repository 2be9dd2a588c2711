"""circle.experiments.reference_quality and its page (circle.figures.reference_quality) on real
verses: Ruth 1:1-3 in three translations (tests/data/tiny and the WEB/Darby/YLT texts of the
shipped corpus), tokenised and lowercased as the pipeline does, and a hand-made n-best list for
reachability."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from circle.core.pages import FORGE_COLUMNS, csv_text
from circle.experiments.reference_quality import (
    CandidateSet,
    human_sets,
    ngram_set,
    ranked_sets,
    reference_quality,
    targeted_lists,
)
from circle.figures.reference_quality import QUALITY_COLUMNS, quality_markdown

WEB = ["in the days when the judges judged , there was a famine in the land .",
       "the name of the man was elimelech , and the name of his wife naomi .",
       "elimelech , naomi's husband , died ; and she was left with her two sons ."]
DARBY = ["and it came to pass in the days when the judges judged , that there was a famine in "
         "the land .",
         "and the name of the man was elimelech , and the name of his wife naomi .",
         "and elimelech naomi's husband died ; and she remained , and her two sons ."]
YLT = ["and it cometh to pass , in the days of the judging of the judges , that there is a "
       "famine in the land .",
       "and the name of the man is elimelech , and the name of his wife naomi .",
       "and elimelech , husband of naomi , dieth , and she is left , she and her two sons ."]
# each segment's seeded order: R first (segment 0: YLT is R, WEB and Darby are held out)
TUNE = pd.DataFrame({"segment_id": [1, 2, 3], "document": ["Ruth.1"] * 3,
                     "source": ["x", "y", "z"],
                     "references": [list(refs) for refs in zip(WEB, DARBY, YLT, strict=True)],
                     "ref_order": [[2, 0, 1], [0, 1, 2], [1, 2, 0]]})
PARAPHRASES = [["in the days the judges judged , there was a hunger in the land .",
                "in the days when the judges judged there was a famine in the land ."],
               ["the name of the man was elimelech , and his wife 's name was naomi ."],
               None]  # no paraphrase of segment 2
MT = ["in the days of the judges there was hunger in the land .",
      "and the name of the man elimelech , and the name of his woman naomi .",
      "and died elimelech husband of naomi , and she was left with her two sons ."]


def test_every_candidate_is_scored_against_the_held_out_references_as_sacrebleu_does():
    reachable = [ngram_set(text) for text in MT]
    sets = [*human_sets(TUNE), *ranked_sets(PARAPHRASES, "P", "paraphrase"),
            CandidateSet("MT untuned", "mt", 1, tuple(MT))]
    table = reference_quality(TUNE, sets, reachable, lowercased=True).set_index("candidate")
    assert list(table.index) == ["R", "H2", "H3", "P1", "P2", "MT untuned"]
    single = [YLT[0], WEB[1], DARBY[2]]
    others = [[WEB[0], DARBY[0]], [DARBY[1], YLT[1]], [YLT[2], WEB[2]]]  # seeded order

    def expected(metric, hypotheses, references):
        return metric.corpus_score(hypotheses, [list(r) for r in zip(*references,
                                                                     strict=True)]).score

    for name, texts in (("R", single), ("MT untuned", MT)):
        row = table.loc[name]
        assert row["bleu"] == pytest.approx(expected(BLEU(tokenize="none", lowercase=True),
                                                     texts, others))
        assert row["chrf"] == pytest.approx(expected(CHRF(lowercase=True), texts, others))
        assert row["ter"] == pytest.approx(expected(TER(case_sensitive=False), texts, others))
        assert row["heldout_references"] == 2 and row["segments"] == 3
    # a human candidate is not scored against itself: H2 against the third reference only
    h2 = [others[i][0] for i in range(3)]
    assert table.loc["H2", "bleu"] == pytest.approx(expected(
        BLEU(tokenize="none", lowercase=True), h2, [[others[i][1]] for i in range(3)]))
    assert table.loc["H2", "heldout_references"] == 1
    # P1 exists for two segments, P2 for one; P2 is compared with P1 where both exist
    assert table.loc["P1", "segments"] == 2 and table.loc["P2", "segments"] == 1
    assert table.loc["P2", "first_bleu"] == pytest.approx(
        BLEU(tokenize="none", lowercase=True).corpus_score(
            [PARAPHRASES[0][1]], [[PARAPHRASES[0][0]]]).score)
    assert np.isnan(table.loc["P1", "first_bleu"])
    assert table.loc["R", "length_ratio"] == 1
    assert np.isnan(table.loc["R", "lm_decoding"])  # no model given


def test_pp_bleu_rewards_adequacy_and_takes_off_closeness_to_r():
    sets = [*human_sets(TUNE), *ranked_sets(PARAPHRASES, "P", "paraphrase"),
            CandidateSet("MT untuned", "mt", 1, tuple(MT))]
    table = reference_quality(TUNE, sets, [set()] * 3, lowercased=True).set_index("candidate")
    assert table.loc["R", "input_bleu"] == pytest.approx(100)
    assert table.loc["R", "pp_bleu"] == pytest.approx(0.9 * table.loc["R", "bleu"] - 10)
    single = [YLT[0], WEB[1], DARBY[2]]
    p1 = [PARAPHRASES[0][0], PARAPHRASES[1][0]]  # segment 2 has none
    against_r = BLEU(tokenize="none", lowercase=True).corpus_score(p1, [single[:2]]).score
    assert table.loc["P1", "input_bleu"] == pytest.approx(against_r)
    assert table.loc["P1", "pp_bleu"] == pytest.approx(
        0.9 * table.loc["P1", "bleu"] - 0.1 * against_r)


def test_valid_and_reachable_shares_of_the_added_ngrams_by_hand():
    tune = TUNE.iloc[:1].reset_index(drop=True)  # R = YLT[0]; WEB[0], DARBY[0] held out
    candidate = "in the days when the judges judged , there was hunger in the land ."
    # its 12 4-grams but "in the land ." are added to R: "in the days when", "the days when
    # the", "days when the judges", "when the judges judged", "the judges judged ,", "judges
    # judged , there", "judged , there was" are valid (WEB has all seven); ", there was
    # hunger", "there was hunger in", "was hunger in the", "hunger in the land" are wrong, and
    # the MT output has the last three: reachable
    reachable = [ngram_set(MT[0])]
    table = reference_quality(tune, [CandidateSet("P1", "paraphrase", 1, (candidate,))],
                              reachable).iloc[0]
    assert table["added_ngrams"] == 11
    assert table["valid_share"] == pytest.approx(7 / 11)
    assert table["reachable_wrong_share"] == pytest.approx(3 / 11)
    assert table["new_share"] == pytest.approx(11 / len(ngram_set(candidate)))


def test_the_new_share_counts_ngrams_of_neither_r_nor_a_lower_rank():
    tune = TUNE.iloc[1:2].reset_index(drop=True)
    sets = ranked_sets([[DARBY[1], YLT[1]]], "P", "paraphrase")
    table = reference_quality(tune, sets, [set()]).set_index("candidate")
    r, first, second = (ngram_set(t) for t in (WEB[1], DARBY[1], YLT[1]))
    assert table.loc["P1", "new_share"] == pytest.approx(len(first - r) / len(first))
    assert table.loc["P2", "new_share"] == pytest.approx(len(second - r - first) / len(second))


def test_a_tune_set_with_one_reference_per_segment_is_refused():
    tune = TUNE.assign(references=[[r] for r in WEB], ref_order=[[0]] * 3)
    with pytest.raises(ValueError, match="no tune segment has two references"):
        reference_quality(tune, human_sets(tune), [set()] * 3)


def test_targeted_lists_are_found_by_reference_hypothesis_and_forest_words():
    start = [["the judges judged", "the judges ruled"], ["elimelech died"]]
    cached = {("r0", "the judges judged", "judged judges ruled the"): ["t0", "t1"],
              ("r1", "elimelech died", "died elimelech"): ["u0"]}
    assert targeted_lists(cached, ["r0", "r1"], start, forest=True) == [["t0", "t1"], ["u0"]]
    assert targeted_lists(cached, ["r0", "other"], start, forest=True) == [["t0", "t1"], None]
    assert targeted_lists({("r1", "elimelech died", ""): ["x"]}, ["r0", "r1"], start,
                          forest=False) == [None, ["x"]]


def test_the_page_summarises_replicates_and_reads_the_comparison():
    reachable = [ngram_set(text) for text in MT]
    sets = [*human_sets(TUNE), *ranked_sets(PARAPHRASES, "P", "paraphrase"),
            CandidateSet("MT untuned", "mt", 1, tuple(MT)),
            CandidateSet("MT 1H", "mt", 1, tuple(MT), 0),
            CandidateSet("MT 1H", "mt", 1, tuple(DARBY), 1)]
    table = reference_quality(TUNE, sets, reachable, lowercased=True)
    page = quality_markdown(table)
    assert "| MT 1H (n = 2) | 3 | 2.00 |" in page
    assert "Reading: against the held-out human references, R scores" in page
    p1, mt = (table.set_index("candidate").loc[name, "bleu"] for name in ("P1", "MT untuned"))
    assert ("a worse translation than the system's own output" in page) == (p1 < mt)


def test_the_page_leads_with_adequacy_and_keeps_every_column_below(forge_tables):
    """At a forge's width: the first table has the candidate, its adequacy and its added
    n-grams (what the reading reads); the tables under it the same rows' other columns; the
    CSV every column of the table."""
    sets = [*human_sets(TUNE), *ranked_sets(PARAPHRASES, "P", "paraphrase"),
            CandidateSet("MT untuned", "mt", 1, tuple(MT))]
    table = reference_quality(TUNE, sets, [ngram_set(text) for text in MT], lowercased=True)
    tables = forge_tables(quality_markdown(table))
    first = tables[0][0]
    assert len(first) <= FORGE_COLUMNS
    assert first == ["candidate", "BLEU", "chrF", "TER", "length / R", "added valid %",
                     "added wrong, reachable %"]
    headers = [name for rows in tables for name in rows[0][1:]]
    assert sorted(headers) == sorted(["segments", "held-out refs",
                                      *(header for _, header, _, _ in QUALITY_COLUMNS)])
    for rows in tables:  # the same rows, in the same order, under every table
        assert [row[0] for row in rows[1:]] == table["candidate"].tolist()
    assert tables[0][1][1] == f"{table['bleu'].iloc[0]:.1f}"  # R's BLEU
    assert csv_text(table).splitlines()[0].split(",") == list(table.columns)


def test_a_human_candidate_needs_a_third_reference_to_be_scored_against():
    tune = TUNE.assign(references=[[w, d] for w, d in zip(WEB, DARBY, strict=True)],
                       ref_order=[[0, 1], [1, 0], [0, 1]])
    table = reference_quality(tune, human_sets(tune), [set()] * 3)
    assert table["candidate"].tolist() == ["R"]  # H2 would be scored against itself only

"""LM text preparation (leak refusal) and real KenLM estimation with lmplz/build_binary."""

import json
import math

import kenlm
import pandas as pd
import pytest

from circle.core.schemas import BITEXT, EVALSET
from circle.core.tables import write_table
from circle.corpus.validate import CorpusError
from circle.lm import LeakError, estimate_lm, prepare_lm_text

PREPROCESS = {"source_lang": "es", "target_lang": "en", "lowercase": True}
TRAIN = ["in the beginning god created the heaven and the earth .",
         "and the earth was without form , and void .",
         "and god said , let there be light : and there was light ."]


def tables(tmp_path, references):
    train = tmp_path / "train.parquet"
    write_table(pd.DataFrame({"segment_id": range(3), "document": "d", "source": "x",
                              "target": TRAIN}), train, BITEXT)
    tune = tmp_path / "tune.parquet"
    write_table(pd.DataFrame({"segment_id": range(len(references)), "document": "d",
                              "source": "x", "references": references,
                              "ref_order": [[0, 1]] * len(references)}), tune, EVALSET,
                metadata={"reference_names": json.dumps(["a", "b"])})
    return train, tune


def test_lm_text_is_refused_when_it_contains_a_reference(tmp_path):
    train, tune = tables(tmp_path, [["something else entirely here today", TRAIN[1]]])
    with pytest.raises(LeakError, match=r"train\.parquet:2: is the tune row 1 reference 1"):
        prepare_lm_text([train], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 6)
    assert not (tmp_path / "lm.txt").exists()


def test_leak_in_extra_text_is_found_after_tokenising(tmp_path):
    train, tune = tables(tmp_path, [["one two three four five six", "x"]])
    extra = tmp_path / "extra.txt"
    extra.write_text("A clean line.\nOne two three four five six\n")
    with pytest.raises(LeakError, match=r"extra\.txt:2: is the tune row 1 reference 0"):
        prepare_lm_text([train], [tune], [extra], tmp_path / "lm.txt", PREPROCESS, 100, 6)


def test_short_formulae_below_the_threshold_are_not_leaks(tmp_path):
    train, tune = tables(tmp_path, [["and god said , let there be light : and there was light .",
                                     "x"]])
    prepare_lm_text([train], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 20)
    assert (tmp_path / "lm.txt").read_text().splitlines() == TRAIN


def test_the_text_of_several_bitexts_is_checked_table_by_table(tmp_path):
    """The paraphraser's own LM text: the English of its pivot bitexts one after the other,
    refused when one of them holds an evaluation reference (planted in the second)."""
    train, tune = tables(tmp_path, [["and they went forth to go into the land", "x"]])
    second = tmp_path / "es-web.parquet"
    other = ["and they went forth to go into the land of canaan .",
             "and they went forth to go into the land"]
    write_table(pd.DataFrame({"segment_id": [0, 1], "document": "d", "source": "x",
                              "target": other}), second, BITEXT)
    with pytest.raises(LeakError, match=r"es-web\.parquet:2: is the tune row 1 reference 0"):
        prepare_lm_text([train, second], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 6)
    write_table(pd.DataFrame({"segment_id": [0], "document": "d", "source": "x",
                              "target": other[:1]}), second, BITEXT)
    prepare_lm_text([train, second], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 6)
    assert (tmp_path / "lm.txt").read_text().splitlines() == [*TRAIN, other[0]]


def test_leaked_lines_dropped_are_left_out_and_the_rest_kept_in_order(tmp_path, caplog):
    """lm.leaked_lines: drop: a verse of a second English version that is worded like an
    evaluation reference is left out of the text and named in the log; every other line stays."""
    train, tune = tables(tmp_path, [["and they went forth to go into the land", "x"]])
    second = tmp_path / "es-web.parquet"
    other = ["and they went forth to go into the land of canaan .",
             "and they went forth to go into the land", "and it was so ."]
    write_table(pd.DataFrame({"segment_id": [0, 1, 2], "document": "d", "source": "x",
                              "target": other}), second, BITEXT)
    with caplog.at_level("WARNING", logger="circle.lm"):
        prepare_lm_text([train, second], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 6,
                        on_leak="drop")
    assert (tmp_path / "lm.txt").read_text().splitlines() == [*TRAIN, other[0], other[2]]
    assert "es-web.parquet:2: is the tune row 1 reference 0" in caplog.text
    with pytest.raises(ValueError, match="lm.leaked_lines is 'skip'"):
        prepare_lm_text([train, second], [tune], [], tmp_path / "lm.txt", PREPROCESS, 100, 6,
                        on_leak="skip")


def test_invalid_extra_text_is_a_corpus_error(tmp_path):
    train, tune = tables(tmp_path, [["a", "b"]])
    extra = tmp_path / "extra.txt"
    extra.write_bytes(b"ok\n\n")
    with pytest.raises(CorpusError, match=r"extra\.txt:2: empty"):
        prepare_lm_text([train], [tune], [extra], tmp_path / "lm.txt", PREPROCESS, 100, 6)


def test_lmplz_model_loads_in_kenlm_and_scores_sentences(tmp_path):
    text = tmp_path / "lm.txt"
    text.write_text("\n".join(TRAIN * 3) + "\n")
    binary = tmp_path / "3gram.binary"
    estimate_lm([text], 3, binary, discount_fallback=True, memory="100M",
                log_path=tmp_path / "log")
    model = kenlm.Model(str(binary))
    assert model.order == 3
    seen = model.score("and god said , let there be light", bos=True, eos=False)
    unseen = model.score("light be there let , said god and", bos=True, eos=False)
    assert math.isfinite(seen) and seen > unseen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["3gram.binary", "lm.txt", "log"]

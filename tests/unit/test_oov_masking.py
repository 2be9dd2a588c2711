"""circle.experiments.oov_masking: known words masked as OOV and scored against their own rules
(Marton, Callison-Burch & Resnik 2009's augmentation without tuning), on hand-made text and
rules whose answers are known."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from test_oov_paraphrase import rules

from circle.core.pages import FORGE_COLUMNS
from circle.core.schemas import BITEXT, GRAMMAR, OOV_MASKING
from circle.core.tables import read_metadata, read_table, write_table
from circle.distributional import DistributionalSettings, MonolingualCorpus
from circle.experiments.oov_masking import (
    MaskingSettings,
    draw_words,
    hit_and_recall,
    masked_word_table,
    masking_candidates,
    reading,
    scores,
    text_sample,
    true_translations,
    write_masked_word_table,
)
from circle.figures.oov_masking import VERDICTS, write_oov_masking_report

SEARCH = DistributionalSettings(window=2, min_score=0.1)

TEXT = ["el perro ladra en la casa", "el can ladra en la calle", "mi perro come pan",
        "mi can come pan", "un gato duerme solo", "la casa es grande", "la calle es larga"]
""""perro" and "can" fill the same contexts ("el _ ladra", "mi _ come"): each is the other's
only distributional neighbour. "gato" has a context of its own ("un _ duerme")."""

GRAMMAR_RULES = rules(("perro", "dog", 0.85), ("perro", "hound", 0.1), ("perro", "pup", 0.05),
                      ("can", "dog", 0.8), ("can", "can", 0.2), ("gato", "cat", 1.0),
                      ("casa", "house", 1.0), ("perro [X,1]", "dog [X,1]", 0.5))


@pytest.fixture
def grammar_path(tmp_path):
    path = tmp_path / "bilingual.parquet"
    write_table(GRAMMAR_RULES, path, GRAMMAR)
    return path


def settings(**changes) -> MaskingSettings:
    return MaskingSettings(**{"min_count": 1, "text_fractions": (0.5, 1.0), **changes})


def test_a_word_borrows_its_only_neighbours_translation_and_a_word_without_one_borrows_nothing(
        grammar_path):
    """Masked "perro" finds "can" (and never itself), borrows "dog" and "can": accuracy@1 right,
    recall@k half of its two true translations ("pup" is below min_probability). Masked "gato"
    has no candidate: uncovered, wrong. The baseline borrows the other masked word's rules."""
    table, metadata = masked_word_table(["el perro ladra", "un gato duerme"],
                                        ["perro gato casa", "perro"], TEXT, grammar_path,
                                        SEARCH, settings())
    assert metadata["candidates"] == "2"  # casa is not in the test text
    full = table[table["fraction"] == 1.0].set_index("word")
    assert list(full.index) == ["gato", "perro"]
    perro, gato = full.loc["perro"], full.loc["gato"]
    assert perro["true_targets"] == ["dog", "hound"] and perro["train_count"] == 2
    assert perro["top_paraphrase"] == "can" and perro["top_target"] == "dog"
    assert perro["borrowed_targets"] == 2 and perro["correct_at_1"]
    assert perro["recall_at_k"] == 0.5
    assert 0 < perro["top_asim"] <= 1
    assert gato["paraphrases"] == 0 and gato["borrowed_targets"] == 0
    assert pd.isna(gato["top_target"]) and not gato["correct_at_1"] and gato["recall_at_k"] == 0
    assert (perro["baseline_word"], perro["baseline_target"]) == ("gato", "cat")
    assert not perro["baseline_correct_at_1"]
    assert gato["baseline_target"] == "dog" and not gato["baseline_correct_at_1"]
    summary = scores(table).set_index("fraction")
    assert summary.loc[1.0, "coverage"] == 0.5 and summary.loc[1.0, "accuracy_at_1"] == 0.5
    assert summary.loc[1.0, "precision_at_1"] == 1.0
    assert summary.loc[1.0, "text_words"] == sum(len(s.split()) for s in TEXT)


def test_the_table_is_written_with_its_schema_and_metadata(grammar_path, tmp_path):
    texts = {}
    for name, lines in (("test", ["el perro ladra", "un gato duerme"]),
                        ("train", ["perro gato", "perro"]), ("mono", TEXT)):
        texts[name] = tmp_path / f"{name}.parquet"
        frame = pd.DataFrame({"segment_id": range(len(lines)), "document": "d",
                              "source": lines, "target": "x"})
        write_table(frame, texts[name], BITEXT)
    out = tmp_path / "masking.parquet"
    write_masked_word_table([texts["test"]], [texts["train"]], [texts["mono"]], grammar_path,
                            SEARCH, settings(recall_k=3), out)
    table = read_table(out, OOV_MASKING)
    assert len(table) == 4 and read_metadata(out)["recall_k"] == "3"
    pages = [tmp_path / f"page.{suffix}" for suffix in ("md", "html", "csv")]
    summary = write_oov_masking_report(out, *pages)
    assert list(summary["covered"]) == [1, 1]  # perro at half and all of the text
    page = pages[0].read_text()
    first = next(line for line in page.splitlines() if line.startswith("| fraction"))
    assert "recall@3 %" in first and len(first.strip("|").split("|")) <= FORGE_COLUMNS
    assert "| 1 | 32 | 50.0 | 50.0 | 100.0 | 25.0 | 0.0 | 0.0 |" in page
    assert VERDICTS["flat"] in page  # 100 % of one word at both amounts
    assert "| perro | dog, hound | dog | can |" in page
    assert pages[2].read_text().splitlines()[0].startswith("fraction,text_words,masked_words")


def test_candidates_are_known_alphabetic_words_of_the_band_and_not_stoplisted():
    corpus = MonolingualCorpus(TEXT, DistributionalSettings(window=2, stoplist_threshold=4))
    stoplisted = {w for w in corpus.vocabulary[1:] if corpus.stopwords[corpus.index[w]]}
    assert {"perro", "la"} <= stoplisted and not {"casa", "gato"} & stoplisted
    counts = {"perro": 3, "gato": 5, "la": 4, "casa": 2, "1a": 4, "nube": 3, "un": 9}
    words = ["perro", "gato", "la", "casa", "1a", "nube", "un", "gato", "solo"]
    found = masking_candidates(words, counts, {*counts, "solo"}, corpus,
                               settings(min_count=2, max_count=5))
    assert found == ["casa", "gato"]  # nube: not in the text; un: out of the band; solo: unseen


def test_words_are_drawn_with_the_seed():
    candidates = [f"w{i:02d}" for i in range(40)]
    drawn = draw_words(candidates, 10, 13)
    assert len(drawn) == 10 and drawn == sorted(drawn) and drawn == draw_words(candidates, 10, 13)
    assert drawn != draw_words(candidates, 10, 14)
    assert draw_words(candidates[:5], 10, 13) == candidates[:5]


def test_text_samples_keep_the_test_sentences_and_nest():
    sentences = [f"s{i}" for i in range(20)] + ["t", "t"]
    kept = ["t", "s3"]
    small, large = (text_sample(sentences, kept, f, 13) for f in (0.25, 0.5))
    assert {"t", "s3"} <= set(small) and small.count("t") == 1
    assert len(small) == 2 + 5 and len(large) == 2 + 10  # of the 20 others ("t" twice)
    assert set(small) <= set(large)
    positions = [sentences.index(s) for s in small]
    assert positions == sorted(positions)  # in the text's order
    assert text_sample(sentences, kept, 1.0, 13) == sentences


def test_true_translations_are_the_probable_ones_or_the_most_probable():
    truth = true_translations(rules(("a", "x", 0.05), ("a", "y", 0.07), ("b", "z", 0.5),
                                    ("b", "w", 0.5), ("b", "v", 0.01)), ["a", "b"], 0.1)
    assert truth == {"a": ["y"], "b": ["w", "z"]}


def test_hit_and_recall():
    assert hit_and_recall(["dog", "can", "hound"], ["dog", "hound"], 2) == (True, 0.5)
    assert hit_and_recall(["can", "dog"], ["dog"], 1) == (False, 0.0)
    assert hit_and_recall([], ["dog"], 5) == (False, 0.0)


def summary(*points: tuple[float, int, float]) -> pd.DataFrame:
    """Rows of :func:`scores` with what :func:`reading` reads: fraction, covered words,
    precision@1."""
    return pd.DataFrame([{"fraction": f, "covered": n, "precision_at_1": p}
                         for f, n, p in points])


def test_reading_rule():
    # two standard errors of 0.2 vs 0.4 at 100 covered words each: 2 sqrt(.0016 + .0024) = .126
    assert reading(summary((0.25, 100, 0.2), (1.0, 100, 0.4))).verdict == "rises"
    found = reading(summary((0.25, 100, 0.2), (1.0, 100, 0.3)))
    assert found.verdict == "flat" and math.isclose(found.margin, 2 * math.sqrt(0.0037))
    assert reading(summary((0.25, 100, 0.4), (1.0, 100, 0.2))).verdict == "falls"
    assert reading(summary((0.125, 100, 0.2), (0.5, 100, 0.6), (1.0, 100, 0.4))).verdict \
        == "rises unsteadily"
    assert reading(summary((0.5, 0, math.nan), (1.0, 10, 0.5))).verdict == "no reading"


def test_settings_refuse_what_does_not_go_together():
    assert MaskingSettings.from_config({"text_fractions": [0.5, 1]}).text_fractions == (0.5, 1.0)
    assert MaskingSettings.from_config(settings().to_params()) == settings()
    with pytest.raises(ValueError, match=r"oov_paraphrase.masking: text_fractions \[1.0, 0.5\]"):
        MaskingSettings.from_config({"text_fractions": [1, 0.5]})
    with pytest.raises(ValueError, match="oov_paraphrase.masking: the training-frequency band"):
        MaskingSettings.from_config({"min_count": 9, "max_count": 3})

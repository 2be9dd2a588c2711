"""The bitexts a paraphrase grammar is pivoted from (config ``paraphrase.pivots``).

By default the paraphrase grammar is pivoted from the MT system's own training bitext (the
thesis's setting, §3.2). ``paraphrase.pivots`` names instead a list of (foreign, English) text
columns of the shipped Bible table, e.g. Spanish with the KJV and with the WEB, or of the foreign
Bibles beside it (French, Italian, German, Russian: :mod:`circle.corpus.foreign_bibles`): each is a
:class:`PivotBitext` over the training books only (rows of the ``train`` split, never a verse of
an evaluation set), and the bitexts of one foreign language make one pivot grammar, extracted
from their concatenation, so that a foreign phrase pivots between the English of every version
paired with it; the languages are combined as :mod:`circle.grammar.pivot` describes (Bannard &
Callison-Burch 2005).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from circle.core.schemas import BITEXT, FOREIGN_BIBLES, VERSES
from circle.core.tables import read_table, write_table
from circle.corpus.bible import REFERENCES
from circle.corpus.foreign_bibles import BY_COLUMN as FOREIGN_BIBLE_COLUMNS
from circle.corpus.preprocess import tokenize_bitext
from circle.corpus.validate import CorpusError

KEY = "paraphrase.pivots"

REFREEZE_TRAINING = "training"
"""The name ``alignment.refreeze`` gives the MT training bitext's frozen alignment
(``alignment.frozen``); a pivot pair's is its :attr:`PivotBitext.name`."""


def frozen_alignments(config: Mapping[str, Any]) -> dict[str, str]:
    """The frozen alignments the config names, by the name ``alignment.refreeze`` gives them:
    :data:`REFREEZE_TRAINING` for ``alignment.frozen`` (when set), then each pair of
    ``alignment.frozen_pivots``."""
    alignment = config.get("alignment", {})
    training = {REFREEZE_TRAINING: alignment["frozen"]} if alignment.get("frozen") else {}
    return {**training, **alignment.get("frozen_pivots", {})}


TRAIN_SPLIT = "train"


@dataclass(frozen=True)
class PivotBitext:
    """A pivot bitext: foreign text column ``source`` and English text column ``target`` of
    the Bible table, over its training verses."""

    source: str
    target: str

    @property
    def name(self) -> str:
        """File-name form, ``es-web``."""
        return f"{self.source}-{self.target}"


def pivot_bitexts(config: Mapping[str, Any]) -> list[PivotBitext]:
    """The pivot bitexts ``paraphrase.pivots`` names; empty = the MT training bitext."""
    return [PivotBitext(item["source"], item["target"])
            for item in config["paraphrase"].get("pivots", [])]


def training_bitext(config: Mapping[str, Any]) -> PivotBitext | None:
    """The MT system's own training bitext as a pivot bitext (Bible corpus only)."""
    if config["corpus"]["kind"] != "bible":
        return None
    bible = config["corpus"]["bible"]
    return PivotBitext(bible["source"], bible["train_target"])


LANGUAGE_MODELS_KEY = "paraphrase.language_models"


def paraphraser_lm_bitexts(config: Mapping[str, Any]) -> list[PivotBitext]:
    """The bitexts whose English side is the text of the paraphraser's own language models
    (``paraphrase.language_models: pivots``): the first pivot bitext of each English version,
    so that a version paired with several foreign languages counts once; empty when the
    paraphraser shares the MT system's LMs (the default, as in the thesis)."""
    if config["paraphrase"].get("language_models", "shared") != "pivots":
        return []
    firsts: dict[str, PivotBitext] = {}
    for bitext in pivot_bitexts(config):
        firsts.setdefault(bitext.target, bitext)
    return list(firsts.values())


def pivot_languages(bitexts: Sequence[PivotBitext]) -> dict[str, list[PivotBitext]]:
    """The bitexts grouped by foreign language (in order of first mention): one pivot grammar
    each."""
    languages: dict[str, list[PivotBitext]] = {}
    for bitext in bitexts:
        languages.setdefault(bitext.source, []).append(bitext)
    return languages


def pivot_problems(config: Mapping[str, Any]) -> list[str]:
    """``paraphrase.pivots`` (its columns checked by the schema) needs the Bible corpus and
    names each (foreign, English) pair once, and is not used with ``samt.paraphraser`` (the
    labelled grammar pivots the MT training bitext alone); ``paraphrase.language_models:
    pivots`` needs it; ``alignment.frozen_pivots`` names only its bitexts other than the MT
    training bitext, and ``alignment.refreeze`` only frozen alignments of the config."""
    bitexts = pivot_bitexts(config)
    if bitexts and config["corpus"]["kind"] != "bible":
        return [f"{KEY}: pivot bitexts are columns of the Bible table (corpus.kind: bible); "
                "with your own files the paraphrase grammar pivots from the training bitext, "
                f"so leave {KEY} out"]
    names = [bitext.name for bitext in bitexts]
    problems = [f"{KEY}: {name} is given twice" for name in sorted(set(names))
                if names.count(name) > 1]
    frozen = config.get("alignment", {}).get("frozen_pivots", {})
    problems += [f"alignment.frozen_pivots: {name} is not a bitext of {KEY}"
                 for name in sorted(set(frozen) - set(names))]
    training = training_bitext(config) if frozen else None
    if training is not None and training.name in frozen:
        problems.append(f"alignment.frozen_pivots: {training.name} is the MT training bitext, "
                        "aligned as alignment.frozen says")
    refreeze = config.get("alignment", {}).get("refreeze") or []
    known = frozen_alignments(config)
    problems += [f"alignment.refreeze: {name} is not a frozen alignment of this config (it "
                 f"names: {', '.join(sorted(known)) or 'none'}; {REFREEZE_TRAINING} is "
                 "alignment.frozen, the others are pairs of alignment.frozen_pivots)"
                 for name in refreeze if name not in known]
    if bitexts and config.get("samt", {}).get("paraphraser"):
        problems.append(f"{KEY}: samt.paraphraser paraphrases with the labelled grammar of the "
                        f"MT training bitext, which pivots through no other bitext; leave {KEY} "
                        "out, or samt.paraphraser")
    if config["paraphrase"].get("language_models", "shared") == "pivots" and not bitexts:
        problems.append(f"{LANGUAGE_MODELS_KEY}: pivots estimates the paraphraser's LMs on the "
                        f"English of {KEY}, which names no bitext; name them, or leave "
                        f"{LANGUAGE_MODELS_KEY} out to share the MT system's LMs")
    return problems


def pivot_bitext_rows(verses: pd.DataFrame, bitext: PivotBitext,
                      foreign: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ``BITEXT`` rows of ``bitext`` (untokenised): the verses of the training split only
    whose two texts are present, without the verses where an evaluation reference sits in a
    shifted slot when the English is one of them (``ref_versification_flag``). A foreign text of
    the foreign Bibles' table (``foreign``) leaves out its own shifted verses as well."""
    if bitext.source in FOREIGN_BIBLE_COLUMNS:
        if foreign is None:
            raise CorpusError([f"{KEY}: {bitext.name} needs the foreign Bibles' table "
                               "(paraphrase.foreign_bibles)"])
        shifted = foreign["segment_id"][foreign[f"shift_{bitext.source}"]]
        verses = verses[~verses["segment_id"].isin(shifted)].merge(
            foreign[["segment_id", bitext.source]], on="segment_id", how="left")
    usable = verses["split"] == TRAIN_SPLIT
    for column in (bitext.source, bitext.target):
        if column not in verses.columns:
            raise CorpusError([f"{KEY}: no text column '{column}' in the verse table"])
        usable &= verses[column].fillna("").str.strip() != ""
    if bitext.target in REFERENCES:
        usable &= ~verses["ref_versification_flag"]
    rows = verses[usable]
    return pd.DataFrame({"segment_id": rows["segment_id"], "document": rows["document"],
                         "source": rows[bitext.source], "target": rows[bitext.target]}
                        ).reset_index(drop=True)


def write_pivot_bitext(table_path: str | os.PathLike, bitext: PivotBitext,
                       out_path: str | os.PathLike, source_lang: str, target_lang: str,
                       lowercase: bool, provenance: Mapping[str, str] | None = None,
                       foreign_path: str | os.PathLike | None = None) -> int:
    """Write ``bitext``'s training verses, tokenised as the MT bitext is (a foreign Bible's
    text with its own language's tokeniser, not ``source_lang``), as a ``BITEXT`` table;
    returns its rows. ``foreign_path``: the foreign Bibles' table."""
    foreign = None
    if bitext.source in FOREIGN_BIBLE_COLUMNS:
        source_lang = FOREIGN_BIBLE_COLUMNS[bitext.source].language
        if foreign_path is not None:
            foreign = read_table(foreign_path, FOREIGN_BIBLES)
    rows = pivot_bitext_rows(read_table(table_path, VERSES), bitext, foreign)
    write_table(tokenize_bitext(rows, source_lang, target_lang, lowercase), out_path, BITEXT,
                provenance, {"pivot_bitext": bitext.name})
    return len(rows)

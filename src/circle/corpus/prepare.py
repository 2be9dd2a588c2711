"""Turn a corpus (the shipped Bible table or a user's files) into the pipeline's split tables.

Outputs are one :data:`~circle.core.schemas.BITEXT` table for training and one
:data:`~circle.core.schemas.EVALSET` table per evaluation set (``tune``, ``test``, ``paratune``).
The single-reference condition of the thesis (§4.2: per document, one of the human references chosen
at random) and the 2H, 3H, ... conditions are encoded once, here, as a seeded per-document
permutation of the reference indices (``ref_order``): condition kH uses the first k indices. How the
single reference is chosen is the corpus's ``single_reference`` rule (:data:`CHOICE_RULES`).
With ``corpus.train_segments`` the training bitext is a seeded, nested sample of its segments
(:func:`training_sample`); the segments it leaves out are written apart
(:func:`write_unused_training`), as monolingual source text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from circle.core.schemas import BITEXT, EVALSET, VERSES
from circle.core.tables import read_table, write_table
from circle.corpus.validate import CorpusError, read_parallel

EVAL_SETS = ("tune", "test", "paratune")
UNUSED_TRAINING = "train_unused"
"""The name of the table of the training segments a sample (``corpus.train_segments``) leaves
out of the bitext (:func:`write_unused_training`), beside the splits' tables."""

logger = logging.getLogger(__name__)

PER_DOCUMENT, BALANCED = "per_document", "balanced"
CHOICE_RULES: tuple[str, ...] = (PER_DOCUMENT, BALANCED)
"""How each document's single reference (the first of its ``ref_order``) is chosen:
``per_document``, at random per document, the thesis's simulation (§4.3.1) and the default
(:func:`reference_order`); ``balanced``, in turn across the translators, so that every
translation is the single reference of as many documents as any other, give or take one
(:func:`balanced_reference_order`; beyond the thesis)."""


def reference_order(documents: Sequence[str], n_refs: int, seed: int,
                    first: Mapping[str, int] | None = None) -> list[list[int]]:
    """Per segment, the seeded per-document order in which references are added (1H, 2H, ...).

    Documents are visited in order of first appearance; each draws a permutation of
    ``range(n_refs)`` from one ``numpy.random.default_rng(seed)``. ``first`` pins the first
    (single) reference of a document, e.g. the frozen ``single_ref`` of the Bible table.
    """
    rng = np.random.default_rng(seed)
    order_of: dict[str, list[int]] = {}
    for document in dict.fromkeys(documents):
        order = [int(i) for i in rng.permutation(n_refs)]
        if first is not None and document in first:
            order.remove(first[document])
            order.insert(0, first[document])
        order_of[document] = order
    return [order_of[d] for d in documents]


def balanced_reference_order(documents: Sequence[str], n_refs: int,
                             seed: int) -> list[list[int]]:
    """Per segment, a seeded per-document order whose first (single) reference is balanced
    across the translators.

    Documents are visited in order of first appearance, in blocks of ``n_refs``; each block
    draws a permutation of ``range(n_refs)`` that gives its documents their single references,
    so that every prefix of the documents (and so a set cut to its first whole documents,
    :func:`circle.experiments.sets.select_segments`) has each reference as the single
    reference of k or k + 1 documents. Each document's further references follow in a seeded random
    order. Balances documents, not segments: documents differ in length. The thesis draws the single
    reference per document at random (§4.3.1); balancing goes beyond it, so that 1H does not
    rest mostly on one translation's length and style."""
    rng = np.random.default_rng(seed)
    block: list[int] = []
    order_of: dict[str, list[int]] = {}
    for document in dict.fromkeys(documents):
        if not block:
            block = [int(i) for i in rng.permutation(n_refs)]
        first = block.pop(0)
        order_of[document] = [first, *(int(i) for i in rng.permutation(n_refs) if i != first)]
    return [order_of[d] for d in documents]


def choose_order(documents: Sequence[str], n_refs: int, seed: int, rule: str = PER_DOCUMENT,
                 first: Mapping[str, int] | None = None) -> list[list[int]]:
    """The ``ref_order`` of a set under choice ``rule`` (:data:`CHOICE_RULES`); ``first``
    (the Bible table's frozen per-document choice) applies to ``per_document`` only."""
    if rule == PER_DOCUMENT:
        return reference_order(documents, n_refs, seed, first)
    if rule == BALANCED:
        return balanced_reference_order(documents, n_refs, seed)
    raise ValueError(f"unknown single-reference rule {rule!r}; choose one of {list(CHOICE_RULES)}")


def bible_tables(table_path: str | Path, source: str, train_target: str,
                 references: Sequence[str], seed: int,
                 rule: str = PER_DOCUMENT) -> dict[str, pd.DataFrame]:
    """Split tables from the shipped verse table (see ``resources/bible/README.md``).

    Training rows are the ``train`` split (the builder already dropped unusable verses); the
    evaluation sets keep only ``usable_eval`` verses. The frozen ``single_ref`` column decides each
    document's first reference when it is one of ``references`` (``rule`` per_document, the
    default; ``balanced`` ignores it).
    """
    verses = read_table(table_path, VERSES)
    for column in (source, train_target, *references):
        if column not in verses.columns:
            raise CorpusError([f"{table_path}: no text column '{column}' in the verse table"])
    train = verses[verses["split"] == "train"]
    tables = {"train": pd.DataFrame({
        "segment_id": train["segment_id"], "document": train["document"],
        "source": train[source], "target": train[train_target]})}
    for name in EVAL_SETS:
        rows = verses[(verses["split"] == name) & verses["usable_eval"]]
        first = {doc: references.index(ref)
                 for doc, ref in zip(rows["document"], rows["single_ref"], strict=True)
                 if ref in references}
        tables[name] = pd.DataFrame({
            "segment_id": rows["segment_id"], "document": rows["document"],
            "source": rows[source],
            "references": rows[list(references)].to_numpy().tolist(),
            "ref_order": choose_order(list(rows["document"]), len(references), seed, rule,
                                      first)})
    return tables


def file_tables(files: Mapping[str, Any], max_line_chars: int, seed: int,
                rule: str = PER_DOCUMENT) -> dict[str, pd.DataFrame]:
    """Split tables from a user's line-parallel text or Parquet files (config ``corpus.files``).

    Every file is validated first (:func:`circle.corpus.validate.read_parallel`); problems from all
    sets are raised together. An evaluation set may give a ``documents`` file (one document id per
    line); without it every line is its own document.
    """
    tables, problems = {}, []
    try:
        source, target = read_parallel([files["train"]["source"], files["train"]["target"]],
                                       max_line_chars)
        tables["train"] = pd.DataFrame({"segment_id": range(len(source)),
                                        "document": ["train"] * len(source),
                                        "source": source, "target": target})
    except CorpusError as error:
        problems.extend(error.problems)
    for name in EVAL_SETS:
        spec = files[name]
        paths = [spec["source"], *spec["references"]]
        if spec.get("documents"):
            paths.append(spec["documents"])
        try:
            columns = read_parallel(paths, max_line_chars)
        except CorpusError as error:
            problems.extend(error.problems)
            continue
        source, refs = columns[0], columns[1:1 + len(spec["references"])]
        documents = columns[-1] if spec.get("documents") else [str(i) for i in range(len(source))]
        tables[name] = pd.DataFrame({
            "segment_id": range(len(source)), "document": documents, "source": source,
            "references": [list(r) for r in zip(*refs, strict=True)],
            "ref_order": choose_order(documents, len(refs), seed, rule)})
    if problems:
        raise CorpusError(problems)
    return tables


def reference_names(corpus: Mapping[str, Any]) -> dict[str, list[str]]:
    """Names of each evaluation set's references, in ``references`` order."""
    if corpus["kind"] == "bible":
        return {name: list(corpus["bible"]["references"]) for name in EVAL_SETS}
    return {name: [Path(p).name for p in corpus["files"][name]["references"]]
            for name in EVAL_SETS}


OVERLAP_ACTIONS = ("error", "warn")
"""What :func:`prepare_corpus` does when sets overlap (config ``validation.overlap``)."""


def overlap_key(text: str) -> str:
    """The form in which two sources count as the same sentence: NFC, case-folded, its words
    only (punctuation and spacing dropped)."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFC", text).casefold()))


def overlap_problems(tables: Mapping[str, pd.DataFrame], corpus: Mapping[str, Any]
                     ) -> list[str]:
    """Each evaluation-set segment whose source (:func:`overlap_key`) is also a training
    source or a source of an earlier evaluation set: tuning or testing on a sentence the
    system was trained on, or tuning on a test sentence, scores what it has seen. One line
    per set pair, with the count and the first such segment."""
    def where(name: str, segment: int) -> str:
        if corpus["kind"] == "bible":
            return f"{corpus['bible']['table']} ({name} segment {segment})"
        return f"{corpus['files'][name]['source']}:{segment + 1}"

    seen = {"train": dict(zip(map(overlap_key, tables["train"]["source"]),
                              tables["train"]["segment_id"], strict=True))}
    problems = []
    for name in EVAL_SETS:
        keys = list(map(overlap_key, tables[name]["source"]))
        for other, sources in seen.items():
            shared = [(segment, key) for segment, key
                      in zip(tables[name]["segment_id"], keys, strict=True) if key in sources]
            if shared:
                segment, key = shared[0]
                problems.append(
                    f"{where(name, segment)}: {len(shared)} {name} source(s) also in the "
                    f"{other} set (first: this line, as {where(other, sources[key])})")
        seen[name] = dict(zip(keys, tables[name]["segment_id"], strict=False))
    return problems


def training_sample(count: int, segments: int, seed: int) -> np.ndarray:
    """Which of ``count`` training segments a bitext of ``segments`` of them keeps (a boolean
    mask in corpus order; config ``corpus.train_segments``).

    ``numpy.random.default_rng(seed).permutation(count)`` orders the segments; the first
    ``segments`` of it are kept, in corpus order. With one seed the samples are nested: the
    10,000 are among the 20,000. This is how circle varies the bitext size as Marton,
    Callison-Burch & Resnik (2009) Table 4 do (bitexts from 10k sentence pairs up) on one
    corpus, while the segments left out stay monolingual text for the distributional
    paraphrases.
    """
    if segments > count:
        raise CorpusError([f"corpus.train_segments is {segments}, but the training bitext has "
                           f"only {count} segments"])
    keep = np.zeros(count, dtype=bool)
    keep[np.random.default_rng(seed).permutation(count)[:segments]] = True
    return keep


def sample_metadata(segments: int, count: int) -> dict[str, str]:
    """The table metadata of a sampled training bitext or of the segments it leaves out."""
    return {"train_segments": str(segments), "train_segments_of": str(count)}


def corpus_tables(corpus: Mapping[str, Any], max_line_chars: int, seed: int
                  ) -> dict[str, pd.DataFrame]:
    """The whole training bitext and the evaluation sets of ``corpus`` (the Bible table's or
    the user's files'), the single reference chosen by ``corpus["single_reference"]``."""
    rule = corpus.get("single_reference", PER_DOCUMENT)
    if corpus["kind"] == "bible":
        bible = corpus["bible"]
        return bible_tables(bible["table"], bible["source"], bible["train_target"],
                            bible["references"], seed, rule)
    return file_tables(corpus["files"], max_line_chars, seed, rule)


def split_files(files: Mapping[str, Any], split: str) -> list[str]:
    """The files of config ``corpus.files`` that ``split``'s table is made from."""
    spec = files[split]
    if split == "train":
        return [spec["source"], spec["target"]]
    return [spec["source"], *spec["references"], *([spec["documents"]] if spec.get("documents")
                                                   else [])]


def split_digest(corpus: Mapping[str, Any], split: str) -> str:
    """The SHA-256 digest of what ``split``'s table is made from: the bytes of its files, or
    its rows of the Bible table in the columns it takes (``UNUSED_TRAINING``: the training
    split's). The corpus jobs' param, so that an edit reruns the splits it changes and no
    other, and a touch reruns none. A file that cannot be read gives ``unreadable``: the job
    then names the problem."""
    split = "train" if split == UNUSED_TRAINING else split
    digest = hashlib.sha256()
    try:
        if corpus["kind"] == "bible":
            bible = corpus["bible"]
            texts = ([bible["train_target"]] if split == "train"
                     else list(bible["references"]))
            columns = ["segment_id", "document", "split", "usable_eval", "single_ref",
                       bible["source"], *texts]
            verses = pd.read_parquet(bible["table"], columns=columns)
            rows = verses[verses["split"] == split]
            digest.update(json.dumps(columns).encode())
            digest.update(pd.util.hash_pandas_object(rows, index=False).to_numpy().tobytes())
        else:
            for path in split_files(corpus["files"], split):
                with open(path, "rb") as file:
                    digest.update(hashlib.file_digest(file, "sha256").digest())
    except (OSError, ValueError, KeyError):
        return "unreadable"
    return digest.hexdigest()


def prepare_corpus(corpus: Mapping[str, Any], max_line_chars: int, seed: int,
                   outputs: Mapping[str, str | Path], provenance: Mapping[str, str],
                   overlap: str = "error") -> None:
    """Build and write the train table and the evaluation-set tables named in ``outputs``; the
    single reference is chosen by ``corpus["single_reference"]`` (default per_document).
    Evaluation sets that overlap the whole training bitext or each other
    (:func:`overlap_problems`) are refused (``overlap`` "error") or logged as warnings
    ("warn"). With ``corpus["train_segments"]`` the train table is its :func:`training_sample`,
    and its metadata records the sample's size and the count it was drawn from."""
    if overlap not in OVERLAP_ACTIONS:
        raise ValueError(f"overlap must be one of {OVERLAP_ACTIONS}, not {overlap!r}")
    tables = corpus_tables(corpus, max_line_chars, seed)
    if problems := overlap_problems(tables, corpus):
        if overlap == "error":
            raise CorpusError([*problems, "set validation.overlap: warn to run anyway"])
        for problem in problems:
            logger.warning("%s", problem)
    train_metadata = {}
    if (segments := corpus.get("train_segments")) is not None:
        count = len(tables["train"])
        tables["train"] = tables["train"][training_sample(count, segments, seed)]
        train_metadata = sample_metadata(segments, count)
    names = reference_names(corpus)
    for name, path in outputs.items():
        if name == "train":
            write_table(tables[name], path, BITEXT, provenance, metadata=train_metadata)
        else:
            write_table(tables[name], path, EVALSET, provenance,
                        metadata={"reference_names": json.dumps(names[name])})


def write_unused_training(corpus: Mapping[str, Any], max_line_chars: int, seed: int,
                          out_path: str | Path, provenance: Mapping[str, str]) -> None:
    """Write the training segments that the sample of ``corpus["train_segments"]``
    (:func:`training_sample`) leaves out of the bitext, in corpus order, as a BITEXT table:
    their source side is monolingual text for the OOV paraphrases (Marton et al. 2009 keep
    the monolingual corpus fixed while the bitext shrinks)."""
    train = corpus_tables(corpus, max_line_chars, seed)["train"]
    segments = corpus["train_segments"]
    unused = train[~training_sample(len(train), segments, seed)]
    write_table(unused, out_path, BITEXT, provenance,
                metadata=sample_metadata(segments, len(train)))

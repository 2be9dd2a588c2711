"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from circle.align import BITEXT_DIGEST, bitext_digest
from circle.core.schemas import ALIGNMENT, BITEXT, PARAPHRASE_GRAMMAR
from circle.core.tables import read_table, write_table
from circle.decoder import decode_corpus
from circle.tune import fanout
from circle.tune.checkpoint import Checkpoint, ended, read_iteration
from circle.tune.loop import PoolBuilder, TuningProblem, default_hook


@pytest.fixture
def write_aligned_bitext(tmp_path):
    """Writes rows (segment_id, source, target, links) as a tokenised BITEXT table and its
    ALIGNMENT table in ``tmp_path``, which records the bitext's digest as alignments made now
    do; returns their paths."""

    def write(rows) -> tuple[Path, Path]:
        ids = [row[0] for row in rows]
        bitext = pd.DataFrame({"segment_id": ids, "document": "d",
                               "source": [row[1] for row in rows],
                               "target": [row[2] for row in rows]})
        alignment = pd.DataFrame({"segment_id": ids, "forward": "", "reverse": "",
                                  "links": [row[3] for row in rows]})
        write_table(bitext, tmp_path / "bitext.parquet", BITEXT)
        write_table(alignment, tmp_path / "alignment.parquet", ALIGNMENT,
                    metadata={BITEXT_DIGEST: bitext_digest(bitext)})
        return tmp_path / "bitext.parquet", tmp_path / "alignment.parquet"

    return write


@pytest.fixture
def read_pivoted():
    """Reads the rules of a pivot's parts in a directory (circle.grammar.pivot.grammar_parts),
    sorted by source and target."""

    def read(directory, schema=PARAPHRASE_GRAMMAR) -> pd.DataFrame:
        parts = [read_table(part, schema)
                 for part in sorted(Path(directory).glob("part*.parquet"))]
        return (pd.concat(parts).sort_values(["source", "target"], ignore_index=True)
                .astype(parts[0].dtypes))

    return read


@pytest.fixture
def fanned_out():
    """Runs a tuning run as the fanned-out Snakemake jobs do (circle.tune.fanout): every
    iteration ``shards`` shard jobs, then an optimisation job, each with a fresh pool read from
    the files the earlier jobs wrote; ``hook_for(job name)`` gives a job its reference hook.
    Returns the result and the iteration files."""

    def run(directory, sentences, references, grammar, lm_path, weights, settings,
            decoder_settings, shards, hook_for=None):
        problem = TuningProblem(grammar.feature_names, weights, settings)
        iterations = Checkpoint(directory, key="inputs")
        fingerprint = iterations.fingerprint(
            problem.run_arguments(sentences, references, decoder_settings))
        paths = []

        def decode(sources, vector):
            return decode_corpus(sources, grammar, lm_path, vector, decoder_settings)

        while not paths or not ended(paths[-1]):
            iteration = len(paths) + 1
            saved = [read_iteration(path, fingerprint) for path in paths]
            shard_paths = []
            for shard in range(shards):
                hook = (default_hook(references) if hook_for is None
                        else hook_for(f"it{iteration}.shard{shard}"))
                found = fanout.decode_shard(PoolBuilder(problem, hook), saved, sentences,
                                            fanout.shard_sentences(references, shards, shard),
                                            decode)
                shard_paths.append(directory / f"iteration-{iteration:04d}.shard{shard}.parquet")
                fanout.write_shard(found, shard_paths[-1], problem.names, fingerprint)
            iterations.save(fingerprint, fanout.optimise_iteration(
                PoolBuilder(problem, default_hook(references)), saved,
                [fanout.read_shard(path, fingerprint, problem.metric.n_stats)
                 for path in shard_paths]))
            paths.append(iterations.path(iteration))
        return fanout.finish(problem, [read_iteration(path, fingerprint) for path in paths]), paths

    return run


class LetterLM:
    """A toy LM over lattice words (circle.lattice.fsa.LanguageModel): log10 p(word | previous)
    = -(distinct letters of the previous word and the word) / 10."""

    def begin(self):
        return "<s>"

    def advance(self, state, word):
        return word, -len(set(state + word)) / 10

    def finish(self, state):
        return -len(state) / 10


@pytest.fixture
def letter_lm() -> LetterLM:
    """A :class:`LetterLM`."""
    return LetterLM()


@pytest.fixture
def forge_tables():
    """Renders a page's Markdown as a forge does (CommonMark with pipe tables, markdown-it) and
    returns its tables, each a list of rows (the header first) of cell texts."""
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark").enable("table")

    def tables(text: str) -> list[list[list[str]]]:
        found: list[list[list[str]]] = []
        inside = False
        for token in renderer.parse(text):
            if token.type in ("table_open", "table_close"):
                inside = token.type == "table_open"
                found += [[]] if inside else []
            elif inside and token.type == "tr_open":
                found[-1].append([])
            elif inside and token.type == "inline":
                found[-1][-1].append(token.content)
        return found

    return tables

"""The Snakemake workflow: lint, dry runs, the SLURM profile, and a tiny end-to-end run.

The tiny run uses real data shipped in tests/data/tiny (a few hundred Bible verses in the
plain-text user-corpus format) and goes through corpus validation, tokenisation, eflomal
alignment, both KenLM models, grammar extraction, pivoting, the biased paraphrase grammars and
sharded decoding of the tune and test sets, paraphraser tuning, untargeted paraphrases, MERT per
reference condition, test evaluation and the Fig. 4.3 report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import kenlm
import numpy as np
import pandas as pd
import pytest
import yaml
from markdown_it import MarkdownIt

from circle.core.schemas import (
    ALIGNMENT,
    BITEXT,
    CONDITION_SUMMARY,
    DOSE_RESPONSE,
    EVALSET,
    EVALUATION,
    EXTRA_REFERENCE,
    GRAMMAR,
    GRID_CHOICE,
    GRID_POINTS,
    GRID_SAMPLE,
    ITERATION_SCORES,
    LABELLED_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR,
    LATTICE_REFERENCES,
    PARAPHRASE_GRAMMAR,
    PARSES,
    REFERENCE_QUALITY,
    TARGETED_CACHE,
    TARGETED_NBEST,
    TARGETING_WEIGHTS,
    TUNING_LOG,
)
from circle.core.tables import read_metadata, read_table
from circle.corpus.preprocess import detokenize
from circle.decoder import read_weights
from circle.decoder.nbest import NBEST
from circle.grammar.parse import read_bracketings
from circle.pipeline.config import with_schema_defaults
from circle.pipeline.shared_system import shared_mt_files
from circle.pipeline.work import DecodingWork

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "tiny"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile")]

pytestmark = pytest.mark.workflow


def snakemake(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def tiny_alignment() -> Path:
    """The tiny config's frozen alignment."""
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    return TINY / config["alignment"]["frozen"]


KEPT_RUN = "CIRCLE_KEEP_TINY_RUN"


def keep_tiny_run(directory: Path, log: str) -> None:
    """If the environment names a directory in ``CIRCLE_KEEP_TINY_RUN`` (``.ci/run`` does), copy
    the tiny default target's results and its log there: the SLURM test compares its cluster
    run with this local run instead of making its own."""
    kept = os.environ.get(KEPT_RUN)
    if kept:
        shutil.copytree(directory / "results", Path(kept) / "results")
        (Path(kept) / "snakemake.log").write_text(log)


class TinyRun(NamedTuple):
    """The tiny config's default target, run once (:func:`tiny_default_run`): its directory
    and what Snakemake printed."""

    directory: Path
    stdout: str
    stderr: str

    def copy_to(self, directory: Path) -> Path:
        """The run's directory copied (Snakemake's records and file times kept), for a test
        that builds on the run without touching the other tests' copy."""
        shutil.copytree(self.directory, directory, symlinks=True, dirs_exist_ok=True)
        return directory


@pytest.fixture(scope="module")
def tiny_default_run(tmp_path_factory) -> TinyRun:
    """The tiny config's default target, run once for the tests that check it or build on it;
    kept for the SLURM test when the environment asks for it (:func:`keep_tiny_run`)."""
    directory = tmp_path_factory.mktemp("tiny-default")
    result = snakemake("--cores", "2", "--configfile", str(tiny_config(directory)),
                       "--directory", str(directory))
    assert result.returncode == 0, result.stdout + result.stderr
    keep_tiny_run(directory, result.stdout + result.stderr)
    return TinyRun(directory, result.stdout, result.stderr)


def tiny_config(tmp_path: Path, **changes) -> Path:
    """The tiny test config with absolute fixture paths, written into ``tmp_path``."""
    config = yaml.safe_load((TINY / "config.yaml").read_text())
    files = config["corpus"]["files"]
    for spec in files.values():
        for key, value in spec.items():
            spec[key] = [str(TINY / v) for v in value] if isinstance(value, list) \
                else str(TINY / value)
    config["alignment"]["frozen"] = str(tiny_alignment())
    for dotted, value in changes.items():
        node = config
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_lint_is_clean():
    result = snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_default_config_dry_run_plans_every_stage():
    result = snakemake("-n", "--forceall")
    assert result.returncode == 0, result.stdout + result.stderr
    for rule in ("effective_config", "prepare_corpus", "tokenize_corpus", "prepare_lm_text",
                 "estimate_lm", "split_for_counting", "count_rules", "extract_grammar",
                 "filter_grammar", "prepare_pivot", "pivot_part",
                 "bias_grammar", "decode_shard", "gather_nbest"):
        assert rule in result.stdout


def test_pivot_bitexts_dry_run_plans_their_alignment_and_grammar(tmp_path):
    """paraphrase.pivots: Spanish with the KJV (the training bitext, its frozen alignment) and
    the WEB (tokenised and aligned by eflomal) make one pivot language with its own grammar;
    the training bitext alone pivots from the MT grammar as the default does."""
    overlay = tmp_path / "pivots.yaml"
    overlay.write_text(yaml.safe_dump({"paraphrase": {"pivots": [
        {"source": "es", "target": "kjv"}, {"source": "es", "target": "web"}]}}))
    target = "results/default/paraphrase/self_paraphrase.parquet"
    result = snakemake("-n", "--forceall", "--configfile", "config/config.yaml", str(overlay),
                       "--", target)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "output: results/default/pivots/es-web/tokenized/train.parquet" in out
    assert "output: results/default/pivots/es-web/align/eflomal.parquet" in out
    assert "results/default/pivot/es/grammar/bilingual.parquet" in out
    assert "resources/alignment/bible-es-kjv.parquet" in out  # the training pair's, frozen
    prepare = out[out.index("rule prepare_pivot:"):]
    assert "input: results/default/pivot/es/grammar/bilingual.parquet" in prepare
    assert "results/default/grammar/bilingual.parquet" not in prepare.split("output:")[0]
    overlay.write_text(yaml.safe_dump({"paraphrase": {"pivots": [
        {"source": "es", "target": "kjv"}]}}))
    result = snakemake("-n", "--forceall", "--configfile", "config/config.yaml", str(overlay),
                       "--", target)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule pivot_language:" not in result.stdout
    assert "rule pivot_bitext:" not in result.stdout
    prepare = result.stdout[result.stdout.index("rule prepare_pivot:"):]
    assert "input: results/default/grammar/bilingual.parquet" in prepare


def test_the_paraphrasers_own_lms_are_planned_from_its_pivots_english(tmp_path):
    """paraphrase.language_models: pivots: the paraphraser's LMs are estimated on the English
    of its pivot bitexts (the KJV of the training bitext and the WEB, each once) and every
    paraphrasing job reads them; the MT system's decoding keeps its own LM. Without pivot
    bitexts the setting is refused when the workflow is built."""
    overlay = tmp_path / "own-lms.yaml"
    overlay.write_text(yaml.safe_dump({"paraphrase": {"language_models": "pivots", "pivots": [
        {"source": "es", "target": "kjv"}, {"source": "es", "target": "web"}]}}))
    targets = ["results/default/weights/paraphraser-bias0.txt",
               "results/default/decode/untuned-translation/tune.nbest.parquet"]
    result = snakemake("-n", "--forceall", "--configfile", "config/config.yaml", str(overlay),
                       "--", *targets)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = {block.split(":", 1)[0].removeprefix("rule "): block for block in re.split(
        r"^(?=rule \w+:$)", result.stdout, flags=re.M)[1:]}
    text = jobs["prepare_paraphraser_lm_text"].split("output:")[0]
    assert "results/default/tokenized/train.parquet" in text  # es-kjv: the MT training bitext
    assert "results/default/pivots/es-web/tokenized/train.parquet" in text
    assert "output: results/default/paraphrase/lm/3gram.binary" in jobs["estimate_paraphraser_lm"]
    assert "results/default/paraphrase/lm/3gram.binary" in jobs["tune_paraphraser"]
    assert "paraphrase/lm/" not in jobs["decode_shard"]
    assert "results/default/lm/3gram.binary" in jobs["decode_shard"]
    overlay.write_text(yaml.safe_dump({"paraphrase": {"language_models": "pivots"}}))
    refused = snakemake("-n", "--configfile", "config/config.yaml", str(overlay))
    assert refused.returncode != 0
    assert "paraphrase.language_models: pivots" in refused.stdout + refused.stderr


def test_tiny_config_dry_run(tmp_path):
    result = snakemake("-n", "--configfile", str(tiny_config(tmp_path)), "--directory",
                       str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "results/tiny/lm/5gram.binary" in result.stdout


@pytest.mark.parametrize("target", [
    "aligned_corpus", "language_models", "grammars", "thrax_grammars", "untuned_translations",
    "reference_sparsity", "grid_search", "targeted_tuning", "fig5_4", "fig4_12", "paper_tables",
    "dose_response", "lattice_parses", "lattice_tuning", "oov_paraphrased_grammars",
    "samt_grammars"])
def test_every_named_target_writes_the_effective_config(tmp_path, target):
    result = snakemake("-n", "--configfile", str(tiny_config(tmp_path)), "--directory",
                       str(tmp_path), target)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "output: results/tiny/config.yaml" in result.stdout


def test_tiny_dose_response_dry_run_plans_its_runs_outside_the_default_target(tmp_path):
    """snakemake dose_response: one extra reference table and one tuning run per replicate of
    each 1H+1X_<extra> (no kjv on a corpus of files), beside 1H, 2H and 1H+1P, evaluated as the
    run set dose/; the default target plans none of it."""
    config = tiny_config(tmp_path, **{"tuning.replicates": 2})
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "dose_response")
    assert result.returncode == 0, result.stdout + result.stderr
    extras = sorted(re.findall(r"results/tiny/references/(\w+)\.parquet$", result.stdout,
                               flags=re.M))
    assert sorted(set(extras)) == ["mt", "noise25", "noise50", "noise75", "shuffle"]
    runs = set(re.findall(r"^    output: results/tiny/weights/(\S+)\.txt", result.stdout,
                          flags=re.M))
    conditions = ["1H", "2H", "1H+1P", "1H+1X_mt", "1H+1X_noise25", "1H+1X_noise50",
                  "1H+1X_noise75", "1H+1X_shuffle"]
    assert runs >= {f"{c}.rep{r}" for c in conditions for r in (0, 1)}
    assert not {run for run in runs if "1H+1X" in run} - {
        f"{c}.rep{r}" for c in conditions for r in (0, 1)}
    assert "results/tiny/evaluation/dose/results.parquet" in result.stdout
    default = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    assert default.returncode == 0, default.stdout + default.stderr
    assert "1H+1X" not in default.stdout and "results/tiny/references/" not in default.stdout
    assert "results/tiny/report/single_reference.md" in default.stdout


def test_tiny_ladder_page_puts_two_paraphrasers_of_one_mt_system_side_by_side(
        tiny_default_run, tmp_path):
    """`circle ladder` on the tiny run and a copy of it under another experiment's name (a
    second rung with the same MT system): the ladder table's cells are the runs' own numbers,
    the Fig. 4.3 and 5.10 tables hold one series per rung, and a rung whose 1H scores differ
    is refused as another MT system."""
    tiny_default_run.copy_to(tmp_path)
    for tree in ("results", "benchmarks"):
        shutil.copytree(tmp_path / tree / "tiny", tmp_path / tree / "tiny-copy")
    results = tmp_path / "results" / "tiny"

    def ladder(*rungs: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "circle.cli", "ladder", *rungs, "--out", "ladder",
             "--project", str(tmp_path), "--made-at", "a test"], capture_output=True, text=True)

    written = ladder("results/tiny", "results/tiny-copy")
    assert written.returncode == 0, written.stderr
    out = tmp_path / "ladder"
    table = pd.read_csv(out / "ladder.csv")
    assert table["experiment"].tolist() == ["tiny", "tiny-copy"]
    quality = pd.read_csv(results / "report/reference_quality.csv").set_index("candidate")
    first = quality.loc["P1"]
    assert table["P1 BLEU / chrF / TER"].tolist() == [
        f"{first['bleu']:.1f} / {first['chrf']:.1f} / {first['ter']:.1f}"] * 2
    assert table["MT untuned BLEU"].iloc[0] == float(f"{quality.loc['MT untuned', 'bleu']:.1f}")
    conditions = read_table(results / "evaluation/conditions.parquet",
                            CONDITION_SUMMARY).set_index("condition")
    assert table["1H+1P − 1H BLEU"].iloc[0].startswith(
        f"{conditions.loc['1H+1P', 'bleu_difference']:+.2f}")
    assert table["1H+3P − 1H BLEU"].iloc[0] == "–"  # the tiny config runs 1H+2P, not 1H+3P
    assert table["pivots"].iloc[0] == "training bitext"
    for figure, series in (("fig4_3", "paraphrase"), ("fig5_10", "targeted")):
        own = pd.read_csv(results / f"report/{figure}.csv")
        combined = pd.read_csv(out / f"{figure}.csv")
        for rung in ("tiny", "tiny-copy"):
            pd.testing.assert_series_equal(combined[f"{rung}_bleu_mean"],
                                           own[f"{series}_bleu_mean"], check_names=False)
        assert (out / f"{figure}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / f"{figure}_common_length.png").read_bytes()[:4] == b"\x89PNG"
    page = (out / "ladder.md").read_text()
    assert "| tiny-copy | training bitext |" in page and "made at a test" in page

    copy = tmp_path / "results/tiny-copy/report/fig4_3.csv"
    other = pd.read_csv(copy)
    other.loc[other["references"] == 1, "human_bleu_replicates"] = 1.0
    other.to_csv(copy, index=False)
    refused = ladder("results/tiny", "results/tiny-copy")
    assert refused.returncode == 2
    assert "tiny-copy's untuned and 1H test BLEU" in refused.stderr
    assert "must share the MT system" in refused.stderr


def test_tiny_dose_response_end_to_end(tiny_default_run, tmp_path):
    """snakemake dose_response on the tiny corpus, after its default target: the extra
    reference tables, the dose/ run set's evaluation against 1H and the page and figure (no
    adequacy: two references)."""
    tiny_default_run.copy_to(tmp_path)
    config = tiny_config(tmp_path, **{"dose_response.extra": ["mt", "noise50"]})
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "dose_response")
    assert result.returncode == 0, result.stdout + result.stderr
    results = tmp_path / "results" / "tiny"
    tune = read_table(results / "sets/tune.parquet", EVALSET)
    noise = read_table(results / "references/noise50.parquet", EXTRA_REFERENCE)
    assert list(noise["segment_id"]) == list(tune["segment_id"])
    assert all(text == text.lower() for text in noise["reference"])
    mt = read_table(results / "references/mt.parquet", EXTRA_REFERENCE)
    untuned = read_table(results / "decode/untuned-translation/tune.nbest.parquet", NBEST)
    assert list(mt["reference"]) == list(untuned[untuned["rank"] == 0]
                                         .set_index("segment_id").loc[tune["segment_id"],
                                                                       "hypothesis"])
    summary = read_table(results / "evaluation/dose/conditions.parquet", CONDITION_SUMMARY)
    assert set(summary["condition"]) == {"1H", "2H", "1H+1P", "1H+1X_mt", "1H+1X_noise50"}
    assert set(summary["baseline_condition"].dropna()) == {"1H"}
    table = read_table(results / "evaluation/dose_response.parquet", DOSE_RESPONSE)
    assert set(table["extra"]) == {"H2", "P1", "mt", "noise50"}
    assert table["adequacy_bleu"].isna().all() and (table["adequacy_segments"] == 0).all()
    page = (results / "report/dose_response.md").read_text()
    assert "no third human reference" in page and "1H+1X_noise50" in page
    assert (results / "report/dose_response.png").stat().st_size > 0
    before = (results / "references/noise50.parquet").read_bytes()
    again = snakemake("--cores", "1", "--configfile", str(config), "--directory",
                      str(tmp_path), "--forcerun", "extra_reference", "--until",
                      "extra_reference", "results/tiny/references/noise50.parquet")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (results / "references/noise50.parquet").read_bytes() == before  # seeded


def check_target_report(directory: Path, config: Path, target: str, page: str,
                        category: str) -> None:
    """``snakemake --report`` of a named target run in ``directory``: it builds without reST
    errors, holds the page ``report/<page>.html`` under ``category`` and the page's caption
    (``workflow/report/<page>.rst``)."""
    built = snakemake("--configfile", str(config), "--directory", str(directory), "--report",
                      "report.zip", target)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "(ERROR/" not in built.stdout + built.stderr  # the caption is valid reST
    with zipfile.ZipFile(directory / "report.zip") as archive:
        names = {Path(name).name: name for name in archive.namelist()}
        assert f"{page}.html" in names
        report = archive.read(names["report.html"]).decode()
    assert category in report
    caption = (ROOT / f"workflow/report/{page}.rst").read_text().split()
    assert " ".join(caption[:4]) in report


def test_tiny_lattice_parses_and_one_verse_drawn(tiny_default_run, tmp_path):
    """snakemake lattice_parses on the tiny corpus, after its default target: every reference
    of the tune and test sets parsed, and the page of one verse's lattice with its drawing."""
    tiny_default_run.copy_to(tmp_path)
    config = tiny_config(tmp_path)
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "lattice_parses")
    assert result.returncode == 0, result.stdout + result.stderr
    results = tmp_path / "results" / "tiny"
    for evalset in ("tune", "test"):
        table = read_table(results / f"corpus/{evalset}.parquet", EVALSET)
        parses = read_table(results / f"lattice/{evalset}.parses.parquet", PARSES)
        assert len(parses) == sum(len(references) for references in table["references"])
        assert set(parses["segment_id"]) == set(table["segment_id"])
    page = (results / "report/lattice.md").read_text()
    assert page.startswith("# A word lattice of one verse (Pang, Knight & Marcu 2003)")
    assert (results / "report/lattice.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (results / "report/lattice.dot").read_text().startswith("digraph")
    check_target_report(tmp_path, config, "lattice_parses", "lattice", "Word lattices")


def test_tiny_samt_grammars_end_to_end(tiny_default_run, tmp_path):
    """snakemake samt_grammars on the tiny corpus, after its default target: the training
    bitext's English side parsed over its tokens, the labelled grammar (the Hiero grammar's
    phrase pairs with SAMT labels), its labelled pivot with φ_ident, and the page; the default
    target plans none of it."""
    tiny_default_run.copy_to(tmp_path)
    config = tiny_config(tmp_path)
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "samt_grammars")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule extract_grammar:" not in result.stdout + result.stderr  # Hiero's is reused
    results = tmp_path / "results" / "tiny"
    bitext = read_table(results / "tokenized/train.parquet", BITEXT)
    parses = read_table(results / "samt/train.parses.parquet", PARSES)
    assert list(parses["segment_id"]) == list(bitext["segment_id"])
    bracketings = read_bracketings(results / "samt/train.parses.parquet")
    assert [list(bracketings[segment].words) for segment in bitext["segment_id"]] == [
        line.split() for line in bitext["target"]]  # SAMT's spans index the grammar's words
    hiero = read_table(results / "grammar/bilingual.parquet", GRAMMAR)
    labelled = read_table(results / "samt/bilingual.parquet", LABELLED_GRAMMAR)
    assert len(labelled) > len(hiero)
    assert {"NP", "PP", "X"} <= set(labelled["lhs"])
    unlabelled = labelled["source"].str.replace(r"\[[^ ]+,([12])\]", r"[X,\1]", regex=True)
    assert set(unlabelled) == set(hiero["source"])
    paraphrases = read_table(results / "samt/paraphrase/part0.parquet",
                             LABELLED_PARAPHRASE_GRAMMAR)
    assert len(paraphrases) and paraphrases["identity"].isin([0.0, 1.0]).all()
    assert (paraphrases["identity"] == (paraphrases["source"] == paraphrases["target"])).all()
    assert paraphrases.groupby(["lhs", "source"]).size().max() <= 20  # samt.top_paraphrases
    collapsed = read_table(results / "samt/collapsed/part0.parquet", PARAPHRASE_GRAMMAR)
    assert len(collapsed) and set(collapsed["lhs"]) == {"X"}
    assert not collapsed["source"].str.contains(r"\[(?!X,)").any()
    page = (results / "report/samt.md").read_text()
    assert page.startswith("# Labelled paraphrase grammars")
    assert f"| Hiero bilingual | {len(hiero):,} |" in page
    default = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    assert "samt/" not in default.stdout
    check_target_report(tmp_path, config, "samt_grammars", "samt", "Labelled paraphrase grammars")
    # the paraphraser decodes with the collapsed grammar (samt.paraphraser): its tuning and the
    # untargeted paraphrases of the tune set's single reference, every rule from that grammar
    labelled = tiny_config(tmp_path, **{"samt.paraphraser": True})
    paraphrases = "results/tiny/paraphrase/untargeted-bias0/tune.nbest.parquet"
    decoded = snakemake("--cores", "2", "--configfile", str(labelled), "--directory",
                        str(tmp_path), paraphrases)
    assert decoded.returncode == 0, decoded.stdout + decoded.stderr
    assert "rule tune_paraphraser:" in decoded.stdout + decoded.stderr
    grammar = read_table(results / "paraphrase/bias0.parquet", PARAPHRASE_GRAMMAR)
    assert set(zip(grammar["source"], grammar["target"], strict=True)) == set(
        zip(collapsed["source"], collapsed["target"], strict=True))
    nbest = read_table(tmp_path / paraphrases, NBEST)
    tune = read_table(results / "sets/tune.parquet", EVALSET)
    assert set(nbest["segment_id"]) == set(tune["segment_id"])
    assert (nbest["hypothesis"].str.len() > 0).all()
    # samt.decoding labelled: the same, decoding the labelled grammar itself with labels
    weights = {**yaml.safe_load((ROOT / "config/samt-labelled.yaml").read_text())["decoder"][
        "paraphrase_weights"]}
    with_labels = tiny_config(tmp_path, **{
        "samt.paraphraser": True, "samt.decoding": "labelled", "paraphrase.biases": [0],
        "figures.untargeted_biases": [], "grid_search.sweep_bias": 0,
        "tuning.conditions": ["1H", "1H+1P"],
        "decoder.paraphrase_weights": weights})
    decoded = snakemake("--cores", "2", "--configfile", str(with_labels), "--directory",
                        str(tmp_path), paraphrases)
    assert decoded.returncode == 0, decoded.stdout + decoded.stderr
    assert "rule tune_paraphraser:" in decoded.stdout + decoded.stderr
    rule_order = ["lhs", "source", "target"]
    as_decoded = read_table(results / "paraphrase/bias0.parquet", LABELLED_PARAPHRASE_GRAMMAR)
    as_pivoted = read_table(results / "samt/paraphrase/part0.parquet",
                            LABELLED_PARAPHRASE_GRAMMAR)
    assert as_decoded.sort_values(rule_order, ignore_index=True).equals(
        as_pivoted.sort_values(rule_order, ignore_index=True))
    assert (as_decoded["identity"] == 1).any()
    tuned = read_weights(results / "weights/paraphraser-bias0.txt")
    assert {"log_bb_p_e_given_f", "reordered", "identity"} <= set(tuned)
    relabelled = read_table(tmp_path / paraphrases, NBEST)
    assert set(relabelled["segment_id"]) == set(tune["segment_id"])
    assert (relabelled["hypothesis"].str.len() > 0).all()


def test_tiny_samt_paraphraser_biases_the_collapsed_labelled_grammar(tmp_path):
    """samt.paraphraser: the biased grammars, and so the paraphraser, come from the labelled
    grammar collapsed to X; without it they come from the Hiero pivot's parts."""
    config = tiny_config(tmp_path, **{"samt.paraphraser": True})
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "grammars")
    assert result.returncode == 0, result.stdout + result.stderr
    biasing = result.stdout[result.stdout.index("rule bias_grammar:"):]
    assert biasing.split("\n")[1].strip() == (
        "input: results/tiny/samt/collapsed/part0.parquet, "
        "results/tiny/samt/collapsed/self_paraphrase.parquet")
    assert "rule pivot_part:" not in result.stdout
    hiero = snakemake("-n", "--configfile", str(tiny_config(tmp_path)), "--directory",
                      str(tmp_path), "grammars")
    assert "rule pivot_part:" in hiero.stdout and "samt/" not in hiero.stdout


def test_tiny_lattice_tuning_dry_run_plans_its_runs_outside_the_default_target(tmp_path):
    """snakemake lattice_tuning: the lattice sentences of 2H and the runs of 2H+1L and 2H+2L
    (the default for two English tune references) per replicate beside 1H and 2H, evaluated as
    the run set lattice/; the default target plans none of it."""
    config = tiny_config(tmp_path, **{"tuning.replicates": 2})
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "lattice_tuning")
    assert result.returncode == 0, result.stdout + result.stderr
    tables = set(re.findall(r"output: (results/tiny/lattice/\S+)$", result.stdout, flags=re.M))
    assert tables == {"results/tiny/lattice/tune.parses.parquet",
                      "results/tiny/lattice/tune.2H.references.parquet"}
    runs = set(re.findall(r"^    output: results/tiny/weights/(\S+)\.txt", result.stdout,
                          flags=re.M))
    assert runs >= {f"{c}.rep{r}" for c in ("1H", "2H", "2H+1L", "2H+2L") for r in (0, 1)}
    tuning = result.stdout[result.stdout.index("output: results/tiny/weights/2H+1L.rep0.txt"):]
    assert "results/tiny/lattice/tune.2H.references.parquet" in tuning[:tuning.index("rule ")]
    assert "output: results/tiny/evaluation/lattice/results.parquet" in result.stdout
    default = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    assert default.returncode == 0, default.stdout + default.stderr
    assert not re.search(r"\+\d+L\.rep", default.stdout)
    assert "results/tiny/lattice/" not in default.stdout


def test_tiny_lattice_tuning_end_to_end(tiny_default_run, tmp_path):
    """snakemake lattice_tuning on the tiny corpus, after its default target: the lattice
    sentences of 2H, the 2H+1L and 2H+2L runs and the page, marked against 2H."""
    tiny_default_run.copy_to(tmp_path)
    config = tiny_config(tmp_path)
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "lattice_tuning")
    assert result.returncode == 0, result.stdout + result.stderr
    results = tmp_path / "results" / "tiny"
    tune = read_table(results / "sets/tune.parquet", EVALSET)
    sentences = read_table(results / "lattice/tune.2H.references.parquet", LATTICE_REFERENCES)
    assert 0 < sentences["segment_id"].nunique() < len(tune)  # most groups have no new path
    assert sentences.groupby("segment_id")["rank"].max().max() == 1
    summary = read_table(results / "evaluation/lattice/conditions.parquet", CONDITION_SUMMARY)
    baselines = dict(zip(summary["condition"], summary["baseline_condition"], strict=True))
    assert baselines["2H+1L"] == baselines["2H+2L"] == "2H" and baselines["2H"] == "1H"
    page = (results / "report/lattice_tuning.md").read_text()
    assert "2H + lattice" in page and "lattices of 2H: of 30 tune segments, " in page
    assert (results / "report/lattice_tuning.png").stat().st_size > 0


def test_unknown_config_key_is_rejected_in_a_short_message(tmp_path):
    result = snakemake("-n", "--config", "alignmnet={}")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "config: Additional properties are not allowed ('alignmnet' was unexpected)" in output
    assert len(output.splitlines()) < 10  # not the whole schema


@pytest.mark.parametrize("changes, problem", [
    ({"tuning.conditions": ["2H", "1H+1P"]}, "lacks 1H"),
    ({"tuning.conditions": ["1H", "7H"]},
     "7H needs 7 references but the tune set has 2 (corpus.files.tune.references)"),
    ({"decoder.translation_weights": {
        "log_p_e_given_f": 0.2, "log_p_f_given_e": 0.2, "log_lex_e_given_f": 0.2,
        "log_lex_f_given_e": 0.2, "lm": float("nan"), "word_penalty": -0.5,
        "phrase_penalty": 0.0, "glue": 0.0, "oov": -10.0}},
     "decoder.translation_weights: weight 'lm' is not a finite number: nan"),
    ({"decoder.paraphrase_weights": {
        "log_p_e2_given_e1": 0.3, "log_p_e1_given_e2": 0.3, "log_p_e1_e2": 0.1,
        "neg_target_terminals": 0.0, "lmm": 0.5, "word_penalty": -0.5, "phrase_penalty": 0.0,
        "glue": 0.0, "oov": -10.0}},
     "unknown ['lmm'], missing ['lm']"),
    ({"paraphrase.pivots": [{"source": "es", "target": "web"}]},
     "paraphrase.pivots: pivot bitexts are columns of the Bible table (corpus.kind: bible)"),
], ids=["no-1H", "7H-of-2", "nan-weight", "misspelt-weight", "pivots-of-own-files"])
def test_an_infeasible_config_is_refused_when_the_workflow_is_built(tmp_path, changes, problem):
    result = snakemake("-n", "--configfile", str(tiny_config(tmp_path, **changes)),
                       "--directory", str(tmp_path))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert problem in output and "Traceback" not in output
    assert not (tmp_path / "results").exists()


def test_bad_corpus_stops_in_the_first_job_naming_file_and_line(tmp_path):
    bad = tmp_path / "bad.en"
    lines = (TINY / "tune.ref1.txt").read_text().splitlines()
    lines[4] = "   "
    bad.write_text("\n".join(lines) + "\n")
    config = tiny_config(tmp_path)
    data = yaml.safe_load(config.read_text())
    data["corpus"]["files"]["tune"]["references"][1] = str(bad)
    config.write_text(yaml.safe_dump(data))
    result = snakemake("--cores", "1", "--configfile", str(config), "--directory", str(tmp_path))
    assert result.returncode != 0
    log = "".join(p.read_text() for p in (tmp_path / "logs/tiny").glob("prepare_corpus/*.log"))
    assert f"{bad}:5: empty or whitespace-only line" in log
    assert not (tmp_path / "results/tiny/tokenized").exists()


def test_circle_score_and_compare_give_the_tables_numbers(tiny_default_run):
    """`circle score` of a run's test output is its row of the evaluation table, and `circle
    compare` with the config's samples, shuffles and seed gives the tables' p-values (one
    replicate per condition: the bootstrap of the row, the randomisation test of the summary)."""
    results = tiny_default_run.directory / "results" / "tiny"
    evaluation = read_table(results / "evaluation/results.parquet", EVALUATION)
    runs = {row.condition: row for row in evaluation.itertuples() if row.replicate == 0}
    outputs = [str(results / f"decode/{run}.rep0/test.1best.txt") for run in ("1H", "2H")]
    circle = [sys.executable, "-m", "circle.cli"]
    score = subprocess.run([*circle, "score", outputs[1], "--results", str(results)],
                           capture_output=True, text=True, timeout=120)
    assert score.returncode == 0, score.stderr
    row = runs["2H"]
    assert score.stdout.splitlines() == [
        f"{outputs[1]}: BLEU {row.bleu:.2f}, TER {row.ter:.2f}, chrF {row.chrf:.2f}",
        f"  BLEU: {row.bleu_signature}", f"  TER: {row.ter_signature}",
        f"  chrF: {row.chrf_signature}"]
    compare = subprocess.run([*circle, "compare", *outputs, "--results", str(results),
                              "--samples", "100", "--seed", "13"],
                             capture_output=True, text=True, timeout=120)
    assert compare.returncode == 0, compare.stderr
    tested = compare.stdout.splitlines()[-1].split()
    header = compare.stdout.splitlines()[1].split()
    summary = read_table(results / "evaluation/conditions.parquet", CONDITION_SUMMARY)
    summary = summary.set_index("condition").loc["2H"]
    assert float(tested[header.index("bleu_bootstrap_p")]) == \
        pytest.approx(row.p_value_vs_baseline, rel=1e-3)
    assert float(tested[header.index("bleu_ar_p")]) == pytest.approx(summary["bleu_p_value"],
                                                                     rel=1e-3)


def test_tiny_report_pages_render_without_swallowed_placeholders(tiny_default_run):
    """Every Markdown page of the run renders (CommonMark, as forges do) without raw HTML: a
    placeholder such as H<k> or noise<p> would be read as a tag and vanish."""
    renderer = MarkdownIt("commonmark").enable("table")
    pages = sorted((tiny_default_run.directory / "results" / "tiny").rglob("*.md"))
    assert len(pages) > 5
    for page in pages:
        tokens = renderer.parse(page.read_text(encoding="utf-8"))
        raw = [part.content for token in tokens for part in [token, *(token.children or [])]
               if part.type in ("html_inline", "html_block")]
        assert raw == [], page


def test_tiny_end_to_end_through_grammars_and_decoding(tiny_default_run, tmp_path):
    result = tiny_default_run
    result.copy_to(tmp_path)
    config = tiny_config(tmp_path)
    results = tmp_path / "results" / "tiny"
    assert not (results / "align").exists()  # the frozen alignment is replayed

    # eflomal itself, on demand (refreeze_alignment would copy it over the frozen table)
    aligned = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                        str(tmp_path), "results/tiny/align/eflomal.parquet")
    assert aligned.returncode == 0, aligned.stdout + aligned.stderr
    bitext = read_table(results / "tokenized/train.parquet", BITEXT)
    alignment = read_table(results / "align/eflomal.parquet", ALIGNMENT)
    assert list(alignment["segment_id"]) == list(bitext["segment_id"])
    source_lengths = bitext["source"].str.split().str.len()
    linked = alignment["links"].str.split().str.len()
    assert (linked > 0).mean() > 0.95
    assert linked.sum() / source_lengths.sum() > 0.5  # a real aligner, not an empty file
    assert read_metadata(results / "align/eflomal.parquet")["symmetrization"] == \
        "grow-diag-final-and"
    tune = read_table(results / "tokenized/tune.parquet", EVALSET)
    assert all(ref == ref.lower() for refs in tune["references"] for ref in refs)

    for order in (3, 5):
        model = kenlm.Model(str(results / f"lm/{order}gram.binary"))
        assert model.order == order
    assert not (results / "lm/text.txt").exists()  # temp LM text is removed

    grammar = read_table(results / "grammar/bilingual.parquet", GRAMMAR)
    p_e_given_f = np.exp(grammar["log_p_e_given_f"]).groupby(grammar["source"]).sum()
    assert np.allclose(p_e_given_f, 1.0)
    filtered = read_table(results / "grammar/filtered/test.parquet", GRAMMAR)
    assert 0 < len(filtered) < len(grammar)
    unbiased = read_table(results / "paraphrase/bias0.parquet", PARAPHRASE_GRAMMAR)
    assert len(unbiased) > 0 and not (unbiased["source"] == unbiased["target"]).any()
    biased = read_table(results / "paraphrase/bias0.5.parquet", PARAPHRASE_GRAMMAR)
    identity = biased[biased["source"] == biased["target"]]
    assert set(identity["source"]) == set(unbiased["source"])
    assert np.allclose(identity["log_p_e2_given_e1"], np.log(0.5))

    nbest = read_table(results / "decode/untuned-translation/test.nbest.parquet", NBEST)
    test = read_table(results / "tokenized/test.parquet", EVALSET)
    assert list(nbest["segment_id"].drop_duplicates()) == list(test["segment_id"])
    assert nbest.groupby("segment_id")["hypothesis"].apply(lambda h: h.is_unique).all()
    onebest = (results / "decode/untuned-translation/test.1best.txt").read_text().splitlines()
    assert onebest == list(nbest[nbest["rank"] == 0]["hypothesis"])
    detokenized = (results / "decode/untuned-translation/test.1best.detok.txt").read_text()
    assert detokenized.splitlines() == [detokenize(line, "en") for line in onebest]
    text = (results / "decode/untuned-translation/test.nbest.txt").read_text().splitlines()
    assert len(text) == len(nbest) and all(line.count(" ||| ") == 3 for line in text)
    positions = {segment: line for line, segment in enumerate(test["segment_id"])}
    assert [int(line.split(" ||| ")[0]) for line in text] == \
        [positions[segment] for segment in nbest["segment_id"]]  # Moses: 0-based input lines
    names = json.loads(read_metadata(
        results / "decode/untuned-translation/test.nbest.parquet")["feature_names"])
    assert text[0].split(" ||| ")[2].split()[0::2] == [f"{name}=" for name in names]

    untuned = read_weights(results / "weights/untuned-paraphrase.txt")
    for tuned in ("paraphraser-bias0", "1H.rep0", "1H+2P.rep0"):
        weights = read_weights(results / f"weights/{tuned}.txt")
        assert weights["oov"] == untuned["oov"] and weights["target"] == 0.0  # kept fixed

    evaluation = read_table(results / "evaluation/results.parquet", EVALUATION)
    assert sorted(evaluation["condition"]) == sorted(["1H", "2H", "1H+1P", "1H+2P", "1H+1T",
                                                      "untuned"])
    assert evaluation["chrf_signature"].str.contains("|case:lc|", regex=False).all()
    assert evaluation["detok_bleu_signature"].str.contains("|tok:13a|", regex=False).all()
    targeted = evaluation[evaluation["condition"] == "1H+1T"].iloc[0]
    assert targeted["reference_type"] == "targeted" and targeted["references_used"] == 2
    # 1H+1T starts from the 1H-tuned weights and pools hypotheses with their own references
    start = read_table(results / "tune/1H+1T.rep0.parquet", TUNING_LOG)["weights"].iloc[0]
    assert list(start) == list(read_weights(results / "weights/1H.rep0.txt").values())
    assert not list(results.glob("tune/*.checkpoint"))  # removed once a run's outputs exist
    cache = list((results / "targeted/cache").glob("*-1H+1T.rep0-*.parquet"))
    assert cache and sum(len(read_table(part, TARGETED_CACHE)) for part in cache) > 0
    assert evaluation["bleu_signature"].str.contains("nrefs:2").all()
    for metric in ("bleu", "ter"):  # the tiny config lowercases, and the signatures say so
        assert evaluation[f"{metric}_signature"].str.contains("|case:lc|", regex=False).all()
    paraphrases = read_table(results / "paraphrase/untargeted-bias0/tune.nbest.parquet", NBEST)
    assert paraphrases["rank"].max() == 1  # k = 2 for 1H+2P
    fig4_3 = (results / "report/fig4_3.md").read_text()
    assert "| 2 (1H+1) |" in fig4_3 and "| untuned |" in fig4_3 and "Human chrF" in fig4_3
    assert "(thesis)" not in fig4_3  # own data (corpus.kind: files): no thesis numbers
    assert "- chrF: `nrefs:2|case:lc" in fig4_3
    assert (results / "sets/test.ref2.detok.txt").read_text().count("\n") == len(
        read_table(results / "sets/test.parquet", EVALSET))
    assert "Targeted" not in fig4_3  # Fig. 4.3 is human and untargeted only
    fig5_10 = pd.read_csv(results / "report/fig5_10.csv")
    assert fig5_10["label"].iloc[0] == "untuned"
    assert fig5_10["targeted_bleu_mean"].iloc[2] == pytest.approx(targeted["bleu"])
    assert not [c for c in fig5_10.columns if c.endswith("_thesis")]  # own data
    samples = (results / "report/targeted_samples.md").read_text()
    assert samples.count("\n- H: ") == 10 and samples.count("\n- P: ") == 10
    for figure in ("fig4_3", "fig5_10"):
        assert (results / f"report/{figure}.png").read_bytes()[:4] == b"\x89PNG"
    quality = read_table(results / "evaluation/reference_quality.parquet", REFERENCE_QUALITY)
    # two references per segment: the second is the held-out one, and no human candidate is
    # left to score against anything but itself
    assert quality["candidate"].tolist() == ["R", "P1", "P2", "T1", "MT untuned", "MT 1H"]
    assert (quality["heldout_references"] == 1).all()
    assert (quality["segments"] == len(tune)).all()
    assert (quality["lm_decoding"] < 0).all() and (quality["lm_reranking"] < 0).all()

    check_summary(results)
    check_curves(tmp_path, config)
    check_paper_tables(tmp_path, config)
    check_grid_search(results)
    tables = {name: pd.read_parquet(results / "grid" / name)
              for name in ("points.parquet", "chosen.parquet", "grid/bias0.5.nbest.parquet")}
    rerun = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(tmp_path),
                      "grid_search", "--forcerun", "grid_sample")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    for name, table in tables.items():  # the grid search is deterministic
        pd.testing.assert_frame_equal(pd.read_parquet(results / "grid" / name), table)

    again = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(tmp_path))
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    # another replicate plans its own runs and the tables over all runs, nothing else
    (tmp_path / "more").mkdir()
    more = tiny_config(tmp_path / "more", **{"tuning.replicates": 2})
    planned = snakemake("-n", "--configfile", str(more), "--directory", str(tmp_path))
    assert planned.returncode == 0, planned.stdout + planned.stderr
    jobs = re.findall(r"^(?:local)?rule (\w+):$", planned.stdout, flags=re.M)
    assert jobs.count("tune_translation") == 5, jobs
    assert set(re.findall(r"replicate=(\d+)", planned.stdout)) == {"1"}
    assert "tune_paraphraser" not in jobs and "grid_row" not in jobs
    # ... and the second replicate of 1H tunes from its own first pool: the same start decoded,
    # another point optimised from
    second = snakemake("--cores", "2", "--configfile", str(more), "--directory", str(tmp_path),
                       "results/tiny/tune/1H.rep1.parquet")
    assert second.returncode == 0, second.stdout + second.stderr
    logs = [read_table(results / f"tune/1H.rep{r}.parquet", TUNING_LOG) for r in (0, 1)]
    assert list(logs[0]["weights"].iloc[0]) == list(logs[1]["weights"].iloc[0])
    assert logs[0]["decode_score"].iloc[0] == logs[1]["decode_score"].iloc[0]
    assert list(logs[0]["weights"].iloc[1]) != list(logs[1]["weights"].iloc[1])
    assert "Shell command" not in result.stdout + result.stderr
    # the run's decoding work (counted before the later commands above added runs), then where
    # to read it
    counts = re.fullmatch(r"Decoding: ([\d,]+) sentence decodes, ([\d,]+) in (\d+) tuning runs "
                          r"and ([\d,]+) in (\d+) decoded sets\.", result.stdout.splitlines()[-2])
    total, tuning, runs, sets, decoded = (int(n.replace(",", "")) for n in counts.groups())
    assert total == tuning + sets and tuning > 0 and sets > 0 and decoded > 0
    assert runs < DecodingWork.of(results).tuning_runs  # 1H.rep1 came later
    assert result.stdout.splitlines()[-1].startswith(
        "Summary: results/tiny/report/index.html (one page, open it in a browser). "
        "Tables: results/tiny/report/fig4_3.md, results/tiny/report/fig5_10.md, "
        "results/tiny/report/grid_search.md, results/tiny/report/paraphraser-bias0.md, "
        "results/tiny/report/reference_quality.md, results/tiny/report/single_reference.md, "
        "results/tiny/report/targeted_samples.md; "
        "their HTML, CSV and plots are beside them")
    check_report(tmp_path, config)
    check_fanned_out_tuning(tmp_path, results)


def check_summary(results: Path) -> None:
    """The summary page of the default target: the findings of its tables, every page of the
    default target in reading order, the plots inlined in the HTML; ``circle results-docs``
    writes it as documentation with the plots beside it."""
    summary = (results / "report/index.md").read_text()
    assert "- **Quality of the extra tuning references**: against the held-out human " \
        "references, R scores " in summary
    titles = [line[3:] for line in summary.splitlines() if line.startswith("## ")]
    pages = ["fig4_3", "fig5_10", "reference_quality", "single_reference", "grid_search",
             "targeted_samples", "paraphraser-bias0"]
    assert titles == ["Findings", "Contents", *(
        (results / f"report/{page}.md").read_text().splitlines()[0][2:] for page in pages)]
    html = (results / "report/index.html").read_text()
    assert html.count('src="data:image/png;base64,') == 5  # Fig. 4.3, curves, 5.10, 5.3, 5.8
    docs = results.parent.parent / "docs" / "tiny"
    written = subprocess.run(
        [sys.executable, "-m", "circle.cli", "results-docs", "--results", str(results),
         str(docs)], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    assert (docs / "index.md").read_text().startswith(summary.split("(sha256")[0])
    assert sorted(path.name for path in docs.glob("*.png")) == [
        "fig4_3.png", "fig5_10.png", "fig5_3.png", "fig5_8.png", "tuning_curves.png"]


def check_fanned_out_tuning(directory: Path, results: Path) -> None:
    """With tuning.fan_out the runs' iterations are jobs (shards, then an optimisation job):
    the weights and tuning logs are those of the in-process runs, and a run stopped in an
    iteration resumes at that iteration."""
    runs = ["1H.rep0", "1H+1T.rep0"]  # 1H+1T starts from 1H's weights: both fan out here
    targets = [f"results/tiny/weights/{run}.txt" for run in runs]
    before = {run: ((results / f"weights/{run}.txt").read_text(),
                    read_table(results / f"tune/{run}.parquet", TUNING_LOG)) for run in runs}

    def run_and_compare(*options: str) -> list[str]:
        built = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                          str(directory), *options, "--", *targets)
        assert built.returncode == 0, built.stdout + built.stderr
        for run, (weights, log) in before.items():
            assert (results / f"weights/{run}.txt").read_text() == weights
            # the log, decoded sentences included: the first iteration's shards read the decode
            # stage's lists at the start weights (untuned for 1H, 1H's for 1H+1T) as the one
            # job does
            pd.testing.assert_frame_equal(read_table(results / f"tune/{run}.parquet", TUNING_LOG),
                                          log)
        return re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", built.stdout + built.stderr,
                          flags=re.M)

    (directory / "fan-out").mkdir()
    config = tiny_config(directory / "fan-out", **{"tuning.fan_out": 2})
    # finished runs are kept when fan_out is switched on (their iterations are not inputs
    # until they exist): redo them fanned out
    jobs = run_and_compare("--forcerun", "tune_translation")
    iterations = sorted((results / "tune/1H+1T.rep0.iterations").iterdir())
    assert [path.name for path in iterations] == \
        [f"iteration-{i:04d}.parquet" for i in range(1, len(before["1H+1T.rep0"][1]) + 1)]
    assert jobs.count("tune_shard") == 2 * jobs.count("tune_iteration") >= 2 * 2 * 2, jobs
    # the two runs, the grid search between them (it decodes with 1H's weights) and the decode
    # of the tune set at 1H's new weights, which 1H+1T's first shards read; no other
    assert jobs.count("tune_translation") == len(runs)
    assert jobs.count("gather_nbest") == 1, jobs
    assert set(jobs) - {"tune_iteration", "tune_shard", "tune_translation"} <= \
        {"grid_sample", "targeting_sweep", "grid_weights", "grid_row", "search_grid",
         "decode_shard", "gather_nbest"}, jobs
    # killed in its last iteration: only that iteration's jobs and the run's end run again
    iterations[-1].unlink()
    (results / "weights/1H+1T.rep0.txt").unlink()
    assert sorted(run_and_compare()) == ["tune_iteration", "tune_shard", "tune_shard",
                                         "tune_translation"]


def check_report(directory: Path, config: Path) -> None:
    """``snakemake --report`` holds every report page as HTML and every plot, with captions."""
    built = snakemake("--configfile", str(config), "--directory", str(directory),
                      "--report", "report.zip", "all", "fig5_4", "paper_tables")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "(ERROR/" not in built.stdout + built.stderr  # every caption is valid reST
    with zipfile.ZipFile(directory / "report.zip") as archive:
        names = {Path(name).name: name for name in archive.namelist()}
        assert set(names) == {"report.html", "fig4_3.html", "grid_search.html",
                              "paraphraser-bias0.html", "fig4_3.png", "tuning_curves.png",
                              "fig5_3.png", "fig5_8.png", "fig5_10.html", "fig5_10.png",
                              "targeted_samples.html", "fig5_4.html", "fig5_4.png",
                              "fig4_8.html", "fig4_8.png", "fig4_10.html", "fig4_10.png",
                              "fig4_12.html", "fig4_12.png",
                              "fig5_14.html", "fig5_14.png", "fig6_2.html", "fig6_2.png",
                              "paper_tables.html", "single_reference.html",
                              "reference_quality.html", "index.html"}
        report = archive.read(names["report.html"]).decode()
        table = archive.read(names["fig4_3.html"]).decode()
    assert table == (directory / "results/tiny/report/fig4_3.html").read_text()
    assert "<td style=\"text-align:left\">2 (1H+1)</td>" in table
    for category in ("Summary", "Reference sparsity", "Paraphraser", "Targeted paraphraser",
                     "Thesis figures", "Reference quality"):
        assert category in report
    for rst in sorted((ROOT / "workflow/report").glob("*.rst")):
        if rst.stem.startswith(("dose_response", "lattice", "oov_", "samt")):
            continue  # their own targets (test_tiny_dose_response_end_to_end, test_tiny_lattice…,
            # tests/workflow/test_oov_translation.py and test_oov_masking_target.py,
            # test_tiny_samt_grammars_end_to_end)
        first_words = " ".join(rst.read_text().split()[:4])
        assert first_words in report, rst.name  # every caption is in the report
    assert "Fig. 5.8): D = |" in report  # the pipes of |Δd_mt − Δd_ref| survive reST


def check_heldout_system(results: Path) -> None:
    """Fig. 4.11/4.12: the held-out system is trained without the block it adds to the tune
    set, and tunes 1H and 1H+1P on T0-T3 against the baseline of the same tuning set."""
    heldout = results / "heldout"
    held = json.loads(read_metadata(heldout / "tokenized/train.parquet")["held_out_segments"])
    trained = read_table(heldout / "tokenized/train.parquet", BITEXT)
    assert len(held) == 52 and not set(held) & set(trained["segment_id"])
    tune = read_table(heldout / "sets/tune.parquet", EVALSET)
    assert len(tune) == 82 and set(map(len, tune["references"])) == {1}
    summary = read_table(heldout / "evaluation/conditions.parquet", CONDITION_SUMMARY)
    assert dict(zip(summary["condition"], summary["baseline_condition"].fillna("itself"),
                    strict=True)) == {
        "1H_t0": "itself", **{f"1H_t{n}": "1H_t0" for n in range(1, 4)},
        **{f"1H+1P_t{n}": f"1H_t{n}" for n in range(4)}}
    logs = {n: read_table(heldout / f"tune/1H_t{n}.rep0.parquet", TUNING_LOG) for n in (0, 3)}
    # iteration 1's new hypotheses: at most k = 10 from each of its two decodes (the start and
    # the replicate's perturbation, tuning.replicate_pool) for each of T0's 30 segments, more
    # for T3's 82
    assert logs[0]["new_hypotheses"].iloc[0] <= 2 * 10 * 30 < logs[3]["new_hypotheses"].iloc[0]
    paraphrased = read_table(heldout / "paraphrase/untargeted-bias0/tune.nbest.parquet", NBEST)
    assert set(paraphrased["segment_id"]) == set(tune["segment_id"])
    fig4_12 = pd.read_csv(results / "report/fig4_12.csv")
    assert fig4_12["tuning_set"].tolist() == ["Base", "T1", "T2", "T3"]
    assert fig4_12["segments"].tolist() == [30, 50, 66, 82]
    assert not [c for c in fig4_12.columns if c.endswith("_thesis")]  # own data


def check_paper_tables(directory: Path, config: Path) -> None:
    """``paper_tables`` (tiny config: two reference sets, biases 0 and 0.5) tunes the runs only
    the other figures need, evaluates each against its own baseline, and writes every figure's
    page and the page over them."""
    built = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(directory),
                      "paper_tables")
    assert built.returncode == 0, built.stdout + built.stderr
    results = directory / "results/tiny"
    summary = read_table(results / "evaluation/paper/conditions.parquet", CONDITION_SUMMARY)
    baselines = dict(zip(summary["condition"], summary["baseline_condition"].fillna("itself"),
                         strict=True))
    assert baselines == {"1H": "itself", "1H+1P": "1H", "1H_terbleu": "itself",
                         "1H+1P_terbleu": "1H_terbleu", "1H_ref1": "itself",
                         "1H+1P_ref1": "1H_ref1", "1H_ref2": "itself", "1H+1P_ref2": "1H_ref2",
                         "1H+2P": "1H", "1H+1P_b0.5": "1H", "1H+2P_b0.5": "1H", "1H+1T": "1H"}
    evaluation = read_table(results / "evaluation/paper/results.parquet", EVALUATION)
    tuned = dict(zip(evaluation["condition"], evaluation["tune_metric"], strict=True))
    assert tuned["1H_terbleu"] == "terbleu" and tuned["1H"] == "bleu"
    assert np.allclose(evaluation["bleu_precision"] * evaluation["brevity_penalty"],
                       evaluation["bleu"])
    # 1H_ref2 tunes against the second reference file for every segment
    tune = read_table(results / "sets/tune.parquet", EVALSET)
    paraphrased = read_table(results / "paraphrase/untargeted-bias0/tune.ref2.nbest.parquet", NBEST)
    assert read_metadata(results / "paraphrase/untargeted-bias0/tune.ref2.nbest.parquet")[
        "input"] == "reference set 2"
    assert set(paraphrased["segment_id"]) == set(tune["segment_id"])
    fig4_10 = pd.read_csv(results / "report/fig4_10.csv")
    assert fig4_10["reference_name"].tolist() == ["tune.ref0.txt", "tune.ref1.txt"]
    assert not [c for c in fig4_10.columns if c.endswith("_thesis")]  # own data
    fig5_14 = pd.read_csv(results / "report/fig5_14.csv")
    assert "paraphrase_b0.5_bleu_mean" in fig5_14.columns
    assert "targeted_bleu_thesis" not in fig5_14.columns  # own data
    page = (results / "report/paper_tables.md").read_text()
    for figure in ("4.3", "4.8/4.9", "4.10", "4.11/4.12", "5.3–5.8", "5.4", "5.10", "5.14"):
        assert f"| {figure} |" in page
    assert "| 6.2 |" in page and "Fig. 6.2" not in page.split("Not regenerated")[1]
    fig6_2 = pd.read_csv(results / "report/fig6_2.csv").set_index("reference_type")
    assert list(fig6_2.index) == ["human", "paraphrase", "targeted"]
    assert np.allclose(fig6_2["post_tune_second_mean"] - fig6_2["pre_tune_second_mean"],
                       fig6_2["gain_second_mean"])
    assert fig6_2.loc["targeted", "pre_tune_second_thesis"] == 21.7
    check_heldout_system(results)
    check_stage_cost(directory)
    for key in ("fig4_8", "fig4_10", "fig4_12", "fig5_14", "fig6_2"):
        assert "Reading: " in (results / f"report/{key}.md").read_text()
        assert (results / f"report/{key}.png").read_bytes()[:4] == b"\x89PNG"


def check_stage_cost(directory: Path) -> None:
    """bench/stage_cost.py sums the run's job benchmarks per stage: the config's tuning
    runs and the figures' apart, targeted apart, the held-out system's in a table of its own."""
    printed = subprocess.run([sys.executable, str(ROOT / "bench/stage_cost.py"),
                              str(directory), "--experiment", "tiny"],
                             capture_output=True, text=True, check=True).stdout
    main, heldout = printed.split("Its held-out system")
    jobs = {name: int(count) for name, count in re.findall(
        r"^\| (tune_translation \(.*?\)) \| (\d+) \|", main, re.MULTILINE)}
    # conditions 1H, 2H, 1H+1P, 1H+2P and 1H+1T; the figures' runs: the _terbleu and _ref<n>
    # pairs, the two _b0.5 runs of Fig. 5.14 and Fig. 5.4's targeted run
    assert jobs == {"tune_translation (conditions, untargeted)": 4,
                    "tune_translation (conditions, targeted)": 1,
                    "tune_translation (figure runs, untargeted)": 8,
                    "tune_translation (figure runs, targeted)": 1}
    assert "| tune_translation (figure runs, untargeted) | 8 |" in heldout  # 1H, 1H+1P on T0-T3
    assert "| extract_grammar | 1 |" in heldout


def check_curves(directory: Path, config: Path) -> None:
    """Fig. 5.4 (tiny config: 1H+1T with the unbiased paraphraser at weight -1): the run starts
    from 1H, and every iteration's weights decode the test set."""
    built = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(directory),
                      "fig5_4")
    assert built.returncode == 0, built.stdout + built.stderr
    results = directory / "results/tiny"
    run = "1H+1T_b0_w-1.rep0"
    log = read_table(results / f"tune/{run}.parquet", TUNING_LOG)
    assert list(log["weights"].iloc[0]) == \
        list(read_weights(results / "weights/1H.rep0.txt").values())
    scores = read_table(results / f"iterations/{run}.parquet", ITERATION_SCORES)
    assert scores["iteration"].tolist() == log["iteration"].tolist()
    assert np.allclose(scores["tune_score"], 100 * log["decode_score"])
    evaluation = read_table(results / "evaluation/results.parquet", EVALUATION)
    one_h = evaluation[evaluation["condition"] == "1H"].iloc[0]
    assert scores["test_bleu"].iloc[0] == pytest.approx(one_h["bleu"])  # iteration 1 = 1H's
    page = (results / "report/fig5_4.md").read_text()
    assert "bias 0, weight -1 tune BLEU" in page
    assert (results / "report/fig5_4.png").read_bytes()[:4] == b"\x89PNG"


def check_grid_search(results: Path) -> None:
    """The tiny grid search (config: sweep at bias 0.5 over 0, -0.3, -1, -3; 3 grid weights;
    biases 0 and 0.5): every point present, the choice follows the rule, the report written."""
    sample = read_table(results / "grid/sample.parquet", GRID_SAMPLE)
    assert len(sample) == 20 and (sample["mt_output"].str.len() > 0).all()
    points = read_table(results / "grid/points.parquet", GRID_POINTS)
    sweep, grid = points[points["stage"] == "sweep"], points[points["stage"] == "grid"]
    assert sorted(sweep["targeting_weight"]) == [-3.0, -1.0, -0.3, 0.0]
    weights = read_table(results / "grid/weights.parquet", TARGETING_WEIGHTS)
    assert len(weights) == 3 and (weights["targeting_weight"] < 0).all()
    assert len(grid) == 2 * 3 and set(grid["bias"]) == {0.0, 0.5}
    assert set(grid["targeting_weight"]) == set(weights["targeting_weight"])
    nbest = read_table(results / "grid/grid/bias0.5.nbest.parquet", TARGETED_NBEST)
    assert nbest.groupby(["targeting_weight", "segment_id"])["rank"].max().max() == 4  # k = 5
    choice = read_table(results / "grid/chosen.parquet", GRID_CHOICE).iloc[0]
    eligible = grid[grid["eligible"]]
    assert (eligible["delta_ref"] >= 1).all() and (eligible["delta_mt"] >= 1).all()
    assert choice["balance"] == eligible["balance"].min()
    assert choice["argmin_balance"] == grid["balance"].min()
    report = (results / "report/grid_search.md").read_text()
    assert "## Fig. 5.8" in report and "**Chosen**" in report
    for figure in ("fig5_3.png", "fig5_8.png"):
        assert (results / "report" / figure).read_bytes()[:4] == b"\x89PNG"


def test_the_files_the_circle_command_reads_are_rebuilt_when_deleted(tiny_default_run, tmp_path):
    """Snakemake rebuilds a missing file only when it is a target or a job that reads it reruns:
    the default target names the weights and the test set the command reads, so a plain rerun
    rebuilds them (`circle paraphrase` would otherwise find no tuned weights, `circle translate`
    take another replicate's)."""
    run = tiny_default_run.copy_to(tmp_path)
    deleted = {"results/tiny/weights/paraphraser-bias0.txt": "tune_paraphraser",
               "results/tiny/weights/untuned-paraphrase.txt": "write_initial_weights",
               "results/tiny/weights/1H.rep0.txt": "tune_translation",
               "results/tiny/sets/test.parquet": "select_evalset"}
    for path in deleted:
        (run / path).unlink()
    result = snakemake("-n", "--configfile", str(run / "config.yaml"), "--directory", str(run))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for path, rule in deleted.items():
        assert re.search(rf"^rule {rule}:\n(    .*\n)*?    reason: Missing output files: "
                         rf"{re.escape(path)}", output, re.MULTILINE), output


MT_RULES = {"prepare_corpus", "tokenize_corpus", "select_evalset", "reference_texts",
            "split_for_counting", "count_rules", "extract_grammar", "filter_grammar",
            "prepare_lm_text", "estimate_lm"}
"""The rules that build the MT system: none runs in an experiment that shares one."""


def test_an_experiment_sharing_the_tiny_mt_system_tunes_only_its_own_runs(tiny_default_run,
                                                                          tmp_path):
    """`tiny-shared` (conditions 1H and 1H+1P, mt_system: tiny) after the tiny run: the shared
    files are byte-for-byte copies and the tiny run's files keep their times; no job builds the
    MT system, tunes 1H or decodes with its weights; its 1H+1P runs, tuned from the shared
    system with the same seeds and paraphraser, return the tiny run's weights, and its 1H
    scores are the tiny run's. A changed MT setting is refused before any job, naming it."""
    tiny_default_run.copy_to(tmp_path)
    owner = tmp_path / "results" / "tiny"
    config = tiny_config(tmp_path, experiment="tiny-shared", mt_system="tiny",
                         **{"tuning.conditions": ["1H", "1H+1P"]})
    (tmp_path / "changed").mkdir()
    changed = tiny_config(tmp_path / "changed", experiment="tiny-shared", mt_system="tiny",
                          **{"tuning.conditions": ["1H", "1H+1P"], "tuning.restarts": 3})
    refused = snakemake("-n", "--configfile", str(changed), "--directory", str(tmp_path),
                        "results/tiny-shared/evaluation/conditions.parquet")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Building DAG" not in said
    assert "config mt_system: tiny was built with other MT settings than this config's " \
           "(results/tiny/config.yaml): tuning.restarts: 2 -> 3" in said

    settings = with_schema_defaults(yaml.safe_load(config.read_text()))
    files, replicates = shared_mt_files(settings), settings["tuning"]["replicates"]
    # a shared file missing (a 1H run not yet tuned): the plan still copies, it builds nothing
    # of the MT system itself, and the copy refuses naming the file
    untuned = owner / f"weights/1H.rep{replicates - 1}.txt"
    untuned.rename(untuned.with_suffix(".later"))
    planned = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                        "results/tiny-shared/evaluation/conditions.parquet")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    rules = set(re.findall(r"^(?:local)?rule (\w+):$", planned.stdout, flags=re.M))
    assert "share_mt_system" in rules and not rules & MT_RULES
    assert "condition=1H, " not in planned.stdout
    copied = snakemake("--cores", "1", "--configfile", str(config), "--directory",
                       str(tmp_path), "--until", "share_mt_system",
                       "results/tiny-shared/evaluation/conditions.parquet")
    assert copied.returncode != 0
    log = (tmp_path / "logs/tiny-shared/share_mt_system.log").read_text()
    assert "config mt_system: tiny: 1 of the files this experiment shares are missing " \
           f"(results/tiny/weights/1H.rep{replicates - 1}.txt)" in log
    untuned.with_suffix(".later").rename(untuned)
    times = {name: (owner / name).stat().st_mtime_ns for name in files}
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "results/tiny-shared/evaluation/conditions.parquet")
    assert result.returncode == 0, result.stdout + result.stderr
    log = result.stdout + result.stderr
    ran = set(re.findall(r"^(?:local)?rule (\w+):$", log, flags=re.M))
    assert "share_mt_system" in ran and not ran & MT_RULES
    tuned = set(re.findall(r"wildcards: experiment=tiny-shared, condition=([^,]+), "
                           r"replicate=(\d+)$", log, flags=re.M))
    assert tuned == {("1H+1P", str(replicate)) for replicate in range(replicates)}
    decoded = set(re.findall(r"wildcards: experiment=tiny-shared, weights=([^,]+),", log))
    assert decoded == {f"1H+1P.rep{replicate}" for replicate in range(replicates)}

    shared = tmp_path / "results" / "tiny-shared"
    for name in files:
        assert (shared / name).read_bytes() == (owner / name).read_bytes(), name
        assert (owner / name).stat().st_mtime_ns == times[name], name
    for replicate in range(replicates):
        weights = f"weights/1H+1P.rep{replicate}.txt"
        assert (shared / weights).read_text() == (owner / weights).read_text()
    ours = read_table(shared / "evaluation/results.parquet", EVALUATION)
    theirs = read_table(owner / "evaluation/results.parquet", EVALUATION)
    columns = ["condition", "replicate", "bleu", "ter", "chrf", "length_ratio"]

    def runs(table):
        kept = table[table["condition"].isin(["untuned", "1H", "1H+1P"])]
        return kept[columns].sort_values(columns[:2]).reset_index(drop=True)

    assert runs(ours).equals(runs(theirs)) and len(runs(ours)) == 1 + 2 * replicates
    again = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                      "results/tiny-shared/evaluation/conditions.parquet")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


"""The ladder of paraphrasers: finished experiments that share the MT system and differ in
their paraphraser, read from their results directories and put side by side on one page.

A rung is one experiment's results directory (``results/<experiment>``) after its
``reference_quality`` and ``reference_sparsity`` targets (and, where it ran them, the targeted
conditions and the grid search). :func:`ladder_row` gives its row of the ladder table: what it
pivots through (Bannard & Callison-Burch 2005 for several languages; thesis eq. 3.4–3.13 per
pivot bitext), its paraphraser's LMs, tuning bias and φ_ident weight, its grammars' sizes, what
its pivot cost, the quality of the 1-best untargeted paraphrase of the tune set's single
reference against the verse's held-out human references (beside the MT system's own output:
the ladder's first check), how much of R it keeps, the diversity of its k-best, the grid search's
choice, and the test gain of 1H+1P, 1H+3P, 1H+1T and 1H+3T over 1H with the experiment's own
significance test (``*`` significantly better, ``†`` significantly worse).

The page itself is :mod:`circle.figures.ladder`'s. :func:`ladder_figure_table` puts the rungs'
Fig. 4.3 (or Fig. 5.10) series in one reference table
(:func:`circle.figures.reference_table.reference_table`'s columns), one series per rung, after
checking that the rungs share the untuned system and the 1H runs: a ladder whose rungs tuned
different MT systems would compare paraphrasers through different baselines.

:func:`adequacy_gains` gives what :func:`circle.figures.ladder.adequacy_reading` reads to ask
whether a paraphraser's tuning gain follows its 1-best's adequacy: over the rungs, P1's adequacy
BLEU and 1H+1P − 1H, raw and at a common length.

:func:`write_ladder_page` (``circle ladder``; ``make ladder`` runs the rungs first) writes into
one directory ``ladder.md`` and ``ladder.html`` (the page), ``ladder.csv`` (the ladder table),
``fig4_3.csv`` and ``fig5_10.csv`` (the reference tables, one series per rung) and their plots,
test BLEU and BLEU at a common length against the number of tuning references.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml

from circle.core import schemas
from circle.core.layout import GRID_CHOICE, LABELLED_BILINGUAL_GRAMMAR, Results
from circle.core.schemas import CONDITION_SUMMARY
from circle.core.tables import read_table
from circle.decoder.model import read_weights
from circle.experiments.evaluate import MATCHED_BLEU
from circle.figures.ladder import write_ladder_files
from circle.figures.reference_table import Significance
from circle.paraphrase.config import bias_name
from circle.pipeline.config import with_schema_defaults
from circle.pipeline.plan import Plan

PIVOT_RULES = ("tokenize_corpus", "pivot_bitext", "align_corpus", "pivot_language",
               "split_for_counting", "count_rules", "extract_grammar")
"""The rules of the pivot bitexts' and pivot languages' own systems."""

PARAPHRASER_RULES = ("prepare_pivot", "pivot_part", "bias_grammar", "estimate_paraphraser_lm")
"""The experiment's own rules that only the paraphraser needs (the MT system extracts its
grammar whether or not anything is pivoted)."""

LABELLED_PARAPHRASER_RULES = ("parse_training", "extract_labelled_grammar",
                              "pivot_labelled_grammar", "collapse_labelled_grammar",
                              "bias_grammar")
"""Those rules of a labelled paraphraser (samt.paraphraser)."""

FIGURE_SERIES = {"fig4_3": "paraphrase", "fig5_10": "targeted"}
"""The series of each reference figure that the ladder compares across rungs (the human series
is the MT system's, shared by every rung)."""


def pivot_cost(root: Path, experiment: str, labelled: bool) -> tuple[float, float]:
    """Summed wall seconds and largest peak RSS (MB) of the paraphrase grammar's jobs, from
    Snakemake's benchmark files (upper bounds where jobs shared the cores)."""
    benchmarks = root / "benchmarks" / experiment
    rules = LABELLED_PARAPHRASER_RULES if labelled else PARAPHRASER_RULES
    files = [path for name in rules for path in
             [*benchmarks.glob(f"{name}.tsv"), *benchmarks.glob(f"{name}/*.tsv")]]
    for systems in ("pivots", "pivot"):  # the pivot bitexts', the pivot languages'
        files += [path for path in (benchmarks / systems).glob("*/**/*.tsv")
                  if path.parent.name in PIVOT_RULES or path.stem in PIVOT_RULES]
    if not files:
        raise FileNotFoundError(f"no benchmark files of the paraphraser's jobs in {benchmarks}")
    runs = pd.concat([pd.read_csv(path, sep="\t") for path in files])
    return float(runs["s"].sum()), float(runs["max_rss"].max())


def rung_config(results: Path) -> dict:
    """A rung's effective config (``results/<experiment>/config.yaml``), completed by the
    schema's defaults for the keys added since the run."""
    config = yaml.safe_load(Results.at(results).config.read_text(encoding="utf-8"))
    # runs of 20fa1e7 name the foreign Bibles' table where 913e875 moved it from
    config["corpus"].get("bible", {}).pop("foreign_bibles", None)
    return with_schema_defaults(config)


def condition_summary(results: Path) -> pd.DataFrame:
    """A rung's per-condition test summary (:data:`CONDITION_SUMMARY`), as evaluate_runs wrote
    it for the config's conditions."""
    return read_table(Results.at(results).evaluation_conditions(), CONDITION_SUMMARY)


def reference_quality(results: Path) -> pd.DataFrame:
    """A rung's reference-quality table (``report/reference_quality.csv``): one row per
    candidate, P1 the 1-best untargeted paraphrase of R."""
    return pd.read_csv(Results.at(results).report("reference_quality.csv"))


def ladder_row(results: Path, summary: pd.DataFrame) -> dict[str, str]:
    """One rung's row of the ladder table, from its results directory and its
    :func:`condition_summary` (see the module)."""
    layout = Results.at(results)
    experiment, root = layout.experiment, results.parent.parent
    config = rung_config(results)
    plan = Plan(config)
    pivots = config["paraphrase"].get("pivots") or []
    labelled = config["samt"]["paraphraser"]
    grammars = ([LABELLED_BILINGUAL_GRAMMAR.format(experiment=experiment)] if labelled
                else plan.pivot_grammars())
    bilingual = sum(pq.ParquetFile(root / path).metadata.num_rows for path in grammars)
    bias = bias_name(float(config["tuning"]["paraphraser_bias"]))
    paraphrase = pq.ParquetFile(layout.paraphrase_grammar(bias)).metadata.num_rows
    seconds, rss = pivot_cost(root, experiment, labelled)
    tuned = read_weights(layout.paraphraser_weights(bias))
    choice_path = layout.path(GRID_CHOICE)
    if choice_path.exists():
        choice = read_table(choice_path, schemas.GRID_CHOICE).iloc[0]
        grid = (f"{100 * choice['bias']:g} %, {choice['targeting_weight']:g}: "
                f"D {choice['balance']:.1f} [{choice['delta_ref']:.1f}, {choice['delta_mt']:.1f}]")
    else:
        grid = "–"
    quality = reference_quality(results)
    first = quality[quality["candidate"] == "P1"].iloc[0]
    second = quality[quality["candidate"] == "P2"]
    untuned = quality[quality["candidate"] == "MT untuned"].iloc[0]
    summary = summary.set_index("condition")

    def gain(condition: str, metric: str) -> str:
        if condition not in summary.index:
            return "–"
        found = summary.loc[condition]
        difference = found[f"{metric}_difference"]
        mark = ("*" if difference > 0 else "†") if found[f"{metric}_significant"] else ""
        return f"{difference:+.2f}{mark} (p = {found[f'{metric}_p_value']:.2g})"

    return {
        "experiment": experiment,
        "pivots": (", ".join(f"{p['source']}-{p['target']}" for p in pivots) or "training bitext")
        + ("" if not labelled else ", SAMT-labelled, " + (
            "decoded with labels" if config["samt"].get("decoding") == "labelled"
            else "collapsed to X")),
        "paraphraser LMs": config["paraphrase"].get("language_models", "shared"),
        "tuned on bias, φ_ident weight": (
            f"{100 * float(bias):g} %, " + (f"{tuned['identity']:.3f}" if "identity" in tuned
                                            else "–")),
        "bilingual rules (M)": f"{bilingual / 1e6:.1f}",
        "paraphrase rules (M)": f"{paraphrase / 1e6:.2f}",
        "pivot cost (s, peak GB)": f"{seconds:,.0f} s, {rss / 1024:.1f} GB",
        "P1 BLEU / chrF / TER": f"{first['bleu']:.1f} / {first['chrf']:.1f} / {first['ter']:.1f}",
        "MT untuned BLEU": f"{untuned['bleu']:.1f}",
        "P1 length / R": f"{first['length_ratio']:.3f}",
        "P1 BLEU vs R, ppBLEU": f"{first['input_bleu']:.1f}, {first['pp_bleu']:.1f}",
        "P1 added valid / wrong reachable %": (f"{100 * first['valid_share']:.1f} / "
                                               f"{100 * first['reachable_wrong_share']:.1f}"),
        "P2 BLEU vs P1, new 4-grams %": (
            "–" if second.empty else f"{second['first_bleu'].iloc[0]:.1f}, "
                                     f"{100 * second['new_share'].iloc[0]:.1f}"),
        "1H+1P − 1H BLEU": gain("1H+1P", "bleu"),
        "at common length": gain("1H+1P", "matched_bleu"),
        "1H+3P − 1H BLEU": gain("1H+3P", "bleu"),
        "1H+3P at common length": gain("1H+3P", "matched_bleu"),
        "grid choice: bias, weight: D [Δd_ref, Δd_mt]": grid,
        "1H+1T − 1H BLEU": gain("1H+1T", "bleu"),
        "1H+3T − 1H BLEU": gain("1H+3T", "bleu"),
    }


def ladder_table(results: list[Path], summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """The ladder table: one :func:`ladder_row` per rung, in the order given."""
    return pd.DataFrame([ladder_row(path, summary) for path, summary in zip(results, summaries,
                                                                            strict=True)])


def adequacy_gains(results: list[Path], summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """One row per rung that tuned 1H+1P: its ``experiment``, its P1's ``adequacy_bleu`` against
    the held-out human references, and 1H+1P − 1H in test BLEU, raw (``bleu``) and at a common
    length (``matched_bleu``), from its :func:`condition_summary`."""
    rows = []
    for path, summary in zip(results, summaries, strict=True):
        found = summary.set_index("condition")
        if "1H+1P" not in found.index:
            continue
        quality = reference_quality(path)
        rows.append({"experiment": path.name,
                     "adequacy_bleu": float(quality.loc[quality["candidate"] == "P1",
                                                        "bleu"].iloc[0]),
                     **{metric: float(found.loc["1H+1P", f"{metric}_difference"])
                        for metric in ("bleu", MATCHED_BLEU)}})
    return pd.DataFrame(rows, columns=["experiment", "adequacy_bleu", "bleu", MATCHED_BLEU])


def ladder_figure_table(results: list[Path], figure: str) -> pd.DataFrame | None:
    """One reference table (``references``, ``label``, the ``human`` series, then one series
    per rung named after its experiment) from the rungs' ``report/<figure>.csv``: each rung's
    :data:`FIGURE_SERIES` series, its marks those of the rung's own test against 1H. A rung
    without the figure (the ladder's rungs run Fig. 4.3's target only), or whose figure lacks
    the series, is left out; None if no rung has the figure. Raises ValueError if the rungs
    disagree on the untuned system's or 1H's scores: they must share the MT system."""
    series = FIGURE_SERIES[figure]
    files = {path.name: Results.at(path).report(f"{figure}.csv") for path in results}
    tables = {name: pd.read_csv(file) for name, file in files.items() if file.exists()}
    if not tables:
        return None
    first_name, first = next(iter(tables.items()))
    human = [c for c in first.columns if c.startswith("human_") and not c.endswith("_thesis")]
    combined = first[["references", "label", *human]].copy()
    baseline = first[first["references"] <= 1].set_index("references")["human_bleu_replicates"]
    for name, table in tables.items():
        shared = table[table["references"] <= 1].set_index("references")["human_bleu_replicates"]
        if not shared.astype(str).equals(baseline.astype(str)):
            raise ValueError(
                f"{name}'s untuned and 1H test BLEU ({'; '.join(map(str, shared))}) are not "
                f"{first_name}'s ({'; '.join(map(str, baseline))}): the ladder's rungs must "
                "share the MT system")
        if f"{series}_bleu_mean" not in table.columns \
                or table.loc[table["references"] > 1, f"{series}_bleu_n"].sum() == 0:
            continue
        if name in combined.columns or f"{name}_bleu_mean" in combined.columns or name == "human":
            raise ValueError(f"two rungs, or a rung and the human series, are named {name!r}")
        columns = {c: name + c[len(series):] for c in table.columns
                   if c.startswith(f"{series}_") and not c.endswith("_thesis")}
        if not table["references"].equals(combined["references"]):
            raise ValueError(f"{name}'s {figure} has rows {list(table['references'])}, "
                             f"{first_name}'s {list(combined['references'])}")
        combined = pd.concat([combined, table[list(columns)].rename(columns=columns)], axis=1)
    text = [c for c in combined.columns if c.endswith(("_mark", "_replicates"))]
    combined[text] = combined[text].fillna("").astype(str)  # empty cells, as the CSV wrote them
    return combined


def rungs_significance(summaries: list[pd.DataFrame]) -> Significance:
    """The one significance test of the rungs' condition summaries (refused if they differ)."""
    found = {Significance.of(summary) for summary in summaries}
    if len(found) != 1:
        raise ValueError(f"the rungs test their conditions differently: {sorted(map(str, found))}")
    return found.pop()


def write_ladder_page(results: list[Path], out: Path, made_at: str) -> Path:
    """Write the ladder's page and its tables and plots into ``out``
    (:func:`circle.figures.ladder.write_ladder_files`); returns the page."""
    if not results:
        raise ValueError("the ladder needs at least one experiment's results directory")
    summaries = [condition_summary(path) for path in results]
    table = ladder_table(results, summaries)
    significance = rungs_significance(summaries)
    figures = {figure: ladder_figure_table(results, figure) for figure in FIGURE_SERIES}
    return write_ladder_files(table, adequacy_gains(results, summaries), figures, significance,
                              [path.name for path in results], out, made_at)

"""The grid search's figures (thesis Fig. 5.3, 5.6, 5.7, 5.8) as Markdown, CSV and PNG, with the
thesis's published numbers beside ours where its text gives them.

Inputs are the tables of :mod:`circle.paraphrase.grid_search`: the points of the sweep and the grid
(:data:`~circle.core.schemas.GRID_POINTS`), the sweep's per-segment distances, the grid's weights
and its choice. All distances are TER in percent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import GRID_CHOICE, GRID_POINTS, REFERENCE_DISTANCES, TARGETED_NBEST
from circle.core.tables import atomic_path, read_table
from circle.decoder.nbest import best_hypotheses
from circle.paraphrase.grid_search import weight_range_of
from circle.tune.metrics import ter_from_stats, ter_stats

THESIS_FIG_5_6 = {"reference": (0.0, 65.0), "untargeted": (55.0, 74.0)}
"""Thesis Fig. 5.6 (NIST MT03 Chinese, n = 300): (d_ref, d_mt) of the original reference and of
the untargeted paraphrases."""

THESIS_FIG_5_8 = {"chosen": (25.0, 14.0), "argmin": (50.0, 10.0)}
"""Thesis Fig. 5.8 (NIST MT03 Chinese): the chosen point and the rejected argmin of D, as
(bias %, −targeting weight)."""


def _weight(value: float) -> str:
    return f"{value:g}"


def _bias(value: float) -> str:
    return f"{100 * value:g} %"


def _save(figure, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})


def sweep_table(points: pd.DataFrame, distances: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5.3 as a table: per row (the original reference, then each swept weight, 0 =
    untargeted) the corpus TER of the 1-best against the MT output and the distribution of
    the sentences' TER (median, quartiles), and the share of sentences closer to the MT output
    than their reference."""
    sweep = points[points["stage"] == "sweep"].sort_values("targeting_weight", ascending=False)
    reference = _per_sentence(distances[distances["targeting_weight"] == 0.0],
                              "reference_edits_mt")
    rows = [_distribution("original reference", None, float(sweep["reference_d_mt"].iloc[0]),
                          reference, reference)]
    for point in sweep.itertuples():
        segments = distances[distances["targeting_weight"] == point.targeting_weight]
        label = "untargeted" if point.targeting_weight == 0.0 else "targeted"
        rows.append(_distribution(label, point.targeting_weight, point.best_d_mt,
                                  _per_sentence(segments, "best_edits_mt"), reference))
    return pd.DataFrame(rows)


def _per_sentence(segments: pd.DataFrame, edits: str) -> np.ndarray:
    ordered = segments.sort_values("segment_id")
    return 100.0 * ter_from_stats(ordered[[edits, "mt_length"]].to_numpy())


def _distribution(paraphraser: str, weight: float | None, corpus: float, values: np.ndarray,
                  reference: np.ndarray) -> dict:
    low, median, high = np.percentile(values, [25, 50, 75])
    return {"paraphraser": paraphraser, "targeting_weight": weight, "ter_mt": corpus,
            "median": median, "q1": low, "q3": high,
            "closer_than_reference": float(np.mean(values < reference))}


def plot_sweep(table: pd.DataFrame, distances: pd.DataFrame, weakest: float, strongest: float,
               path: str | os.PathLike) -> None:
    """Fig. 5.3: per-sentence TER(1-best paraphrase, MT output) per swept weight (boxes), the
    corpus TER (dots), the reference's corpus TER (dashed) and the grid's weight range."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    reference = _per_sentence(distances[distances["targeting_weight"] == 0.0],
                              "reference_edits_mt")
    boxes, labels = [reference], ["ref."]
    for weight in table["targeting_weight"].iloc[1:]:
        segments = distances[distances["targeting_weight"] == weight]
        boxes.append(_per_sentence(segments, "best_edits_mt"))
        labels.append("untgt." if weight == 0.0 else _weight(weight))
    figure = Figure(figsize=(max(6.0, 0.55 * len(boxes) + 2), 4.2), dpi=100)
    axes = figure.add_subplot()
    positions = np.arange(1, len(boxes) + 1)
    axes.boxplot(boxes, positions=positions, widths=0.6, showfliers=False)
    axes.plot(positions, table["ter_mt"], "o", color="tab:red", label="corpus TER")
    axes.axhline(table["ter_mt"].iloc[0], linestyle="--", color="grey",
                 label="original reference")
    weights = table["targeting_weight"].to_numpy()
    inside = positions[(weights <= weakest) & (weights >= strongest)]
    if len(inside):
        axes.axvspan(inside[0] - 0.4, inside[-1] + 0.4, alpha=0.12, color="tab:green",
                     label="grid weights")
    axes.set_xticks(positions, labels, rotation=45)
    axes.set_xlabel("targeting weight")
    axes.set_ylabel("TER(1-best paraphrase, MT output) (%)")
    bias = distances["bias"].iloc[0]
    axes.set_title(f"Targeting sweep at bias {_bias(bias)} (thesis Fig. 5.3)")
    axes.grid(alpha=0.3, axis="y")
    axes.legend(fontsize="small")
    figure.tight_layout()
    _save(figure, path)


def plot_grid(grid: pd.DataFrame, choice: pd.Series, path: str | os.PathLike) -> None:
    """Fig. 5.8: D over bias × targeting weight as a heat map, each cell annotated
    [Δd_ref, Δd_mt]; the chosen point boxed, the argmin of D circled."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state
    from matplotlib.patches import Circle, Rectangle

    biases = sorted(grid["bias"].unique())
    weights = sorted(grid["targeting_weight"].unique(), reverse=True)
    values = grid.pivot(index="bias", columns="targeting_weight", values="balance")
    values = values.loc[biases, weights].to_numpy()
    figure = Figure(figsize=(1.3 * len(weights) + 2.5, 0.75 * len(biases) + 1.8), dpi=100)
    axes = figure.add_subplot()
    image = axes.imshow(values, cmap="viridis_r", aspect="auto")
    figure.colorbar(image, ax=axes, label="D = |Δd_mt − Δd_ref| (TER points)")
    for point in grid.itertuples():
        row, column = biases.index(point.bias), weights.index(point.targeting_weight)
        axes.text(column, row, f"{point.balance:.1f}\n[{point.delta_ref:.1f}, "
                  f"{point.delta_mt:.1f}]", ha="center", va="center", fontsize=7,
                  color="white" if point.balance > np.nanmean(values) else "black")
    chosen = (weights.index(choice["targeting_weight"]), biases.index(choice["bias"]))
    axes.add_patch(Rectangle((chosen[0] - 0.5, chosen[1] - 0.5), 1, 1, fill=False,
                             edgecolor="red", linewidth=2.5))
    argmin = (weights.index(choice["argmin_weight"]), biases.index(choice["argmin_bias"]))
    axes.add_patch(Circle(argmin, 0.42, fill=False, edgecolor="orange", linewidth=2,
                          linestyle="--"))
    axes.set_xticks(range(len(weights)), [_weight(w) for w in weights])
    axes.set_yticks(range(len(biases)), [_bias(b) for b in biases])
    axes.set_xlabel("targeting weight")
    axes.set_ylabel("self-paraphrase bias")
    axes.set_title("Grid search: D, [Δd_ref, Δd_mt] (thesis Fig. 5.8); red: chosen, "
                   "orange: argmin", fontsize=9)
    figure.tight_layout()
    _save(figure, path)


def compare_points(nbest: pd.DataFrame, points: dict[str, tuple[float, float]]
                   ) -> pd.DataFrame:
    """How far apart the 1-best paraphrases of named grid points are: per pair of points, the
    share of sentences with identical 1-best paraphrases and the corpus TER of the first's
    against the second's (a check of D as a proxy, beyond the thesis)."""
    outputs = {}
    for name, (bias, weight) in points.items():
        best = best_hypotheses(nbest[(nbest["bias"] == bias)
                                     & (nbest["targeting_weight"] == weight)])
        outputs[name] = [best[segment] for segment in sorted(best)]
    rows = []
    names = list(points)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a, b = outputs[first], outputs[second]
            stats = ter_stats(a, [[text] for text in b]).sum(axis=0)
            rows.append({"first": first, "second": second,
                         "identical": float(np.mean([x == y for x, y in zip(a, b, strict=True)])),
                         "ter": 100.0 * float(ter_from_stats(stats))})
    return pd.DataFrame(rows)


def _markdown(frame: pd.DataFrame) -> list[str]:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return lines


def write_grid_report(points_path: str | os.PathLike, sweep_distances_path: str | os.PathLike,
                      weights_path: str | os.PathLike, choice_path: str | os.PathLike,
                      grid_nbest_paths: Sequence[str | os.PathLike],
                      out_markdown: str | os.PathLike, out_html: str | os.PathLike,
                      out_sweep_csv: str | os.PathLike, out_grid_csv: str | os.PathLike,
                      out_sweep_plot: str | os.PathLike, out_grid_plot: str | os.PathLike) -> str:
    """One Markdown page (and its HTML) with Fig. 5.3, 5.6, 5.7 and 5.8, the choice, and how
    far apart the paraphrases of the chosen point, the argmin of D and the point of largest D
    are; CSVs of the sweep and the grid, and the two plots."""
    points = read_table(points_path, GRID_POINTS)
    distances = read_table(sweep_distances_path, REFERENCE_DISTANCES)
    choice = read_table(choice_path, GRID_CHOICE).iloc[0]
    weight_range = weight_range_of(weights_path)
    weakest, strongest = weight_range["weakest"], weight_range["strongest"]
    sweep = points[points["stage"] == "sweep"]
    grid = points[points["stage"] == "grid"]
    segments = int(sweep["segments"].iloc[0])

    fig5_3 = sweep_table(points, distances)
    plot_sweep(fig5_3, distances, weakest, strongest, out_sweep_plot)
    write_text_atomically(csv_text(fig5_3), out_sweep_csv)
    write_text_atomically(csv_text(grid), out_grid_csv)
    plot_grid(grid, choice, out_grid_plot)

    shown = fig5_3.assign(
        targeting_weight=[("" if w is None or np.isnan(w) else _weight(w))
                          for w in fig5_3["targeting_weight"]],
        closer_than_reference=[f"{100 * v:.0f} %" for v in fig5_3["closer_than_reference"]])
    shown = shown.round(2)
    untargeted = sweep[sweep["targeting_weight"] == 0.0].iloc[0]
    lines = [
        "# Configuring the targeted paraphraser (thesis §5.2.3)", "",
        f"{segments} randomly sampled tune sentences; their single reference is paraphrased "
        "towards the MT output of the 1H-tuned system. Distances are sacrebleu TER (%), "
        f"d_ref against the original reference, d_mt against the MT output; over the "
        f"paraphrase n-best lists ({int(untargeted['paraphrases'])} paraphrases in all at the "
        "untargeted point) unless marked 1-best.", "",
        f"## Fig. 5.3: targeting sweep at bias {_bias(untargeted['bias'])} (1-best paraphrases "
        "against the MT output)", "",
        *_markdown(shown), "",
        f"Grid weights by the written rule (circle.paraphrase.grid_search.WeightRange: gain ≥ "
        f"{weight_range['effective_share']:g} of the sweep's largest for the weakest, ≥ "
        f"{weight_range['saturation_share']:g} for the strongest): {_weight(weakest)} to "
        f"{_weight(strongest)}. The thesis chose −10 to −20 on its own sweep.", "",
        "## Fig. 5.6: the untargeted paraphraser in the space of references", "",
        "| point | d_ref | d_mt | d_ref (thesis) | d_mt (thesis) |", "|---|---|---|---|---|",
        f"| original reference | 0.00 | {untargeted['reference_d_mt']:.2f} | "
        f"{THESIS_FIG_5_6['reference'][0]:g} | {THESIS_FIG_5_6['reference'][1]:g} |",
        f"| untargeted paraphrases (n-best) | {untargeted['d_ref']:.2f} | "
        f"{untargeted['d_mt']:.2f} | {THESIS_FIG_5_6['untargeted'][0]:g} | "
        f"{THESIS_FIG_5_6['untargeted'][1]:g} |",
        f"| untargeted paraphrase (1-best) | {untargeted['best_d_ref']:.2f} | "
        f"{untargeted['best_d_mt']:.2f} | | |", "",
        f"## Fig. 5.7: each bias at the weakest grid weight ({_weight(weakest)})", "",
        "| bias | d_ref (change) | d_mt (change) |", "|---|---|---|"]
    at_weakest = grid[grid["targeting_weight"] == grid["targeting_weight"].max()]
    lines += [f"| {_bias(p.bias)} | {p.d_ref:.2f} (+{p.delta_ref:.2f}) | {p.d_mt:.2f} "
              f"({-p.delta_mt:+.2f}) |" for p in at_weakest.itertuples()]
    biases = sorted(grid["bias"].unique())
    weights = sorted(grid["targeting_weight"].unique(), reverse=True)
    cells = {(p.bias, p.targeting_weight): p for p in grid.itertuples()}
    lines += ["", "## Fig. 5.8: D = |Δd_mt − Δd_ref| [Δd_ref, Δd_mt] over bias × weight", "",
              "| bias \\ weight | " + " | ".join(_weight(w) for w in weights) + " |",
              "|---|" + "---|" * len(weights)]
    for bias in biases:
        row = []
        for weight in weights:
            p = cells[bias, weight]
            mark = "**" if (bias, weight) == (choice["bias"], choice["targeting_weight"]) else ""
            row.append(f"{mark}{p.balance:.2f} [{p.delta_ref:.2f}, {p.delta_mt:.2f}]{mark}")
        lines.append(f"| {_bias(bias)} | " + " | ".join(row) + " |")
    lines += ["", f"- **Chosen**: bias {_bias(choice['bias'])}, targeting weight "
              f"{_weight(choice['targeting_weight'])} (D {choice['balance']:.2f}, Δd_ref "
              f"{choice['delta_ref']:.2f}, Δd_mt {choice['delta_mt']:.2f}): the smallest D "
              f"among the points that moved at least {choice['min_ref_move']:g} TER points "
              f"away from the reference and {choice['min_mt_move']:g} towards the MT output.",
              f"- **Argmin of D**: bias {_bias(choice['argmin_bias'])}, targeting weight "
              f"{_weight(choice['argmin_weight'])} (D {choice['argmin_balance']:.2f}).",
              "- Thesis (NIST MT03 Chinese): chosen ({:g} %, −{:g}), argmin ({:g} %, −{:g}) "
              "rejected because its paraphrases hardly differed from the references.".format(
                  *THESIS_FIG_5_8["chosen"], *THESIS_FIG_5_8["argmin"])]
    edges = [name for name, value, ends in (
        ("bias", choice["bias"], (biases[0], biases[-1])),
        ("targeting weight", choice["targeting_weight"], (weights[0], weights[-1])))
        if value in ends and len(set(ends)) > 1]
    if edges:
        lines.append(f"- The chosen point lies on the edge of the grid ({' and '.join(edges)}): D "
                     "may keep falling beyond it; widen paraphrase.biases or grid_search.sweep "
                     "to look.")
    worst = grid.loc[grid["balance"].idxmax()]
    compared = {"chosen": (choice["bias"], choice["targeting_weight"]),
                "argmin": (choice["argmin_bias"], choice["argmin_weight"]),
                "largest D": (worst["bias"], worst["targeting_weight"])}
    nbest = pd.concat([read_table(path, TARGETED_NBEST) for path in grid_nbest_paths])
    comparison = compare_points(nbest, compared)
    lines += ["", "## Is D a good proxy? The 1-best paraphrases of three grid points", "",
              "| points | 1-best identical | TER(first, second) |", "|---|---|---|"]
    lines += [f"| {row.first} ({_bias(compared[row.first][0])}, "
              f"{_weight(compared[row.first][1])}) vs {row.second} "
              f"({_bias(compared[row.second][0])}, {_weight(compared[row.second][1])}) | "
              f"{100 * row.identical:.0f} % | {row.ter:.2f} |"
              for row in comparison.itertuples()]
    text = "\n".join(lines) + "\n"
    write_page(text, out_markdown, out_html, "Configuring the targeted paraphraser")
    return text

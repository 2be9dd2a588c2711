"""Configuring the targeted paraphraser: the targeting sweep and the bias × weight grid search
(thesis §5.2.3, Fig. 5.3 and 5.6–5.8).

On a seeded sample of tune sentences (:func:`make_grid_sample`: single reference, MT output of
the 1H-tuned system) the reference is paraphrased towards the MT output:

1. **Sweep** (Fig. 5.3, 5.6): with the unbiased grammar (``grid_search.sweep_bias``), over a
   wide range of targeting weights including 0 (untargeted). :func:`write_grid_weights` reads
   the grid's weight range off it by a written rule (:class:`WeightRange`), since our weights
   are not on the thesis's scale (its −10…−20 came from its own sweep).
2. **Grid** (Fig. 5.7, 5.8): every configured bias × those weights. Each point's reference
   move (:class:`circle.paraphrase.paraphraser.ReferenceMove`) gives D = |Δd_mt − Δd_ref|;
   :func:`choose_point` picks the smallest D among points that moved (the thesis rejected its
   argmin because its paraphrases barely differed from the references).

Distances of a point are over the paraphrase **n-best lists** (the mean TER of the listed
paraphrases, each sentence's list counted once per entry), as the thesis computes D "over the
paraphrase n-best list": targeted tuning adds the top entries of such a list as references, so
the list, not only its 1-best, is what moves through the space of references. The 1-best
figures are kept beside them (Fig. 5.3 is over 1-best paraphrases).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from circle.core.progress import progress
from circle.core.schemas import (
    EVALSET,
    GRID_CHOICE,
    GRID_POINTS,
    GRID_SAMPLE,
    REFERENCE_DISTANCES,
    TARGETED_NBEST,
    TARGETING_WEIGHTS,
)
from circle.core.tables import read_metadata, read_table, write_table
from circle.corpus.references import single_references
from circle.decoder import DecoderSettings, best_text, decode_corpus, read_weights
from circle.decoder.rerank import rerank_depth, split_rerank_weight
from circle.paraphrase.config import ParaphraserConfig
from circle.paraphrase.paraphraser import Paraphraser, ReferenceMove, segment_distances

STAGES: tuple[str, ...] = ("sweep", "grid")

logger = logging.getLogger(__name__)


class GridSearchError(ValueError):
    """The sweep or the grid cannot give what the configuration asks for."""


def make_grid_sample(tune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                     lm_path: str | os.PathLike, weights_path: str | os.PathLike, size: int,
                     seed: int, settings: DecoderSettings, workers: int,
                     out_path: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None,
                     rerank_lm_path: str | os.PathLike | None = None) -> pd.DataFrame:
    """A seeded random sample of ``size`` tune segments (all if fewer) with their single
    reference and the 1-best MT output of the weights ``weights_path`` (the 1H-tuned system,
    thesis §5.2.1: "an SMT system whose parameters were tuned using only the original
    reference"); with ``rerank_lm_path`` (lm.rerank_nbest) the 1-best of the ``settings.k``-best
    list reranked with that LM, as the system was tuned (:mod:`circle.decoder.rerank`)."""
    table = read_table(tune_path, EVALSET)
    if size < 1:
        raise GridSearchError(f"the grid sample needs at least one sentence, got {size}")
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(table), size=min(size, len(table)), replace=False))
    table = table.iloc[rows]
    references = single_references(table)
    outputs = decode_corpus(list(table["source"]), grammar_path, lm_path, weights_path,
                            settings, workers=workers,
                            k=rerank_depth(1, settings.k, rerank_lm_path is not None),
                            rerank_lm=rerank_lm_path)
    sample = pd.DataFrame({"segment_id": table["segment_id"].to_numpy(),
                           "source": table["source"].to_numpy(), "reference": references,
                           "mt_output": [best_text(hyps) for hyps in outputs]})
    write_table(sample, out_path, GRID_SAMPLE, provenance,
                {"sample_seed": str(seed), "mt_weights": json.dumps(read_weights(weights_path),
                                                                    sort_keys=True)})
    return sample


def paraphrase_sample(sample_path: str | os.PathLike, grammar_path: str | os.PathLike,
                      lm_path: str | os.PathLike, weights_path: str | os.PathLike, bias: float,
                      targeting_weights: Sequence[float], settings: DecoderSettings,
                      workers: int, out_nbest: str | os.PathLike,
                      out_distances: str | os.PathLike,
                      provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Paraphrase the sample's references towards their MT outputs with the grammar of
    self-paraphrase bias ``bias``, once per targeting weight (0: untargeted), as
    ``settings.k``-best lists; write the lists and their per-segment distances
    (:func:`circle.paraphrase.paraphraser.segment_distances`). The grammar is loaded once.
    The paraphraser searches as the targeted paraphraser it configures does
    (:func:`circle.paraphrase.targeted.targeted_setup`): without the tuned weight of the n-best
    reranking feature, if the weights name it (lm.rerank_nbest)."""
    configs = [ParaphraserConfig(bias, weight) for weight in dict.fromkeys(targeting_weights)]
    sample = read_table(sample_path, GRID_SAMPLE)
    references, outputs = list(sample["reference"]), list(sample["mt_output"])
    search_weights, _ = split_rerank_weight(read_weights(weights_path))
    paraphraser = Paraphraser(grammar_path, lm_path, search_weights, settings, workers)
    nbest_rows, distance_frames = [], []
    for done, config in enumerate(progress(configs, logger, f"grid row of bias {bias:g}",
                                           len(configs), "targeting weights"), 1):
        start = time.perf_counter()
        lists = paraphraser.paraphrase(references, outputs if config.targeted else None,
                                       config.targeting_weight)
        decoded = time.perf_counter()
        for segment, hypotheses in zip(sample["segment_id"], lists, strict=True):
            nbest_rows += [{"bias": bias, "targeting_weight": config.targeting_weight,
                            "segment_id": segment, "rank": rank, "hypothesis": h.text,
                            "score": h.score} for rank, h in enumerate(hypotheses)]
        distances = segment_distances([[h.text for h in hypotheses] for hypotheses in lists],
                                      references, outputs)
        distances.insert(0, "segment_id", sample["segment_id"].to_numpy())
        distances.insert(0, "targeting_weight", config.targeting_weight)
        distances.insert(0, "bias", bias)
        distance_frames.append(distances)
        logger.info("bias %g, targeting weight %g (%d/%d): %d paraphrases decoded in %.1f s, "
                    "distances in %.1f s", bias, config.targeting_weight, done, len(configs),
                    int(distances["paraphrases"].sum()), decoded - start,
                    time.perf_counter() - decoded)
    metadata = {"paraphraser_weights": json.dumps(paraphraser.weights, sort_keys=True),
                "k": str(settings.k)}
    write_table(pd.DataFrame(nbest_rows), out_nbest, TARGETED_NBEST, provenance, metadata)
    frame = pd.concat(distance_frames, ignore_index=True)
    write_table(frame, out_distances, REFERENCE_DISTANCES, provenance, metadata)
    return frame


@dataclass(frozen=True)
class PointRule:
    """Which grid points count as having moved (thesis §5.2.3, "Why not choose the point
    (50, 10)?"): at least ``min_ref_move`` TER points away from the original reference
    (Δd_ref) and at least ``min_mt_move`` towards the MT output (Δd_mt)."""

    min_ref_move: float
    min_mt_move: float

    def eligible(self, move: ReferenceMove) -> bool:
        return move.delta_ref >= self.min_ref_move and move.delta_mt >= self.min_mt_move


def point_table(distances: pd.DataFrame, stage: str, rule: PointRule) -> pd.DataFrame:
    """One :data:`~circle.core.schemas.GRID_POINTS` row per (bias, targeting weight) of the
    per-segment ``distances``, in (bias, weakest weight first) order."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    rows = []
    for (bias, weight), group in distances.groupby(["bias", "targeting_weight"], sort=False):
        move, best = ReferenceMove.of(group, "nbest"), ReferenceMove.of(group, "best")
        rows.append({"stage": stage, "bias": bias, "targeting_weight": weight,
                     "segments": len(group), "paraphrases": int(group["paraphrases"].sum()),
                     "d_ref": move.d_ref, "d_mt": move.d_mt, "best_d_ref": best.d_ref,
                     "best_d_mt": best.d_mt, "reference_d_mt": move.reference_d_mt,
                     "delta_ref": move.delta_ref, "delta_mt": move.delta_mt,
                     "balance": move.balance, "eligible": rule.eligible(move)})
    points = pd.DataFrame(rows)
    order = np.lexsort((-points["targeting_weight"].to_numpy(), points["bias"].to_numpy()))
    return points.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class WeightRange:
    """The rule that turns the targeting sweep into the grid's weights (thesis §5.2.3, "Why
    restrict the targeting feature weight to the range [10, 20]?": weaker weights did not
    target, stronger ones overwhelmed the meaning).

    With T(w) the corpus TER of the 1-best paraphrases at weight w against the MT output
    (Fig. 5.3), T_ref the original references' and T_min the smallest T of the sweep, a
    weight's targeting gain is (T_ref − T(w)) / (T_ref − T_min). The **weakest** grid weight is
    the weakest swept weight with gain ≥ ``effective_share`` that also beats the untargeted
    paraphraser (T(w) < T(0)); the **strongest** is the weakest with gain ≥
    ``saturation_share`` (stronger weights buy little more closeness), or the next stronger
    swept weight if that is the weakest itself. The grid takes ``count`` evenly spaced weights
    from weakest to strongest, rounded to 3 significant digits.
    """

    count: int
    effective_share: float
    saturation_share: float

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"the grid needs at least one weight, got {self.count}")
        if not 0.0 < self.effective_share <= self.saturation_share <= 1.0:
            raise ValueError("need 0 < effective_share ≤ saturation_share ≤ 1, got "
                             f"{self.effective_share} and {self.saturation_share}")

    def bounds(self, sweep: pd.DataFrame) -> tuple[float, float]:
        """(weakest, strongest) grid weight from the sweep's points (:func:`point_table`)."""
        sweep = sweep.sort_values("targeting_weight", ascending=False)
        untargeted = sweep[sweep["targeting_weight"] == 0.0]
        targeted = sweep[sweep["targeting_weight"] < 0.0]
        if untargeted.empty or targeted.empty:
            raise GridSearchError("the targeting sweep needs the untargeted weight 0 and at "
                                  "least one negative weight")
        reference = float(sweep["reference_d_mt"].iloc[0])
        closest = float(targeted["best_d_mt"].min())
        if closest >= reference:
            raise GridSearchError(
                f"no swept weight brings the 1-best paraphrase closer to the MT output than the "
                f"reference (TER {closest:.2f} ≥ {reference:.2f}); add stronger (more negative) "
                "weights to grid_search.sweep")
        gain = (reference - targeted["best_d_mt"]) / (reference - closest)
        beats = targeted["best_d_mt"] < float(untargeted["best_d_mt"].iloc[0])
        weights = targeted["targeting_weight"].to_numpy()
        effective = weights[((gain >= self.effective_share) & beats).to_numpy()]
        weakest = float(effective[0])
        strongest = float(weights[(gain >= self.saturation_share).to_numpy()][0])
        if strongest >= weakest:
            stronger = weights[weights < weakest]
            if len(stronger) == 0:
                raise GridSearchError(
                    f"the sweep saturates at its strongest weight {weakest:g}; add stronger "
                    "(more negative) weights to grid_search.sweep")
            strongest = float(stronger[0])
        return weakest, strongest

    def weights(self, weakest: float, strongest: float) -> list[float]:
        """The grid's targeting weights between the bounds, weakest first."""
        spaced = np.linspace(weakest, strongest, self.count)
        return list(dict.fromkeys(_significant(float(w), 3) for w in spaced))


def _significant(value: float, digits: int) -> float:
    if value == 0.0:
        return 0.0
    return round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))


def write_grid_weights(sweep_distances_path: str | os.PathLike, rule: WeightRange,
                       out_path: str | os.PathLike,
                       provenance: Mapping[str, str] | None = None) -> list[float]:
    """The grid's targeting weights from the sweep's distances (:func:`paraphrase_sample` at
    the sweep's bias), as a :data:`~circle.core.schemas.TARGETING_WEIGHTS` table."""
    distances = read_table(sweep_distances_path, REFERENCE_DISTANCES)
    sweep = point_table(distances, "sweep", PointRule(0.0, 0.0))
    weakest, strongest = rule.bounds(sweep)
    weights = rule.weights(weakest, strongest)
    write_table(pd.DataFrame({"targeting_weight": weights}), out_path, TARGETING_WEIGHTS,
                provenance, {"weight_range": json.dumps({**asdict(rule), "weakest": weakest,
                                                         "strongest": strongest})})
    return weights


def read_grid_weights(path: str | os.PathLike) -> list[float]:
    return [float(w) for w in read_table(path, TARGETING_WEIGHTS)["targeting_weight"]]


def weight_range_of(path: str | os.PathLike) -> dict[str, float]:
    """The weight-range rule and the bounds it found (metadata of a weights table)."""
    return json.loads(read_metadata(path)["weight_range"])


def _best(points: pd.DataFrame) -> pd.Series:
    """The point with the smallest D; ties go to the larger move towards the MT output, then
    the larger bias, then the weaker weight (the more conservative paraphraser)."""
    order = np.lexsort((-points["targeting_weight"].to_numpy(), -points["bias"].to_numpy(),
                        -points["delta_mt"].to_numpy(), points["balance"].to_numpy()))
    return points.iloc[order[0]]


def choose_point(points: pd.DataFrame, rule: PointRule) -> dict:
    """The grid's choice (thesis §5.2.3): the smallest D among the grid points that moved
    (``eligible`` by ``rule``), beside the plain argmin of D; a
    :data:`~circle.core.schemas.GRID_CHOICE` row."""
    grid = points[points["stage"] == "grid"]
    if grid.empty:
        raise GridSearchError("the grid has no points")
    argmin = _best(grid)
    eligible = grid[grid["eligible"]]
    if eligible.empty:
        raise GridSearchError(
            f"no grid point moved at least {rule.min_ref_move:g} TER points away from the "
            f"reference and {rule.min_mt_move:g} towards the MT output (largest moves: "
            f"{grid['delta_ref'].max():.2f} and {grid['delta_mt'].max():.2f}); lower "
            "grid_search.min_ref_move / min_mt_move, widen the grid, or set grid_search.point")
    chosen = _best(eligible)
    return {"bias": float(chosen["bias"]), "targeting_weight": float(chosen["targeting_weight"]),
            "balance": float(chosen["balance"]),
            "delta_ref": float(chosen["delta_ref"]), "delta_mt": float(chosen["delta_mt"]),
            "min_ref_move": rule.min_ref_move, "min_mt_move": rule.min_mt_move,
            "argmin_bias": float(argmin["bias"]),
            "argmin_weight": float(argmin["targeting_weight"]),
            "argmin_balance": float(argmin["balance"])}


def search_grid(sweep_distances_path: str | os.PathLike,
                grid_distances_paths: Sequence[str | os.PathLike], rule: PointRule,
                out_points: str | os.PathLike, out_choice: str | os.PathLike,
                provenance: Mapping[str, str] | None = None) -> dict:
    """The points of the sweep and of the grid (one :data:`~circle.core.schemas.GRID_POINTS`
    table) and the grid's choice (:func:`choose_point`)."""
    sweep = read_table(sweep_distances_path, REFERENCE_DISTANCES)
    grid = pd.concat([read_table(path, REFERENCE_DISTANCES) for path in grid_distances_paths],
                     ignore_index=True)
    points = pd.concat([point_table(sweep, "sweep", rule), point_table(grid, "grid", rule)],
                       ignore_index=True)
    choice = choose_point(points, rule)
    metadata = {"rule": json.dumps(asdict(rule))}
    write_table(points, out_points, GRID_POINTS, provenance, metadata)
    write_table(pd.DataFrame([choice]), out_choice, GRID_CHOICE, provenance, metadata)
    return choice

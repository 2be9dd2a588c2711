"""The grid search of the targeted paraphraser (thesis §5.2.3): reference-space distances against
hand-computed TER, the weight-range rule on a sweep, the choice rule, and the configuration."""

import numpy as np
import pandas as pd
import pytest

from circle.paraphrase.config import ParaphraserConfig, read_grid_choice
from circle.paraphrase.grid_search import (
    GridSearchError,
    PointRule,
    WeightRange,
    choose_point,
    point_table,
)
from circle.paraphrase.paraphraser import ReferenceMove, segment_distances
from circle.paraphrase.targeted import TargetedSettings
from circle.pipeline.config import grid_problems

REFERENCE = "the children of israel went up to fight"
MT_OUTPUT = "the sons of israel went up to battle"


def test_segment_distances_against_hand_computed_ter():
    # Against the reference (8 words): "the sons of israel went up to fight" is 1 substitution,
    # "the sons of israel went up to battle" (= the MT output) 2. Against the MT output (8 words):
    # 1 and 0; the reference itself is 2 substitutions from the MT output.
    nbest = [["the sons of israel went up to fight", MT_OUTPUT]]
    row = segment_distances(nbest, [REFERENCE], [MT_OUTPUT]).iloc[0]
    assert row["reference_length"] == 8 and row["mt_length"] == 8
    assert row["reference_edits_mt"] == 2
    assert row["best_edits_ref"] == 1 and row["best_edits_mt"] == 1
    assert row["nbest_edits_ref"] == pytest.approx((1 + 2) / 2)
    assert row["nbest_edits_mt"] == pytest.approx((1 + 0) / 2)
    assert row["paraphrases"] == 2


def test_a_moved_block_is_one_edit():
    # TER's shift (Snover et al. 2006): moving "went up to fight" to the end costs 1, not 8
    row = segment_distances([["went up to fight the children of israel"]], [REFERENCE],
                            [REFERENCE]).iloc[0]
    assert row["best_edits_ref"] == 1 and row["reference_edits_mt"] == 0


def test_reference_move_is_the_thesis_arithmetic():
    distances = segment_distances([["the sons of israel went up to fight"]], [REFERENCE],
                                  [MT_OUTPUT])
    move = ReferenceMove.of(distances, "best")
    assert move.d_ref == pytest.approx(100 * 1 / 8)  # d_ref(paraphrase); d_ref(reference) = 0
    assert move.reference_d_mt == pytest.approx(100 * 2 / 8)
    assert move.d_mt == pytest.approx(100 * 1 / 8)
    assert move.delta_ref == pytest.approx(12.5)  # moved 12.5 points away from the reference
    assert move.delta_mt == pytest.approx(12.5)  # ... and 12.5 points towards the MT output
    assert move.balance == pytest.approx(0.0)


def test_reference_move_sums_edits_over_segments_before_dividing():
    distances = segment_distances(
        [[REFERENCE], ["a b c"]], [REFERENCE, "a b c d e f"], [MT_OUTPUT, "a b c d e f"])
    move = ReferenceMove.of(distances)
    # segment 1: 0 edits of 8; segment 2: 3 deletions of 6 -> 3 / 14, not the mean of ratios
    assert move.d_ref == pytest.approx(100 * 3 / 14)
    assert move.reference_d_mt == pytest.approx(100 * 2 / 14)


def test_segment_distances_refuses_an_empty_list():
    with pytest.raises(ValueError, match="no paraphrase"):
        segment_distances([[]], [REFERENCE], [MT_OUTPUT])


def _points(rows) -> pd.DataFrame:
    """Grid points with given (bias, weight, Δd_ref, Δd_mt) and reference d_mt 60."""
    frame = pd.DataFrame(rows, columns=["bias", "targeting_weight", "delta_ref", "delta_mt"])
    return frame.assign(stage="grid", reference_d_mt=60.0, d_ref=frame["delta_ref"],
                        d_mt=60.0 - frame["delta_mt"],
                        balance=(frame["delta_mt"] - frame["delta_ref"]).abs())


def _eligible(points: pd.DataFrame, rule: PointRule) -> pd.DataFrame:
    return points.assign(eligible=[rule.eligible(ReferenceMove(p.d_ref, p.d_mt, 60.0))
                                   for p in points.itertuples()])


def test_argmin_that_barely_moved_is_rejected():
    rule = PointRule(min_ref_move=5.0, min_mt_move=5.0)
    points = _eligible(_points([(0.5, -1.0, 1.0, 0.8),     # D 0.2, hardly moved: the argmin
                                (0.25, -1.4, 12.0, 9.0),   # D 3
                                (0.25, -1.0, 8.0, 4.0),    # D 4, not closer enough to the MT
                                (0.0, -2.0, 30.0, 20.0)]), rule)  # D 10
    choice = choose_point(points, rule)
    assert (choice["argmin_bias"], choice["argmin_weight"]) == (0.5, -1.0)
    assert (choice["bias"], choice["targeting_weight"]) == (0.25, -1.4)
    assert choice["balance"] == pytest.approx(3.0)


def test_ties_go_to_the_larger_move_towards_the_mt_output_then_the_larger_bias():
    rule = PointRule(0.0, 0.0)
    points = _eligible(_points([(0.1, -1.0, 10.0, 8.0), (0.1, -2.0, 14.0, 12.0),
                                (0.4, -2.0, 14.0, 12.0), (0.4, -3.0, 14.0, 12.0)]), rule)
    choice = choose_point(points, rule)
    assert (choice["bias"], choice["targeting_weight"]) == (0.4, -2.0)


def test_no_point_that_moved_is_an_error_naming_the_way_out():
    rule = PointRule(5.0, 5.0)
    points = _eligible(_points([(0.5, -1.0, 1.0, 0.8), (0.25, -1.0, 3.0, 2.0)]), rule)
    with pytest.raises(GridSearchError, match="grid_search.point"):
        choose_point(points, rule)


def _sweep(best_d_mt: dict[float, float], reference: float = 56.0) -> pd.DataFrame:
    return pd.DataFrame({"targeting_weight": list(best_d_mt), "best_d_mt": list(best_d_mt.values()),
                         "reference_d_mt": reference})


# The shape of our default experiment's sweep: untargeted 65, reference 56, saturating at 47.7.
SWEEP = {0.0: 65.0, -0.1: 58.2, -0.3: 52.2, -0.5: 50.0, -1.0: 48.4, -2.0: 47.9, -3.0: 47.7}


def test_weight_range_from_the_sweep():
    rule = WeightRange(count=6, effective_share=0.5, saturation_share=0.9)
    # gain = (56 - T) / (56 - 47.7): -0.3 -> 0.45, -0.5 -> 0.72, -1 -> 0.92
    assert rule.bounds(_sweep(SWEEP)) == (-0.5, -1.0)
    assert rule.weights(*rule.bounds(_sweep(SWEEP))) == [-0.5, -0.6, -0.7, -0.8, -0.9, -1.0]


def test_weight_range_widens_when_one_weight_does_everything():
    rule = WeightRange(count=3, effective_share=0.5, saturation_share=0.9)
    jump = {0.0: 65.0, -0.1: 60.0, -1.0: 48.0, -2.0: 47.9}
    assert rule.bounds(_sweep(jump)) == (-1.0, -2.0)
    assert rule.weights(*rule.bounds(_sweep(jump))) == [-1.0, -1.5, -2.0]


def test_weight_range_needs_a_weight_that_beats_the_untargeted_paraphraser():
    rule = WeightRange(count=2, effective_share=0.5, saturation_share=0.9)
    # the untargeted paraphraser is already closer (50) than the reference (56): -0.5 reduces
    # TER below the reference by 0.72 of the most but does not beat the untargeted 50
    sweep = {0.0: 50.0, -0.5: 50.0, -1.0: 48.4, -3.0: 47.7}
    assert rule.bounds(_sweep(sweep))[0] == -1.0


def test_weight_range_refuses_a_sweep_that_never_targets():
    rule = WeightRange(count=6, effective_share=0.5, saturation_share=0.9)
    with pytest.raises(GridSearchError, match="stronger"):
        rule.bounds(_sweep({0.0: 65.0, -0.1: 60.0, -0.2: 57.0}))
    with pytest.raises(GridSearchError, match="saturates"):
        rule.bounds(_sweep({0.0: 65.0, -0.1: 60.0, -0.2: 50.0}))


def test_point_table_orders_points_and_marks_eligibility():
    rows = []
    for bias, weight, edits_ref, edits_mt in [(0.5, -1.0, 0.0, 0.0), (0.0, -2.0, 2.0, 0.0),
                                              (0.0, -1.0, 1.0, 1.0)]:
        rows.append({"bias": bias, "targeting_weight": weight, "segment_id": 1,
                     "paraphrases": 1, "reference_length": 8.0, "mt_length": 8.0,
                     "reference_edits_mt": 2.0, "best_edits_ref": edits_ref,
                     "best_edits_mt": edits_mt, "nbest_edits_ref": edits_ref,
                     "nbest_edits_mt": edits_mt})
    points = point_table(pd.DataFrame(rows), "grid", PointRule(10.0, 10.0))
    assert list(zip(points["bias"], points["targeting_weight"], strict=True)) == \
        [(0.0, -1.0), (0.0, -2.0), (0.5, -1.0)]
    assert list(points["eligible"]) == [True, True, False]
    assert np.allclose(points["balance"], [0.0, 0.0, 25.0])


def test_configuration_is_checked_and_the_override_wins(tmp_path):
    with pytest.raises(ValueError, match="≤ 0"):
        ParaphraserConfig(0.25, 1.0)
    with pytest.raises(ValueError, match="bias"):
        ParaphraserConfig(1.0, -1.0)
    settings = TargetedSettings.from_config(
        {"biases": [0, 0.25], "point": {"bias": 0.25, "weight": -0.8}, "nbest": 10,
         "search": "forest", "forest_beam": 2, "rerank": None, "depth": 1, "cache": "c"})
    assert settings.point == ParaphraserConfig(0.25, -0.8) and settings.point.targeted
    assert settings.biases == (0.0, 0.25) and settings.rerank is None
    with pytest.raises(ValueError, match="neither a grid choice table nor a configured point"):
        read_grid_choice(None)


def test_grid_config_checks_run_before_any_job():
    config = {"grid_search": {"mt_replicate": 0, "sweep": [0, -1], "sweep_bias": 0,
                              "point": None},
              "paraphrase": {"biases": [0, 0.25]}, "tuning": {"replicates": 1,
                                                              "paraphraser_bias": 0}}
    assert grid_problems(config) == []
    for change, message in [({"mt_replicate": 1}, "replicates"), ({"sweep": [-1, -2]}, "0"),
                            ({"point": {"bias": 0.3, "weight": -1}}, "0.3"),
                            ({"sweep_bias": 0.5}, "sweep_bias")]:
        broken = {**config, "grid_search": {**config["grid_search"], **change}}
        (problem,) = grid_problems(broken)
        assert message in problem
    curves = {**config, "targeted": {"curves": {"bias": 0.5, "weights": [-1]}}}
    assert grid_problems(curves) == ["targeted.curves.bias 0.5 is not one of paraphrase.biases "
                                     "[0.0, 0.25]"]

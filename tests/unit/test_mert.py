"""circle.tune.mert: exact line search against brute force, weight recovery, determinism."""

import numpy as np
import pytest

from circle.tune.mert import (
    Box,
    MertSettings,
    NBestPool,
    flat_pool,
    line_search,
    normalise,
    one_best,
    optimise,
    reference_upper_envelopes,
    score_weights,
    upper_envelopes,
)
from circle.tune.metrics import bleu_stats, get_metric

VOCAB = "the a cat dog sat on mat".split()


def random_pool(seed, metric_name):
    """Small n-best lists with integer features: many ties, parallel and identical lines."""
    rng = np.random.default_rng(seed)
    features, stats = [], []
    for _ in range(rng.integers(1, 7)):
        n = rng.integers(1, 7)
        f = rng.integers(-2, 3, size=(n, 3)).astype(float)
        if n > 2:
            f[1] = f[0]  # duplicated feature vector
            f[2] = f[0] + [1, 0, 0] if rng.random() < 0.5 else f[2]
        hyps = [" ".join(rng.choice(VOCAB, size=rng.integers(3, 9))) for _ in range(n)]
        s = bleu_stats(hyps, [["the cat sat on the mat", "a dog sat on a mat"]] * n)
        if metric_name == "ter":
            s = np.column_stack([rng.integers(0, 8, n), rng.uniform(4, 8, n)])
        features.append(f)
        stats.append(s)
    return flat_pool(features, stats), rng


def crossings(pool, w, u):
    """All gammas where two hypotheses of a segment score the same (not just envelope ones)."""
    a, b = pool.features @ w, pool.features @ u
    found = []
    for k, start in enumerate(pool.starts):
        stop = pool.starts[k + 1] if k + 1 < len(pool.starts) else len(a)
        for i in range(start, stop):
            for j in range(i + 1, stop):
                if b[i] != b[j]:
                    found.append((a[i] - a[j]) / (b[j] - b[i]))
    return np.unique(found)


def exact_candidates(xs):
    """One gamma inside every interval between consecutive crossings."""
    if len(xs) == 0:
        return np.array([0.0])
    return np.concatenate([[xs[0] - 1], (xs[:-1] + xs[1:]) / 2, [xs[-1] + 1]])


@pytest.mark.parametrize("metric_name", ["bleu", "ter"])
@pytest.mark.parametrize("seed", range(40))
def test_line_search_matches_brute_force(seed, metric_name):
    pool, rng = random_pool(seed, metric_name)
    metric = get_metric(metric_name)
    w = rng.integers(-2, 3, 3).astype(float)
    u = np.eye(3)[seed % 3] if seed % 2 else rng.integers(-2, 3, 3).astype(float)
    gamma, score = line_search(pool, metric, w, u)
    # the reported score is the score at the returned point
    assert score == pytest.approx(score_weights(pool, metric, w + gamma * u), abs=1e-12)
    # and no interval is better (exhaustive over all pairwise crossings, then a dense grid)
    xs = crossings(pool, w, u)
    exact = max(score_weights(pool, metric, w + g * u) for g in exact_candidates(xs))
    assert score == pytest.approx(exact, abs=1e-12)
    # (offset so that no grid point is a crossing, where ties may pick a non-envelope line)
    grid = np.linspace(-20, 20, 801) + np.pi * 1e-4
    grid = max(score_weights(pool, metric, w + g * u) for g in grid)
    assert grid <= score + 1e-12
    # staying put when the current point is already optimal
    if 0.0 not in xs and score_weights(pool, metric, w) >= exact - 1e-12:
        assert gamma == 0.0


def events_by_segment(pool, envelope):
    """An envelope's events as {segment: [(x, before, after), ...]} in the order given."""
    first, x, before, after = envelope
    events = {}
    for xi, b, a in zip(x, before, after, strict=True):
        events.setdefault(int(pool.segment[b]), []).append((xi, b, a))
    return first, events


@pytest.mark.parametrize("seed", range(40))
def test_compiled_envelopes_equal_their_numpy_twin(seed):
    """Same top rows, same events (floats bit for bit) in the same order per segment, on pools
    with ties, parallel and identical lines, and on a pool of 300 x 200 real-valued lines."""
    pool, rng = random_pool(seed, "bleu")
    if seed % 4 == 0:
        pool = flat_pool(list(rng.normal(size=(300, 200, 5))), [np.zeros((200, 1))] * 300)
    w, u = rng.integers(-2, 3, (2, pool.features.shape[1])).astype(float)
    a, b = pool.features @ w, pool.features @ u
    first, compiled = events_by_segment(pool, upper_envelopes(pool, a, b))
    twin_first, twin = events_by_segment(pool, reference_upper_envelopes(pool, a, b))
    assert np.array_equal(first, twin_first)
    assert compiled == twin
    if seed % 4 == 0:
        assert sum(map(len, compiled.values())) > 1000  # the real-valued pool has many events


def test_line_search_unbounded_intervals_and_identical_lines():
    bleu = get_metric("bleu")
    good, bad = bleu_stats(["a b c d", "x y z w"], [["a b c d"]] * 2)
    # lines 0 + 0 g (bad) and -1 + g (good) cross at g = 1: best beyond the last breakpoint
    pool = flat_pool([np.array([[0.0, 0.0], [-1.0, 1.0]])], [np.vstack([bad, good])])
    gamma, score = line_search(pool, bleu, np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    assert gamma == pytest.approx(1 + 1.5) and score == pytest.approx(1.0)
    # mirrored: best before the first breakpoint g = -1
    gamma, _ = line_search(pool, bleu, np.array([1.0, 0.0]), np.array([0.0, -1.0]))
    assert gamma == pytest.approx(-2.5)
    # identical lines: the hypothesis added first is the 1-best, whatever the weights
    pool = flat_pool([np.array([[1.0, 1.0], [1.0, 1.0]])], [np.vstack([bad, good])])
    assert list(one_best(pool, np.array([0.3, -2.0]))) == [0]
    gamma, score = line_search(pool, bleu, np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    assert gamma == 0.0 and score == pytest.approx(bleu.score(bad))


def test_line_search_prefers_current_point_and_nearest_interval_on_ties():
    bleu = get_metric("bleu")
    good, bad = bleu_stats(["a b c d", "x y z w"], [["a b c d"]] * 2)
    # good on (-inf, -1) and (1, inf), bad on (-1, 1): two equal best intervals
    f = np.array([[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, -1.0, 0.0]])
    pool = flat_pool([f], [np.vstack([bad, good, good])])
    gamma, _ = line_search(pool, bleu, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    assert gamma == pytest.approx(-2.5)  # equally far: the leftmost
    w = np.array([1.0, 0.5, 0.0])  # now the right interval is nearer
    gamma, _ = line_search(pool, bleu, w, np.array([0.0, 1.0, 0.0]))
    assert gamma == pytest.approx(0.5 + 0.25 + 1)
    # a direction that changes nothing: stay
    assert line_search(pool, bleu, w, np.array([0.0, 0.0, 1.0]))[0] == 0.0


def synthetic_problem(seed, n_segments=150, n_hyps=30, d=5):
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=d)
    features = rng.normal(size=(n_segments, n_hyps, d))
    pool = NBestPool(d, 10)
    for k in range(n_segments):
        rank = np.argsort(np.argsort(-(features[k] @ hidden)))  # 0 = hidden 1-best
        quality = np.where(rank == 0, 1.0, 0.8 - 0.5 * rank / n_hyps)
        totals = np.array([20, 19, 18, 17])
        matches = np.floor(quality[:, None] * totals).astype(int)
        stats = np.column_stack([matches, np.tile(totals, (n_hyps, 1)),
                                 np.full((n_hyps, 2), 20)])
        pool.add([k] * n_hyps, [f"h{i}" for i in range(n_hyps)], features[k], stats)
    return pool, hidden


def test_mert_recovers_hidden_weights():
    pool, hidden = synthetic_problem(0)
    flat = pool.flat()
    settings = MertSettings(restarts=3, random_directions=2)
    weights, score = optimise(flat, get_metric("bleu"), np.ones(5), settings,
                              np.random.default_rng(7))
    agree = np.mean(one_best(flat, weights) == one_best(flat, hidden))
    cosine = weights @ hidden / np.linalg.norm(weights) / np.linalg.norm(hidden)
    assert agree >= 0.95 and cosine > 0.95
    assert score == pytest.approx(score_weights(flat, get_metric("bleu"), weights))


def test_mert_is_deterministic_for_a_seed():
    flat = synthetic_problem(1, n_segments=40, n_hyps=10)[0].flat()
    settings = MertSettings(restarts=2, random_directions=2)
    runs = [optimise(flat, get_metric("bleu"), np.ones(5), settings, np.random.default_rng(3))
            for _ in range(2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]
    other = optimise(flat, get_metric("bleu"), np.ones(5), settings, np.random.default_rng(4))
    assert not np.array_equal(other[0], runs[0][0])


@pytest.mark.parametrize("seed", range(20))
def test_bounded_line_search_is_the_best_feasible_step(seed):
    pool, rng = random_pool(seed, "bleu")
    bleu = get_metric("bleu")
    lower, upper = np.array([0.0, -np.inf, -1.0]), np.array([np.inf, 0.5, 2.0])
    w = np.clip(rng.integers(-2, 3, 3).astype(float), lower, upper)
    u = rng.integers(-2, 3, 3).astype(float)
    gamma, score = line_search(pool, bleu, w, u, lower, upper)
    moved = w + gamma * u
    assert np.all(moved >= lower - 1e-12) and np.all(moved <= upper + 1e-12)
    assert score == pytest.approx(score_weights(pool, bleu, moved), abs=1e-12)
    feasible = [g for g in np.linspace(-30, 30, 6001) + np.pi * 1e-4
                if np.all(w + g * u >= lower) and np.all(w + g * u <= upper)]
    best_on_grid = max((score_weights(pool, bleu, w + g * u) for g in feasible), default=-1)
    assert best_on_grid <= score + 1e-12


def test_sign_constraints_hold_where_a_negative_weight_wins_on_the_pool():
    # feature 0 is a log-probability: the better hypothesis of every segment has the *lower*
    # one, so the unconstrained optimum puts a negative weight on it
    bleu = get_metric("bleu")
    good, bad = bleu_stats(["a b c d", "x y z w"], [["a b c d"]] * 2)
    features = [np.array([[-2.0, 1.0], [-1.0, 0.0]]) for _ in range(5)]
    pool = flat_pool(features, [np.vstack([good, bad])] * 5)
    free, _ = optimise(pool, bleu, np.array([1.0, 0.0]), MertSettings(restarts=5),
                       np.random.default_rng(0))
    assert free[0] < 0 and score_weights(pool, bleu, free) == 1.0
    box = Box(np.array([0.0, -np.inf]), np.array([np.inf, np.inf]), np.array([0.0, -1.0]),
              np.ones(2))
    bounded, score = optimise(pool, bleu, np.array([1.0, 0.0]), MertSettings(restarts=5),
                              np.random.default_rng(0), box)
    assert bounded[0] >= 0 and score == 1.0  # the other feature does the job within bounds
    assert bounded[1] > 0


def test_restart_points_lie_in_their_ranges_on_the_start_scale():
    box = Box(np.array([0.0, -np.inf, -np.inf]), np.full(3, np.inf), np.array([0.0, -1, -1]),
              np.ones(3))
    points = box.restart_points(50, 0.25, np.random.default_rng(1))
    assert np.all(points[:, 0] >= 0)
    assert np.allclose(np.abs(points).sum(axis=1), 0.25)
    with pytest.raises(ValueError, match="contain 0"):
        Box(np.array([0.5]), np.array([1.0]), np.zeros(1), np.ones(1))


def test_a_restart_must_beat_the_continuing_point_by_the_minimum_gain():
    flat = synthetic_problem(2, n_segments=30, n_hyps=8)[0].flat()
    bleu = get_metric("bleu")
    start = -np.ones(5)
    alone = optimise(flat, bleu, start, MertSettings(restarts=0), np.random.default_rng(5))
    free = optimise(flat, bleu, start, MertSettings(restarts=10), np.random.default_rng(5))
    assert free[1] > alone[1]  # a restart did better
    held = optimise(flat, bleu, start, MertSettings(restarts=10, restart_min_gain=1.0),
                    np.random.default_rng(5))
    assert np.array_equal(normalise(held[0]), normalise(alone[0])) and held[1] == alone[1]


def test_fixed_offsets_enter_the_model_score():
    bleu = get_metric("bleu")
    good, bad = bleu_stats(["a b c d", "x y z w"], [["a b c d"]] * 2)
    pool = flat_pool([np.array([[0.0], [1.0]])], [np.vstack([good, bad])])
    assert score_weights(pool, bleu, np.array([1.0])) < 1.0
    shifted = type(pool)(pool.features, pool.stats, pool.starts, pool.segment,
                         pool.segment_ids, np.array([2.0, 0.0]))
    assert score_weights(shifted, bleu, np.array([1.0])) == 1.0
    gamma, score = line_search(shifted, bleu, np.array([1.0]), np.array([1.0]))
    assert gamma == 0.0 and score == 1.0


def test_pool_deduplicates_and_round_trips(tmp_path):
    pool = NBestPool(2, 10)
    f = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    s = bleu_stats(["a b", "a c", "a b"], [["a b"]] * 3)
    assert pool.add([1, 1, 0], ["a b", "a c", "a b"], f, s) == 3
    assert pool.add([1, 0, 2], ["a b", "a d", "a b"], f, s) == 2
    assert len(pool) == 5 and pool.n_segments == 3
    flat = pool.flat()
    assert flat.segment_ids == [0, 1, 2] and list(flat.starts) == [0, 2, 4]
    assert list(flat.segment) == [0, 0, 1, 1, 2]
    pool.save(tmp_path / "pool.npz")
    again = NBestPool.load(tmp_path / "pool.npz")
    assert again.hypotheses == pool.hypotheses and again.segment_ids == pool.segment_ids
    assert np.array_equal(again.flat().features, flat.features)
    with pytest.raises(ValueError, match="expected 1 segment ids"):
        pool.add([0], ["x"], np.zeros((1, 3)), np.zeros((1, 10)))


def serial_optimise(pool, metric, start, settings, rng, box):
    """MERT as it ran before its start points went side by side: the start point's ascent,
    then each restart's in turn, all from the one generator."""
    from circle.tune.mert import coordinate_ascent
    scale = float(np.abs(start).sum()) or 1.0
    best = coordinate_ascent(pool, metric, start, settings, rng, box)
    for point in box.restart_points(settings.restarts, scale, rng):
        found = coordinate_ascent(pool, metric, point, settings, rng, box)
        if found[1] > best[1] + settings.restart_min_gain:
            best = found
    return best


@pytest.mark.parametrize("seed", range(3))
def test_parallel_start_points_give_the_serial_result(seed):
    flat = synthetic_problem(seed, n_segments=40, n_hyps=12)[0].flat()
    bleu, box = get_metric("bleu"), Box.free(5)
    settings = MertSettings(restarts=6)
    serial = serial_optimise(flat, bleu, np.ones(5), settings, np.random.default_rng(seed), box)
    for workers in (1, 2, 3):
        found = optimise(flat, bleu, np.ones(5), settings, np.random.default_rng(seed), box,
                         workers)
        assert np.array_equal(found[0], serial[0]) and found[1] == serial[1]


def test_random_directions_give_the_same_weights_for_any_number_of_workers():
    flat = synthetic_problem(4, n_segments=40, n_hyps=12)[0].flat()
    settings = MertSettings(restarts=5, random_directions=2)
    runs = [optimise(flat, get_metric("bleu"), np.ones(5), settings, np.random.default_rng(9),
                     workers=workers) for workers in (1, 2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]

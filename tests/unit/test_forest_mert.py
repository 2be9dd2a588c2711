"""circle.tune.forest: the hypergraph's upper envelope against every derivation of small real
forests (the decoder tests' hand grammar and KenLM models), and forest MERT's line search
against n-best MERT's on a pool holding every derivation."""

from __future__ import annotations

import itertools

import kenlm
import numpy as np
import pandas as pd
import pytest
from test_decoder_search import FEATURES, GRAMMAR_ROWS, LM_TEXT, SENTENCES, WEIGHTS, write_arpa

from circle.decoder import Decoder, DecoderSettings, Grammar, LanguageModel
from circle.decoder.hypergraph import Hypergraph
from circle.decoder.model import ENGINES
from circle.tune.forest import ForestPool, envelope, node_envelopes, score_range
from circle.tune.mert import flat_pool, line_search, reference_upper_envelopes, score_weights
from circle.tune.metrics import get_metric

SEARCHES = {"exhaustive": {"pop_limit": 10**9, "span_limit": 100, "options_limit": 10**9},
            "pruned": {"pop_limit": 4, "options_limit": 2}}
"""Cube pruning off, and on: a pruned forest holds only the derivations the search kept."""
REFERENCES = {"la casa es muy pequeña": "the house is very small",
              "el perro de la casa es grande": "the house 's dog is big",
              "la casa y el perro": "the house and the dog",
              "la zorro es muy pequeña": "the zorro is very small"}


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    frame = pd.DataFrame([("X", *row) for row in GRAMMAR_ROWS],
                         columns=["lhs", "source", "target", *FEATURES])
    return Grammar.from_frame(frame, FEATURES)


@pytest.fixture(scope="module")
def lm(tmp_path_factory) -> LanguageModel:
    path = tmp_path_factory.mktemp("lm") / "lm3.arpa"
    write_arpa(path, LM_TEXT, 3)
    return LanguageModel(kenlm.Model(str(path)))


@pytest.fixture(scope="module", params=[(engine, search) for engine in ENGINES
                                        for search in SEARCHES],
                ids=lambda p: "-".join(p))
def decoded(request, grammar, lm):
    """Per sentence: the exhaustive unique k-best list and the hypergraph of one search."""
    engine, search = request.param
    decoder = Decoder(grammar, lm, WEIGHTS[0],
                      DecoderSettings(**SEARCHES[search], k=10**6, engine=engine))
    return decoder, [decoder.decode_hypergraph(sentence) for sentence in SENTENCES]


def derivations(graph: Hypergraph) -> list[tuple[str, np.ndarray]]:
    """Every derivation of the goal, by direct enumeration: its output and feature vector."""
    found: list[list[tuple[tuple[str, ...], np.ndarray]]] = []
    start = 0
    for end in graph.node_end.tolist():
        node = []
        for e in range(start, end):
            tails = [t for t in graph.tails[e].tolist() if t >= 0]
            for parts in itertools.product(*(found[t] for t in tails)):
                words: list[str] = []
                for symbol in graph.target(e):
                    words.extend([symbol] if isinstance(symbol, str) else parts[symbol][0])
                node.append((tuple(words), graph.features[e] + sum(p[1] for p in parts)))
        found.append(node)
        start = end
    return [(" ".join(words), features) for words, features in found[-1]]


def test_edge_features_sum_to_the_kbest_features(decoded):
    """The exhaustive unique k-best list is the forest's strings, each with the feature vector
    of its best derivation: the edges count features as KBest.features does."""
    decoder, searches = decoded
    weights = np.array(decoder.model.weights)
    for hypotheses, graph in searches:
        every = derivations(graph)
        assert {text for text, _ in every} == {h.text for h in hypotheses}
        for h in hypotheses:
            best = max((f for text, f in every if text == h.text), key=lambda f: f @ weights)
            assert best @ weights == pytest.approx(h.score, abs=1e-9)
            assert best == pytest.approx(list(h.features.values()), abs=1e-9)


def winners(values: np.ndarray, texts: list[str]) -> set[str]:
    """The outputs of the rows within rounding of the highest value."""
    return {texts[i] for i in np.flatnonzero(values >= values.max() - 1e-9)}


@pytest.mark.parametrize("seed", range(6))
def test_the_forest_envelope_is_the_envelope_of_every_derivation(decoded, seed):
    """On every interval of either envelope (all derivations as an n-best pool, through the
    existing reference_upper_envelopes; the forest's bottom-up), both have the same 1-best
    model score and output (any of the tied ones)."""
    decoder, searches = decoded
    rng = np.random.default_rng(seed)
    size = len(decoder.model.names)
    for _, graph in searches:
        every = derivations(graph)
        texts = [text for text, _ in every]
        features = np.array([f for _, f in every])
        pool = flat_pool([features], [np.zeros((len(every), 1))])
        weights, direction = rng.normal(size=size), rng.normal(size=size)
        a, b = features @ weights, features @ direction
        first, x, _, after = reference_upper_envelopes(pool, a, b)
        found = envelope(graph, weights, direction)
        twin = envelope(graph, weights, direction, compiled=False)
        assert (twin.outputs, twin.x.tolist(), twin.a.tolist(), twin.b.tolist(),
                twin.features.tolist()) == (found.outputs, found.x.tolist(), found.a.tolist(),
                                            found.b.tolist(), found.features.tolist())
        assert np.all(np.diff(found.x) > 0)
        assert found.x[1:] == pytest.approx(x, abs=1e-9)
        assert found.features @ weights == pytest.approx(found.a, abs=1e-9)
        assert found.features @ direction == pytest.approx(found.b, abs=1e-9)
        ends = np.unique(np.concatenate([found.x[1:], x]))
        probes = np.concatenate([[ends[0] - 1.0], (ends[:-1] + ends[1:]) / 2, [ends[-1] + 1.0]]
                                if len(ends) else [[0.0]])
        rows = np.concatenate([[first[0]], after])
        for gamma in probes:
            values = a + gamma * b
            i = np.searchsorted(found.x, gamma) - 1
            assert found.a[i] + gamma * found.b[i] == pytest.approx(values.max(), abs=1e-9)
            assert found.outputs[i] in winners(values, texts)
            pooled = rows[np.searchsorted(x, gamma)]
            assert texts[pooled] in winners(values, texts)


@pytest.mark.parametrize("seed", range(10))
def test_compiled_node_envelopes_equal_their_python_twin(decoded, seed):
    """Every node's envelope, bit for bit, along random real and random integer weights and
    directions."""
    decoder, searches = decoded
    rng = np.random.default_rng(seed)
    size = len(decoder.model.names)
    for _, graph in searches:
        for weights, direction in (rng.normal(size=(2, size)),
                                   rng.integers(-2, 3, size=(2, size)).astype(float)):
            compiled = node_envelopes(graph, weights, direction)
            twin = node_envelopes(graph, weights, direction, compiled=False)
            for mine, theirs in zip(compiled, twin, strict=True):
                assert mine.dtype == theirs.dtype and mine.tolist() == theirs.tolist()


def test_the_viterbi_interval_holds_the_decoders_1best(decoded):
    decoder, searches = decoded
    weights = np.array(decoder.model.weights)
    direction = np.zeros_like(weights)
    direction[0] = 1.0
    for hypotheses, graph in searches:
        found = envelope(graph, weights, direction)
        i = np.searchsorted(found.x, 0.0) - 1
        assert found.a[i] == pytest.approx(hypotheses[0].score, abs=1e-9)
        assert found.outputs[i] == hypotheses[0].text


@pytest.mark.parametrize("seed", range(8))
def test_forest_line_search_is_the_line_search_over_every_derivation(decoded, seed):
    """A pool of each segment's 1-best plus its forest searches as n-best MERT over a pool of
    every derivation, with the fixed features (oov, target) in the offset; the envelope's
    outputs are scored on demand, once each."""
    decoder, searches = decoded
    metric = get_metric("bleu")
    names = decoder.model.names
    free = np.array([name not in ("oov", "target") for name in names])
    start = np.array(decoder.model.weights)
    references = [[REFERENCES[sentence]] for sentence in SENTENCES]
    every = [derivations(graph) for _, graph in searches]
    full = [np.array([f for _, f in rows]) for rows in every]
    stats = [metric.stats([t for t, _ in rows], [references[k]] * len(rows))
             for k, rows in enumerate(every)]
    everything = flat_pool([f[:, free] for f in full], stats)
    everything = type(everything)(everything.features, everything.stats, everything.starts,
                                  everything.segment, everything.segment_ids,
                                  np.concatenate(full)[:, ~free] @ start[~free])
    firsts = flat_pool([np.array([list(h[0].features.values())]) for h, _ in searches],
                       [metric.stats([h[0].text], [references[k]])
                        for k, (h, _) in enumerate(searches)])
    asked: list[tuple[int, str]] = []

    def statistics(keys):
        asked.extend(keys)
        return metric.stats([text for _, text in keys], [references[k] for k, _ in keys])

    forests = ForestPool(firsts, [graph for _, graph in searches], start, free, statistics)
    rng = np.random.default_rng(seed)
    weights = start[free] + rng.normal(scale=0.3, size=free.sum())
    assert score_weights(forests, metric, weights) == pytest.approx(
        score_weights(everything, metric, weights), abs=1e-12)
    for _ in range(3):
        direction = rng.normal(size=free.sum())
        gamma, score = line_search(forests, metric, weights, direction)
        expected_gamma, expected_score = line_search(everything, metric, weights, direction)
        assert score == pytest.approx(expected_score, abs=1e-12)
        assert gamma == pytest.approx(expected_gamma, rel=1e-9, abs=1e-9)
        weights = weights + gamma * direction
    assert len(asked) == len(set(asked)) > 0


def test_score_range_is_the_lowest_and_highest_derivation_score(decoded):
    """What the tuning loop's check that the fixed features cannot change a 1-best reads."""
    decoder, searches = decoded
    rng = np.random.default_rng(0)
    for _, graph in searches:
        scores = rng.normal(size=graph.features.shape[1])
        every = np.array([f for _, f in derivations(graph)]) @ scores
        low, high = score_range(graph, graph.features @ scores)
        assert (low, high) == pytest.approx((every.min(), every.max()), abs=1e-9)


@pytest.mark.parametrize("fixed", [("target",), ("oov",), ("glue",)])
def test_the_fixed_term_is_constant_only_if_every_candidate_shares_it(decoded, fixed):
    """Against enumeration: untargeted, no derivation misses a target word; 'muy' passes
    through (oov) only in derivations that do not translate it with 'muy [X,1]', and the number
    of glue rules differs between derivations (where the pruned search kept such pairs)."""
    decoder, searches = decoded
    names = decoder.model.names
    free = np.array([name not in fixed for name in names])
    weights = np.array(decoder.model.weights)
    weights[names.index("glue")] = 0.4
    firsts = flat_pool([np.array([list(h[0].features.values())]) for h, _ in searches],
                       [np.zeros((1, 1))] * len(searches))
    pool = ForestPool(firsts, [graph for _, graph in searches], weights, free, None)
    expected = all(len({float(f[~free] @ weights[~free]) for _, f in derivations(graph)}) == 1
                   for _, graph in searches)
    assert pool.fixed_term_constant() is expected
    if decoder.settings.pop_limit == SEARCHES["exhaustive"]["pop_limit"]:
        assert expected is (fixed == ("target",))

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The hypergraph envelopes of forest MERT (Kumar, Macherey, Dyer & Och 2009), compiled.

:func:`circle.tune.forest.reference_node_envelopes` is the pure-Python twin; both take the same
steps with the same float operations, so they return the same envelopes
(``tests/unit/test_forest_mert.py`` compares them): per node, antecedents first, its incoming
edges' lines (an edge's own line plus, on each interval of its antecedents' merged breakpoints,
the sum of their lines, added antecedent by antecedent) sorted by slope, then highest
intercept, then the order they were made in, and swept into the upper envelope (a parallel
line below the top is dropped; the top is dropped where the new line crosses it at or before
its start).
"""

from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libcpp cimport bool
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

import numpy as np

cdef enum:
    MAX_ARITY = 8  # antecedents of an edge (Hiero: 2)


cdef struct Line:
    double a
    double b
    int64_t order  # the line's number among its node's candidates (ties: the first made)


cdef bool _before(const Line& left, const Line& right) noexcept nogil:
    if left.b != right.b:
        return left.b < right.b
    if left.a != right.a:
        return left.a > right.a
    return left.order < right.order


def node_envelopes(const int64_t[::1] node_end, const int64_t[:, ::1] tails,
                   const double[::1] a_edge, const double[::1] b_edge):
    """Every node's upper envelope along a search line, as
    :func:`circle.tune.forest.reference_node_envelopes` returns them: ``(starts, x, a, b,
    edge, ranks)``, node ``v``'s intervals at ``starts[v]:starts[v + 1]``."""
    cdef Py_ssize_t n_nodes = node_end.shape[0], arity = tails.shape[1]
    if arity > MAX_ARITY:
        raise ValueError(f"edges of arity {arity}: at most {MAX_ARITY}")
    cdef vector[int64_t] starts, out_edge, out_ranks, cand_edge, cand_ranks
    cdef vector[double] out_x, out_a, out_b
    cdef vector[Line] lines
    cdef Line line
    cdef int64_t index[MAX_ARITY]
    cdef int64_t antecedent[MAX_ARITY]
    cdef Py_ssize_t v, e, j, k, c, first = 0, top
    cdef double total_a, total_b, step, following, x
    starts.push_back(0)
    with nogil:
        for v in range(n_nodes):
            lines.clear()
            cand_edge.clear()
            cand_ranks.clear()
            for e in range(first, node_end[v]):
                k = 0
                for j in range(arity):
                    if tails[e, j] >= 0:
                        antecedent[k] = tails[e, j]
                        index[k] = starts[antecedent[k]]
                        k += 1
                while True:
                    total_a, total_b = a_edge[e], b_edge[e]
                    for j in range(k):
                        total_a += out_a[index[j]]
                        total_b += out_b[index[j]]
                    line.a, line.b, line.order = total_a, total_b, lines.size()
                    lines.push_back(line)
                    cand_edge.push_back(e)
                    for j in range(arity):
                        cand_ranks.push_back(index[j] - starts[antecedent[j]] if j < k else -1)
                    step = INFINITY
                    for j in range(k):
                        if index[j] + 1 < starts[antecedent[j] + 1]:
                            following = out_x[index[j] + 1]
                            if following < step:
                                step = following
                    if step == INFINITY:
                        break
                    for j in range(k):
                        if index[j] + 1 < starts[antecedent[j] + 1] \
                                and out_x[index[j] + 1] == step:
                            index[j] += 1
            first = node_end[v]
            sort(lines.begin(), lines.end(), _before)
            top = starts[v]  # the node's intervals are out_*[starts[v]:]
            for c in range(<Py_ssize_t>lines.size()):
                line = lines[c]
                if <Py_ssize_t>out_b.size() > top and line.b == out_b.back():
                    continue
                x = -INFINITY
                while <Py_ssize_t>out_b.size() > top:
                    x = (out_a.back() - line.a) / (line.b - out_b.back())
                    if x > out_x.back():
                        break
                    out_x.pop_back()
                    out_a.pop_back()
                    out_b.pop_back()
                    out_edge.pop_back()
                    for j in range(arity):
                        out_ranks.pop_back()
                    x = -INFINITY
                out_x.push_back(x)
                out_a.push_back(line.a)
                out_b.push_back(line.b)
                out_edge.push_back(cand_edge[line.order])
                for j in range(arity):
                    out_ranks.push_back(cand_ranks[line.order * arity + j])
            starts.push_back(out_x.size())
    return (_integers(starts), _doubles(out_x), _doubles(out_a), _doubles(out_b),
            _integers(out_edge), _integers(out_ranks).reshape(out_edge.size(), arity))


cdef _integers(vector[int64_t]& values):
    if values.size() == 0:
        return np.zeros(0, np.int64)
    return np.asarray(<int64_t[:values.size()]>values.data()).copy()


cdef _doubles(vector[double]& values):
    if values.size() == 0:
        return np.zeros(0)
    return np.asarray(<double[:values.size()]>values.data()).copy()


def derivations(const int64_t[::1] starts, const int64_t[::1] edges,
                const int64_t[:, ::1] ranks, const int64_t[:, ::1] tails,
                const int64_t[::1] edge_target, const int64_t[::1] target_end,
                const int64_t[::1] symbols, const double[:, ::1] features, int64_t first,
                int64_t last):
    """The derivations on envelope rows ``first:last`` of :func:`node_envelopes`, as
    :func:`circle.tune.forest.reference_derivations` reads them: ``(sums, word_end, word_ids)``,
    row ``first + i``'s feature vector ``sums[i]`` (its edges' added one after the other in
    the order of :meth:`KBest.features <circle.decoder.kbest.KBest.features>`) and its output,
    word ids ``word_ids[word_end[i - 1]:word_end[i]]``."""
    cdef Py_ssize_t m = last - first, d = features.shape[1], arity = tails.shape[1]
    sums_arr = np.zeros((m, d))
    cdef double[:, ::1] sums = sums_arr
    cdef vector[int64_t] stack, frame_row, frame_pos, word_end, word_ids
    cdef Py_ssize_t i, j, k, row, e, t, lo, position, symbol
    with nogil:
        for i in range(m):
            stack.push_back(first + i)
            while not stack.empty():
                row = stack.back()
                stack.pop_back()
                e = edges[row]
                for j in range(d):
                    sums[i, j] += features[e, j]
                for k in range(arity):
                    if tails[e, k] >= 0:
                        stack.push_back(starts[tails[e, k]] + ranks[row, k])
            frame_row.push_back(first + i)
            frame_pos.push_back(0)
            while not frame_row.empty():
                row = frame_row.back()
                position = frame_pos.back()
                e = edges[row]
                t = edge_target[e]
                lo = target_end[t - 1] if t > 0 else 0
                if lo + position >= target_end[t]:
                    frame_row.pop_back()
                    frame_pos.pop_back()
                    continue
                frame_pos[frame_pos.size() - 1] = position + 1
                symbol = symbols[lo + position]
                if symbol >= 0:
                    word_ids.push_back(symbol)
                else:
                    k = -1 - symbol
                    frame_row.push_back(starts[tails[e, k]] + ranks[row, k])
                    frame_pos.push_back(0)
            word_end.push_back(word_ids.size())
    return sums_arr, _integers(word_end), _integers(word_ids)

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The upper envelopes of MERT's exact line search (Och 2003, §6; thesis §3.2.3), compiled.

For each segment, the hypotheses' model scores along a search direction are lines
``a + gamma * b``; the envelope is the sequence of top lines as ``gamma`` runs from -inf to
+inf. :func:`circle.tune.mert.reference_upper_envelopes` is the pure-NumPy twin; both follow the
same steps with the same float operations, so they return the same events
(``tests/unit/test_mert.py`` compares them):

* the first top line is the flattest (smallest ``b``), then the highest, then the first row;
* from the top line ``t``, every steeper line ``r`` crosses it at
  ``x = (a[t] - a[r]) / (b[r] - b[t])``; the next top line is the one crossing first, then the
  steepest, then the first row; its event is at ``max(x, previous event)`` so that a segment's
  events stay in order despite rounding.

One pass per event over the segment's rows still steeper than its top line: at most
O(rows x events), with a few events per segment.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int64_t

import numpy as np


def upper_envelopes(const int64_t[::1] starts, const double[::1] a, const double[::1] b):
    """Envelopes of the lines ``a + gamma * b`` of every segment (segment ``k`` owns rows
    ``starts[k]:starts[k+1]``).

    Returns ``(first, x, before, after)`` as :func:`circle.tune.mert.upper_envelopes` documents;
    the events are grouped by segment, each segment's in increasing ``x`` order.
    """
    cdef Py_ssize_t n_rows = a.shape[0], n_segments = starts.shape[0]
    if b.shape[0] != n_rows:
        raise ValueError("a and b must have one value per row")
    first_arr = np.empty(n_segments, dtype=np.int64)
    cdef int64_t[::1] first = first_arr
    cdef Py_ssize_t capacity = 16 * n_segments + 16, n_events = 0
    x_arr = np.empty(capacity, dtype=np.float64)
    before_arr = np.empty(capacity, dtype=np.int64)
    after_arr = np.empty(capacity, dtype=np.int64)
    cdef double[::1] x = x_arr
    cdef int64_t[::1] before = before_arr, after = after_arr
    cdef Py_ssize_t k, lo, hi, r, i, kept, n_cand, top, nxt, longest = 0
    for k in range(n_segments):
        hi = starts[k + 1] if k + 1 < n_segments else n_rows
        longest = max(longest, hi - starts[k])
    candidates_arr = np.empty(longest, dtype=np.int64)
    cdef int64_t[::1] candidates = candidates_arr  # rows steeper than the top, in row order
    cdef double last_x, cross, best_x, top_a, top_b
    with nogil:
        for k in range(n_segments):
            lo = starts[k]
            hi = starts[k + 1] if k + 1 < n_segments else n_rows
            top = lo
            for r in range(lo + 1, hi):
                if b[r] < b[top] or (b[r] == b[top] and a[r] > a[top]):
                    top = r
            first[k] = top
            n_cand = 0
            for r in range(lo, hi):
                candidates[n_cand] = r
                n_cand += 1
            last_x = -INFINITY
            while True:
                top_a, top_b = a[top], b[top]
                nxt = -1
                best_x = INFINITY
                kept = 0
                for i in range(n_cand):
                    r = candidates[i]
                    if b[r] <= top_b:
                        continue
                    candidates[kept] = r
                    kept += 1
                    cross = (top_a - a[r]) / (b[r] - top_b)
                    if nxt < 0 or cross < best_x or (cross == best_x and b[r] > b[nxt]):
                        nxt, best_x = r, cross
                n_cand = kept
                if nxt < 0:
                    break
                if n_events == capacity:
                    with gil:
                        capacity *= 2
                        x_arr = np.resize(x_arr, capacity)
                        before_arr = np.resize(before_arr, capacity)
                        after_arr = np.resize(after_arr, capacity)
                        x, before, after = x_arr, before_arr, after_arr
                last_x = best_x if best_x > last_x else last_x
                x[n_events] = last_x
                before[n_events] = top
                after[n_events] = nxt
                n_events += 1
                top = nxt
    return first_arr, x_arr[:n_events].copy(), before_arr[:n_events].copy(), \
        after_arr[:n_events].copy()

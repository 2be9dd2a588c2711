# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Translation edit rate (TER, Snover et al. 2006) compiled: the statistics of sacrebleu's
``TER(case_sensitive=True)`` (no normalisation, punctuation kept), identical for every input
(``tests/unit/test_ter.py`` compares them with sacrebleu).

Tokens are whitespace-separated, as sacrebleu's preprocessing is with these settings.  For each
(hypothesis, reference) pair the words become small integer ids: the reference's distinct words
are 0..k-1, and every hypothesis word absent from the reference is k (it matches nothing).
Edits are found by sacrebleu's greedy search for block shifts, after Tercom:

* The *beam edit distance* is Levenshtein's recurrence restricted in row i to the columns
  ``d - width <= j < d + width`` around ``d = floor(i * |ref| / |hyp|)`` (``width`` 25, more
  for very unequal lengths; the last row runs to the end).  On equal costs a cell prefers the diagonal, then a hypothesis word, then
  a reference word; the trace back from the last cell aligns each reference position to a
  hypothesis position and marks the words in error.
* A *candidate shift* moves a hypothesis block of 1-10 words equal to a reference block that
  starts at most 50 positions away, both blocks holding an error and the reference block not
  aligned into the hypothesis block, to just after the hypothesis position aligned with the
  reference block's predecessor or any of its words (the front for position -1); consecutive
  equal targets are tried once.
* Each round applies the candidate with the largest reduction of the beam edit distance, then
  the longest block, the earliest block, the earliest target; the search stops when no
  candidate reduces the distance, or without the round's shift when the candidates counted
  over the pair reach 1000.  Edits = shifts + beam edit distance of the final hypothesis.
* An empty reference costs one edit per hypothesis word and has length 0; over several
  references, the fewest edits and the mean length.

Candidates are scored by the bit-parallel Levenshtein algorithm of Myers (1999), in blocks of
64 reference words, resumed from the state after the hypothesis prefix the shift leaves
unchanged.  Any path through a cell outside the beam costs at least ``beam_floor``, so a
distance below it is the beam edit distance; otherwise the beam recurrence is rerun from the
prefix's row.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport ceil, floor
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

import numpy as np

cdef enum:
    MAX_SHIFT_SIZE = 10
    MAX_SHIFT_DISTANCE = 50
    BEAM_WIDTH = 25
    MAX_SHIFT_CANDIDATES = 1000
    INFINITE = 1 << 30

cdef enum:  # how a cell of the beam edit distance is reached
    UNREACHED, MATCH, SUBSTITUTION, HYP_WORD, REF_WORD


cdef struct Pair:
    # one (hypothesis, reference) pair and the buffers of its shift search
    int n_hyp
    int n_ref
    int blocks  # 64-bit words per bit vector over reference positions
    uint64_t last_bit  # the last reference position's bit in its block
    int32_t beam_floor  # least cost of a path through a cell outside the beam
    int32_t* ref
    int32_t* words  # the current hypothesis
    int32_t* shifted  # a candidate's hypothesis
    int32_t* beam_start  # row i keeps columns beam_start[i] <= j < beam_end[i]
    int32_t* beam_end
    int32_t* cost  # (n_hyp + 1) x (n_ref + 1) beam edit distances of the current hypothesis
    uint8_t* step  # how each cell is reached
    int32_t* rows  # two rows of the beam recurrence for a candidate
    int32_t* align  # the hypothesis position aligned to each reference position
    int32_t* hyp_errors  # errors among the first i hypothesis / reference words
    int32_t* ref_errors
    uint64_t* positions  # (k + 1) x blocks: the reference positions of each word id
    uint64_t* prefix_vp  # (n_hyp + 1) x blocks: Myers' vertical deltas after each prefix
    uint64_t* prefix_vn
    int32_t* prefix_distance  # (n_hyp + 1): Levenshtein distance of each prefix
    uint64_t* vp
    uint64_t* vn
    int32_t* candidates  # start, length, target of each candidate shift of a round


cdef class Workspace:
    """The buffers of :c:type:`Pair` for hypotheses and references up to the given lengths,
    and pairs of up to ``max_cells`` = (hypothesis length + 1) x (reference length + 1)."""

    cdef Pair pair
    cdef list allocations

    def __cinit__(self, int max_hyp, int max_ref, size_t max_cells):
        cdef int blocks = max_ref // 64 + 1
        cdef size_t hyp = max_hyp + 1, ref = max_ref + 1
        self.allocations = []
        p = &self.pair
        p.ref = <int32_t*>self.allocate(ref * 4)
        p.words = <int32_t*>self.allocate(hyp * 4)
        p.shifted = <int32_t*>self.allocate(hyp * 4)
        p.beam_start = <int32_t*>self.allocate(hyp * 4)
        p.beam_end = <int32_t*>self.allocate(hyp * 4)
        p.cost = <int32_t*>self.allocate(max_cells * 4)
        p.step = <uint8_t*>self.allocate(max_cells)
        p.rows = <int32_t*>self.allocate(2 * ref * 4)
        p.align = <int32_t*>self.allocate(ref * 4)
        p.hyp_errors = <int32_t*>self.allocate(hyp * 4)
        p.ref_errors = <int32_t*>self.allocate(ref * 4)
        p.positions = <uint64_t*>self.allocate(ref * blocks * 8)
        p.prefix_vp = <uint64_t*>self.allocate(max_cells * 8)
        p.prefix_vn = <uint64_t*>self.allocate(max_cells * 8)
        p.prefix_distance = <int32_t*>self.allocate(hyp * 4)
        p.vp = <uint64_t*>self.allocate(blocks * 8)
        p.vn = <uint64_t*>self.allocate(blocks * 8)
        p.candidates = <int32_t*>self.allocate(3 * MAX_SHIFT_CANDIDATES * 4)

    cdef void* allocate(self, size_t size) except NULL:
        cdef void* memory = PyMem_Malloc(size)
        if memory == NULL:
            raise MemoryError()
        self.allocations.append(<size_t>memory)
        return memory

    def __dealloc__(self):
        for memory in self.allocations:
            PyMem_Free(<void*><size_t>memory)


cdef void set_beam(Pair* p) noexcept nogil:
    """The beam's columns in each row and the least cost of a path leaving it."""
    cdef int n_hyp = p.n_hyp, n_ref = p.n_ref, width = BEAM_WIDTH, i, diagonal, j
    cdef int surplus = n_ref - n_hyp, cheapest
    cdef double ratio = <double>n_ref / n_hyp
    if BEAM_WIDTH < ratio / 2:
        width = <int>ceil(ratio / 2 + BEAM_WIDTH)
    p.beam_start[0], p.beam_end[0] = 0, n_ref + 1
    p.beam_floor = INFINITE
    for i in range(1, n_hyp + 1):
        diagonal = <int>floor(i * ratio)
        p.beam_start[i] = max(0, diagonal - width)
        p.beam_end[i] = n_ref + 1 if i == n_hyp else min(n_ref + 1, diagonal + width)
        # a path through (i, j) costs at least |j - i| + |surplus - (j - i)|, least at
        # j = i + max(0, surplus); the nearest column outside the beam on either side
        cheapest = i + max(0, surplus)
        if p.beam_start[i] > 0:
            j = min(cheapest, p.beam_start[i] - 1)
            p.beam_floor = min(p.beam_floor, abs(j - i) + abs(surplus - (j - i)))
        if p.beam_end[i] <= n_ref:
            j = min(n_ref, max(cheapest, p.beam_end[i]))
            p.beam_floor = min(p.beam_floor, abs(j - i) + abs(surplus - (j - i)))


cdef inline int32_t cheapest_step(int32_t diagonal, int32_t hyp_word, int32_t ref_word,
                                  uint8_t* how, uint8_t diagonal_step) noexcept nogil:
    """The least of the three costs (unreached cells stay unreached); ties go to the first."""
    cdef int32_t best = INFINITE
    how[0] = UNREACHED
    if diagonal < best:
        best, how[0] = diagonal, diagonal_step
    if hyp_word < best:
        best, how[0] = hyp_word, HYP_WORD
    if ref_word < best:
        best, how[0] = ref_word, REF_WORD
    return best


cdef int32_t align_words(Pair* p) noexcept nogil:
    """Beam edit distance of the current hypothesis, its alignment and errors; -1 if the last
    cell is unreachable."""
    cdef int n_hyp = p.n_hyp, n_ref = p.n_ref, stride = n_ref + 1, i, j
    cdef int32_t* row
    cdef int32_t* above
    cdef uint8_t* how
    cdef bint equal
    for j in range(stride):
        p.cost[j], p.step[j] = j, REF_WORD
    for i in range(1, n_hyp + 1):
        row, above, how = p.cost + i * stride, p.cost + (i - 1) * stride, p.step + i * stride
        for j in range(stride):
            row[j], how[j] = INFINITE, UNREACHED
        for j in range(p.beam_start[i], p.beam_end[i]):
            if j == 0:
                row[0], how[0] = above[0] + 1, HYP_WORD
            else:
                equal = p.words[i - 1] == p.ref[j - 1]
                row[j] = cheapest_step(above[j - 1] + (not equal), above[j] + 1, row[j - 1] + 1,
                                       &how[j], MATCH if equal else SUBSTITUTION)
    # trace back; errors are counted per position first, summed below
    i, j = n_hyp, n_ref
    memset(p.hyp_errors, 0, (n_hyp + 1) * 4)
    memset(p.ref_errors, 0, (n_ref + 1) * 4)
    while i > 0 or j > 0:
        how = p.step + i * stride + j
        if how[0] == MATCH or how[0] == SUBSTITUTION:
            i, j = i - 1, j - 1
            p.align[j] = i
            p.hyp_errors[i + 1] = p.ref_errors[j + 1] = how[0] == SUBSTITUTION
        elif how[0] == HYP_WORD:
            i -= 1
            p.hyp_errors[i + 1] = 1
        elif how[0] == REF_WORD:
            j -= 1
            p.align[j] = i - 1
            p.ref_errors[j + 1] = 1
        else:
            return -1
    for i in range(n_hyp):
        p.hyp_errors[i + 1] += p.hyp_errors[i]
    for j in range(n_ref):
        p.ref_errors[j + 1] += p.ref_errors[j]
    return p.cost[n_hyp * stride + n_ref]


cdef inline int advance(Pair* p, uint64_t* vp, uint64_t* vn, int32_t word) noexcept nogil:
    """Myers (1999): append a hypothesis word to the state ``vp, vn``; the change of the
    distance to the whole reference."""
    cdef const uint64_t* equal = p.positions + word * p.blocks
    cdef uint64_t eq, xv, xh, ph, mh, high
    cdef int b, carry = 1, out  # distance change along the block's top row; +1 above row 0
    for b in range(p.blocks):
        high = p.last_bit if b == p.blocks - 1 else <uint64_t>1 << 63
        eq = equal[b]
        xv = eq | vn[b]
        if carry < 0:
            eq |= 1
        xh = (((eq & vp[b]) + vp[b]) ^ vp[b]) | eq
        ph = vn[b] | ~(xh | vp[b])
        mh = vp[b] & xh
        out = 1 if ph & high else (-1 if mh & high else 0)
        ph, mh = ph << 1, mh << 1
        if carry < 0:
            mh |= 1
        elif carry > 0:
            ph |= 1
        vp[b] = mh | ~(xv | ph)
        vn[b] = ph & xv
        carry = out
    return carry


cdef void prefix_states(Pair* p) noexcept nogil:
    """Myers' state and distance after each prefix of the current hypothesis."""
    cdef int i, blocks = p.blocks
    for i in range(blocks):
        p.prefix_vp[i], p.prefix_vn[i] = ~<uint64_t>0, 0
    p.prefix_distance[0] = p.n_ref
    for i in range(p.n_hyp):
        memcpy(p.prefix_vp + (i + 1) * blocks, p.prefix_vp + i * blocks, blocks * 8)
        memcpy(p.prefix_vn + (i + 1) * blocks, p.prefix_vn + i * blocks, blocks * 8)
        p.prefix_distance[i + 1] = p.prefix_distance[i] + advance(
            p, p.prefix_vp + (i + 1) * blocks, p.prefix_vn + (i + 1) * blocks, p.words[i])


cdef int32_t shifted_distance(Pair* p, int first) noexcept nogil:
    """Beam edit distance of the candidate ``p.shifted``, equal to the current hypothesis before
    position ``first``."""
    cdef int n_hyp = p.n_hyp, n_ref = p.n_ref, stride = n_ref + 1, i, j
    cdef int32_t distance = p.prefix_distance[first]
    cdef int32_t* row
    cdef int32_t* above
    memcpy(p.vp, p.prefix_vp + first * p.blocks, p.blocks * 8)
    memcpy(p.vn, p.prefix_vn + first * p.blocks, p.blocks * 8)
    for i in range(first, n_hyp):
        distance += advance(p, p.vp, p.vn, p.shifted[i])
    if distance < p.beam_floor:
        return distance
    above, row = p.rows, p.rows + stride
    memcpy(above, p.cost + first * stride, stride * 4)
    for i in range(first + 1, n_hyp + 1):
        for j in range(stride):
            row[j] = INFINITE
        for j in range(p.beam_start[i], p.beam_end[i]):
            if j == 0:
                row[0] = above[0] + 1
            else:
                row[j] = min(INFINITE, above[j - 1] + (p.shifted[i - 1] != p.ref[j - 1]),
                             above[j] + 1, row[j - 1] + 1)
        above, row = row, above
    return above[n_ref]


cdef int shift(Pair* p, int start, int length, int target) noexcept nogil:
    """Write into ``p.shifted`` the current hypothesis with the block at ``start`` moved to
    ``target`` (sacrebleu's semantics); returns the first position that may differ."""
    cdef int n = p.n_hyp, end
    cdef int32_t* words = p.words
    cdef int32_t* out = p.shifted
    if target < start:  # words[:target] + block + words[target:start] + words[start + length:]
        memcpy(out + target, words + start, length * 4)
        memcpy(out + target + length, words + target, (start - target) * 4)
        memcpy(out + start + length, words + start + length, (n - start - length) * 4)
        return target
    # words[:start] + words[start + length:end] + block + words[end:]
    end = target if target > start + length else min(n, length + target)
    memcpy(out + start, words + start + length, (end - start - length) * 4)
    memcpy(out + end - length, words + start, length * 4)
    memcpy(out + end, words + end, (n - end) * 4)
    return start


cdef int collect_candidates(Pair* p, int limit) noexcept nogil:
    """The round's candidate shifts into ``p.candidates``; their number, or -1 if it reaches
    ``limit``."""
    cdef int n_hyp = p.n_hyp, n_ref = p.n_ref, count = 0, start, r, length, k, target, previous
    for start in range(n_hyp):
        for r in range(max(0, start - MAX_SHIFT_DISTANCE),
                       min(n_ref, start + MAX_SHIFT_DISTANCE + 1)):
            length = 0
            while (length < MAX_SHIFT_SIZE and start + length < n_hyp and r + length < n_ref
                   and p.words[start + length] == p.ref[r + length]):
                length += 1
                if (p.hyp_errors[start + length] == p.hyp_errors[start]
                        or p.ref_errors[r + length] == p.ref_errors[r]
                        or start <= p.align[r] < start + length):
                    continue
                previous = -1
                for k in range(r - 1, r + length):
                    target = 0 if k < 0 else p.align[k] + 1
                    if target == previous:
                        continue
                    previous = target
                    count += 1
                    if count >= limit:
                        return -1
                    p.candidates[3 * count - 3] = start
                    p.candidates[3 * count - 2] = length
                    p.candidates[3 * count - 1] = target
    return count


cdef int32_t pair_edits(Pair* p) noexcept nogil:
    """TER edits of the hypothesis ``p.words`` against ``p.ref`` (both non-empty); -1 if the
    beam edit distance is undefined."""
    cdef int n_hyp = p.n_hyp, checked = 0, shifts = 0, count, c, first
    cdef int start, length, target, best_start = 0, best_length = 0, best_target = 0
    cdef int32_t distance, gain, best_gain
    set_beam(p)
    while True:
        distance = align_words(p)
        if distance < 0:
            return -1
        count = collect_candidates(p, MAX_SHIFT_CANDIDATES - checked)
        if count < 0:
            break
        checked += count
        prefix_states(p)
        best_gain = 0
        for c in range(count):
            start, length, target = (p.candidates[3 * c], p.candidates[3 * c + 1],
                                     p.candidates[3 * c + 2])
            gain = distance - shifted_distance(p, shift(p, start, length, target))
            if gain > best_gain or gain == best_gain > 0 and (
                    length > best_length or length == best_length and (
                        start < best_start or start == best_start and target < best_target)):
                best_gain, best_start, best_length, best_target = gain, start, length, target
        if best_gain <= 0:
            break
        first = shift(p, best_start, best_length, best_target)
        memcpy(p.words + first, p.shifted + first, (n_hyp - first) * 4)
        shifts += 1
    return shifts + distance


cdef int32_t reference_edits(Pair* p, const int32_t* hyp, int n_hyp, const int32_t* ref,
                             int n_ref, int32_t* local) noexcept nogil:
    """TER edits of ``hyp`` against ``ref`` (ids of the call's vocabulary), mapped to the
    pair's word ids through ``local`` (-1 for every word on entry and on return); -1 if the
    beam edit distance is undefined."""
    cdef int k = 0, i, j, word
    if n_ref == 0:
        return n_hyp
    if n_hyp == 0:
        return n_ref
    p.n_hyp, p.n_ref = n_hyp, n_ref
    p.blocks = (n_ref + 63) // 64
    p.last_bit = <uint64_t>1 << ((n_ref - 1) % 64)
    for j in range(n_ref):
        if local[ref[j]] < 0:
            local[ref[j]] = k
            k += 1
        p.ref[j] = local[ref[j]]
    for i in range(n_hyp):
        word = local[hyp[i]]
        p.words[i] = word if word >= 0 else k
    for j in range(n_ref):
        local[ref[j]] = -1
    memset(p.positions, 0, (k + 1) * p.blocks * 8)
    for j in range(n_ref):
        p.positions[p.ref[j] * p.blocks + j // 64] |= <uint64_t>1 << (j % 64)
    return pair_edits(p)


def ter_statistics(hypotheses, references):
    """TER statistics of each hypothesis against its own list of references: a float64 array
    of shape ``(n, 2)`` holding the fewest edits over the references and the mean reference
    length, as sacrebleu's ``TER(case_sensitive=True)`` gives them (Snover et al. 2006).

    ``references[i]`` is the list of reference strings of ``hypotheses[i]``; it must not be
    empty.  Each distinct reference string is tokenised once per call.
    """
    cdef Py_ssize_t n = len(hypotheses), i, r
    if len(references) != n:
        raise ValueError(f"{n} hypotheses but {len(references)} reference lists")
    vocabulary = {}
    tokens = []  # word ids of every hypothesis and distinct reference, one after another
    hyp_spans = np.zeros((n, 2), dtype=np.int64)  # start and length in `tokens`
    ref_list_starts = np.zeros(n + 1, dtype=np.int64)  # each hypothesis's rows of ref_spans
    ref_rows = []  # each reference's span in `tokens`
    spans = {}  # distinct reference string -> its span
    for i in range(n):
        words = hypotheses[i].split()
        hyp_spans[i] = len(tokens), len(words)
        tokens += [vocabulary.setdefault(word, len(vocabulary)) for word in words]
        if len(references[i]) == 0:
            raise ValueError(f"hypothesis {i} has an empty reference list")
        for ref in references[i]:
            span = spans.get(ref)
            if span is None:
                words = ref.split()
                span = spans[ref] = (len(tokens), len(words))
                tokens += [vocabulary.setdefault(word, len(vocabulary)) for word in words]
            ref_rows.append(span)
        ref_list_starts[i + 1] = len(ref_rows)
    ref_spans = np.array(ref_rows, dtype=np.int64).reshape(-1, 2)
    cdef int32_t[::1] token_ids = np.array(tokens, dtype=np.int32)
    cdef int32_t[::1] local = np.full(max(len(vocabulary), 1), -1, dtype=np.int32)
    cdef int64_t[:, ::1] hyp_view = hyp_spans
    cdef int64_t[:, ::1] ref_view = ref_spans
    cdef int64_t[::1] list_view = ref_list_starts
    out = np.zeros((n, 2), dtype=np.float64)
    cdef double[:, ::1] stats = out
    pair_cells = (np.repeat(hyp_spans[:, 1] + 1, np.diff(ref_list_starts))
                  * (ref_spans[:, 1] + 1))
    cdef Workspace workspace = Workspace(int(hyp_spans[:, 1].max(initial=0)),
                                         int(ref_spans[:, 1].max(initial=0)),
                                         int(pair_cells.max(initial=1)))
    cdef Pair* p = &workspace.pair
    cdef int32_t edits, best
    cdef int64_t length_sum
    cdef const int32_t* ids = &token_ids[0] if token_ids.shape[0] else NULL
    cdef bint failed = False
    with nogil:
        for i in range(n):
            best, length_sum = INFINITE, 0
            for r in range(list_view[i], list_view[i + 1]):
                edits = reference_edits(p, ids + hyp_view[i, 0], <int>hyp_view[i, 1],
                                        ids + ref_view[r, 0], <int>ref_view[r, 1], &local[0])
                if edits < 0:
                    failed = True
                    break
                best = min(best, edits)
                length_sum += ref_view[r, 1]
            if failed:
                break
            stats[i, 0] = best
            stats[i, 1] = <double>length_sum / (list_view[i + 1] - list_view[i])
    if failed:
        raise RuntimeError(f"TER: the beam edit distance of hypothesis {i} is undefined")
    return out


def edit_distances(const int32_t[::1] ids, const int64_t[::1] offsets,
                   const int32_t[::1] target, Py_ssize_t vocabulary):
    """The Levenshtein distance in words from each candidate ``ids[offsets[i]:offsets[i + 1]]``
    to ``target``, word ids below ``vocabulary``: an int64 array (substitutions, insertions and
    deletions cost 1; :func:`circle.tune.metrics.wer_stats_reference` is the textbook twin). Targets
    of up to 64 words take the bit-parallel algorithm of Myers (1999) in Hyyrö's (2001) form,
    one step per candidate word; longer ones the row-by-row recurrence."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, m = target.shape[0], i, j, k
    out = np.zeros(max(n, 0), dtype=np.int64)
    cdef int64_t[::1] distances = out
    cdef uint64_t[::1] peq = np.zeros(vocabulary if m <= 64 else 0, dtype=np.uint64)
    cdef int32_t[::1] row = np.zeros(m + 1 if m > 64 else 0, dtype=np.int32)
    cdef uint64_t high, pv, mv, eq, xv, xh, ph, mh
    cdef int64_t score
    cdef int32_t diagonal, above
    with nogil:
        if m <= 64:
            for j in range(m):
                peq[target[j]] |= <uint64_t>1 << j
            high = <uint64_t>1 << (m - 1) if m else 0
        for i in range(n):
            if m == 0:
                distances[i] = offsets[i + 1] - offsets[i]
            elif m <= 64:
                pv, mv, score = ~<uint64_t>0, 0, m
                for j in range(offsets[i], offsets[i + 1]):
                    eq = peq[ids[j]]
                    xv = eq | mv
                    xh = (((eq & pv) + pv) ^ pv) | eq
                    ph = mv | ~(xh | pv)
                    mh = pv & xh
                    if ph & high:
                        score += 1
                    elif mh & high:
                        score -= 1
                    ph = (ph << 1) | 1
                    mh = mh << 1
                    pv = mh | ~(xv | ph)
                    mv = ph & xv
                distances[i] = score
            else:
                for j in range(m + 1):
                    row[j] = <int32_t>j
                for j in range(offsets[i], offsets[i + 1]):
                    diagonal, row[0] = row[0], <int32_t>(j - offsets[i] + 1)
                    for k in range(m):
                        above = row[k + 1]
                        row[k + 1] = min(diagonal + (ids[j] != target[k]), above + 1, row[k] + 1)
                        diagonal = above
                distances[i] = row[m]
    return out

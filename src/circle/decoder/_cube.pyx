# cython: language_level=3, boundscheck=False, wraparound=False, auto_pickle=False
"""The compiled twins of :mod:`circle.decoder.cube` (cube pruning, Chiang 2007 §5.2),
:mod:`circle.decoder.kbest` (lazy unique k-best, Huang & Chiang 2005) and
:func:`circle.decoder.chart.match` (CKY+ rule matching) in Cython.

Built at install time by ``setup.py`` (``pip install -e .``). :class:`CubePruning` runs the
algorithm of :class:`circle.decoder.cube.CubePruning` and
:meth:`LanguageModel.combine <circle.decoder.lm.LanguageModel.combine>` with the same
floating-point operations in the same order and the same tie-breaking, so both engines give
identical n-best lists (the tests check this). Only representations differ:

* words are integer ids, and KenLM states are interned as integer ids (equal states, one id);
* an :class:`Option` keeps its target as word ids, read from the grammar's tokenised target
  sides; its :class:`~circle.decoder.grammar.Rule` is parsed only if someone asks for it;
* KenLM scores a (state, word) transition once; after that it is read from a hash table
  (:class:`Table`), as are the cube positions already pushed;
* a cell's cubes are C structs that borrow their option and item lists from the caller;
* candidates are C structs in a vector indexed by their push counter, ordered by a heap of
  (heuristic, −counter); an :class:`Edge` is made only when its candidate is popped, and
  likewise a k-best :class:`Derivation`;
* a cell's items are found by their LM summary in a hash table of item indices.
* in forest mode a hypergraph is re-weighted and read as arrays (:class:`FlatForest`,
  :class:`FlatKBest`): derivations are C structs kept in node states that the next list reuses
  (:class:`FlatStates`); a derivation's yield is its length and two polynomial hashes made from
  its antecedents' (the unique-yield test), spelled out in words only for the goal's k best;
  a node's best derivation is the re-weighting's best edge, its other edges become candidates
  only when a parent asks for its second best.
"""

cimport cython
from cpython.mem cimport PyMem_Calloc, PyMem_Free
from cpython.ref cimport PyObject
from libc.stdint cimport SIZE_MAX, int32_t, int64_t, uint32_t, uint64_t
from libc.math cimport INFINITY
from libc.string cimport memcmp, memcpy, memset
from libcpp.algorithm cimport make_heap, pop_heap, push_heap, sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

import kenlm
import numpy as np

from circle.decoder.chart import Matches
from circle.decoder.grammar import NT
from circle.decoder.lm import LN10 as _LN10

cdef double LN10 = _LN10
cdef int64_t forests_made = 0  # stamps the options a FlatForest numbers

cdef enum:
    MAX_LEFT = 15  # left words of an item: n − 1 for LM orders up to 16
    MAX_ARITY = 2  # nonterminals of a rule (two for the glue rule and Hiero rules)
    MAX_TARGET = 31  # target symbols of a rule (one more for the goal's </s>)


cdef struct Entry:
    # a slot of a Table; 0 marks an empty slot. Values: a KenLM transition (state << 32 | word)
    # + 1 → (score, next state); none in a set of cube positions
    uint64_t key
    float score
    int32_t state


cdef struct Summary:
    # an item's LM summary, as circle.decoder.cube.Item's left, right and length
    int32_t right  # state id, −1 for none
    int32_t length
    int32_t nleft
    int32_t left[MAX_LEFT]


cdef struct Cube:
    # a cube of CubePruning.fill, as borrowed references to its lists (which the caller holds)
    PyObject* options  # list of Option, best first
    PyObject* tails[MAX_ARITY]  # per nonterminal, the list of its cell's Items, best first
    int32_t arity


cdef struct Candidate:
    int32_t cube
    int32_t position[MAX_ARITY + 1]  # option rank, then antecedent ranks; 0 past the arity
    double score
    double lm
    double inside
    double heuristic
    Summary summary


@cython.final
cdef class Table:
    """A hash table from nonzero 64-bit keys to :class:`Entry` values; a set if they are unused.

    Open addressing with linear probing and Fibonacci hashing. It starts with ``2 ** bits``
    slots and doubles when half full; when it holds ``limit`` entries, it is emptied instead.
    """

    cdef Entry* slots
    cdef int bits
    cdef int initial_bits
    cdef size_t size
    cdef size_t limit

    def __cinit__(self, int bits, size_t limit):
        self.initial_bits = bits
        self.limit = limit
        self._allocate(bits)

    def __dealloc__(self):
        PyMem_Free(self.slots)

    cdef Entry* slot(self, uint64_t key) noexcept:
        """The slot of ``key``: its entry, or the empty slot where it belongs."""
        cdef size_t mask = (<size_t>1 << self.bits) - 1
        cdef size_t i = (key * <uint64_t>11400714819323198485ULL) >> (64 - self.bits)
        while self.slots[i].key != key and self.slots[i].key != 0:
            i = (i + 1) & mask
        return &self.slots[i]

    cdef bint add(self, uint64_t key) except -1:
        """Add ``key`` as a set element; False if it was there."""
        cdef Entry* entry = self.slot(key)
        if entry.key == key:
            return False
        entry.key = key
        self.added()
        return True

    cdef int added(self) except -1:
        """Count an entry just written into an empty slot; grow or empty the table."""
        cdef Entry* old = self.slots
        cdef size_t n = <size_t>1 << self.bits, i
        self.size += 1
        if self.size >= self.limit:
            self.clear()
        elif 2 * self.size > n:
            self._allocate(self.bits + 1)
            for i in range(n):
                if old[i].key:
                    self.slot(old[i].key)[0] = old[i]
                    self.size += 1
            PyMem_Free(old)
        return 0

    cdef int clear(self) except -1:
        """Remove all entries, shrinking the table to its initial size."""
        if self.bits > self.initial_bits:
            PyMem_Free(self.slots)
            self._allocate(self.initial_bits)
        else:
            memset(self.slots, 0, (<size_t>1 << self.bits) * sizeof(Entry))
            self.size = 0
        return 0

    cdef int _allocate(self, int bits) except -1:
        self.slots = <Entry*>PyMem_Calloc(<size_t>1 << bits, sizeof(Entry))
        if self.slots == NULL:
            raise MemoryError()
        self.bits = bits
        self.size = 0
        return 0


@cython.final
@cython.no_gc
@cython.freelist(1024)
cdef class Option:
    """A rule ready for one decoding, as :class:`circle.decoder.cube.Option`.

    Made by :meth:`CubePruning.options` or :meth:`CubePruning.option`. Its target side is kept
    as ``symbols``: word ids of the search (``words`` spells them), −1 − p for the nonterminal
    at source position p. A grammar row's :class:`~circle.decoder.grammar.Rule` is parsed when
    ``rule`` is first read.
    """

    cdef readonly int miss
    cdef readonly double score
    cdef readonly double priority
    cdef int64_t forest  # the FlatForest that last numbered it, and its number there
    cdef int32_t number
    cdef object _rule
    cdef object grammar
    cdef int64_t row
    cdef list words
    cdef int32_t length
    cdef int32_t symbols[MAX_TARGET]

    @property
    def rule(self):
        if self._rule is None:
            self._rule = self.grammar.rules_at([self.row])[0]
        return self._rule


@cython.final
@cython.no_gc
@cython.freelist(1024)
cdef class Item:
    """A +LM chart item, as :class:`circle.decoder.cube.Item` with its LM summary in C.

    Items and edges are not tracked by the cyclic garbage collector: the chart is acyclic.
    """

    cdef readonly double inside
    cdef readonly double heuristic
    cdef readonly list edges
    cdef Summary summary
    cdef int32_t number  # in its FlatForest


@cython.final
@cython.no_gc
@cython.freelist(1024)
cdef class Edge:
    """A hyperedge, as :class:`circle.decoder.cube.Edge`; its rule is its option's, its
    targeting value ``miss`` its option's until :meth:`CubePruning.retarget` changes it."""

    cdef readonly Option option
    cdef readonly double score
    cdef readonly double lm
    cdef readonly int32_t miss
    cdef int32_t arity
    cdef Item first  # the antecedents, None past the arity
    cdef Item second

    @property
    def tails(self):
        return (self.first, self.second)[:self.arity]

    @property
    def rule(self):
        return self.option.rule


@cython.final
cdef class FlatForest:
    """A hypergraph as arrays, for re-weighting it towards many targets and reading its k-best
    lists (forest mode): per item (antecedents first, the goal last) the end of its edges; per
    edge its untargeted score (``base``), LM score, distinct option and antecedents' item
    numbers (−1: none); per distinct option its target symbols (word ids, −1 − p for the
    nonterminal at p). :meth:`CubePruning.retarget` fills the targeted scores, insides and
    best edges."""

    cdef list options  # the distinct Options, for their rules' values
    cdef vector[double] base
    cdef vector[int32_t] item_end
    cdef vector[int32_t] edge_option
    cdef vector[int32_t] edge_first
    cdef vector[int32_t] edge_second
    cdef vector[double] edge_lm
    cdef vector[int32_t] option_offsets
    cdef vector[int32_t] option_symbols
    # set by CubePruning.retarget for one target
    cdef vector[int32_t] misses  # per option
    cdef vector[double] scores  # per edge
    cdef vector[double] insides  # per item
    cdef vector[int32_t] best_edges  # per item, its first edge of the best score (−1: none)
    # rule values of the options, loaded when a derivation's features are first summed
    cdef vector[int32_t] value_offsets  # per option, −1 until loaded
    cdef vector[int32_t] value_lengths
    cdef vector[double] values

    def __init__(self, list items, double weight):
        """Number the chart ``items`` and their options in place, the goal (a
        :class:`circle.decoder.cube.Item`) last."""
        global forests_made
        forests_made += 1
        cdef int64_t stamp = forests_made
        cdef Py_ssize_t n = len(items), i, s
        cdef Edge edge
        cdef Option option
        self.options = []
        self.option_offsets.push_back(0)
        for i in range(n):
            node = items[i]
            if i < n - 1:
                (<Item>node).number = <int32_t>i
            for edge in node.edges:
                option = edge.option
                if option.forest != stamp:
                    option.forest, option.number = stamp, len(self.options)
                    self.options.append(option)
                    for s in range(option.length):
                        self.option_symbols.push_back(option.symbols[s])
                    self.option_offsets.push_back(self.option_symbols.size())
                self.edge_option.push_back(option.number)
                self.edge_first.push_back(edge.first.number if edge.arity > 0 else -1)
                self.edge_second.push_back(edge.second.number if edge.arity > 1 else -1)
                self.edge_lm.push_back(edge.lm)
                self.base.push_back(edge.score - weight * edge.miss)
            self.item_end.push_back(self.edge_option.size())
        self.value_offsets.assign(len(self.options), -1)
        self.value_lengths.assign(len(self.options), 0)

    @property
    def edges(self):
        """The number of hyperedges."""
        return self.edge_option.size()

    cdef Py_ssize_t option_values(self, int32_t o) except -1:
        """The offset of option ``o``'s rule values in ``values`` (loaded on first use)."""
        cdef tuple rule_values
        cdef Py_ssize_t i
        if self.value_offsets[o] < 0:
            rule_values = (<Option>self.options[o]).rule.values
            self.value_offsets[o] = self.values.size()
            self.value_lengths[o] = len(rule_values)
            for i in range(len(rule_values)):
                self.values.push_back(<double>rule_values[i])
        return self.value_offsets[o]


@cython.final
cdef class CubePruning:
    """The search loop of one decoder, as :class:`circle.decoder.cube.CubePruning`.

    Word ids, state ids and the cache of KenLM transitions last as long as the decoder; the
    first two grow with the words and LM contexts seen, the cache up to ``max_transitions``
    entries (at most 32 bytes each).
    """

    cdef readonly double lm_weight
    cdef readonly Py_ssize_t pop_limit
    cdef readonly Py_ssize_t max_transitions
    cdef double estimate_weight
    cdef object model
    cdef int32_t context
    cdef int32_t null
    cdef int32_t bos
    cdef int32_t eos
    cdef dict word_ids
    cdef list words
    cdef dict state_ids
    cdef list states
    cdef Table transitions
    cdef tuple vocabulary  # of the grammar last used; word_map maps its word ids to ours
    cdef int32_t[:] word_map
    # buffers of fill(), kept for their capacity
    cdef vector[Candidate] candidates
    cdef vector[pair[double, Py_ssize_t]] heap  # (heuristic, −index into candidates)
    cdef Table seen  # cube positions pushed, as _key()s
    cdef Table recombined  # the cell's items by _summary_key(); an entry's state is an index
    cdef vector[pair[double, Py_ssize_t]] order  # (−heuristic, index) of the cell's items
    cdef vector[Cube] cubes  # of the cell being filled
    cdef vector[char] wanted  # retarget()'s target words by our id, all 0 between calls
    cdef FlatStates flat_states  # the node states of retarget()'s k-best lists

    def __init__(self, lm, double lm_weight, Py_ssize_t pop_limit,
                 Py_ssize_t max_transitions=1 << 20):
        if lm.order > MAX_LEFT + 1:
            raise ValueError(f"the compiled search supports LM orders up to {MAX_LEFT + 1}, "
                             f"not {lm.order}")
        self.lm_weight = lm_weight
        self.pop_limit = pop_limit
        self.max_transitions = max_transitions
        self.transitions = Table(16, max_transitions)
        self.seen = Table(10, SIZE_MAX)
        self.recombined = Table(8, SIZE_MAX)
        self.flat_states = FlatStates()
        self.estimate_weight = lm_weight * LN10
        self.model = lm.model
        self.context = lm.order - 1
        self.word_ids, self.words, self.state_ids, self.states = {}, [], {}, []
        null, bos = kenlm.State(), kenlm.State()
        self.model.NullContextWrite(null)
        self.model.BeginSentenceWrite(bos)
        self.null = self._state(null)
        self.bos = self._state(bos)
        self.eos = self._word("</s>")

    def fill(self, list cubes):
        """The items of one chart cell, best heuristic first; ``cubes`` as in
        :meth:`circle.decoder.cube.CubePruning.fill`."""
        cdef list options
        cdef tuple tails
        self.cubes.clear()
        for options, tails in cubes:
            self._add_cube(options, tails, None)
        return self._fill()

    def fill_span(self, list applications, dict options, dict cells):
        """The items of an X cell, as :meth:`circle.decoder.cube.CubePruning.fill_span`."""
        cdef tuple application
        self.cubes.clear()
        for application in applications:
            self._add_cube(options[application[0]], application[1], cells)
        return self._fill()

    cdef int _add_cube(self, list options, tuple tails, dict cells) except -1:
        """Append a cube of ``options`` over ``tails``: the item lists of its antecedent cells,
        or with ``cells`` given, their spans in it. The cube borrows the lists, which the
        caller's containers hold while the cell is filled."""
        cdef Cube cube
        cdef Py_ssize_t i
        cdef list cell
        if len(tails) > MAX_ARITY:
            raise ValueError(f"a rule with {len(tails)} nonterminals; at most {MAX_ARITY}")
        cube.options = <PyObject*>options
        cube.arity = <int32_t>len(tails)
        for i in range(cube.arity):
            cell = tails[i] if cells is None else cells[tails[i]]
            cube.tails[i] = <PyObject*>cell
        self.cubes.push_back(cube)
        return 0

    cdef list _fill(self):
        """Fill a cell from ``self.cubes``."""
        cdef Candidate popped
        cdef int32_t position[MAX_ARITY + 1]
        cdef uint64_t radix = _radix(self.cubes)
        cdef Py_ssize_t c, axis, size, i
        cdef list items = []
        cdef Cube* cube
        cdef Item item
        cdef Edge edge
        self.candidates.clear()
        self.heap.clear()
        self.seen.clear()
        self.recombined.clear()
        for c in range(<Py_ssize_t>self.cubes.size()):
            cube = &self.cubes[c]
            if len(<list>cube.options) and all(
                    len(<list>cube.tails[i]) for i in range(cube.arity)):
                memset(position, 0, sizeof(position))
                self.seen.add(_key(c, position, radix))
                self._push(c, position)
        for _ in range(self.pop_limit):
            if self.heap.empty():
                break
            pop_heap(self.heap.begin(), self.heap.end())
            popped = self.candidates[-self.heap.back().second]
            self.heap.pop_back()
            cube = &self.cubes[popped.cube]
            edge = Edge.__new__(Edge)
            edge.option = (<list>cube.options)[popped.position[0]]
            edge.miss = edge.option.miss
            edge.arity = cube.arity
            edge.first = (<list>cube.tails[0])[popped.position[1]] if cube.arity > 0 else None
            edge.second = (<list>cube.tails[1])[popped.position[2]] if cube.arity > 1 else None
            edge.score = popped.score
            edge.lm = popped.lm
            item = self._recombine(items, &popped.summary)
            if item is None:
                item = Item.__new__(Item)
                item.inside = popped.inside
                item.heuristic = popped.heuristic
                item.edges = [edge]
                item.summary = popped.summary
                items.append(item)
            else:
                item.edges.append(edge)
                if popped.inside > item.inside:
                    item.heuristic += popped.inside - item.inside
                    item.inside = popped.inside
            for axis in range(cube.arity + 1):
                position[:] = popped.position
                position[axis] += 1
                size = len(<list>cube.options) if axis == 0 else len(<list>cube.tails[axis - 1])
                if position[axis] < size and \
                        self.seen.add(_key(popped.cube, position, radix)):
                    self._push(popped.cube, position)
        self.order.clear()  # sort best heuristic first, ties in creation order
        for i in range(len(items)):
            self.order.push_back(pair[double, Py_ssize_t](-(<Item>items[i]).heuristic, i))
        sort(self.order.begin(), self.order.end())
        return [items[self.order[i].second] for i in range(len(items))]

    cdef Item _recombine(self, list items, Summary* summary):
        """The item of ``items`` with LM summary ``summary`` (same right state and left words),
        or None after recording that ``summary`` is the next item's, at index ``len(items)``.
        """
        cdef uint64_t key = _summary_key(summary)
        cdef Entry* entry
        cdef Item item
        while True:
            entry = self.recombined.slot(key)
            if entry.key == 0:
                entry.key = key
                entry.state = <int32_t>len(items)
                self.recombined.added()
                return None
            item = items[entry.state]
            if _same_summary(&item.summary, summary):
                return item
            key = key * <uint64_t>6364136223846793005ULL + 1  # a hash collision: probe on
            key += key == 0

    def sentence_edge(self, Option option, tuple tails):
        """The edge of ``option`` over ``tails`` whose target is read after ⟨s⟩ and before
        ⟨/s⟩, every word scored exactly, as :meth:`circle.decoder.cube.CubePruning.sentence_edge`.
        """
        cdef Summary summary
        cdef double exact = 0.0, estimate = 0.0
        cdef int32_t symbols[MAX_TARGET + 1]
        cdef Edge edge
        memcpy(symbols, option.symbols, option.length * sizeof(int32_t))
        symbols[option.length] = self.eos
        self._combine(symbols, option.length + 1, tails[0] if tails else None, None, True,
                      &summary, &exact, &estimate)
        edge = Edge.__new__(Edge)
        edge.option = option
        edge.miss = option.miss
        edge.arity = <int32_t>len(tails)
        edge.first = tails[0] if tails else None
        edge.lm = exact * LN10
        edge.score = option.score + self.lm_weight * edge.lm
        return edge

    def options(self, grammar, rows, scores, priorities, misses=None):
        """Options for grammar ``rows``, as :meth:`circle.decoder.cube.CubePruning.options`."""
        cdef const int32_t[:] ids = grammar.target_ids
        cdef const int64_t[:] offsets = grammar.target_offsets
        cdef const int64_t[:] wanted = np.asarray(rows, dtype=np.int64)
        cdef const double[:] score = np.asarray(scores, dtype=np.float64)
        cdef const double[:] priority = np.asarray(priorities, dtype=np.float64)
        cdef const int64_t[:] miss = None if misses is None else np.asarray(misses,
                                                                           dtype=np.int64)
        cdef Py_ssize_t r, t
        cdef int64_t row
        cdef int32_t symbol
        cdef Option option
        self._use(grammar)
        cdef int32_t[:] word_map = self.word_map
        out = []
        for r in range(len(wanted)):
            row = wanted[r]
            if offsets[row + 1] - offsets[row] > MAX_TARGET:
                _refuse_long_target(grammar.rules_at([row])[0])
            option = Option.__new__(Option)
            option.grammar = grammar
            option.row = row
            option.words = self.words
            option.score = score[r]
            option.priority = priority[r]
            option.miss = 0 if miss is None else <int>miss[r]
            option.length = <int32_t>(offsets[row + 1] - offsets[row])
            for t in range(option.length):
                symbol = ids[offsets[row] + t]
                option.symbols[t] = word_map[symbol] if symbol >= 0 else symbol
            out.append(option)
        return out

    def option(self, rule, int miss, double score, double priority):
        """An option for a rule outside the grammar, as
        :meth:`circle.decoder.cube.CubePruning.option`."""
        cdef tuple target = rule.target
        if len(target) > MAX_TARGET:
            _refuse_long_target(rule)
        cdef Option option = Option.__new__(Option)
        option._rule = rule
        option.row = -1
        option.words = self.words
        option.miss, option.score, option.priority = miss, score, priority
        option.length = len(target)
        for t, symbol in enumerate(target):
            option.symbols[t] = self._word(symbol) if type(symbol) is str else -1 - symbol
        return option

    def edge_scores(self, list items, double weight):
        """The scores of the edges of ``items`` without their targeting term, as
        :meth:`circle.decoder.cube.CubePruning.edge_scores`, in a :class:`FlatForest` that
        :meth:`retarget` reads instead of walking the objects."""
        return FlatForest(items, weight)

    def retarget(self, list items, FlatForest forest, target, double weight):
        """Re-weight a hypergraph towards the words ``target`` (thesis eq. 5.1) as
        :meth:`circle.decoder.cube.CubePruning.retarget` (the same operations in the same
        order), over the forest's arrays: the targeting value once per distinct option, then
        edge scores and insides. ``items`` is empty (the arrays are the hypergraph) or its
        items. Returns the :class:`FlatKBest` that reads them, at ``forest`` as its goal."""
        cdef Py_ssize_t e = 0, i, o, s
        cdef int32_t symbol, miss, tail
        cdef double best, total
        cdef vector[int32_t] symbols
        if items and len(items) != <Py_ssize_t>forest.item_end.size():
            raise ValueError(f"a flat forest of {forest.item_end.size()} items for a hypergraph "
                             f"of {len(items)} items")
        if self.wanted.size() < len(self.words):
            self.wanted.resize(len(self.words), 0)
        for word in target:
            symbol = self.word_ids.get(word, -1)
            if symbol >= 0:
                symbols.push_back(symbol)
                self.wanted[symbol] = 1
        forest.misses.resize(forest.option_offsets.size() - 1)
        forest.scores.resize(forest.edge_option.size())
        forest.insides.resize(forest.item_end.size())
        forest.best_edges.resize(forest.item_end.size())
        cdef const int32_t* offsets = forest.option_offsets.data()
        cdef const int32_t* option_symbols = forest.option_symbols.data()
        cdef const char* wanted = self.wanted.data()
        cdef int32_t* misses = forest.misses.data()
        for o in range(<Py_ssize_t>forest.misses.size()):
            miss = 0
            for s in range(offsets[o], offsets[o + 1]):
                symbol = option_symbols[s]
                if symbol >= 0 and not wanted[symbol]:
                    miss += 1
            misses[o] = miss
        for symbol in symbols:
            self.wanted[symbol] = 0
        # raw pointers: the compiler need not reload the vectors' buffers after each store
        cdef const double* base = forest.base.data()
        cdef const int32_t* item_end = forest.item_end.data()
        cdef const int32_t* edge_option = forest.edge_option.data()
        cdef const int32_t* edge_first = forest.edge_first.data()
        cdef const int32_t* edge_second = forest.edge_second.data()
        cdef double* scores = forest.scores.data()
        cdef double* insides = forest.insides.data()
        cdef int32_t* best_edges = forest.best_edges.data()
        cdef int32_t best_edge
        cdef double score
        for i in range(<Py_ssize_t>forest.insides.size()):
            best = -INFINITY
            best_edge = -1
            while e < item_end[i]:
                score = base[e] + weight * misses[edge_option[e]]
                scores[e] = score
                total = score
                tail = edge_first[e]
                if tail >= 0:
                    total += insides[tail]
                tail = edge_second[e]
                if tail >= 0:
                    total += insides[tail]
                if total > best or best_edge < 0:
                    best = total
                    best_edge = e  # the first of the best: what a heap pops first
                e += 1
            insides[i] = best
            best_edges[i] = best_edge
        return FlatKBest(forest, self.words, self.flat_states)

    def estimates(self, grammar, rows):
        """log10 LM estimates of the target sides of grammar ``rows``, as
        :meth:`circle.decoder.cube.CubePruning.estimates`."""
        cdef const int32_t[:] ids = grammar.target_ids
        cdef const int64_t[:] offsets = grammar.target_offsets
        cdef const int64_t[:] wanted = np.asarray(rows, dtype=np.int64)
        cdef Py_ssize_t r, t
        cdef int64_t row
        cdef int32_t state
        cdef double total
        self._use(grammar)
        out = np.empty(len(wanted), dtype=np.float64)
        cdef double[:] totals = out
        for r in range(len(wanted)):
            row = wanted[r]
            state = self.null
            total = 0.0
            for t in range(offsets[row], offsets[row + 1]):
                if ids[t] < 0:
                    state = self.null
                else:
                    total += self._score(&state, self.word_map[ids[t]])
            totals[r] = total
        return out

    cdef int _use(self, grammar) except -1:
        """Map the word ids of ``grammar``'s tokenised targets to ours (``word_map``)."""
        if grammar.vocabulary is not self.vocabulary:
            self.word_map = np.array([self._word(word) for word in grammar.vocabulary],
                                     dtype=np.int32)
            self.vocabulary = grammar.vocabulary
        return 0

    cdef int _push(self, Py_ssize_t c, int32_t* position) except -1:
        """Score the edge at ``position`` of cube ``c`` and push it as a candidate."""
        cdef Candidate candidate
        cdef double exact = 0.0, estimate = 0.0
        cdef Cube* cube = &self.cubes[c]
        cdef Item first = None, second = None
        cdef Option option = (<list>cube.options)[position[0]]
        if cube.arity > 0:
            first = (<list>cube.tails[0])[position[1]]
        if cube.arity > 1:
            second = (<list>cube.tails[1])[position[2]]
        self._combine(option.symbols, option.length, first, second, False, &candidate.summary,
                      &exact, &estimate)
        candidate.cube = <int32_t>c
        memcpy(candidate.position, position, sizeof(candidate.position))
        candidate.lm = exact * LN10
        candidate.score = option.score + self.lm_weight * candidate.lm
        candidate.inside = candidate.score
        if first is not None:
            candidate.inside += first.inside
        if second is not None:
            candidate.inside += second.inside
        candidate.heuristic = candidate.inside + self.estimate_weight * estimate
        self.heap.push_back(pair[double, Py_ssize_t](candidate.heuristic,
                                                     -<Py_ssize_t>self.candidates.size()))
        push_heap(self.heap.begin(), self.heap.end())
        self.candidates.push_back(candidate)
        return 0

    cdef int _combine(self, const int32_t* symbols, int32_t size, Item first, Item second,
                      bint sentence, Summary* summary, double* exact, double* estimate
                      ) except -1:
        """:meth:`LanguageModel.combine <circle.decoder.lm.LanguageModel.combine>` of the
        target ``symbols[:size]`` (see :class:`Option`).

        The antecedents are ``first`` and ``second``, None past the rule's arity; the result
        goes to ``summary``, ``exact`` and ``estimate``.
        """
        cdef int32_t state = self.bos if sentence else self.null
        cdef int32_t context = 0 if sentence else self.context
        cdef int32_t length = 0, nleft = 0, count, k, s, word
        cdef int32_t* words
        cdef float score
        cdef Item tail
        exact[0] = estimate[0] = 0.0
        for s in range(size):
            if symbols[s] >= 0:
                word = symbols[s]
                words = &word
                count = 1
                tail = None
            else:
                tail = first if symbols[s] == -1 else second
                if tail is None:
                    raise ValueError("a rule target has more nonterminals than its source")
                words = tail.summary.left
                count = tail.summary.nleft
            for k in range(count):
                score = self._score(&state, words[k])
                if length >= context:
                    exact[0] += score
                else:
                    estimate[0] += score
                    summary.left[nleft] = words[k]
                    nleft += 1
                length += 1
            if tail is not None and tail.summary.right >= 0:
                state = tail.summary.right
                length += tail.summary.length - tail.summary.nleft
        summary.right = state if length >= self.context else -1
        summary.length = length
        summary.nleft = nleft
        return 0

    cdef float _score(self, int32_t* state, int32_t word) except? 1:
        """log10 p(word | state); moves ``state`` on."""
        cdef uint64_t key = ((<uint64_t><uint32_t>state[0] << 32) | <uint32_t>word) + 1
        cdef Entry* transition = self.transitions.slot(key)
        cdef float score
        if transition.key == key:
            state[0] = transition.state
            return transition.score
        out = kenlm.State()
        score = self.model.BaseScore(self.states[state[0]], self.words[word], out)
        state[0] = self._state(out)
        transition.key, transition.score, transition.state = key, score, state[0]
        self.transitions.added()
        return score

    cdef int32_t _word(self, str word) except -1:
        known = self.word_ids.get(word)
        if known is None:
            known = self.word_ids[word] = len(self.words)
            self.words.append(word)
        return known

    cdef int32_t _state(self, state) except -1:
        known = self.state_ids.get(state)
        if known is None:
            known = self.state_ids[state] = len(self.states)
            self.states.append(state)
        return known


cdef int _refuse_long_target(rule) except -1:
    raise ValueError(f"rule target {rule.target} is longer than the compiled search's "
                     f"{MAX_TARGET} symbols; DecoderSettings(engine='python') has no limit")


cdef uint64_t _radix(vector[Cube]& cubes) except 0:
    """A radix for :func:`_key`: the longest axis of the cell's cubes."""
    cdef Py_ssize_t radix = 1, i
    cdef Cube cube
    for cube in cubes:
        radix = max(radix, len(<list>cube.options))
        for i in range(cube.arity):
            radix = max(radix, len(<list>cube.tails[i]))
    if cubes.size() * (<object>radix) ** (MAX_ARITY + 1) >= 2 ** 64 - 1:
        raise OverflowError("a chart cell too large for the compiled search")
    return radix


cdef inline uint64_t _key(Py_ssize_t c, int32_t* position, uint64_t radix) noexcept:
    """A cube position as one nonzero number, for the set of positions already pushed."""
    return ((<uint64_t>c * radix + position[0]) * radix + position[1]) * radix + position[2] + 1


cdef inline bint _same_summary(Summary* a, Summary* b) noexcept:
    """Whether two items recombine: the same right state and left words."""
    return a.right == b.right and a.nleft == b.nleft and \
        memcmp(a.left, b.left, a.nleft * sizeof(int32_t)) == 0


cdef inline uint64_t _summary_key(Summary* summary) noexcept:
    """A nonzero hash (FNV-1a) of what :func:`_same_summary` compares."""
    cdef uint64_t key = 14695981039346656037ULL
    cdef int32_t k
    key = (key ^ <uint32_t>summary.right) * <uint64_t>1099511628211ULL
    for k in range(summary.nleft):
        key = (key ^ <uint32_t>summary.left[k]) * <uint64_t>1099511628211ULL
    return key + (key == 0)


def match(grammar, tuple words, Py_ssize_t span_limit):
    """:func:`circle.decoder.chart.match` compiled: the same applications in the same order.

    Dot-chart cells are indexed by ``i * (n + 1) + j``; ``covered`` marks the spans some rule
    (or a pass-through word) covers.
    """
    cdef dict root = grammar.trie
    root_nt = root.get(NT)
    cdef Py_ssize_t n = len(words), width = n + 1, length, i, j, p
    cdef list dots = [None] * (width * width)
    cdef vector[char] covered = vector[char](width * width, 0)
    cdef dict spans = {}
    cdef list oov = [], extended, found, entries
    cdef tuple entry, nonterminals
    cdef dict node
    for i in range(n):
        dots[i * width + i] = [(root, ())]
    for length in range(1, min(span_limit, n) + 1):
        for i in range(n - length + 1):
            j = i + length
            extended = []
            word = words[j - 1]
            for entry in <list>dots[i * width + j - 1]:
                child = (<dict>entry[0]).get(word)
                if child is not None:
                    extended.append((child, entry[1]))
            for p in range(i + 1, j):
                if covered[p * width + j]:
                    span = (p, j)
                    for entry in <list>dots[i * width + p]:
                        child = (<dict>entry[0]).get(NT)
                        if child is not None:
                            extended.append((child, <tuple>entry[1] + (span,)))
            found = []
            for entry in extended:
                node = entry[0]
                key = node.get(None)
                if key is not None:
                    found.append((key, entry[1]))
            if found:
                spans[(i, j)] = found
                covered[i * width + j] = 1
            elif length == 1:
                oov.append(i)
                spans[(i, j)] = []
                covered[i * width + j] = 1
            if root_nt is not None and covered[i * width + j]:
                extended.append((root_nt, ((i, j),)))
            entries = []
            for entry in extended:
                node = entry[0]
                if len(node) > (None in node):  # nodes with children only
                    entries.append(entry)
            dots[i * width + j] = entries
    return Matches(words, spans, tuple(oov))


cdef enum:
    RANK_BITS = 21  # cube positions of KBest.seen: edge index and ranks below 2 ** 21


@cython.final
@cython.no_gc
@cython.freelist(1024)
cdef class Derivation:
    """A derivation, as :class:`circle.decoder.kbest.Derivation` (``children`` and ``words``
    filled when it is popped)."""

    cdef readonly double score
    cdef readonly Edge edge
    cdef readonly tuple children
    cdef readonly tuple words
    cdef Py_ssize_t edge_index
    cdef int32_t ranks[MAX_ARITY]


cdef struct Successor:
    # a candidate derivation of a node: made a Derivation only when popped
    double score
    Py_ssize_t edge_index
    int32_t ranks[MAX_ARITY]


cdef inline uint64_t _successor_key(Py_ssize_t edge_index, const int32_t* ranks) except 0:
    """A node's candidate (edge, antecedent ranks) as a nonzero 64-bit key."""
    cdef uint64_t key = edge_index
    cdef Py_ssize_t i
    for i in range(MAX_ARITY):
        if ranks[i] >> RANK_BITS or edge_index >> RANK_BITS:
            raise OverflowError("a k-best list too deep for the compiled extraction")
        key = (key << RANK_BITS) | <uint64_t>ranks[i]
    return key + 1


cdef inline bint _first_time(Table seen, Py_ssize_t edge_index, const int32_t* ranks) except -1:
    """Whether a node's candidate (edge, antecedent ranks) is new; marks it as pushed."""
    return seen.add(_successor_key(edge_index, ranks))


cdef inline void _append(vector[Successor]& candidates, vector[pair[double, Py_ssize_t]]& heap,
                         double score, Py_ssize_t edge_index, const int32_t* ranks) noexcept:
    """Add a candidate at the end of the heap's vector, which the caller makes a heap again
    (:func:`_enqueue`, or ``make_heap`` after many)."""
    cdef Successor candidate
    candidate.score = score
    candidate.edge_index = edge_index
    memcpy(candidate.ranks, ranks, sizeof(candidate.ranks))
    heap.push_back(pair[double, Py_ssize_t](score, -<Py_ssize_t>candidates.size()))
    candidates.push_back(candidate)


cdef inline void _enqueue(vector[Successor]& candidates, vector[pair[double, Py_ssize_t]]& heap,
                          double score, Py_ssize_t edge_index, const int32_t* ranks) noexcept:
    """Push a candidate; the heap pops the best score first, ties in push order."""
    _append(candidates, heap, score, edge_index, ranks)
    push_heap(heap.begin(), heap.end())


cdef inline Successor _dequeue(vector[Successor]& candidates,
                               vector[pair[double, Py_ssize_t]]& heap) noexcept:
    """Pop the best candidate (the heap must not be empty)."""
    pop_heap(heap.begin(), heap.end())
    cdef Successor candidate = candidates[-heap.back().second]
    heap.pop_back()
    return candidate


@cython.final
cdef class _NodeState:
    """A :class:`KBest` node: its candidates (:func:`_first_time`, :func:`_enqueue`,
    :func:`_dequeue`) and derivations."""
    cdef vector[Successor] candidates  # by push order
    cdef vector[pair[double, Py_ssize_t]] heap  # (score, −index into candidates)
    cdef Table seen
    cdef list edges
    cdef list derivations  # unique derivations found so far, best first
    cdef set yields
    cdef Derivation pending

    def __cinit__(self):
        self.seen = Table(4, SIZE_MAX)


@cython.final
cdef class KBest:
    """:class:`circle.decoder.kbest.KBest` compiled: the same candidates, scores, tie-breaking
    (push order) and uniqueness, so the same k-best lists."""

    cdef dict states

    def __init__(self):
        self.states = {}

    def best(self, node, Py_ssize_t k):
        """Up to ``k`` best derivations of ``node`` with distinct yields, best first."""
        self._get(node, k - 1)
        return (<_NodeState>self.states[id(node)]).derivations[:k]

    def features(self, Derivation derivation, Py_ssize_t size, Py_ssize_t lm_index,
                 Py_ssize_t target_index):
        """:meth:`circle.decoder.kbest.KBest.features`, summed in the same order."""
        cdef vector[double] values = vector[double](size, 0.0)
        cdef list stack = [derivation]
        cdef Derivation d
        cdef Edge edge
        cdef tuple rule_values
        cdef Py_ssize_t i
        while stack:
            d = stack.pop()
            edge = d.edge
            rule_values = edge.option.rule.values
            for i in range(len(rule_values)):
                values[i] += <double>rule_values[i]
            values[lm_index] += edge.lm
            values[target_index] += edge.miss
            stack.extend(d.children)
        return [values[i] for i in range(size)]

    cdef Derivation _get(self, node, Py_ssize_t rank):
        cdef _NodeState state = self.states.get(id(node))
        cdef int32_t ranks[MAX_ARITY]
        cdef Py_ssize_t i
        cdef Derivation derivation
        cdef Successor candidate
        if state is None:
            state = _NodeState.__new__(_NodeState)
            state.edges = node.edges
            state.derivations, state.yields = [], set()
            self.states[id(node)] = state
            memset(ranks, 0, sizeof(ranks))
            for i in range(len(state.edges)):
                self._push(state, i, ranks)
        while len(state.derivations) <= rank:
            if state.pending is not None:
                derivation = state.pending
                state.pending = None
                for i in range(derivation.edge.arity):
                    memcpy(ranks, derivation.ranks, sizeof(ranks))
                    ranks[i] += 1
                    self._push(state, derivation.edge_index, ranks)
            if state.heap.empty():
                return None
            candidate = _dequeue(state.candidates, state.heap)
            derivation = Derivation.__new__(Derivation)
            derivation.edge = state.edges[candidate.edge_index]
            derivation.edge_index = candidate.edge_index
            memcpy(derivation.ranks, candidate.ranks, sizeof(derivation.ranks))
            derivation.score = candidate.score
            state.pending = derivation
            self._complete(derivation)
            if derivation.words not in state.yields:
                state.yields.add(derivation.words)
                state.derivations.append(derivation)
        return state.derivations[rank]

    cdef int _push(self, _NodeState state, Py_ssize_t edge_index, int32_t* ranks) except -1:
        cdef Py_ssize_t i
        cdef Derivation child
        cdef Edge edge = state.edges[edge_index]
        if not _first_time(state.seen, edge_index, ranks):
            return 0
        cdef double score = edge.score
        for i in range(edge.arity):
            if ranks[i] == 0:
                score += _tail(edge, i).inside  # its best derivation's score, bit for bit
            else:
                child = self._get(_tail(edge, i), ranks[i])
                if child is None:
                    return 0
                score += child.score
        _enqueue(state.candidates, state.heap, score, edge_index, ranks)
        return 0

    cdef int _complete(self, Derivation derivation) except -1:
        """Look up a popped derivation's antecedent derivations and spell out its words."""
        cdef Edge edge = derivation.edge
        cdef Py_ssize_t i
        derivation.children = tuple([self._get(_tail(edge, i), derivation.ranks[i])
                                     for i in range(edge.arity)])
        derivation.words = _yield(derivation)
        return 0


cdef struct Found:
    # a derivation of a FlatKBest node: its edge (forest number), its antecedents' ranks, and
    # its yield's length and two polynomial hashes (_yield_of)
    double score
    int32_t edge
    int32_t ranks[MAX_ARITY]
    int32_t length
    uint64_t hashes[2]


cdef extern from *:
    """
    /* arithmetic modulo the Mersenne prime 2^61 - 1, for numbers below it */
    static const uint64_t circle_m61 = 0x1FFFFFFFFFFFFFFFULL;
    static const uint64_t circle_yield_bases[2] = {0x1F3D5B79A2C4E607ULL, 0x0B8E3F1D2C7A6953ULL};
    static inline uint64_t circle_mul_m61(uint64_t a, uint64_t b) {
        __uint128_t product = (__uint128_t)a * b;
        uint64_t sum = (uint64_t)(product & circle_m61) + (uint64_t)(product >> 61);
        return sum >= circle_m61 ? sum - circle_m61 : sum;
    }
    static inline uint64_t circle_add_m61(uint64_t a, uint64_t b) {
        uint64_t sum = a + b;
        return sum >= circle_m61 ? sum - circle_m61 : sum;
    }
    """
    const uint64_t[2] YIELD_BASES "circle_yield_bases"  # below 2^61 − 1
    uint64_t _mul_mod "circle_mul_m61"(uint64_t a, uint64_t b) noexcept nogil
    uint64_t _add_mod "circle_add_m61"(uint64_t a, uint64_t b) noexcept nogil


cdef cppclass FlatState:
    # the k-best state of one node of a FlatForest, kept in a FlatStates arena and emptied (its
    # vectors keep their capacity) for the next list
    vector[Successor] candidates  # by push order
    vector[pair[double, Py_ssize_t]] heap  # (score, −index into candidates)
    vector[uint64_t] seen  # successors pushed, as _successor_key(); 0: empty slot
    size_t seen_size
    vector[Found] derivations  # unique derivations found so far, best first
    vector[int32_t] slots  # derivations by yield hash, as index + 1; 0: empty slot
    bint visited  # its best derivation found
    bint expanded  # its other edges pushed as candidates
    bint has_pending
    Found pending


cdef enum:
    FIRST_SLOTS = 16  # initial size of a FlatState's open-addressing tables


cdef void _empty(FlatState* state) noexcept:
    """Empty a node state for a new list; its vectors keep their capacity."""
    state.candidates.clear()
    state.heap.clear()
    state.seen.clear()
    state.seen_size = 0
    state.derivations.clear()
    state.slots.clear()
    state.visited = state.expanded = state.has_pending = False


@cython.final
cdef class FlatStates:
    """The node states of the :class:`FlatKBest` lists of one decoder, reused from list to list
    so that reading a k-best list allocates nothing once the vectors have grown (one state per
    forest item, emptied when the next list begins). :meth:`begin` starts a new list and makes
    the lists begun before it unreadable."""

    cdef vector[FlatState] states  # per item number of the forest being read
    cdef vector[int32_t] touched  # the items whose states hold something
    cdef vector[uint64_t] spare  # for growing a seen table without allocating
    cdef vector[uint64_t] powers[2]  # YIELD_BASES[j] ** n modulo 2^61 - 1, for n < their size
    cdef int64_t generation

    cdef inline uint64_t power(self, int j, int32_t n) except 0:
        """``YIELD_BASES[j] ** n`` modulo 2^61 − 1 (tabled)."""
        if <int32_t>self.powers[j].size() <= n:
            self.powers[j].reserve(2 * n + 2)
            while <int32_t>self.powers[j].size() <= n:
                self.powers[j].push_back(1 if self.powers[j].empty()
                                         else _mul_mod(self.powers[j].back(), YIELD_BASES[j]))
        return self.powers[j][n]

    cdef int64_t begin(self, size_t items) except -1:
        """Empty the states for a new list over a forest of ``items`` items; its generation."""
        cdef int32_t i
        cdef size_t n = self.states.size()
        for i in self.touched:
            _empty(&self.states[i])
        self.touched.clear()
        if n < items:
            self.states.resize(items)
            for i in range(n, items):
                _empty(&self.states[i])
        self.generation += 1
        return self.generation


cdef inline size_t _home(uint64_t key, size_t slots) noexcept:
    """The first slot of ``key`` in an open-addressing table of ``slots`` (a power of two)
    slots (Fibonacci hashing)."""
    return <size_t>((key * <uint64_t>11400714819323198485ULL) >> 32) & (slots - 1)


cdef bint _first_push(FlatState* state, uint64_t key, vector[uint64_t]& spare) except -1:
    """Whether a successor ``key`` is new at ``state``; marks it as pushed (linear probing,
    doubled when half full)."""
    cdef size_t n = state.seen.size(), i
    if n == 0:
        state.seen.assign(FIRST_SLOTS, 0)
        n = FIRST_SLOTS
    i = _home(key, n)
    while state.seen[i] != 0:
        if state.seen[i] == key:
            return False
        i = (i + 1) & (n - 1)
    state.seen[i] = key
    state.seen_size += 1
    if 2 * state.seen_size > n:
        spare.assign(state.seen.begin(), state.seen.end())
        state.seen.assign(2 * n, 0)
        for key in spare:
            if key != 0:
                i = _home(key, 2 * n)
                while state.seen[i] != 0:
                    i = (i + 1) & (2 * n - 1)
                state.seen[i] = key
    return True


cdef bint _keep_new_yield(FlatState* state, Found derivation) except -1:
    """Keep ``derivation`` if no derivation of ``state`` has its yield (True), else drop it
    (False). Yields are compared by length and two polynomial hashes modulo 2^61 − 1
    (:meth:`FlatKBest._yield_of`): two different yields of one node are taken as equal only if
    both hashes collide, which for yields of n words happens with probability below
    (n / 2^61)^2 for a random pair of bases."""
    cdef size_t n, i, d
    if state.slots.size() == 0:
        state.slots.assign(FIRST_SLOTS, 0)
    n = state.slots.size()
    i = _home(derivation.hashes[0], n)
    while state.slots[i] != 0:
        d = state.slots[i] - 1
        if (state.derivations[d].hashes[0] == derivation.hashes[0]
                and state.derivations[d].hashes[1] == derivation.hashes[1]
                and state.derivations[d].length == derivation.length):
            return False
        i = (i + 1) & (n - 1)
    state.slots[i] = state.derivations.size() + 1
    state.derivations.push_back(derivation)
    if 2 * state.derivations.size() > n:
        state.slots.assign(2 * n, 0)
        for d in range(state.derivations.size()):
            i = _home(state.derivations[d].hashes[0], 2 * n)
            while state.slots[i] != 0:
                i = (i + 1) & (2 * n - 1)
            state.slots[i] = d + 1
    return True


@cython.final
@cython.freelist(128)
cdef class FlatDerivation:
    """A derivation of the goal handed out by :class:`FlatKBest`: its score and words."""

    cdef readonly double score
    cdef readonly tuple words
    cdef int32_t rank


@cython.final
cdef class FlatKBest:
    """:class:`KBest` over a re-weighted :class:`FlatForest` (forest mode): the same
    candidates, scores, tie-breaking (push order) and uniqueness, so the same k-best lists, with
    derivations as C structs in node states that the decoder's :class:`FlatStates` reuses from
    list to list, and yields as lengths and hashes (:meth:`_yield_of`), spelled out in words
    only for the goal's k best. Made by :meth:`CubePruning.retarget`, and read before the next
    one (the forest's scores and the node states are then another target's). It needs none of
    the chart's objects: a forest kept for later targets holds only its arrays."""

    cdef FlatForest forest
    cdef list words
    cdef FlatStates arena
    cdef int64_t generation

    def __init__(self, FlatForest forest, list words, FlatStates arena):
        self.forest, self.words, self.arena = forest, words, arena
        self.generation = arena.begin(forest.item_end.size())

    def best(self, node, Py_ssize_t k):
        """Up to ``k`` best derivations of the goal with distinct yields, best first; ``node``
        is the forest itself, which stands for its goal."""
        if node is not self.forest:
            raise ValueError("a flat forest's k-best list is read at its goal, the forest")
        self._check()
        cdef int32_t goal = self.forest.item_end.size() - 1
        self._get(goal, k - 1)
        cdef FlatState* state = &self.arena.states[goal]
        cdef list found = []
        cdef FlatDerivation derivation
        cdef vector[int32_t] words
        cdef Py_ssize_t r
        cdef int32_t w
        for r in range(min(k, <Py_ssize_t>state.derivations.size())):
            derivation = FlatDerivation.__new__(FlatDerivation)
            derivation.score = state.derivations[r].score
            derivation.rank = r
            words.clear()
            self._spell(goal, r, words)
            derivation.words = tuple([self.words[w] for w in words])
            found.append(derivation)
        return found

    def features(self, FlatDerivation derivation, Py_ssize_t size, Py_ssize_t lm_index,
                 Py_ssize_t target_index):
        """:meth:`KBest.features` of a goal derivation, summed in the same order."""
        self._check()
        cdef FlatForest forest = self.forest
        cdef vector[double] values = vector[double](size, 0.0)
        cdef vector[pair[int32_t, int32_t]] stack  # (item, rank)
        cdef pair[int32_t, int32_t] top
        cdef Found d
        cdef int32_t e, o, tail
        cdef Py_ssize_t i, offset
        stack.push_back(pair[int32_t, int32_t](forest.item_end.size() - 1, derivation.rank))
        while not stack.empty():
            top = stack.back()
            stack.pop_back()
            d = self.arena.states[top.first].derivations[top.second]
            e = d.edge
            o = forest.edge_option[e]
            offset = forest.option_values(o)
            for i in range(forest.value_lengths[o]):
                values[i] += forest.values[offset + i]
            values[lm_index] += forest.edge_lm[e]
            values[target_index] += forest.misses[o]
            tail = forest.edge_first[e]
            if tail >= 0:
                stack.push_back(pair[int32_t, int32_t](tail, d.ranks[0]))
            tail = forest.edge_second[e]
            if tail >= 0:
                stack.push_back(pair[int32_t, int32_t](tail, d.ranks[1]))
        return [values[i] for i in range(size)]

    cdef int _check(self) except -1:
        if self.generation != self.arena.generation:
            raise RuntimeError("a flat forest's k-best list must be read before the decoder "
                               "re-weights a forest again")
        return 0

    cdef bint _get(self, int32_t node, Py_ssize_t rank) except -1:
        """Find the ``rank``-th best unique derivation of ``node``; False if there is none."""
        cdef FlatForest forest = self.forest
        cdef FlatState* state = &self.arena.states[node]
        cdef int32_t first = forest.item_end[node - 1] if node > 0 else 0
        cdef int32_t ranks[MAX_ARITY]
        cdef int32_t e
        cdef double score
        cdef Py_ssize_t i
        cdef Successor candidate
        cdef Found derivation
        if not state.visited:  # its best derivation: the retargeting's best edge
            state.visited = True
            self.arena.touched.push_back(node)
            if forest.best_edges[node] < 0:
                state.expanded = True  # no edges, no derivations
                return False
            derivation.score = forest.insides[node]  # the edge's candidate score, bit for bit
            derivation.edge = forest.best_edges[node]
            memset(derivation.ranks, 0, sizeof(derivation.ranks))
            state.pending, state.has_pending = derivation, True
            self._yield_of(&derivation)
            _keep_new_yield(state, derivation)
        if not state.expanded and <Py_ssize_t>state.derivations.size() <= rank:
            # the candidates a heap of every edge would hold after popping the best one, in
            # push order (ties pop in that order)
            # (each edge with its antecedents' best derivations, scored as _add_candidate does)
            state.expanded = True
            memset(ranks, 0, sizeof(ranks))
            for e in range(first, forest.item_end[node]):
                if e != forest.best_edges[node]:
                    score = forest.scores[e]
                    if forest.edge_first[e] >= 0:
                        score += forest.insides[forest.edge_first[e]]
                    if forest.edge_second[e] >= 0:
                        score += forest.insides[forest.edge_second[e]]
                    _append(state.candidates, state.heap, score, e - first, ranks)
            make_heap(state.heap.begin(), state.heap.end())
        while <Py_ssize_t>state.derivations.size() <= rank:
            if state.has_pending:
                state.has_pending = False
                for i in range(self._arity(state.pending.edge)):
                    memcpy(ranks, state.pending.ranks, sizeof(ranks))
                    ranks[i] += 1
                    if (_first_push(state, _successor_key(state.pending.edge - first, ranks),
                                    self.arena.spare)
                            and self._add_candidate(state, first, state.pending.edge - first,
                                                    ranks)):
                        push_heap(state.heap.begin(), state.heap.end())
            if state.heap.empty():
                return False
            candidate = _dequeue(state.candidates, state.heap)
            derivation.score = candidate.score
            derivation.edge = first + candidate.edge_index
            memcpy(derivation.ranks, candidate.ranks, sizeof(derivation.ranks))
            state.pending, state.has_pending = derivation, True
            self._yield_of(&derivation)
            _keep_new_yield(state, derivation)
        return True

    cdef inline int32_t _arity(self, int32_t e) noexcept:
        return (self.forest.edge_first[e] >= 0) + (self.forest.edge_second[e] >= 0)

    cdef bint _add_candidate(self, FlatState* state, int32_t first, Py_ssize_t edge_index,
                             int32_t* ranks) except -1:
        """Add the candidate (edge, antecedent ranks) to ``state``'s candidates and the end of
        its heap (the caller restores the heap), unless an antecedent has no such rank; whether
        it did."""
        cdef FlatForest forest = self.forest
        cdef int32_t e = first + edge_index
        cdef int32_t tails[MAX_ARITY]
        cdef Py_ssize_t i
        tails[0], tails[1] = forest.edge_first[e], forest.edge_second[e]
        cdef double score = forest.scores[e]
        for i in range(self._arity(e)):
            if ranks[i] == 0:
                score += forest.insides[tails[i]]  # its best derivation's score, bit for bit
            else:
                if not self._get(tails[i], ranks[i]):
                    return False
                score += self.arena.states[tails[i]].derivations[ranks[i]].score
        _append(state.candidates, state.heap, score, edge_index, ranks)
        return True

    cdef int _yield_of(self, Found* derivation) except -1:
        """Set a popped derivation's yield length and hashes from its rule's words and its
        antecedents' yields (found first, as :meth:`KBest._complete` does): the polynomial
        hashes sum (word id + 1) × base^(words after it), modulo 2^61 − 1, so an antecedent's
        yield enters as its hash times base^(words after it), without spelling any word."""
        cdef FlatForest forest = self.forest
        cdef int32_t o = forest.edge_option[derivation.edge]
        cdef int32_t tails[MAX_ARITY]
        cdef int32_t symbol
        cdef Found* child
        cdef Py_ssize_t i, s
        cdef int j
        tails[0], tails[1] = forest.edge_first[derivation.edge], forest.edge_second[derivation.edge]
        for i in range(self._arity(derivation.edge)):
            self._get(tails[i], derivation.ranks[i])
        derivation.length = 0
        derivation.hashes[0] = derivation.hashes[1] = 0
        for s in range(forest.option_offsets[o], forest.option_offsets[o + 1]):
            symbol = forest.option_symbols[s]
            if symbol >= 0:
                derivation.length += 1
                for j in range(2):
                    derivation.hashes[j] = _add_mod(_mul_mod(derivation.hashes[j],
                                                             YIELD_BASES[j]),
                                                    <uint64_t>symbol + 1)
            else:
                child = &self.arena.states[tails[-1 - symbol]].derivations[
                    derivation.ranks[-1 - symbol]]
                derivation.length += child.length
                for j in range(2):
                    derivation.hashes[j] = _add_mod(_mul_mod(derivation.hashes[j],
                                                             self.arena.power(j, child.length)),
                                                    child.hashes[j])
        return 0

    cdef int _spell(self, int32_t node, Py_ssize_t rank, vector[int32_t]& words) except -1:
        """Append the yield (word ids) of ``node``'s ``rank``-th derivation to ``words``: its
        rule's words with its antecedents' yields in place of the nonterminals."""
        cdef FlatForest forest = self.forest
        cdef Found* derivation = &self.arena.states[node].derivations[rank]
        cdef int32_t o = forest.edge_option[derivation.edge]
        cdef int32_t symbol
        cdef Py_ssize_t s
        for s in range(forest.option_offsets[o], forest.option_offsets[o + 1]):
            symbol = forest.option_symbols[s]
            if symbol >= 0:
                words.push_back(symbol)
            elif symbol == -1:
                self._spell(forest.edge_first[derivation.edge], derivation.ranks[0], words)
            else:
                self._spell(forest.edge_second[derivation.edge], derivation.ranks[1], words)
        return 0


cdef inline Item _tail(Edge edge, Py_ssize_t i):
    """An edge's ``i``-th antecedent."""
    return edge.first if i == 0 else edge.second


cdef tuple _yield(Derivation derivation):
    """The output words of a derivation whose children's words are known."""
    cdef Option option = (<Edge>derivation.edge).option
    cdef int32_t s
    words = []
    for s in range(option.length):
        if option.symbols[s] >= 0:
            words.append(option.words[option.symbols[s]])
        else:
            words.extend((<Derivation>derivation.children[-1 - option.symbols[s]]).words)
    return tuple(words)

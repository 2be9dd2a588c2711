"""Decoding a list of inputs with a pool of worker processes.

The language model is loaded first, in the calling process, so that a missing or broken model is
reported before a grammar is loaded; the workers inherit it (``fork`` start method), as they
inherit a :class:`~circle.decoder.grammar.Grammar` object passed in (copy-on-write, not pickled).
A grammar given as a path is loaded once by each worker (pool initializer). Inputs that repeat
(the same reference paraphrased towards many targets, thesis §5.3) are sent to one worker
together, which matches the grammar against them once
(:meth:`~circle.decoder.search.Decoder.prepare`).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from circle.decoder.grammar import Grammar, load_grammar
from circle.decoder.lm import LanguageModel
from circle.decoder.model import DecoderSettings, read_weights
from circle.decoder.nbest import Hypothesis
from circle.decoder.search import Decoder
from circle.progress import progress

logger = logging.getLogger(__name__)

_worker_decoder: Decoder | None = None
_worker_error: Exception | None = None

Task = tuple[str, list[tuple[int, str | None]]]
"""An input with the (position in the corpus, target) pairs to decode it for."""

_T = TypeVar("_T")
_R = TypeVar("_R")


def _make_decoder(grammar: Grammar | str | os.PathLike, lm: LanguageModel,
                  weights: Mapping[str, float], settings: DecoderSettings) -> Decoder:
    if not isinstance(grammar, Grammar):
        grammar = load_grammar(grammar)
    return Decoder(grammar, lm, weights, settings)


def _decode_task(decoder: Decoder, task: Task, k: int) -> list[tuple[int, list[Hypothesis]]]:
    sentence, jobs = task
    plan = decoder.prepare(sentence)
    return [(position, decoder.decode(plan, target, k)) for position, target in jobs]


def _start_worker(*decoder_args) -> None:
    """Pool initializer. An error is kept and raised by the worker's first task: raised here,
    it would kill the worker, and the pool would start another in its place, forever."""
    global _worker_decoder, _worker_error
    try:
        _worker_decoder = _make_decoder(*decoder_args)
    except Exception as error:  # noqa: BLE001 - re-raised in the caller by _worker_call
        _worker_error = error


def _worker_call(function: Callable[[Decoder, _T], _R], task: _T) -> _R:
    if _worker_error is not None:
        raise _worker_error
    assert _worker_decoder is not None, "worker not initialised"
    return function(_worker_decoder, task)


class DecoderPool:
    """One decoder per worker process, made once and kept for every call ("held warm": the
    grammar and LM are loaded once, and each decoder keeps its ranked rules across calls).

    With ``workers`` ≤ 1 the decoder lives in this process. :meth:`map` runs
    ``function(decoder, task)`` for each task; ``function`` must be picklable (a module-level
    function or a :func:`functools.partial` of one). Close the pool (or use it as a context
    manager) to stop its workers.
    """

    def __init__(self, grammar: Grammar | str | os.PathLike, lm: LanguageModel | str | os.PathLike,
                 weights: Mapping[str, float] | str | os.PathLike,
                 settings: DecoderSettings | None = None, workers: int = 1):
        if not isinstance(lm, LanguageModel):
            lm = LanguageModel(lm)
        if not isinstance(weights, Mapping):
            weights = read_weights(weights)
        args = (grammar, lm, weights, settings or DecoderSettings())
        self._pool = None
        self._decoder: Decoder | None = None
        if workers <= 1:
            self._decoder = _make_decoder(*args)
        else:
            context = multiprocessing.get_context(
                "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
            self._pool = context.Pool(workers, _start_worker, args)

    def map(self, function: Callable[[Decoder, _T], _R], tasks: Sequence[_T],
            unit: str = "inputs") -> list[_R]:
        """``function(decoder, task)`` for each task, in order, logging progress in ``unit``."""
        if self._pool is None:
            assert self._decoder is not None, "the pool is closed"
            done = (function(self._decoder, task) for task in tasks)
        else:
            done = self._pool.imap(functools.partial(_worker_call, function), tasks)
        return list(progress(done, logger, "decoding", len(tasks), unit))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
        self._pool = self._decoder = None

    def __enter__(self) -> DecoderPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def decode_corpus(sentences: Sequence[str], grammar: Grammar | str | os.PathLike,
                  lm: LanguageModel | str | os.PathLike,
                  weights: Mapping[str, float] | str | os.PathLike,
                  settings: DecoderSettings | None = None, workers: int = 1,
                  k: int | None = None, targets: Sequence[str | None] | None = None
                  ) -> list[list[Hypothesis]]:
    """Unique k-best lists for ``sentences`` (tokenised, space-separated), in input order.

    ``grammar`` is a :class:`Grammar` or the path of a grammar table, ``lm`` a
    :class:`LanguageModel` or the path of a KenLM model, ``weights`` a mapping or the path of a
    weight file. ``targets``, if given, holds per input its targeting string T
    (thesis eq. 5.1) or None; to target one input to several strings, repeat the input.
    ``k`` defaults to ``settings.k``. ``workers`` > 1 decodes in that many processes.
    """
    if targets is not None and len(targets) != len(sentences):
        raise ValueError(f"{len(targets)} targets for {len(sentences)} sentences")
    settings = settings or DecoderSettings()
    k = settings.k if k is None else k
    grouped: dict[str, list[tuple[int, str | None]]] = {}
    for position, sentence in enumerate(sentences):
        grouped.setdefault(sentence, []).append(
            (position, None if targets is None else targets[position]))
    with DecoderPool(grammar, lm, weights, settings, workers) as pool:
        done = pool.map(functools.partial(_decode_task, k=k), list(grouped.items()))
    results: list[list[Hypothesis]] = [[] for _ in sentences]
    for finished in done:
        for position, hypotheses in finished:
            results[position] = hypotheses
    return results

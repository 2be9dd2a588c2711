"""Decoding a list of inputs with a pool of worker processes.

The language model is loaded first, in the calling process, so that a missing or broken model is
reported before a grammar is loaded; the workers inherit it (``fork`` start method), as they
inherit a :class:`~circle.decoder.grammar.Grammar` object passed in (copy-on-write, not pickled).
A grammar given as a path is loaded once by each worker, when it starts. Inputs that repeat
(the same reference paraphrased towards many targets, thesis §5.3) are sent to one worker
together, which matches the grammar against them once
(:meth:`~circle.decoder.search.Decoder.prepare`).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from typing import TypeVar

from circle.core.jobs import die_with_parent
from circle.core.progress import progress
from circle.decoder.grammar import Grammar, load_grammar
from circle.decoder.hypergraph import Hypergraph
from circle.decoder.lm import LanguageModel
from circle.decoder.model import DecoderSettings, read_weights
from circle.decoder.nbest import Hypothesis
from circle.decoder.rerank import NBestReranker, split_rerank_weight
from circle.decoder.search import Decoder

logger = logging.getLogger(__name__)

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


def _hypergraph_task(decoder: Decoder, sentence: str, k: int
                     ) -> tuple[list[Hypothesis], Hypergraph]:
    return decoder.decode_hypergraph(sentence, k)


def _serve(connection: Connection, decoder_args: tuple, parent: int) -> None:
    """A worker's loop: make the decoder, then answer each ``(number, function, task)`` message
    with ``(number, True, function(decoder, task))``, or ``(number, False, error)``, until None.
    An error making the decoder is the answer to every task. The worker dies with ``parent``
    (:func:`circle.core.jobs.die_with_parent`)."""
    die_with_parent(parent)
    try:
        decoder: Decoder | None = _make_decoder(*decoder_args)
        failure: BaseException | None = None
    except Exception as error:  # noqa: BLE001 - re-raised in the caller, task by task
        decoder, failure = None, error
    while (message := connection.recv()) is not None:
        number, function, task = message
        try:
            if failure is not None:
                raise failure
            answer = (number, True, function(decoder, task))
        except Exception as error:  # noqa: BLE001 - re-raised in the caller
            answer = (number, False, error)
        connection.send(answer)


class _Worker:
    """One worker process and the pipe it reads tasks from and answers on."""

    def __init__(self, context: multiprocessing.context.BaseContext, decoder_args: tuple):
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, decoder_args, os.getpid()),
                                       daemon=True)
        self.process.start()
        theirs.close()
        self.busy = 0  # tasks sent and not yet answered

    def send(self, number: int, function: Callable, task: object) -> None:
        self.connection.send((number, function, task))
        self.busy += 1

    def receive(self) -> tuple[int, bool, object]:
        try:
            answer = self.connection.recv()
        except EOFError:
            self.process.join(1)
            raise RuntimeError(f"decoder worker {self.process.pid} died (exit code "
                               f"{self.process.exitcode})") from None
        self.busy -= 1
        return answer

    def stop(self) -> None:
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.connection.close()


class DecoderPool:
    """One decoder per worker process, made once and kept for every call ("held warm": the
    grammar and LM are loaded once, and each decoder keeps its ranked rules across calls).

    With ``workers`` ≤ 1 the decoder lives in this process. :meth:`map` runs
    ``function(decoder, task)`` for each task; ``function`` must be picklable (a module-level
    function or a :func:`functools.partial` of one). Tasks go to whichever worker is free,
    unless :meth:`map` is given their ``owners``: then every task of one owner, in this call and
    every later one, goes to the same worker, so that what a worker keeps for an owner (the
    targeted paraphraser's forest of a reference) is found again. Close the pool (or use it as
    a context manager) to stop its workers.
    """

    QUEUED = 2
    """Tasks a worker has been sent ahead of its answers."""

    def __init__(self, grammar: Grammar | str | os.PathLike, lm: LanguageModel | str | os.PathLike,
                 weights: Mapping[str, float] | str | os.PathLike,
                 settings: DecoderSettings | None = None, workers: int = 1):
        if not isinstance(lm, LanguageModel):
            lm = LanguageModel(lm)
        if not isinstance(weights, Mapping):
            weights = read_weights(weights)
        args = (grammar, lm, weights, settings or DecoderSettings())
        self._workers: list[_Worker] = []
        self._decoder: Decoder | None = None
        self._owned: dict[Hashable, int] = {}  # owner → worker
        self._work: list[float] = []  # per worker, the sizes of the owned tasks sent to it
        if workers <= 1:
            self._decoder = _make_decoder(*args)
        else:
            context = multiprocessing.get_context(
                "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
            self._workers = [_Worker(context, args) for _ in range(workers)]
            self._work = [0.0] * workers

    def map(self, function: Callable[[Decoder, _T], _R], tasks: Sequence[_T],
            unit: str = "inputs", owners: Sequence[Hashable] | None = None,
            sizes: Sequence[float] | None = None) -> list[_R]:
        """``function(decoder, task)`` for each task, in order, logging progress in ``unit``;
        see :meth:`imap`."""
        return list(self.imap(function, tasks, unit, owners, sizes))

    def imap(self, function: Callable[[Decoder, _T], _R], tasks: Sequence[_T],
             unit: str = "inputs", owners: Sequence[Hashable] | None = None,
             sizes: Sequence[float] | None = None) -> Iterator[_R]:
        """``function(decoder, task)`` for each task, yielded in order as they are done,
        logging progress in ``unit``. Tasks of one of ``owners`` (one per task, if given) always
        run in the same worker; an owner seen for the first time goes to the worker with the
        least work so far, counted in ``sizes`` (one per task; default 1 each). Read every
        answer before the next call."""
        if owners is not None and len(owners) != len(tasks):
            raise ValueError(f"{len(owners)} owners for {len(tasks)} tasks")
        if self._workers:
            done = self._dispatch(function, tasks, owners, sizes or [1.0] * len(tasks))
        else:
            assert self._decoder is not None, "the pool is closed"
            done = (function(self._decoder, task) for task in tasks)
        return progress(done, logger, "decoding", len(tasks), unit)

    def _dispatch(self, function: Callable[[Decoder, _T], _R], tasks: Sequence[_T],
                  owners: Sequence[Hashable] | None, sizes: Sequence[float]) -> Iterator[_R]:
        """The answers in task order, as the workers give them."""
        waiting: list[deque[int]] = [deque() for _ in self._workers]  # owned tasks
        anyone: deque[int] = deque(range(len(tasks))) if owners is None else deque()
        for number, owner in enumerate(owners or ()):
            if owner not in self._owned:
                self._owned[owner] = min(range(len(self._workers)), key=self._work.__getitem__)
            worker = self._owned[owner]
            self._work[worker] += sizes[number]
            waiting[worker].append(number)
        answers: dict[int, _R] = {}
        by_connection = {worker.connection: worker for worker in self._workers}
        for next_number in range(len(tasks)):
            while next_number not in answers:
                for worker, queue in zip(self._workers, waiting, strict=True):
                    source = queue or anyone
                    while source and worker.busy < self.QUEUED:
                        number = source.popleft()
                        worker.send(number, function, tasks[number])
                for connection in wait(list(by_connection)):
                    number, succeeded, answer = by_connection[connection].receive()
                    if not succeeded:
                        self._drain()
                        raise answer
                    answers[number] = answer
            yield answers.pop(next_number)

    def _drain(self) -> None:
        """Receive and drop the answers still owed, so that a failed call leaves no answer
        for the next one."""
        for worker in self._workers:
            while worker.busy:
                worker.receive()

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers, self._work, self._decoder = [], [], None

    def __enter__(self) -> DecoderPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def decode_corpus(sentences: Sequence[str], grammar: Grammar | str | os.PathLike,
                  lm: LanguageModel | str | os.PathLike,
                  weights: Mapping[str, float] | str | os.PathLike,
                  settings: DecoderSettings | None = None, workers: int = 1,
                  k: int | None = None, targets: Sequence[str | None] | None = None,
                  rerank_lm: LanguageModel | str | os.PathLike | None = None
                  ) -> list[list[Hypothesis]]:
    """Unique k-best lists for ``sentences`` (tokenised, space-separated), in input order.

    ``grammar`` is a :class:`Grammar` or the path of a grammar table, ``lm`` a
    :class:`LanguageModel` or the path of a KenLM model, ``weights`` a mapping or the path of a
    weight file. ``targets``, if given, holds per input its targeting string T
    (thesis eq. 5.1) or None; to target one input to several strings, repeat the input.
    ``k`` defaults to ``settings.k``. ``workers`` > 1 decodes in that many processes.
    With ``rerank_lm`` (a :class:`LanguageModel` or a path) each list is reranked with it
    (:mod:`circle.decoder.rerank`; the weights may name its feature, default 0).
    """
    if targets is not None and len(targets) != len(sentences):
        raise ValueError(f"{len(targets)} targets for {len(sentences)} sentences")
    reranker = None
    if rerank_lm is not None:
        weights, rerank_weight = split_rerank_weight(
            weights if isinstance(weights, Mapping) else read_weights(weights))
        reranker = NBestReranker(rerank_lm, rerank_weight)
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
    if reranker is not None:
        results = [reranker.rerank(hypotheses) for hypotheses in results]
    return results


def decode_corpus_hypergraphs(sentences: Sequence[str], grammar: Grammar | str | os.PathLike,
                              lm: LanguageModel | str | os.PathLike,
                              weights: Mapping[str, float], settings: DecoderSettings | None = None,
                              workers: int = 1
                              ) -> tuple[list[list[Hypothesis]], list[Hypergraph]]:
    """Untargeted unique k-best lists for ``sentences``, as :func:`decode_corpus` gives them,
    and the hypergraph of each sentence's search (forest MERT, :mod:`circle.tune.forest`); an
    input that repeats is decoded once."""
    settings = settings or DecoderSettings()
    unique = list(dict.fromkeys(sentences))
    with DecoderPool(grammar, lm, weights, settings, workers) as pool:
        done = dict(zip(unique, pool.map(functools.partial(_hypergraph_task, k=settings.k),
                                         unique), strict=True))
    return [done[s][0] for s in sentences], [done[s][1] for s in sentences]

"""KenLM integration with exact boundary-word states (Chiang 2007 §5.3.1).

A chart item of an n-gram model is summarised by its first n−1 words (``left``: their
probabilities are unknown until the item's left context is, so they are only *estimated*) and
its last n−1 words (kept as KenLM's right ``State``, which holds at most those words). Every
other word was scored exactly when the item was built. Items with equal summaries recombine.
An item shorter than n−1 words keeps all its words in ``left`` and no right state.

:meth:`LanguageModel.combine` is the LM routine of the reference search loop
(:mod:`circle.decoder.cube`; the compiled loop :mod:`circle.decoder._cube` has its own copy):
it scans a rule's target side with its antecedents' summaries in place of the nonterminals.
Scores are log10, as KenLM returns them; the search multiplies by :data:`LN10`.
"""

from __future__ import annotations

import errno
import math
import os
from typing import Protocol

import kenlm

from circle.decoder.grammar import Symbol

LN10 = math.log(10.0)
"""ln 10: KenLM's log10 scores times this are natural logs."""


class Summary(Protocol):
    """What :meth:`LanguageModel.combine` needs of an antecedent item."""

    left: tuple[str, ...]
    right: kenlm.State | None
    length: int


class LanguageModelError(ValueError):
    """A language model file that KenLM cannot read; the message names the file."""


class LanguageModel:
    """A KenLM model with the state bookkeeping of the decoder."""

    def __init__(self, model: kenlm.Model | str | os.PathLike):
        if isinstance(model, kenlm.Model):
            self.model = model
        elif not os.path.isfile(model):
            raise LanguageModelError(f"{model}: language model does not exist")
        else:
            try:
                self.model = kenlm.Model(os.fspath(model))
            except OSError as error:
                if os.strerror(errno.ENOMEM) in str(error):  # KenLM's mmap or malloc failed
                    raise MemoryError(f"{model}: not enough memory to load the language model "
                                      f"({error})") from None
                raise LanguageModelError(f"{model}: not a KenLM model ({error})") from None
        self.order: int = self.model.order
        self._null = kenlm.State()
        self.model.NullContextWrite(self._null)
        self._bos = kenlm.State()
        self.model.BeginSentenceWrite(self._bos)

    def combine(self, target: tuple[Symbol, ...], tails: tuple[Summary, ...],
                sentence: bool = False) -> tuple[float, float, tuple[str, ...],
                                                 kenlm.State | None, int]:
        """Score a rule application; returns ``(exact, estimate, left, right, length)``.

        ``exact`` is the log10 probability of the words whose n−1 predecessors are now known
        and were not scored before; ``estimate`` that of the new item's left words, each given
        the words before it inside the item. With ``sentence=True`` the target is read after
        ``<s>`` and every word counts as exact (the goal item, whose target ends in ``</s>``).
        """
        model = self.model
        state = self._bos if sentence else self._null
        context = 0 if sentence else self.order - 1
        exact = estimate = 0.0
        left: list[str] = []
        length = 0
        for symbol in target:
            if symbol.__class__ is str:
                words: tuple[str, ...] = (symbol,)
                tail = None
            else:
                tail = tails[symbol]
                words = tail.left
            for word in words:
                out = kenlm.State()
                score = model.BaseScore(state, word, out)
                state = out
                if length >= context:
                    exact += score
                else:
                    estimate += score
                    left.append(word)
                length += 1
            if tail is not None and tail.right is not None:
                state = tail.right
                length += tail.length - len(tail.left)
        right = state if length >= self.order - 1 else None
        return exact, estimate, tuple(left), right, length

    def estimate(self, target: tuple[Symbol, ...]) -> float:
        """log10 estimate of a rule's target words: each run between nonterminals on its own."""
        total = 0.0
        state = self._null
        for symbol in target:
            if symbol.__class__ is str:
                out = kenlm.State()
                total += self.model.BaseScore(state, symbol, out)
                state = out
            else:
                state = self._null
        return total

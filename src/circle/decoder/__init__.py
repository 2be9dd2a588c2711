"""A Hiero SCFG decoder for translation and paraphrasing (Chiang 2007; thesis ch. 3 and 5).

CKY+ rule matching (:mod:`~circle.decoder.chart`), cube pruning with an integrated KenLM
language model (:mod:`~circle.decoder.search`, :mod:`~circle.decoder.lm`; the search loop
compiled in :mod:`~circle.decoder._cube`, with the pure-Python reference
:mod:`~circle.decoder.cube`), lazy unique k-best extraction (:mod:`~circle.decoder.kbest`), the
targeting feature of thesis eq. 5.1, and n-best output in the Moses text format and as
table rows (:mod:`~circle.decoder.nbest`). Paraphrasing is decoding with an English-to-English
grammar; nothing else changes.

The names below are imported on first use (PEP 562), so that importing a light part such as
:mod:`~circle.decoder.model` (the features and the search settings, which the workflow's plan
reads) does not load the search, its compiled loop and KenLM.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "decode_corpus": "corpus",
    **dict.fromkeys(("Grammar", "GrammarError", "Rule", "grammar_features", "load_grammar"),
                    "grammar"),
    **dict.fromkeys(("LanguageModel", "LanguageModelError"), "lm"),
    **dict.fromkeys(("DECODER_FEATURES", "DecoderSettings", "Model", "read_weights",
                     "write_weights"), "model"),
    **dict.fromkeys(("NBEST", "Hypothesis", "best_hypotheses", "best_of", "best_text",
                     "format_nbest", "nbest_rows"), "nbest"),
    **dict.fromkeys(("Decoder", "SentencePlan"), "search"),
}
"""Each name of the package's interface and the submodule that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """A name of :data:`_EXPORTS`, imported from its submodule on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

"""A Hiero SCFG decoder for translation and paraphrasing (Chiang 2007; thesis ch. 3 and 5).

CKY+ rule matching (:mod:`~circle.decoder.chart`), cube pruning with an integrated KenLM
language model (:mod:`~circle.decoder.search`, :mod:`~circle.decoder.lm`; the search loop
compiled in :mod:`~circle.decoder._cube`, with the pure-Python reference
:mod:`~circle.decoder.cube`), lazy unique k-best extraction (:mod:`~circle.decoder.kbest`), the
targeting feature of thesis eq. 5.1, and n-best output in the Moses text format and as
table rows (:mod:`~circle.decoder.nbest`). Paraphrasing is decoding with an English-to-English
grammar; nothing else changes.
"""

from circle.decoder.corpus import decode_corpus
from circle.decoder.grammar import Grammar, GrammarError, Rule, grammar_features, load_grammar
from circle.decoder.lm import LanguageModel, LanguageModelError
from circle.decoder.model import (
    DECODER_FEATURES,
    DecoderSettings,
    Model,
    read_weights,
    write_weights,
)
from circle.decoder.nbest import NBEST, Hypothesis, format_nbest, nbest_rows
from circle.decoder.search import Decoder, SentencePlan

__all__ = ["DECODER_FEATURES", "NBEST", "Decoder", "DecoderSettings", "Grammar", "GrammarError",
           "Hypothesis", "LanguageModel", "LanguageModelError", "Model", "Rule", "SentencePlan",
           "decode_corpus", "format_nbest", "grammar_features", "load_grammar", "nbest_rows",
           "read_weights", "write_weights"]

"""Tune and test score per tuning iteration (thesis Fig. 5.4).

The thesis tuned with targeted paraphrases of the unbiased paraphraser at two targeting weights
and saw tune BLEU rise while test BLEU fell every iteration: the targeted reference follows the
translation output, so MERT rewards weights for matching a reference made to match it
(§5.2.1). :func:`score_iterations` decodes the test set with the weights of every iteration of
a tuning log; its page, :mod:`circle.figures.iterations`, sets the runs side by side.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

import pandas as pd

from circle.core.schemas import EVALSET, ITERATION_SCORES, TUNING_LOG
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import DecoderSettings, Grammar, best_text, load_grammar
from circle.decoder.corpus import decode_corpus
from circle.decoder.lm import LanguageModel
from circle.decoder.rerank import rerank_depth
from circle.experiments.evaluate import corpus_bleu, corpus_ter


def score_iterations(log_path: str | os.PathLike, test_path: str | os.PathLike,
                     grammar_path: Grammar | str | os.PathLike, lm_path: str | os.PathLike,
                     settings: DecoderSettings, workers: int, run: str,
                     out_path: str | os.PathLike, provenance: Mapping[str, str] | None = None,
                     lowercased: bool = False,
                     rerank_lm_path: str | os.PathLike | None = None) -> pd.DataFrame:
    """For every iteration of the tuning log at ``log_path`` (run name ``run``): its tune score
    (the log's ``decode_score``: the tuning metric against the references the run tuned with),
    and the test-set BLEU and TER (sacrebleu, all test references) of the 1-best decoded with
    the weights that iteration decoded the tune set with. The grammar (a :class:`Grammar` or
    the path of its table) and LM are loaded once. With ``rerank_lm_path`` (lm.rerank_nbest:
    the run tuned the n-best reranking feature) the 1-best is that of the ``settings.k``-best
    list reranked with that LM, as in tuning (:mod:`circle.decoder.rerank`)."""
    log = read_table(log_path, TUNING_LOG)
    names = json.loads(read_metadata(log_path)["feature_names"])
    test = read_table(test_path, EVALSET)
    references = [list(refs) for refs in test["references"]]
    grammar = grammar_path if isinstance(grammar_path, Grammar) else load_grammar(grammar_path)
    lm = LanguageModel(lm_path)
    reranking = None if rerank_lm_path is None else LanguageModel(rerank_lm_path)
    k = rerank_depth(1, settings.k, reranking is not None)
    rows = []
    for row in log.itertuples(index=False):
        weights = dict(zip(names, row.weights, strict=True))
        best = [best_text(nbest) for nbest in decode_corpus(
            list(test["source"]), grammar, lm, weights, settings, workers, k=k,
            rerank_lm=reranking)]
        rows.append({"run": run, "iteration": row.iteration, "metric": row.metric,
                     "tune_score": 100.0 * row.decode_score,
                     "test_bleu": corpus_bleu(best, references, lowercased).value,
                     "test_ter": corpus_ter(best, references, lowercased).value,
                     "returned": row.returned})
    frame = pd.DataFrame(rows)
    write_table(frame, out_path, ITERATION_SCORES, provenance)
    return frame

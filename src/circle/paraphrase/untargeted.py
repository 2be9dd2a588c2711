"""The tuned paraphraser and its untargeted k-best paraphrases (thesis §3.2.3, §4.3.2).

The paraphraser is tuned by MERT on the paraphraser-tuning set, where per document one human
translation is the input and the others are its references (§3.2.3); ``1H+kP`` adds the k-best
untargeted paraphrases of each tune segment's single reference by the tuned paraphraser
(§4.3.2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from circle.core.schemas import EVALSET, IDENTITY_FEATURE
from circle.core.tables import read_table
from circle.corpus.references import ordered_references, single_references
from circle.decoder import (
    DecoderSettings,
    Grammar,
    LanguageModel,
    decode_corpus,
    load_grammar,
    read_weights,
)
from circle.decoder.model import Model
from circle.decoder.rerank import rerank_depth
from circle.decoder.sets import write_nbest
from circle.tune.checkpoint import Checkpoint
from circle.tune.loop import (
    TUNING_FIXED,
    TuningSettings,
    tune,
    write_tuning_run,
)
from circle.tune.metrics import get_metric


def paraphraser_fixed(grammar: Grammar) -> tuple[str, ...]:
    """The weights the paraphraser's MERT leaves at their initial values: :data:`TUNING_FIXED`,
    and φ_ident (Ganitkevitch & Callison-Burch, draft §4.1) if no rule of ``grammar`` has it
    (bias 0 has no identity rules). Its weight there could only drift, untested, and the tuned
    paraphraser also decodes the biased grammars, where identity rules would then get it."""
    names = grammar.feature_names
    if IDENTITY_FEATURE in names and not grammar.features(
            slice(None))[:, names.index(IDENTITY_FEATURE)].any():
        return (*TUNING_FIXED, IDENTITY_FEATURE)
    return TUNING_FIXED

def tune_paraphraser(paratune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                     lm_path: str | os.PathLike, weights_path: str | os.PathLike,
                     settings: DecoderSettings, tuning: TuningSettings, workers: int,
                     out_weights: str | os.PathLike, out_log: str | os.PathLike,
                     provenance: Mapping[str, str] | None = None,
                     checkpoint: Checkpoint | None = None,
                     rerank_lm_path: str | os.PathLike | None = None) -> dict[str, float]:
    """MERT of the English-to-English model (§3.2.3): input = the first reference in the seeded
    order, references = the others; :func:`paraphraser_fixed` weights stay. A metric that also
    scores the input (iBLEU, ``tuning.paraphraser_metric``) gets it first in each reference list
    (:attr:`~circle.tune.metrics.Metric.input_first`). ``checkpoint``: see
    :func:`write_tuning_run`. With ``rerank_lm_path`` the n-best lists are reranked with that LM
    and its feature tuned too (the thesis's 5-gram reranking, :mod:`circle.decoder.rerank`)."""
    table = read_table(paratune_path, EVALSET)
    if min(len(refs) for refs in table["references"]) < 2:
        raise ValueError(f"{paratune_path}: paraphraser tuning needs at least two references "
                         "per segment (one is the input)")
    ordered = ordered_references(table)
    sources = [refs[0] for refs in ordered]
    references = ordered if get_metric(tuning.metric).input_first else [
        refs[1:] for refs in ordered]
    grammar = load_grammar(grammar_path)
    result = tune(sources, references, grammar, lm_path, read_weights(weights_path),
                  settings, tuning, workers, fixed=paraphraser_fixed(grammar),
                  checkpoint=checkpoint, rerank_lm=rerank_lm_path)
    return write_tuning_run(result, out_weights, out_log, provenance, checkpoint)

def paraphrase_references(tune_path: str | os.PathLike, grammar_path: str | os.PathLike,
                          lm_path: str | os.PathLike, weights_path: str | os.PathLike, k: int,
                          settings: DecoderSettings, workers: int, out_path: str | os.PathLike,
                          provenance: Mapping[str, str] | None = None,
                          reference: int | None = None,
                          rerank_lm_path: str | os.PathLike | None = None) -> None:
    """The k-best untargeted paraphrases of each segment's single reference (§4.3.2; which
    one: :func:`single_references`), with ``rerank_lm_path`` the first k of the decoder's
    ``settings.k``-best lists reranked with that LM (:mod:`circle.decoder.rerank`): the lists
    the paraphraser's reranking weight was tuned on, as ``circle paraphrase`` reranks them."""
    table = read_table(tune_path, EVALSET)
    singles = single_references(table, reference)
    weights = read_weights(weights_path)
    lm = LanguageModel(lm_path)  # checked before the grammar is loaded
    grammar = load_grammar(grammar_path)
    names = Model(grammar.feature_names, weights, rerank_lm_path is not None).names
    depth = rerank_depth(k, settings.k, rerank_lm_path is not None)
    outputs = [hypotheses[:k] for hypotheses in decode_corpus(
        singles, grammar, lm, weights, settings, workers, k=depth, rerank_lm=rerank_lm_path)]
    write_nbest(table["segment_id"].tolist(), outputs, names, out_path, provenance,
                {"weights": json.dumps(weights, sort_keys=True),
                 "input": "single reference" if reference is None
                 else f"reference set {reference}"})

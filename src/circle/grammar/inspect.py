"""Looking up the paraphrases of an English phrase in a paraphrase grammar table."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from circle.core.schemas import PARAPHRASE_GRAMMARS
from circle.core.tables import parquet_errors
from circle.grammar.io import grammar_schema


def top_paraphrases(grammar_path: str | os.PathLike, phrase: str, n: int = 10) -> pd.DataFrame:
    """The ``n`` most probable paraphrases e2 of ``phrase`` (by p(e2|e1)) with all their columns.

    ``phrase`` is tokenised and lowercased text as in the grammar; nonterminals are written
    ``[X,1]``/``[X,2]`` and numbered left to right. Exponentiated probabilities are added as
    ``p_e2_given_e1``, ``p_e1_given_e2`` for reading. An unknown phrase gives an empty frame.
    """
    grammar_schema(grammar_path, PARAPHRASE_GRAMMARS)
    source = " ".join(phrase.split())
    with parquet_errors(grammar_path):
        frame = pq.read_table(grammar_path, filters=[("source", "=", source)],
                              page_checksum_verification=True).to_pandas()
    frame = frame.sort_values(["log_p_e2_given_e1", "target"], ascending=[False, True]).head(n)
    frame["p_e2_given_e1"] = np.exp(frame["log_p_e2_given_e1"])
    frame["p_e1_given_e2"] = np.exp(frame["log_p_e1_given_e2"])
    return frame.reset_index(drop=True)

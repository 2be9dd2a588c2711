"""circle.pipeline.work: a results folder's sentence decodes, from its tables."""

import numpy as np
import pandas as pd

from circle.core.schemas import TUNING_LOG
from circle.core.tables import write_table
from circle.decoder.nbest import NBEST
from circle.pipeline.work import DecodingWork


def tuning_log(decodes: list[int]) -> pd.DataFrame:
    n = len(decodes)
    return pd.DataFrame({
        "iteration": np.arange(1, n + 1, dtype=np.int32), "metric": "bleu",
        "weights": [[1.0]] * n, "decode_score": 0.3, "pool_score": [0.3] * (n - 1) + [None],
        "new_hypotheses": 1, "pool_size": np.arange(1, n + 1),
        "returned": [True] + [False] * (n - 1),
        "stop_reason": [None] * (n - 1) + ["converged"],
        "decoded_sentences": np.array(decodes, dtype=np.int64)})


def nbest(segments: list[int], per_segment: int) -> pd.DataFrame:
    rows = [{"segment_id": s, "target": None, "rank": r, "hypothesis": f"h{r}", "score": -1.0,
             "features": [-1.0]} for s in segments for r in range(per_segment)]
    return pd.DataFrame(rows, columns=NBEST.arrow.names)


def test_decodes_are_counted_from_tuning_logs_and_decoded_sets(tmp_path):
    write_table(tuning_log([0, 10, 10]), tmp_path / "tune" / "1H.rep0.parquet", TUNING_LOG)
    write_table(tuning_log([10, 10]), tmp_path / "tune" / "2H.rep0.parquet", TUNING_LOG)
    write_table(nbest([1, 2, 3], 4), tmp_path / "decode" / "1H.rep0" / "test.nbest.parquet", NBEST)
    write_table(nbest([7, 8], 1), tmp_path / "decode" / "untuned" / "tune.nbest.parquet", NBEST)
    work = DecodingWork.of(tmp_path)
    assert work == DecodingWork(tuning_runs=2, tuning_decodes=40, decoded_sets=2, set_decodes=5)
    assert work.line() == ("Decoding: 45 sentence decodes, 40 in 2 tuning runs and 5 in 2 "
                           "decoded sets.")

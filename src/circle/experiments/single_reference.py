"""Which translations make up the single reference of 1H, and how long they are.

The thesis simulates a single reference by choosing, per document, one of the human references
at random (§4.3.1); every 1H, 1H+kP and 1H+kT run is tuned with that choice. When the
translations differ in length, the luck of the draw sets the length the system is tuned to (a
long single reference stretches the output; BLEU's brevity penalty only punishes the opposite),
so its page (:mod:`circle.figures.single_reference`) shows the choice: per translation, the
documents and segments whose single reference it is, and the single reference's length against
the mean of the segment's other references. The rule itself is the corpus's
``single_reference`` key (:data:`circle.corpus.prepare.CHOICE_RULES`). The page goes beyond
the thesis, which does not report the draw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ALL = "all"


def single_reference_table(tune: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """One row per reference set (``names``, the set's reference names) and a last row
    ``all``: the ``documents`` and ``segments`` whose single reference (first of ``ref_order``)
    it is, their ``share`` of the segments, the single reference's mean ``words`` and its
    ``length_ratio``, its words over the mean words of the segment's other references (summed
    over the segments; NaN where a segment has no other reference)."""
    rows = []
    firsts = np.array([int(order[0]) for order in tune["ref_order"]])
    lengths = [[len(ref.split()) for ref in refs] for refs in tune["references"]]
    single = np.array([lens[first] for lens, first in zip(lengths, firsts, strict=True)],
                      dtype=float)
    others = np.array([np.mean([n for k, n in enumerate(lens) if k != first])
                       if len(lens) > 1 else np.nan
                       for lens, first in zip(lengths, firsts, strict=True)])
    for index, name in [*enumerate(names), (None, ALL)]:
        chosen = np.ones(len(tune), bool) if index is None else firsts == index
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = (single[chosen].sum() / others[chosen].sum()) if chosen.any() else np.nan
        rows.append({"reference": name,
                     "documents": int(tune.loc[chosen, "document"].nunique()),
                     "segments": int(chosen.sum()),
                     "share": float(chosen.mean()) if len(tune) else np.nan,
                     "words": float(single[chosen].mean()) if chosen.any() else np.nan,
                     "length_ratio": float(ratio)})
    return pd.DataFrame(rows)

"""Tuning metrics as additive sufficient statistics: BLEU-4, TER and TERBLEU.

MERT (Och 2003; thesis §3.2.3 and §4) scores a whole tune set many times for different 1-best
choices, so each metric is split into per-hypothesis *sufficient statistics* that are summed over
segments and turned into a corpus score at the end.  Every hypothesis carries its *own* list of
references: the targeted experiments (thesis §4.5, design notes §3) attach a different
paraphrased reference to each n-best hypothesis.

Inputs are already tokenised and lowercased; tokens are whitespace-separated, which matches
sacrebleu with ``tokenize="none"``.  Scores are fractions in [0, 1], not sacrebleu's percentages.

Statistics layouts (one row per hypothesis):

* BLEU, ``int64`` shape ``(n, 10)``: clipped n-gram matches for n = 1..4, n-gram totals for
  n = 1..4, hypothesis length, closest reference length (ties go to the shorter reference).
* TER, ``float64`` shape ``(n, 2)``: fewest edits over the references, average reference length
  (sacrebleu's TER with ``case_sensitive=True``: no case folding is done here).
* TERBLEU, ``float64`` shape ``(n, 12)``: the BLEU columns followed by the TER columns.

Corpus scores computed from summed statistics equal sacrebleu's corpus BLEU (``exp`` smoothing,
no effective order) and corpus TER.  :class:`Metric` wraps a metric for MERT; its ``score`` is
always *higher is better*: BLEU, -TER and -TERBLEU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from sacrebleu.metrics import TER

MAX_ORDER = 4
BLEU_STATS = 2 * MAX_ORDER + 2
TER_STATS = 2


def _check_inputs(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if isinstance(hypotheses, str):
        raise ValueError("hypotheses must be a list of strings, not a single string")
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists: "
            "give one list of references per hypothesis")
    for i, refs in enumerate(references):
        if isinstance(refs, str):
            raise ValueError(f"references[{i}] is a string; expected a list of references")
        if len(refs) == 0:
            raise ValueError(f"hypothesis {i} has an empty reference list")


def _ngrams(tokens: list[str]) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, MAX_ORDER + 1)
                   for i in range(len(tokens) - n + 1))


def _reference_info(refs: tuple[str, ...]) -> tuple[Counter, list[int]]:
    """Max count of each n-gram over the references (for clipping) and the reference lengths."""
    max_counts: Counter = Counter()
    lengths = []
    for ref in refs:
        tokens = ref.split()
        lengths.append(len(tokens))
        max_counts |= _ngrams(tokens)  # | keeps the maximum count per n-gram
    return max_counts, lengths


def closest_ref_length(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; ties go to the shorter one (sacrebleu)."""
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def bleu_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """BLEU-4 statistics, shape ``(n, 10)``, of each hypothesis against its own references."""
    _check_inputs(hypotheses, references)
    out = np.zeros((len(hypotheses), BLEU_STATS), dtype=np.int64)
    cache: dict[tuple[str, ...], tuple[Counter, list[int]]] = {}
    for i, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
        key = tuple(refs)
        if key not in cache:
            cache[key] = _reference_info(key)
        max_counts, ref_lens = cache[key]
        tokens = hyp.split()
        for gram, count in _ngrams(tokens).items():
            out[i, len(gram) - 1] += min(count, max_counts.get(gram, 0))
        for n in range(1, MAX_ORDER + 1):
            out[i, MAX_ORDER + n - 1] = max(0, len(tokens) - n + 1)
        out[i, 8] = len(tokens)
        out[i, 9] = closest_ref_length(len(tokens), ref_lens)
    return out


def bleu_from_stats(stats: np.ndarray) -> np.ndarray | float:
    """Corpus BLEU (fraction) from summed statistics; vectorised over leading dimensions.

    Follows ``sacrebleu.metrics.BLEU.compute_bleu`` with ``smooth_method="exp"``: an n-gram
    order with no match gets precision ``1 / (2**k * total)`` for its k-th such order, BLEU is
    0 when nothing matches or some order has no n-grams, brevity penalty
    ``exp(1 - ref_len / hyp_len)`` when the hypotheses are shorter.
    """
    s = np.asarray(stats, dtype=np.float64)
    correct, total = s[..., :MAX_ORDER], s[..., MAX_ORDER:2 * MAX_ORDER]
    hyp_len, ref_len = s[..., 8], s[..., 9]
    defined = np.all(total > 0, axis=-1) & np.any(correct > 0, axis=-1)
    safe_total = np.where(total > 0, total, 1.0)
    smooth = 2.0 ** np.cumsum(correct == 0, axis=-1)
    precision = np.where(correct > 0, correct, 1.0 / smooth) / safe_total
    log_mean = np.log(np.where(defined[..., None], precision, 1.0)).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(hyp_len < ref_len,
                      np.where(hyp_len > 0, np.exp(1.0 - ref_len / np.maximum(hyp_len, 1)), 0.0),
                      1.0)
    score = np.where(defined, bp * np.exp(log_mean), 0.0)
    return float(score) if score.ndim == 0 else score


def ter_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """TER statistics, shape ``(n, 2)``: fewest edits over the references, mean reference length.

    Computed by sacrebleu's TER (Snover et al. 2006, with shifts) one segment at a time.
    """
    _check_inputs(hypotheses, references)
    ter = TER(case_sensitive=True)
    out = np.zeros((len(hypotheses), TER_STATS), dtype=np.float64)
    cache: dict[tuple[str, tuple[str, ...]], tuple[float, float]] = {}
    for i, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
        key = (hyp, tuple(refs))
        if key not in cache:
            seg = ter.sentence_score(hyp, list(refs))
            cache[key] = (seg.num_edits, seg.ref_length)
        out[i] = cache[key]
    return out


def ter_from_stats(stats: np.ndarray) -> np.ndarray | float:
    """Corpus TER (fraction) = summed edits / summed mean reference lengths, as in sacrebleu."""
    s = np.asarray(stats, dtype=np.float64)
    edits, ref_len = s[..., 0], s[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(ref_len > 0, edits / np.where(ref_len > 0, ref_len, 1.0),
                         np.where(edits > 0, 1.0, 0.0))
    return float(score) if score.ndim == 0 else score


def terbleu_from_stats(stats: np.ndarray) -> np.ndarray | float:
    """TERBLEU loss = 0.5 * TER + 0.5 * (1 - BLEU) (Matsoukas et al. 2009; thesis §4.4)."""
    s = np.asarray(stats, dtype=np.float64)
    return 0.5 * ter_from_stats(s[..., BLEU_STATS:]) + 0.5 * (1.0 - bleu_from_stats(
        s[..., :BLEU_STATS]))


class Metric:
    """A tuning metric over additive statistics; ``score`` is higher-is-better for MERT.

    ``value`` is the metric in its usual sense (BLEU, TER or TERBLEU as fractions); ``score``
    is ``value`` for BLEU and ``-value`` for the losses TER and TERBLEU.  Both accept summed
    statistics of shape ``(s,)`` or a stack ``(..., s)`` (one row per candidate).
    """

    name: ClassVar[str]
    n_stats: ClassVar[int]
    higher_is_better: ClassVar[bool]

    def stats(self, hypotheses: Sequence[str],
              references: Sequence[Sequence[str]]) -> np.ndarray:
        raise NotImplementedError

    def value(self, stats: np.ndarray) -> np.ndarray | float:
        raise NotImplementedError

    def score(self, stats: np.ndarray) -> np.ndarray | float:
        value = self.value(stats)
        return value if self.higher_is_better else -value


class Bleu(Metric):
    name, n_stats, higher_is_better = "bleu", BLEU_STATS, True

    def stats(self, hypotheses, references):
        return bleu_stats(hypotheses, references)

    def value(self, stats):
        return bleu_from_stats(stats)


class Ter(Metric):
    name, n_stats, higher_is_better = "ter", TER_STATS, False

    def stats(self, hypotheses, references):
        return ter_stats(hypotheses, references)

    def value(self, stats):
        return ter_from_stats(stats)


class TerBleu(Metric):
    name, n_stats, higher_is_better = "terbleu", BLEU_STATS + TER_STATS, False

    def stats(self, hypotheses, references):
        return np.hstack([bleu_stats(hypotheses, references),
                          ter_stats(hypotheses, references)]).astype(np.float64)

    def value(self, stats):
        return terbleu_from_stats(stats)


METRICS: dict[str, type[Metric]] = {m.name: m for m in (Bleu, Ter, TerBleu)}


def get_metric(name: str) -> Metric:
    """The metric called ``name``: one of "bleu", "ter", "terbleu"."""
    try:
        return METRICS[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose one of {sorted(METRICS)}") from None

"""Tuning metrics as additive sufficient statistics: BLEU-4, TER, TERBLEU and iBLEU.

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
  They are computed for all hypotheses of a call at once with numpy: tokens become integer ids,
  each n-gram of a distinct reference list gets an id built from its prefix's id and its last
  token, the list's clipping counts are found once, and hypothesis n-gram counts are grouped by
  sorting (no per-hypothesis Python loop beyond splitting the strings).
* TER, ``float64`` shape ``(n, 2)``: fewest edits over the references, average reference length
  (sacrebleu's TER with ``case_sensitive=True``: no case folding is done here).
* TERBLEU, ``float64`` shape ``(n, 12)``: the BLEU columns followed by the TER columns.
* iBLEU (:class:`IBleu`), ``int64`` shape ``(n, 20)``: the BLEU columns against the references,
  then the BLEU columns against the hypothesis's input sentence.

Corpus scores computed from summed statistics equal sacrebleu's corpus BLEU (``exp`` smoothing,
no effective order) and corpus TER.  :class:`Metric` wraps a metric for MERT; its ``score`` is
always *higher is better*: BLEU, -TER, -TERBLEU and iBLEU.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from typing import ClassVar

import numpy as np

from circle.tune._ter import edit_distances, ter_statistics

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


def closest_ref_length(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; ties go to the shorter one (sacrebleu)."""
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(start, start + size)`` for each start and size."""
    offsets = np.cumsum(sizes) - sizes
    return np.repeat(starts - offsets, sizes) + np.arange(offsets[-1] + sizes[-1])


def bleu_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """BLEU-4 statistics, shape ``(n, 10)``, of each hypothesis against its own references."""
    _check_inputs(hypotheses, references)
    n = len(hypotheses)
    out = np.zeros((n, BLEU_STATS), dtype=np.int64)
    if n == 0:
        return out
    # ids of the distinct reference lists and of the distinct strings in them
    list_ids: dict[tuple[str, ...], int] = {}
    hyp_list = np.fromiter((list_ids.setdefault(tuple(refs), len(list_ids))
                            for refs in references), np.int64, n)
    string_ids: dict[str, int] = {}
    members = [[string_ids.setdefault(ref, len(string_ids)) for ref in refs]
               for refs in list_ids]
    list_size = np.fromiter(map(len, members), np.int64, len(members))
    member_string = np.fromiter(chain.from_iterable(members), np.int64, list_size.sum())

    # token ids from the references' vocabulary; a hypothesis token outside it is -1
    ref_split = [ref.split() for ref in string_ids]
    ref_lens = np.fromiter(map(len, ref_split), np.int64, len(ref_split))
    vocab = {token: i for i, token in enumerate(dict.fromkeys(chain.from_iterable(ref_split)))}
    string_token = np.fromiter(map(vocab.__getitem__, chain.from_iterable(ref_split)), np.int64,
                               ref_lens.sum())
    hyp_split = [hyp.split() for hyp in hypotheses]
    hyp_lens = np.fromiter(map(len, hyp_split), np.int64, n)
    hyp_token = np.fromiter(map(vocab.get, chain.from_iterable(hyp_split), repeat(-1)), np.int64,
                            hyp_lens.sum())
    # the references' tokens once per (list, string) membership
    member_lens = ref_lens[member_string]
    ref_token = string_token[_ranges((np.cumsum(ref_lens) - ref_lens)[member_string],
                                     member_lens)]
    ref_member = np.repeat(np.arange(len(member_string)), member_lens)
    # tokens from each position to the end of its string
    ref_left = np.repeat(np.cumsum(member_lens), member_lens) - np.arange(len(ref_token))
    hyp_left = np.repeat(np.cumsum(hyp_lens), hyp_lens) - np.arange(len(hyp_token))
    hyp_segment = np.repeat(np.arange(n), hyp_lens)

    # The n-grams starting at the positions ``*_at`` have ids ``*_gram`` that name a (reference
    # list, n-gram) pair: the rank of (prefix id, last token id), the 0-gram being the list
    # itself.  Pairs are packed as a * count_b + b with b < count_b (here and below), and every
    # factor is at most the number of tokens or strings in the call, so the packed keys are
    # exact in int64 (no collisions) for any input that fits in memory.  Hypothesis n-grams
    # absent from their own references are dropped, as are n-grams extending them.
    size = max(len(vocab), 1)
    ref_at, hyp_at = np.arange(len(ref_token)), np.flatnonzero(hyp_token >= 0)
    ref_gram = np.repeat(np.arange(len(members)), list_size)[ref_member]
    hyp_gram = hyp_list[hyp_segment[hyp_at]]
    for order in range(1, MAX_ORDER + 1):
        if order > 1:  # extend each (n-1)-gram by the next token of its string
            keep = ref_left[ref_at] >= order
            ref_at, ref_gram = ref_at[keep], ref_gram[keep]
            keep = hyp_left[hyp_at] >= order
            hyp_at, hyp_gram = hyp_at[keep], hyp_gram[keep]
            keep = hyp_token[hyp_at + order - 1] >= 0
            hyp_at, hyp_gram = hyp_at[keep], hyp_gram[keep]
        grams, ids = np.unique(np.concatenate([ref_gram * size + ref_token[ref_at + order - 1],
                                               hyp_gram * size + hyp_token[hyp_at + order - 1]]),
                               return_inverse=True)
        n_grams = max(len(grams), 1)
        ref_gram, hyp_gram = ids[:len(ref_at)], ids[len(ref_at):]
        # clipping count of each n-gram: its largest count in one reference of the list
        pairs, counts = np.unique(ref_member[ref_at] * n_grams + ref_gram, return_counts=True)
        clip = np.zeros(n_grams, dtype=np.int64)
        np.maximum.at(clip, pairs % n_grams, counts)
        keep = clip[hyp_gram] > 0
        hyp_at, hyp_gram = hyp_at[keep], hyp_gram[keep]
        # each hypothesis's count of each n-gram, clipped
        pairs, counts = np.unique(hyp_segment[hyp_at] * n_grams + hyp_gram, return_counts=True)
        segment, gram = np.divmod(pairs, n_grams)
        matches = np.bincount(segment, np.minimum(counts, clip[gram]), n)
        out[:, order - 1] = matches.astype(np.int64)
        out[:, MAX_ORDER + order - 1] = np.maximum(hyp_lens - order + 1, 0)
    out[:, 8] = hyp_lens
    # closest reference length (ties to the shorter): the least (distance, length) pair, packed
    sizes = list_size[hyp_list]
    lengths = ref_lens[member_string[_ranges((np.cumsum(list_size) - list_size)[hyp_list],
                                             sizes)]]
    width = int(ref_lens.max()) + 1
    packed = np.abs(np.repeat(hyp_lens, sizes) - lengths) * width + lengths
    out[:, 9] = np.minimum.reduceat(packed, np.cumsum(sizes) - sizes) % width
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

    Exact sacrebleu TER (Snover et al. 2006, with shifts), compiled in :mod:`circle.tune._ter`;
    tests check agreement with :func:`ter_stats_reference`.  Identical (hypothesis, references)
    pairs are scored once.
    """
    _check_inputs(hypotheses, references)
    pairs: dict[tuple[str, tuple[str, ...]], int] = {}
    index = np.fromiter((pairs.setdefault((hyp, tuple(refs)), len(pairs))
                         for hyp, refs in zip(hypotheses, references, strict=True)),
                        np.int64, len(hypotheses))
    return ter_statistics([hyp for hyp, _ in pairs], [refs for _, refs in pairs])[index]


def ter_stats_reference(hypotheses: Sequence[str],
                        references: Sequence[Sequence[str]]) -> np.ndarray:
    """:func:`ter_stats` by sacrebleu's own TER, one segment at a time (slow; for tests)."""
    from sacrebleu.metrics import TER  # here: the config checks read the metrics, not sacrebleu

    _check_inputs(hypotheses, references)
    ter = TER(case_sensitive=True)
    out = np.zeros((len(hypotheses), TER_STATS), dtype=np.float64)
    for i, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
        segment = ter.sentence_score(hyp, list(refs))
        out[i] = segment.num_edits, segment.ref_length
    return out


def wer_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """WER statistics against one reference each, shape ``(n, 2)``: word edit (Levenshtein)
    distance and reference length, compiled (:func:`circle.tune._ter.edit_distances`, once per
    distinct reference). WER = edits / length (:func:`ter_from_stats` divides them the same
    way)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    out = np.zeros((len(hypotheses), 2), dtype=np.float64)
    rows: dict[str, list[int]] = {}
    for row, reference in enumerate(references):
        rows.setdefault(reference, []).append(row)
    for reference, group in rows.items():
        words = WordIds()
        target = words.of(reference)
        out[group, 0] = words.edits([words.of(hypotheses[row]) for row in group], target)
        out[group, 1] = len(target)
    return out


class WordIds:
    """Words as small integer ids, for :func:`circle.tune._ter.edit_distances`."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}

    def of(self, text: str) -> np.ndarray:
        """The ids of the whitespace-separated words of ``text`` (new words get new ids)."""
        return np.array([self.vocabulary.setdefault(word, len(self.vocabulary))
                         for word in text.split()], dtype=np.int32)

    @staticmethod
    def pack(candidates: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Candidates (ids) one after another, as :meth:`distances` reads them: (ids, offsets),
        candidate i being ``ids[offsets[i]:offsets[i + 1]]``."""
        offsets = np.zeros(len(candidates) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids in candidates], out=offsets[1:])
        ids = np.concatenate(candidates) if candidates else np.zeros(0, dtype=np.int32)
        return ids, offsets

    def edits(self, candidates: Sequence[np.ndarray], target: np.ndarray) -> np.ndarray:
        """The word edit distance from each candidate (ids) to ``target`` (ids)."""
        return self.distances(*self.pack(candidates), target)

    def distances(self, ids: np.ndarray, offsets: np.ndarray, target: np.ndarray) -> np.ndarray:
        """:meth:`edits` of candidates packed by :meth:`pack`."""
        return edit_distances(ids, offsets, target, len(self.vocabulary))


def wer_stats_reference(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """:func:`wer_stats` by the textbook dynamic programme (slow; for tests)."""
    out = np.zeros((len(hypotheses), 2), dtype=np.float64)
    for k, (hyp, ref) in enumerate(zip(hypotheses, references, strict=True)):
        h, r = hyp.split(), ref.split()
        table = [[i + j if i * j == 0 else 0 for j in range(len(r) + 1)] for i in range(len(h) + 1)]
        for i in range(1, len(h) + 1):
            for j in range(1, len(r) + 1):
                table[i][j] = min(table[i - 1][j - 1] + (h[i - 1] != r[j - 1]),
                                  table[i - 1][j] + 1, table[i][j - 1] + 1)
        out[k] = table[len(h)][len(r)], len(r)
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
    input_first: ClassVar[bool] = False
    """Whether each hypothesis's reference list starts with its input sentence (iBLEU)."""

    def stats(self, hypotheses: Sequence[str],
              references: Sequence[Sequence[str]]) -> np.ndarray:
        raise NotImplementedError

    def value(self, stats: np.ndarray) -> np.ndarray | float:
        raise NotImplementedError

    def score(self, stats: np.ndarray) -> np.ndarray | float:
        value = self.value(stats)
        return value if self.higher_is_better else -value

    def better(self, value: float, other: float) -> bool:
        """Whether metric value ``value`` is strictly better than ``other`` (usual values)."""
        return value > other if self.higher_is_better else value < other


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


IBLEU_ALPHA = 0.9
"""iBLEU's α as later work cites it from Sun & Zhou's (2012) experiments: a copy's penalty,
(1 - α) = 0.1 times its self-BLEU of 1, against 0.9 times its BLEU against the references."""


def ibleu(bleu: np.ndarray | float, input_bleu: np.ndarray | float, alpha: float
          ) -> np.ndarray | float:
    """iBLEU (Sun & Zhou 2012) from its two BLEU scores, on any one scale (fractions, percent):
    α ``bleu`` (output against the references) - (1 - α) ``input_bleu`` (output against the
    input)."""
    return alpha * bleu - (1.0 - alpha) * input_bleu


def ibleu_from_stats(stats: np.ndarray, alpha: float) -> np.ndarray | float:
    """Corpus iBLEU (:func:`ibleu`, fractions) from summed :class:`IBleu` statistics;
    vectorised over leading dimensions."""
    s = np.asarray(stats, dtype=np.float64)
    return ibleu(bleu_from_stats(s[..., :BLEU_STATS]), bleu_from_stats(s[..., BLEU_STATS:]),
                 alpha)


class IBleu(Metric):
    """iBLEU (Sun & Zhou 2012, "Joint Learning of a Dual SMT System for Paraphrase Generation",
    ACL): α BLEU(output, references) - (1 - α) BLEU(output, input), a paraphraser's tuning
    metric that penalises copying its input. Ganitkevitch & Callison-Burch's draft notes that
    tuning a paraphraser on BLEU "leads to identity paraphrases" (§6, Parameter Estimation) and
    "generates only minimal changes" (§7), and plans a "ppBLEU" (§6.1) it never defines; iBLEU
    is the published metric of that kind.

    Both halves are corpus BLEU-4 (:func:`bleu_from_stats`), so the statistics of a hypothesis
    are its BLEU statistics against its references followed by those against its input, they add
    up over segments like BLEU's, and MERT's exact line search works unchanged. ``stats`` reads
    each hypothesis's reference list as ``[input, reference, ...]`` (:attr:`input_first`).

    α (``alpha``) in [0, 1] trades adequacy against dissimilarity; circle's overlay uses
    :data:`IBLEU_ALPHA` = 0.9. An exact copy of the input scores
    α BLEU(input, references) - (1 - α): at 0.9 a copy loses 0.1, so an edit pays when it costs
    less BLEU against the references than 1/9 of the self-BLEU it removes. α = 1 is BLEU.
    The name carries α (``ibleu:0.9``), as tuning logs record it and :func:`get_metric` reads it.
    The reference-quality page's ppBLEU (:mod:`circle.experiments.reference_quality`) is the
    same quantity at the same α on the tune set, the single reference R as the input.
    """

    family: ClassVar[str] = "ibleu"
    n_stats, higher_is_better, input_first = 2 * BLEU_STATS, True, True

    def __init__(self, alpha: float = IBLEU_ALPHA):
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"iBLEU's alpha must lie in [0, 1], not {alpha}")
        self.alpha = float(alpha)
        self.name = f"{self.family}:{self.alpha:g}"

    def stats(self, hypotheses, references):
        _check_inputs(hypotheses, references)
        for i, refs in enumerate(references):
            if len(refs) < 2:
                raise ValueError(f"hypothesis {i}: iBLEU reads its reference list as the input "
                                 f"sentence followed by its references; got {len(refs)} entry")
        return np.hstack([bleu_stats(hypotheses, [list(refs[1:]) for refs in references]),
                          bleu_stats(hypotheses, [[refs[0]] for refs in references])])

    def value(self, stats):
        return ibleu_from_stats(stats, self.alpha)


METRICS: dict[str, type[Metric]] = {m.name: m for m in (Bleu, Ter, TerBleu)}


def get_metric(name: str) -> Metric:
    """The metric called ``name``: one of "bleu", "ter", "terbleu", or "ibleu:<alpha>"
    (:class:`IBleu` with that α, e.g. "ibleu:0.9")."""
    family, _, alpha = name.lower().partition(":")
    if family == IBleu.family:
        try:
            return IBleu(float(alpha))
        except ValueError:
            raise ValueError(f"metric {name!r}: write iBLEU as 'ibleu:<alpha>' with alpha in "
                             f"[0, 1], e.g. 'ibleu:{IBLEU_ALPHA:g}'") from None
    try:
        return METRICS[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose one of {sorted(METRICS)} or "
                         "'ibleu:<alpha>'") from None

"""Tuning conditions and runs by name: the grammar of condition names (thesis §4.3, Fig. 4.3 and
the variants of ch. 4–5), the Snakemake wildcard constraint built from the same regular
expression, tuning runs (a condition and a replicate) and their seeds.

``kH`` is the first k human references in the set's seeded per-document order (``1H`` is the
simulated single reference), ``1H+kP`` the single reference plus the k-best untargeted
paraphrases of it by the tuned paraphraser (§4.3.2), ``1H+kT`` targeted paraphrases (§5.3),
``1H+1X_<extra>`` one fixed extra reference of known quality per segment
(:mod:`circle.experiments.dose_response`, beyond the thesis), ``kH+mL`` the first k human
references plus m new sentences drawn from their word lattice (Pang, Knight & Marcu 2003;
:mod:`circle.lattice.references`, beyond the thesis), ``kH_oov`` and ``kH_oov-<variant>`` kH on
the grammars augmented for OOV phrases (Marton et al. 2009; :mod:`circle.grammar.oov_paraphrase`,
:mod:`circle.experiments.oov_translation`). A leaf: parsing a name loads
neither the decoder nor the tuner, so the workflow's DAG build and the config checks use it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from circle.paraphrase.config import ParaphraserConfig
from circle.tune.metrics import get_metric

_NUMBER = r"\d+(?:\.\d+)?"


EXTRA_PATTERN = r"kjv|mt|copy|shuffle|noise\d+"
"""Names of the fixed extra references of the dose-response conditions ``1H+1X_<extra>``
(:mod:`circle.experiments.dose_response`; the Snakemake wildcard constraint of ``{extra}``): ``kjv``
the verse in the King James Version, ``mt`` the untuned system's 1-best, ``copy`` the single
reference R itself, ``noise<p>`` the second human reference with p % of its words replaced by
random tune-set words, ``shuffle`` its words in a random order."""


OOV_VARIANT_PATTERN = r"[a-z0-9]+"
"""Names of the variants of oov_paraphrase.variants (``kH_oov-<variant>``): lowercase letters
and digits, so that a run name's ``.rep<n>`` and a file name stay unambiguous."""

_CONDITION = re.compile(
    rf"^(?:(?P<human>\d+)H(?:\+(?P<lattice>\d+)L)?|1H\+(?P<paraphrases>\d+)(?P<kind>[PT])"
    rf"|1H\+1X_(?P<extra>{EXTRA_PATTERN}))"
    rf"(?:_b(?P<bias>{_NUMBER})(?:_w(?P<weight>-{_NUMBER}))?)?(?:_ref(?P<reference>\d+))?"
    rf"(?:_t(?P<tuning_set>\d+))?(?P<oov>_oov(?:-(?P<oov_variant>{OOV_VARIANT_PATTERN}))?)?"
    r"(?:_(?P<metric>bleu|ter|terbleu))?$")


CONDITION_PATTERN = re.sub(r"\(\?P<\w+>", "(?:", _CONDITION.pattern)[1:-1]
"""Tuning condition names (the Snakemake wildcard constraint; the parser's regular expression
without its group names, so that the two cannot disagree): ``kH``, ``1H+kP`` or ``1H+kT``
(the thesis's 1H+kP′, targeted), ``1H+1X_<extra>`` (one fixed extra reference,
:data:`EXTRA_PATTERN`) or ``kH+mL`` (k >= 2 human references and m sentences of their word
lattice), then optional parts in this order: ``_b<bias>`` the untargeted
paraphraser's self-paraphrase bias (1H+kP, Fig. 5.14) or, with ``_w<weight>``, a 1H+kT run's own
targeted paraphraser (Fig. 5.4); ``_ref<n>`` the tune set's n-th reference set as every segment's
single reference (1H, 1H+kP; Fig. 4.10); ``_t<n>`` the tuning set T<n> of a held-out system's
tune set, its base set and first n held-out training blocks (1H, 1H+kP; Fig. 4.11/4.12);
``_oov`` or ``_oov-<variant>`` kH on the grammars augmented for OOV phrases, with the search
and feature settings of oov_paraphrase or of its variant (:data:`OOV_VARIANT_PATTERN`);
``_<metric>`` the tuning metric (Fig. 4.8/4.9)."""


@dataclass(frozen=True)
class Condition:
    """A tuning condition: how many human and paraphrased references, whether the paraphrases
    are untargeted (1H+kP, §4.3.2) or targeted to each hypothesis (1H+kT, the thesis's 1H+kP′,
    §5.3), and what the ch. 4–5 variants change (:data:`CONDITION_PATTERN`). Build one with
    :meth:`parse` or :meth:`of`; ``name`` is the canonical name the fields spell."""

    human: int
    paraphrases: int = 0
    targeted: bool = False
    paraphraser: ParaphraserConfig | None = None
    """A 1H+kT condition's own targeted paraphraser; None: the grid search's choice."""
    bias: float | None = None
    """A 1H+kP condition's self-paraphrase bias (Fig. 5.14); None: tuning.paraphraser_bias."""
    reference: int | None = None
    """1-based: the tune set's n-th reference set is every segment's single reference
    (per-translator sets, Fig. 4.10); None: the seeded per-document choice (§4.3.1)."""
    tuning_set: int | None = None
    """n: tune on T<n>, the first rows of a held-out system's tune set that make its base set and
    first n held-out training blocks (Fig. 4.11/4.12, :mod:`circle.experiments.heldout`); None:
    every row."""
    metric: str | None = None
    """The tuning metric (Fig. 4.8/4.9); None: tuning.metric."""
    extra: str | None = None
    """``1H+1X_<extra>``: the one fixed extra reference per segment added to the single
    reference (:data:`EXTRA_PATTERN`, :mod:`circle.experiments.dose_response`); None: none."""
    lattice: int = 0
    """``kH+mL``: m, the sentences per segment drawn from the word lattice of the segment's k
    human references (:mod:`circle.lattice.references`); 0: none."""
    oov: bool = False
    """``kH_oov``: the MT system decodes and tunes with the grammars augmented with rules
    borrowed for OOV phrases from their distributional paraphrases (Marton et al. 2009);
    False: the filtered grammars (unless oov_paraphrase.translate augments every run)."""
    oov_variant: str = ""
    """``kH_oov-<variant>``: the variant of oov_paraphrase.variants whose settings the augmented
    grammars are made with (Marton et al.'s Table 4 rows); "": the section's own settings."""

    def __post_init__(self) -> None:
        problem = None
        if self.human < 1 or self.paraphrases < 0 or self.lattice < 0:
            problem = "needs at least one human reference"
        elif self.lattice and self.human < 2:
            problem = ("a word lattice is merged from several translations (Pang, Knight & "
                       "Marcu 2003): kH+mL needs k >= 2 human references, e.g. 2H+1L")
        elif self.lattice and (self.paraphrases or self.extra is not None
                               or self.bias is not None or self.reference is not None
                               or self.tuning_set is not None):
            problem = "kH+mL adds lattice sentences to kH alone (only a _<metric> suffix)"
        elif self.oov and (self.paraphrases or self.lattice or self.extra is not None
                           or self.reference is not None or self.tuning_set is not None):
            problem = ("_oov decodes kH with the grammars augmented for OOV phrases (only a "
                       "_<metric> suffix)")
        elif self.oov_variant and (not self.oov or not re.fullmatch(OOV_VARIANT_PATTERN,
                                                                     self.oov_variant)):
            problem = "an OOV variant names oov_paraphrase.variants' settings of _oov-<variant>"
        elif self.paraphrases and self.human != 1:
            problem = "paraphrases are added to a single human reference (1H+k)"
        elif self.targeted and not self.paraphrases:
            problem = "a targeted condition adds at least one paraphrase"
        elif self.bias is not None and (self.targeted or not self.paraphrases
                                        or not 0 <= self.bias < 1):
            problem = "_b<bias> alone is an untargeted paraphraser's bias in [0, 1) (1H+kP)"
        elif self.paraphraser is not None and not (self.targeted
                                                   and self.paraphraser.targeted):
            problem = "_b<bias>_w<weight> needs a targeted condition and a negative weight"
        elif self.reference is not None and (self.reference < 1 or self.human != 1
                                             or self.targeted):
            problem = "_ref<n> (n >= 1) names the single reference of 1H or 1H+kP"
        elif self.tuning_set is not None and (self.human != 1 or self.targeted):
            problem = "_t<n> names the tuning set of 1H or 1H+kP"
        elif self.extra is not None and (
                not re.fullmatch(EXTRA_PATTERN, self.extra) or self.human != 1
                or self.paraphrases or self.targeted or self.bias is not None
                or self.reference is not None or self.tuning_set is not None):
            problem = "1H+1X_<extra> adds one extra reference of a known kind to 1H alone"
        elif self.extra is not None and self.extra.startswith("noise") and (
                not 0 < int(self.extra[len("noise"):]) <= 100
                or self.extra != f"noise{int(self.extra[len('noise'):])}"):
            problem = "noise<p> replaces p % of the words, 0 < p <= 100 (no leading zero)"
        elif self.metric is not None:
            get_metric(self.metric)
        if problem:
            raise ValueError(f"unknown tuning condition '{self.name}': {problem}")

    @property
    def name(self) -> str:
        if self.extra is not None:
            name = f"1H+1X_{self.extra}"
        elif self.lattice:
            name = f"{self.human}H+{self.lattice}L"
        elif not self.paraphrases:
            name = f"{self.human}H"
        else:
            name = f"1H+{self.paraphrases}{'T' if self.targeted else 'P'}"
        if self.bias is not None:
            name += f"_b{self.bias:g}"
        if self.paraphraser is not None:
            name += f"_b{self.paraphraser.bias:g}_w{self.paraphraser.targeting_weight:g}"
        if self.reference is not None:
            name += f"_ref{self.reference}"
        if self.tuning_set is not None:
            name += f"_t{self.tuning_set}"
        if self.oov:
            name += OOV_SUFFIX + oov_variant_tag(self.oov_variant)
        return name + (f"_{self.metric}" if self.metric is not None else "")

    @classmethod
    def parse(cls, name: str) -> Condition:
        """The condition a name spells; names that are not canonical (``1H+1P_b0.50``) are
        refused with the canonical one, so that one run never has two names."""
        match = _CONDITION.match(name)
        if not match:
            raise ValueError(f"unknown tuning condition '{name}': use kH (k >= 1), 1H+kP, "
                             "1H+kT, 1H+1X_<extra> or kH+mL (k >= 2), optionally followed by "
                             "_b<bias> (1H+kP), "
                             "_b<bias>_w<weight> (1H+kT), _ref<n>, _t<n>, _oov or "
                             "_oov-<variant> (kH) and _bleu, "
                             "_ter or _terbleu")
        parts = match.groupdict()
        targeted = parts["kind"] == "T"
        bias = None if parts["bias"] is None else float(parts["bias"])
        paraphraser = None
        if parts["weight"] is not None:
            paraphraser, bias = ParaphraserConfig(bias, float(parts["weight"])), None
        elif targeted and bias is not None:
            raise ValueError(f"unknown tuning condition '{name}': a targeted condition's "
                             "paraphraser is _b<bias>_w<weight>")
        condition = cls(
            human=int(parts["human"] or 1), paraphrases=int(parts["paraphrases"] or 0),
            targeted=targeted, paraphraser=paraphraser, bias=bias,
            reference=None if parts["reference"] is None else int(parts["reference"]),
            tuning_set=None if parts["tuning_set"] is None else int(parts["tuning_set"]),
            metric=parts["metric"], extra=parts["extra"], lattice=int(parts["lattice"] or 0),
            oov=parts["oov"] is not None, oov_variant=parts["oov_variant"] or "")
        if condition.name != name:
            raise ValueError(f"tuning condition '{name}' is spelt '{condition.name}'")
        return condition

    @classmethod
    def targeted_at(cls, paraphrases: int, paraphraser: ParaphraserConfig) -> Condition:
        """1H+kT with its own paraphraser configuration (a targeting weight < 0)."""
        if not paraphraser.targeted:
            raise ValueError(f"a targeted condition needs a negative targeting weight, got "
                             f"{paraphraser}")
        return cls(1, paraphrases, targeted=True, paraphraser=paraphraser)

    @property
    def baseline(self) -> Condition:
        """What the condition is compared with: 1H with the same single reference, tuning set
        and tuning metric (1H for every condition of Fig. 4.3 and 5.10). 1H itself on an
        enlarged tuning set T<n> (n > 0) is compared with 1H on the base set T0: whether a
        larger single-reference tuning set helps is the other question of Fig. 4.12. A 1H+1X
        condition is compared with 1H (the dose-response,
        :mod:`circle.experiments.dose_response`). A kH+mL condition is compared with kH and the
        same metric: what the lattice sentences add to the references they are drawn from. A
        kH_oov condition is compared with kH: what the borrowed rules add (Marton et al. 2009,
        Table 4's baseline)."""
        if self.oov:
            return replace(self, oov=False, oov_variant="")
        if self.lattice:
            return Condition(self.human, metric=self.metric)
        single = Condition(1, reference=self.reference, tuning_set=self.tuning_set,
                           metric=self.metric)
        return replace(single, tuning_set=0) if self == single and self.tuning_set else single

    @property
    def added_references(self) -> int:
        """How many references are added to the human ones: k paraphrases, a 1H+1X
        condition's one extra reference or a kH+mL condition's m lattice sentences (at most:
        a segment whose lattice has fewer new sentences gets fewer; the evaluation table's
        ``paraphrase_references``)."""
        return self.paraphrases + (self.extra is not None) + self.lattice

    @property
    def reference_type(self) -> str:
        """The kind of the added references: ``human``, ``paraphrase`` (untargeted),
        ``paraphrase_b<bias>`` (untargeted at its own bias), ``targeted``,
        ``extra_<extra>`` (1H+1X) or ``lattice`` (kH+mL)."""
        if self.extra is not None:
            return f"extra_{self.extra}"
        if self.lattice:
            return "lattice"
        if self.targeted:
            return "targeted"
        if not self.paraphrases:
            return "human"
        return "paraphrase" if self.bias is None else f"paraphrase_b{self.bias:g}"


def parse_conditions(names: Sequence[str], key: str, tune_references: int,
                     where: str = "") -> tuple[list[Condition], list[str]]:
    """The conditions a config key (``key``) names and its problems: a name the grammar refuses,
    or one that needs more human references, or a later reference set, than the tune set has
    (``where``: the key that sets its references, named in the message)."""
    conditions, problems = [], []
    for name in names:
        try:
            condition = Condition.parse(name)
        except ValueError as error:
            problems.append(f"{key}: {error}")
            continue
        needed = max(condition.human, condition.reference or 0)
        if needed > tune_references:
            problems.append(f"{key}: {name} needs {needed} references but the tune set has "
                            f"{tune_references}" + (f" ({where})" if where else ""))
        conditions.append(condition)
    return conditions, problems


@dataclass(frozen=True)
class TuningRun:
    """One tuning run of the MT system: a reference condition and a replicate. Its name,
    ``<condition>.rep<replicate>`` (e.g. ``1H+2P.rep0``), names its weight file, tuning log,
    decodes and seed."""

    condition: Condition
    replicate: int

    SEPARATOR = ".rep"

    def __post_init__(self) -> None:
        if self.replicate < 0:
            raise ValueError(f"replicate numbers start at 0, got {self.replicate}")

    @property
    def name(self) -> str:
        return f"{self.condition.name}{self.SEPARATOR}{self.replicate}"

    @classmethod
    def of(cls, condition: str, replicate: int | str) -> TuningRun:
        return cls(Condition.parse(condition), int(replicate))

    @classmethod
    def parse(cls, name: str) -> TuningRun:
        condition, separator, replicate = name.rpartition(cls.SEPARATOR)
        if not separator or not replicate.isdigit():
            raise ValueError(f"tuning run name '{name}' is not <condition>.rep<replicate>")
        return cls.of(condition, replicate)

    def seed(self, base: int) -> int:
        return run_seed(base, self.name)

    @property
    def start(self) -> str:
        """The weights the run starts from, as a weights file's name: the untuned weights, or
        for 1H+kT the 1H-tuned weights of the same replicate (thesis §5.3: the decoder "whose
        weights have been tuned with just the original human reference")."""
        if self.condition.targeted:
            return TuningRun(Condition(1), self.replicate).name
        if self.condition.oov:
            return untuned_oov_weights(self.condition.oov_variant)
        return UNTUNED_TRANSLATION


BASELINE_CONDITION = "1H"
"""The baseline every condition is compared with, which every config tunes: the simulated single
reference (thesis §4.3.1)."""


UNTUNED = "untuned"
"""The condition (and reference type) of the evaluation row of the untuned system
(:func:`evaluate_runs`): the MT system with the config's untuned weights, before any tuning."""


UNTUNED_TRANSLATION = "untuned-translation"
"""The weights file of the MT system's untuned weights (``weights/untuned-translation.txt``)."""

UNTUNED_TRANSLATION_OOV = "untuned-translation_oov"
"""The untuned weights of the MT system with the grammars augmented for OOV phrases, where
kH_oov runs start: the untuned weights and one for the paraphrase feature
(``oov_paraphrase.untuned_weight``)."""

OOV_SUFFIX = "_oov"
"""The part of a condition name that decodes it with the augmented grammars (``kH_oov``)."""


OOV_VARIANT_TAG_PATTERN = rf"(?:-{OOV_VARIANT_PATTERN})?"
"""File-name part naming an OOV variant (Snakemake wildcard constraint): empty for
oov_paraphrase's own settings, ``-<variant>`` for a variant's (:func:`oov_variant_tag`)."""


def oov_variant_tag(variant: str) -> str:
    """The file-name part of an OOV variant (:data:`OOV_VARIANT_TAG_PATTERN`)."""
    return f"-{variant}" if variant else ""


def tagged_oov_variant(tag: str) -> str:
    """The OOV variant an :func:`oov_variant_tag` names."""
    if not re.fullmatch(OOV_VARIANT_TAG_PATTERN, tag):
        raise ValueError(f"'{tag}' is not an OOV variant tag ('' or -<variant>)")
    return tag[len("-"):]


def untuned_oov_weights(variant: str) -> str:
    """The weights file where kH_oov (``variant`` "") or kH_oov-<variant> runs start:
    :data:`UNTUNED_TRANSLATION_OOV`, or ``untuned-translation_oov-<variant>`` (its grammars may
    have other paraphrase features)."""
    return UNTUNED_TRANSLATION_OOV + oov_variant_tag(variant)


RUN_KEYS: tuple[str, ...] = ("conditions", "replicates", "fan_out")
"""Keys of the config's ``tuning`` section that name the runs or say how they are executed:
no run's settings, so adding a condition or a replicate leaves every finished run as it is."""


def tuning_params(tuning: Mapping, condition: Condition | None = None) -> dict[str, Any]:
    """The config's ``tuning`` section as a tuning job's params: without :data:`RUN_KEYS`; for
    an MT run (``condition``) with the condition's own tuning metric where it names one (Fig.
    4.8) instead of ``tuning.metric``; for the paraphraser's run (None) without
    ``replicate_pool``, which only MT runs draw
    (:func:`circle.experiments.mt_tuning.run_tuning_settings`), and with
    ``tuning.paraphraser_metric`` as its metric where that is set. Neither run keeps the key
    ``paraphraser_metric``, nor ``line_search`` when it is unset: left unset, no job's params
    change."""
    params = {key: value for key, value in tuning.items() if key not in RUN_KEYS}
    paraphraser_metric = params.pop("paraphraser_metric", None)
    if params.get("line_search", "set") is None:
        del params["line_search"]
    if condition is None:
        params.pop("replicate_pool", None)
        if paraphraser_metric is not None:
            params["metric"] = paraphraser_metric
    elif condition.metric is not None:
        params["metric"] = condition.metric
    return params


def run_seed(base: int, run: str) -> int:
    """The seed of tuning run ``run`` (e.g. ``1H.rep0``) derived from the config seed ``base``:
    every condition and replicate draws its own MERT restarts (SHA-256, stable across Python
    versions and platforms)."""
    digest = hashlib.sha256(f"{base}:{run}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


REFERENCE_TAG_PATTERN = r"(?:\.ref\d+)?"
"""File-name part naming a single reference (Snakemake wildcard constraint): empty for the
seeded per-document choice, ``.ref<n>`` for reference set n (:func:`reference_tag`)."""


def reference_tag(reference: int | None) -> str:
    """The file-name part of a single reference (:data:`REFERENCE_TAG_PATTERN`)."""
    return "" if reference is None else f".ref{reference}"


def tagged_reference(tag: str) -> int | None:
    """The single reference a :func:`reference_tag` names."""
    if not re.fullmatch(REFERENCE_TAG_PATTERN, tag):
        raise ValueError(f"'{tag}' is not a reference tag ('' or .ref<n>)")
    return int(tag[len(".ref"):]) if tag else None

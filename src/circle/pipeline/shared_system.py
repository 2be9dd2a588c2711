"""An experiment that translates with another experiment's MT system (config ``mt_system``).

Experiments that compare paraphrasers on one MT system (the powered experiment's paraphraser
experiments, docs/results.md) would each rebuild the same corpus, grammar and LM and retune the
same 1H replicates: with ``mt_system: <experiment>`` the workflow copies that experiment's MT
system in instead (rule share_mt_system), so that its 1H runs are the very runs of the other
experiment, not retuned draws of them. What is shared is :func:`shared_mt_files`: the corpus and
its sets, the translation grammar and its filtered sets, the LM, the untuned weights and decodes,
and each 1H replicate's weights, tuning log and test decode. Copies, not links: Snakemake
touches a job's outputs, and touching a hard link touches the other experiment's file too, so
that what was made from it there would look out of date.

The shared system must be the one this config would build: the workflow refuses, when it is
built, a shared experiment whose effective configuration records other values of the keys its
MT system's jobs read (:func:`mt_system_mismatch`, :data:`MT_SYSTEM_KEYS`), and the copying job
refuses while a shared file is missing (:func:`share_mt_system`). The job stays the only
producer of the shared files even then: had it an input missing, Snakemake would turn to the
rules that build and tune the system again.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from circle.core.layout import (
    BILINGUAL_GRAMMAR,
    CORPUS_TABLE,
    DECODE_NBEST,
    DECODE_NBEST_TEXT,
    DECODE_ONEBEST,
    DECODE_ONEBEST_DETOK,
    EVALSET_TABLE,
    FILTERED_GRAMMAR,
    LEXICAL_TABLE,
    LM_BINARY,
    REFERENCE_TEXT,
    REFERENCE_TEXT_DETOK,
    TOKENIZED_TABLE,
    TUNING_LOG,
    WEIGHTS,
    Results,
    under_experiment,
)
from circle.core.tables import atomic_path
from circle.corpus.prepare import EVAL_SETS, reference_names
from circle.experiments.conditions import (
    BASELINE_CONDITION,
    UNTUNED_TRANSLATION,
    Condition,
    TuningRun,
)
from circle.pipeline.stale import config_changes, recorded_and_current

MT_SYSTEM_KEYS: Mapping[str, tuple[str, ...] | None] = {
    "seed": None,
    "corpus": None,
    "validation": None,
    "preprocess": None,
    "alignment": ("symmetrization", "model", "frozen"),
    "lm": ("decoding_order", "reranking_order", "rerank_nbest", "discount_fallback",
           "extra_text", "leak_min_words"),
    "grammar": None,
    "sets": None,
    "decoder": ("pop_limit", "span_limit", "options_limit", "k", "translation_weights"),
    "tuning": ("metric", "optimizer", "restarts", "random_directions", "restart_min_gain",
               "max_iterations", "patience", "first_pool", "replicate_pool", "first_pool_spread",
               "bounds", "pro"),
    "oov_paraphrase": ("translate",),
}
"""The config keys the shared MT system's jobs read, by section (None: the whole section): what
must be equal for the other experiment's system to be the one this config would build. Left out
are the keys of the paraphrasers, the figures and the conditions, and those that change how a
job runs, not what it writes (``decoder.shards``, ``tuning.fan_out``, ``grammar`` aside, whose
job counts are compared as well). ``lm.leaked_lines`` is :data:`LEAK_POLICY`'s case."""

LEAK_POLICY = ("lm", "leaked_lines")
"""``lm.leaked_lines`` may differ where the shared system's is ``error``: its LM text then held no
evaluation reference (the build would have stopped), so ``drop`` builds the same model."""

DECODED_SETS = {UNTUNED_TRANSLATION: ("tune", "test"), BASELINE_CONDITION: ("test",)}
"""The shared decodes: the untuned system's of the tune set (every tuning run's first n-best
lists) and of the test set, and each 1H replicate's of the test set."""


def shared_mt_files(config: Mapping[str, Any]) -> list[str]:
    """The files of the MT system that ``config``'s ``mt_system`` shares, as paths under
    ``results/<experiment>/`` (the same under either experiment)."""
    under = under_experiment
    references = len(reference_names(config["corpus"])["test"])
    baseline = Condition.parse(BASELINE_CONDITION)
    runs = [TuningRun(baseline, replicate).name
            for replicate in range(config["tuning"]["replicates"])]
    splits = ("train", *EVAL_SETS)
    files = [under(CORPUS_TABLE, split=split) for split in splits]
    files += [under(TOKENIZED_TABLE, split=split) for split in splits]
    files += [under(EVALSET_TABLE, evalset=evalset) for evalset in EVAL_SETS]
    files += [under(template, evalset="test", k=k)
              for k in range(1, references + 1)
              for template in (REFERENCE_TEXT, REFERENCE_TEXT_DETOK)]
    files += [under(LEXICAL_TABLE), under(BILINGUAL_GRAMMAR)]
    files += [under(FILTERED_GRAMMAR, evalset=evalset) for evalset in ("tune", "test")]
    lm = config["lm"]
    orders = {lm["decoding_order"], *([lm["reranking_order"]] if lm["rerank_nbest"] else [])}
    files += [under(LM_BINARY, order=order) for order in sorted(orders)]
    files += [under(WEIGHTS, weights=weights) for weights in (UNTUNED_TRANSLATION, *runs)]
    files += [under(TUNING_LOG, run=run) for run in runs]
    decodes = [(UNTUNED_TRANSLATION, evalset) for evalset in DECODED_SETS[UNTUNED_TRANSLATION]]
    decodes += [(run, evalset) for run in runs for evalset in DECODED_SETS[BASELINE_CONDITION]]
    files += [under(template, weights=weights, evalset=evalset)
              for weights, evalset in decodes
              for template in (DECODE_NBEST, DECODE_NBEST_TEXT, DECODE_ONEBEST,
                               DECODE_ONEBEST_DETOK)]
    return files


def mt_system_changes(recorded: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """Each key of :data:`MT_SYSTEM_KEYS` (and :data:`LEAK_POLICY`) whose value differs between
    the shared system's effective configuration ``recorded`` and ``config``, as
    ``key: theirs -> ours``."""
    changes = []
    for section, keys in MT_SYSTEM_KEYS.items():
        theirs, ours = recorded.get(section), config.get(section)
        if isinstance(theirs, Mapping) and isinstance(ours, Mapping) and keys is not None:
            theirs = {key: value for key, value in theirs.items() if key in keys}
            ours = {key: value for key, value in ours.items() if key in keys}
        changes += config_changes({section: theirs}, {section: ours})
    section, key = LEAK_POLICY
    theirs = recorded.get(section, {}).get(key)
    if theirs != "error":
        changes += config_changes({section: {key: theirs}},
                                  {section: {key: config[section][key]}})
    return changes


def mt_system_config_problems(config: Mapping[str, Any]) -> list[str]:
    """What in ``config`` alone forbids its ``mt_system``: it names this experiment, or the
    system translates with OOV paraphrases (grammars this module does not share)."""
    system = config.get("mt_system")
    if system is None:
        return []
    if system == config["experiment"]:
        return [f"config mt_system: {system} is this experiment; name another experiment "
                "whose MT system to share, or leave it out"]
    if config["oov_paraphrase"]["translate"]:
        return [f"config mt_system: {system}: an MT system that translates with OOV "
                "paraphrases (oov_paraphrase.translate) cannot be shared; build it in this "
                "experiment"]
    return []


def mt_system_mismatch(config: Mapping[str, Any], results: str | Path = "results"
                       ) -> str | None:
    """Why the experiment ``config``'s ``mt_system`` names, as recorded under ``results``, is
    not this config's MT system: the keys of :func:`mt_system_changes` whose values its
    effective configuration records otherwise. None when they agree or nothing is recorded yet
    (:func:`mt_system_problem` refuses that)."""
    system = config["mt_system"]
    recorded_file = Results(Path(results) / system).config
    if not recorded_file.is_file():
        return None
    if changes := mt_system_changes(*recorded_and_current(recorded_file, config)):
        return (f"config mt_system: {system} was built with other MT settings than this "
                f"config's ({recorded_file}): " + "; ".join(changes))
    return None


def mt_system_problem(config: Mapping[str, Any], results: str | Path = "results"
                      ) -> str | None:
    """Why the experiment ``config``'s ``mt_system`` names cannot be shared as it stands under
    ``results``: it has no effective configuration, or one whose MT system differs
    (:func:`mt_system_mismatch`), or a shared file is missing (e.g. a 1H replicate not yet
    tuned). None when it can."""
    system = config["mt_system"]
    root = Path(results) / system
    recorded_file = Results(root).config
    if not recorded_file.is_file():
        return (f"config mt_system: {system}, but {recorded_file} does not exist: build that "
                "experiment's MT system, 1H runs and their test decodes first (e.g. its "
                "reference_sparsity target)")
    if mismatch := mt_system_mismatch(config, results):
        return mismatch
    missing = [str(root / path) for path in shared_mt_files(config)
               if not (root / path).is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more"
                                          if len(missing) > 5 else "")
        return (f"config mt_system: {system}: {len(missing)} of the files this experiment "
                f"shares are missing ({shown}); finish that experiment's 1H runs and their "
                "test decodes first")
    return None


def share_mt_system(config: Mapping[str, Any], targets: Sequence[str],
                    results: str | Path = "results") -> None:
    """Copy the shared system's files (:func:`shared_mt_files`) to ``targets``, their places in
    this experiment, each atomically (a partial copy is never left under its final name), once
    :func:`mt_system_problem` finds nothing to refuse (else ValueError naming it)."""
    if problem := mt_system_problem(config, results):
        raise ValueError(problem)
    root = Path(results) / config["mt_system"]
    for path, target in zip(shared_mt_files(config), targets, strict=True):
        with atomic_path(target) as scratch:
            shutil.copyfile(root / path, scratch)

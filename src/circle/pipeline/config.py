"""Checks of an experiment's configuration when the workflow is built, before any job runs.

:func:`check_config` runs them in order. The JSON schema
(``workflow/schemas/config.schema.yaml``) checks each key on its own; the later checks need
several keys together: tuning conditions against the references the data has, the untuned
weights against the features of the grammars they score, the tokeniser's languages against the
corpus, and a frozen alignment against the alignment settings it replays.
:func:`write_effective_config` records the configuration an experiment ran with beside its
results.
"""

from __future__ import annotations

import copy
import fnmatch
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from circle.align import REFREEZE_HINT, aligner_name
from circle.core.schemas import (
    ALIGNMENT,
    GRAMMAR,
    GRAMMAR_OOV_PARAPHRASED,
    LABELLED_PARAPHRASE_GRAMMAR,
    TableSchema,
    paraphrase_grammar_schema,
)
from circle.core.tables import SchemaError, atomic_path, read_metadata
from circle.corpus.bible import ENGLISH
from circle.corpus.pivots import pivot_problems
from circle.corpus.prepare import reference_names
from circle.corpus.preprocess import language_problem
from circle.decoder.model import DECODER_FEATURES, Model, finite_weight
from circle.experiments.conditions import BASELINE_CONDITION, Condition, parse_conditions
from circle.experiments.dose_runs import dose_problems
from circle.experiments.lattice_tuning import lattice_problems
from circle.experiments.oov_translation import oov_problems
from circle.pipeline.shared_system import mt_system_config_problems
from circle.tune.metrics import IBleu, get_metric


class ConfigError(ValueError):
    """The configuration cannot run; the message lists every problem found."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("invalid configuration:\n  " + "\n  ".join(self.problems))


CONFIG_SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
"""The workflow's config schema in the checkout this package runs from."""


def schema_validator(schema_path: str | os.PathLike = CONFIG_SCHEMA) -> jsonschema.Validator:
    """A validator of the schema at ``schema_path`` that completes the config it validates in
    place with the schema's defaults for the keys it lacks, and takes only whole numbers written
    as such where the schema asks for an integer: JSON Schema counts ``2.0`` as an integer,
    but ``range(2.0)`` and the workflow's wildcards do not."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    base = jsonschema.validators.validator_for(schema)
    check_properties = base.VALIDATORS["properties"]

    def fill_defaults(validator, properties, instance, subschema):
        if validator.is_type(instance, "object"):
            for name, property_schema in properties.items():
                if "default" in property_schema:
                    instance.setdefault(name, copy.deepcopy(property_schema["default"]))
        yield from check_properties(validator, properties, instance, subschema)

    types = base.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
    return jsonschema.validators.extend(base, {"properties": fill_defaults},
                                        type_checker=types)(schema)


def with_schema_defaults(config: dict[str, Any], schema_path: str | os.PathLike = CONFIG_SCHEMA
                         ) -> dict[str, Any]:
    """``config`` checked against the workflow's JSON schema and completed in place with the
    schema's defaults for the keys it lacks, as the workflow does when it is built
    (:func:`check_config`): an effective config written before a key existed reads as one
    written now. Raises jsonschema's ValidationError for a config the schema refuses."""
    schema_validator(schema_path).validate(config)
    return config


MAX_CONFIG_VALUES = 100_000
"""The most values (mappings, lists and scalars, counted as YAML aliases expand them) a
configuration may hold; the largest shipped config holds a few hundred."""
MAX_MESSAGE_CHARS = 300
"""The longest schema message quoted: a message quotes the refused value."""


def check_config(config: dict[str, Any], paths: Sequence[str | os.PathLike],
                 schema_path: str | os.PathLike = CONFIG_SCHEMA) -> None:
    """Check the configuration read from the config files ``paths`` as the workflow is built,
    and fill in the schema's defaults: keys given twice and values that YAML aliases blow up
    (:func:`expansion_problems`) first, then the schema (:func:`schema_problems`), then
    :func:`config_problems`. Raises :class:`ConfigError` with the problems of the first of
    these steps that finds any."""
    if problems := duplicate_key_problems(paths) + expansion_problems(config):
        raise ConfigError(problems)
    if problems := schema_problems(config, schema_path):
        raise ConfigError(problems)
    if problems := config_problems(config):
        raise ConfigError(problems)


def expansion_problems(config: Mapping[str, Any]) -> list[str]:
    """Each top-level key whose value holds more than :data:`MAX_CONFIG_VALUES` values once
    its YAML aliases are expanded (an alias bomb: a list of aliases of lists of aliases ...),
    which would take hours to validate or print. Counted without expanding, a shared value
    once per alias that reaches it."""
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        if id(value) not in sizes:
            children = value.values() if isinstance(value, dict) else value
            sizes[id(value)] = 1 + sum(size(child) for child in children)
        return sizes[id(value)]

    return [f"config {key}: holds more than {MAX_CONFIG_VALUES:,} values once its YAML aliases "
            "are expanded (aliases of lists of aliases?); a configuration holds a few hundred"
            for key, value in config.items() if size(value) > MAX_CONFIG_VALUES]


def schema_problems(config: dict[str, Any], schema_path: str | os.PathLike = CONFIG_SCHEMA
                    ) -> list[str]:
    """Every violation of the workflow's JSON schema by ``config`` (:func:`schema_problem`),
    completing it in place with the schema's defaults as :func:`with_schema_defaults` does."""
    return [schema_problem(error) for error in schema_validator(schema_path).iter_errors(config)]


def schema_problem(error: jsonschema.ValidationError) -> str:
    """One line for a failed schema validation: the key and what is wrong with it, at most
    :data:`MAX_MESSAGE_CHARS` of it (jsonschema's own string quotes the whole config and
    schema). A whole number written as a decimal (``2.0``) is told how to write it."""
    key = ".".join(str(part) for part in error.absolute_path)
    message = error.message
    if (error.validator == "type" and isinstance(error.instance, float)
            and error.instance.is_integer() and "integer" in error.validator_value):
        message = (f"{error.instance!r} is written as a decimal number, but the key takes a "
                   f"whole number: write {int(error.instance)}")
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS]}... ({len(message):,} characters)"
    return f"config{' ' + key if key else ''}: {message}"


def thesis_numbers(config: Mapping[str, Any]) -> bool:
    """Whether the report puts the thesis's published numbers beside the experiment's
    (``report.thesis_numbers``): ``auto`` (the default) = only for the Bible reproduction
    (``corpus.kind: bible``), not for the user's own data (``files``)."""
    setting = config.get("report", {}).get("thesis_numbers", "auto")
    if setting == "auto":
        return config["corpus"]["kind"] == "bible"
    return bool(setting)


OWN_DATA_COST = (
    "the schema's defaults are tuning.max_iterations 25, tuning.restarts 20 and 7 "
    "paraphrase.biases (a pivoted grammar and a tuned paraphraser each), about 2.5 times the "
    "iterations and twice the restarts of config/config.yaml (10 and 10), whose Bible run "
    "(docs/measurements.md) took 44 min 33 s on 2 cores with 185 jobs (peak RSS 5.3 GB): 21 "
    "untargeted tuning runs 13 min 45 s together, 9 targeted 11 min 55 s, 70 test and start "
    "decodes 10 min 28 s of job time; tuning time grows with iterations x restarts and with "
    "your tune set's size")
"""The cost of the defaults an own-data config inherits (:func:`own_data_warnings`)."""


def own_data_warnings(config: Mapping[str, Any]) -> list[str]:
    """What an experiment on the user's own data (``corpus.kind: files``) should hear once when
    the workflow is built: a single tuning replicate (no significance over replicates), and
    the cost of the schema's defaults where the config leaves them. Empty for the Bible."""
    if config["corpus"]["kind"] != "files":
        return []
    warnings = []
    tuning = config["tuning"]
    if int(tuning.get("replicates", 1)) < 2:
        warnings.append(
            "tuning.replicates is 1: each condition is tuned once, so the report's means have "
            "no standard deviation and the approximate randomisation test over replicates "
            "(Clark et al. 2011) sees one optimiser run per condition, whose own variance "
            "(MERT is unstable) it cannot separate from the condition's effect; use 3 or more "
            "replicates to compare conditions")
    warnings.append(f"cost of the defaults: {OWN_DATA_COST}; lower tuning.max_iterations, "
                    "tuning.restarts or paraphrase.biases for a first run")
    return warnings


def config_problems(config: Mapping[str, Any]) -> list[str]:
    """Every problem of a schema-valid configuration (defaults filled in) that would stop a
    job later: see :func:`condition_problems`, :func:`weight_problems`,
    :func:`language_problems`, :func:`bounds_problems`, :func:`grid_problems`,
    :func:`circle.experiments.dose_runs.dose_problems`,
    :func:`circle.experiments.lattice_tuning.lattice_problems`,
    :func:`circle.experiments.oov_translation.oov_problems`,
    :func:`circle.corpus.pivots.pivot_problems`, :func:`samt_problems`,
    :func:`optimizer_problems` and
    :func:`circle.pipeline.shared_system.mt_system_config_problems`. The frozen alignment is
    checked by the jobs that replay it
    (:func:`frozen_alignment_problems`), so that the job rebuilding it can run while it is
    broken."""
    return (condition_problems(config) + language_problems(config) + weight_problems(config)
            + bounds_problems(config) + grid_problems(config) + dose_problems(config)
            + lattice_problems(config) + oov_problems(config) + pivot_problems(config)
            + samt_problems(config) + optimizer_problems(config)
            + mt_system_config_problems(config))


def condition_problems(config: Mapping[str, Any]) -> list[str]:
    """The tuning conditions must include the baseline 1H and ask for no more human references
    than the tune set has, nor a 1H+kT more targeted paraphrases than ``targeted.nbest``
    decodes per hypothesis (1H+kP's paraphraser decodes k itself); the paraphraser-tuning set
    needs two references (one is the paraphraser's input)."""
    corpus = config["corpus"]
    counts = {name: len(names) for name, names in reference_names(corpus).items()}

    def key(evalset: str) -> str:
        return ("corpus.bible.references" if corpus["kind"] == "bible"
                else f"corpus.files.{evalset}.references")

    conditions = config["tuning"]["conditions"]
    biases = [float(b) for b in config["paraphrase"]["biases"]]
    nbest = config["targeted"]["nbest"]
    problems = []
    if BASELINE_CONDITION not in conditions:
        problems.append(f"tuning.conditions {conditions} lacks {BASELINE_CONDITION}, the "
                        "baseline every condition is compared with")
    parsed, parse_problems = parse_conditions(conditions, "tuning.conditions", counts["tune"],
                                              key("tune"))
    problems += parse_problems
    for condition in parsed:
        name = condition.name
        if condition.tuning_set is not None:
            problems.append(f"tuning.conditions: {name}: _t<n> names a tuning set of the "
                            "held-out system, whose runs `snakemake paper_tables` adds itself")
        if condition.lattice:
            problems.append(f"tuning.conditions: {name}: kH+mL conditions run with `snakemake "
                            "lattice_tuning` from lattice.tuning_conditions")
        if condition.oov:
            problems.append(f"tuning.conditions: {name}: kH_oov conditions run with `snakemake "
                            "oov_translation` from oov_paraphrase.tuning_conditions")
        bias = (condition.bias if condition.paraphraser is None
                else condition.paraphraser.bias)
        if bias is not None and bias not in biases:
            problems.append(f"tuning.conditions: {name}: bias {bias:g} is not one of "
                            f"paraphrase.biases {biases}")
        if condition.targeted and condition.paraphrases > nbest:
            problems.append(f"tuning.conditions: {name} takes {condition.paraphrases} targeted "
                            f"paraphrases per hypothesis, but targeted.nbest {nbest} decodes "
                            f"only {nbest}: raise targeted.nbest to at least "
                            f"{condition.paraphrases}")
    if counts["paratune"] < 2:
        problems.append(f"the paraphraser-tuning set has {counts['paratune']} reference "
                        f"({key('paratune')}); paraphraser tuning needs 2 (one is its input)")
    return problems


BIBLE_LANGUAGES = {"es": "es", **dict.fromkeys(ENGLISH, "en")}
"""The language of each text column of the Bible table."""


def language_problems(config: Mapping[str, Any]) -> list[str]:
    """The tokeniser's languages (``preprocess.source_lang`` and ``target_lang``) must be
    languages the Moses tokeniser knows (:func:`circle.corpus.preprocess.language_problem`)
    and differ; for the Bible they must be the languages of the columns they tokenise. A wrong
    code runs, but splits and rejoins words by another language's rules (``isn 't``)."""
    preprocess = config["preprocess"]
    problems = [f"preprocess.{key}: {problem}" for key in ("source_lang", "target_lang")
                if (problem := language_problem(preprocess[key]))]
    if preprocess["source_lang"] == preprocess["target_lang"]:
        problems.append(f"preprocess.source_lang and preprocess.target_lang are both "
                        f"'{preprocess['source_lang']}'; the source and the target are two "
                        "languages, each tokenised by its own rules")
    corpus = config["corpus"]
    if corpus["kind"] == "bible":
        bible = corpus["bible"]
        for key, columns in (("source_lang", [bible["source"]]),
                             ("target_lang", [bible["train_target"], *bible["references"]])):
            for column in columns:
                if BIBLE_LANGUAGES[column] != preprocess[key]:
                    problems.append(
                        f"preprocess.{key} is '{preprocess[key]}', but it tokenises the Bible "
                        f"column '{column}', which is in '{BIBLE_LANGUAGES[column]}' (swapped "
                        "codes?)")
    return problems


def weight_problems(config: Mapping[str, Any]) -> list[str]:
    """The untuned weights must be finite and name exactly the features of their grammar (for
    translation with ``oov_paraphrase.translate``, the augmented grammar's)."""
    problems = []
    for model, schema in grammar_schemas(config).items():
        key = f"decoder.{model}_weights"
        weights = config["decoder"][f"{model}_weights"]
        try:
            for name, value in weights.items():
                finite_weight(value, f"weight '{name}'")
            Model(schema.features, weights)
        except ValueError as error:
            why = (" (oov_paraphrase.translate decodes with the grammar augmented for OOV "
                   "phrases, whose paraphrase feature needs an untuned weight too)"
                   if schema is GRAMMAR_OOV_PARAPHRASED else "")
            problems.append(f"{key}: {error}{why}")
    return problems


def grammar_schemas(config: Mapping[str, Any]) -> dict[str, TableSchema]:
    """The grammar schema of the translation model (the filtered grammar's, or with
    ``oov_paraphrase.translate`` the augmented one's) and of the paraphraser."""
    paraphrase = (LABELLED_PARAPHRASE_GRAMMAR if labelled_decoding(config)
                  else paraphrase_grammar_schema(config["paraphrase"]["lexical_feature"],
                                                 config["paraphrase"]["identity_feature"]))
    translation = (GRAMMAR_OOV_PARAPHRASED if config["oov_paraphrase"]["translate"]
                   else GRAMMAR)
    return {"translation": translation, "paraphrase": paraphrase}


def labelled_decoding(config: Mapping[str, Any]) -> bool:
    """Whether the paraphraser decodes the labelled (SAMT) grammar with labels."""
    return bool(config["samt"]["paraphraser"]) and config["samt"]["decoding"] == "labelled"


def targeted_conditions(conditions: Sequence[str]) -> list[str]:
    """The 1H+kT conditions among ``conditions`` (names that do not parse are left to
    :func:`condition_problems`)."""
    targeted = []
    for name in conditions:
        try:
            if Condition.parse(name).targeted:
                targeted.append(name)
        except ValueError:  # condition_problems names it
            continue
    return targeted


def samt_problems(config: Mapping[str, Any]) -> list[str]:
    """samt.decoding labelled decodes the labelled grammar as pivoted (circle.grammar.bias):
    it needs samt.paraphraser, has only the grammar of bias 0, and no targeted paraphraser
    (whose runs use the grid search's biased grammars)."""
    if config["samt"]["decoding"] != "labelled":
        return []
    if not config["samt"]["paraphraser"]:
        return ["samt.decoding labelled: the labelled grammar paraphrases only with "
                "samt.paraphraser true"]
    problems = []
    biases = [float(b) for b in config["paraphrase"]["biases"]]
    if biases != [0.0]:
        problems.append(f"samt.decoding labelled: paraphrase.biases {biases} must be [0] (the "
                        "labelled grammar is decoded as pivoted; the self-paraphrase bias is "
                        "defined for the grammar collapsed to X)")
    targeted = targeted_conditions(config["tuning"]["conditions"])
    if targeted:
        problems.append(f"samt.decoding labelled: targeted conditions {targeted} need the grid "
                        "search's biased grammars, which labelled decoding does not have")
    return problems


def optimizer_problems(config: Mapping[str, Any]) -> list[str]:
    """PRO (Hopkins & May 2011) ranks pairs of hypotheses by a sentence-level score
    (:func:`circle.tune.pro.sentence_scores`: BLEU+1, TER, TERBLEU) and iBLEU has none, so
    ``tuning.optimizer: pro`` cannot tune the paraphraser on ``tuning.paraphraser_metric:
    ibleu:<alpha>``; its job would fail at the first optimisation. ``tuning.line_search:
    forest`` (forest MERT, :mod:`circle.tune.forest`) needs MERT, one job per run, no n-best
    reranking feature and no 1H+kT condition (:mod:`circle.tune.loop`)."""
    tuning = config["tuning"]
    problems = []
    metric = tuning.get("paraphraser_metric")
    if (tuning["optimizer"] == "pro" and metric is not None
            and isinstance(get_metric(metric), IBleu)):
        problems.append(
            f"tuning.paraphraser_metric {metric} with tuning.optimizer pro: PRO ranks "
            "hypotheses by a sentence-level score, which iBLEU does not have; tune the "
            "paraphraser with tuning.optimizer mert (MERT scores iBLEU on the whole tune "
            "set) or on tuning.paraphraser_metric bleu, ter or terbleu")
    if tuning.get("line_search") == "forest":
        needs = [(tuning["optimizer"] != "mert", f"tuning.optimizer {tuning['optimizer']} has "
                  "no line search"),
                 (tuning["fan_out"] > 0, f"tuning.fan_out {tuning['fan_out']} splits an "
                  "iteration over jobs that keep no forest"),
                 (config["lm"]["rerank_nbest"], "lm.rerank_nbest's feature is scored on n-best "
                  "lists only, not on the search's forest"),
                 (bool(targeted := targeted_conditions(tuning["conditions"])),
                  f"tuning.conditions {targeted} would paraphrase the outputs of the forests' "
                  "envelopes inside the optimisation; tune them in an experiment of their own")]
        problems += [f"tuning.line_search forest: {why}; set tuning.line_search null"
                     for refused, why in needs if refused]
    return problems


def bounds_problems(config: Mapping[str, Any]) -> list[str]:
    """Each ``tuning.bounds`` pattern must match a feature of the models tuning bounds that
    no earlier pattern matches (the first matching pattern wins; a misspelt pattern would leave
    its features unbounded) and its interval [lower, upper] must contain 0 (tuning starts from
    weights that may be 0, and MERT's line searches pass through it)."""
    features = sorted({name for schema in grammar_schemas(config).values()
                       for name in schema.features + DECODER_FEATURES})
    problems, bounded = [], set()
    for pattern, (low, high) in config["tuning"]["bounds"].items():
        key = f"tuning.bounds.{pattern}"
        matched = {name for name in features if fnmatch.fnmatchcase(name, pattern)}
        if not matched:
            problems.append(f"{key}: the pattern matches no feature; the features are "
                            f"{features}")
        elif matched <= bounded:
            problems.append(f"{key}: every feature the pattern matches, {sorted(matched)}, is "
                            "bounded by an earlier pattern (the first matching one wins)")
        bounded |= matched
        if (low is not None and low > 0) or (high is not None and high < 0):
            problems.append(f"{key}: [{low}, {high}] is not an interval [lower, upper] that "
                            "contains 0")
    return problems


def grid_problems(config: Mapping[str, Any]) -> list[str]:
    """The grid search (circle.paraphrase.grid_search) translates its sample with an existing 1H
    replicate, sweeps from the untargeted weight 0, and uses only biases whose grammars the
    pipeline builds (paraphrase.biases), as do Fig. 5.14's biased untargeted paraphrasers."""
    grid, biases = config["grid_search"], [float(b) for b in config["paraphrase"]["biases"]]
    problems = []
    if grid["mt_replicate"] >= config["tuning"]["replicates"]:
        problems.append(f"grid_search.mt_replicate {grid['mt_replicate']} needs "
                        f"{grid['mt_replicate'] + 1} tuning replicates, tuning.replicates is "
                        f"{config['tuning']['replicates']}")
    if 0.0 not in [float(w) for w in grid["sweep"]]:
        problems.append("grid_search.sweep must include 0, the untargeted paraphraser")
    for key, bias in (("tuning.paraphraser_bias", config["tuning"]["paraphraser_bias"]),
                      ("grid_search.sweep_bias", grid["sweep_bias"]),
                      ("grid_search.point.bias", (grid.get("point") or {}).get("bias")),
                      ("targeted.curves.bias",
                       config.get("targeted", {}).get("curves", {}).get("bias")),
                      *(("figures.untargeted_biases", b)
                        for b in config.get("figures", {}).get("untargeted_biases", []))):
        if bias is not None and float(bias) not in biases:
            problems.append(f"{key} {bias} is not one of paraphrase.biases {biases}")
    untargeted = float(config["tuning"]["paraphraser_bias"])
    if untargeted in [float(b) for b in config.get("figures", {}).get("untargeted_biases", [])]:
        problems.append(f"figures.untargeted_biases repeats tuning.paraphraser_bias "
                        f"{untargeted}, the untargeted curve Fig. 5.14 already shows")
    return problems


class _DuplicateKeyLoader(yaml.SafeLoader):
    """A YAML loader that records every key given twice in one mapping (``problems``), which
    YAML loaders (Snakemake's included) otherwise resolve silently by keeping the last."""

    def __init__(self, stream, path: str):
        super().__init__(stream)
        self.path = path
        self.problems: list[str] = []

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue
            if key in seen:
                self.problems.append(f"{self.path}:{key_node.start_mark.line + 1}: key "
                                     f"'{key}' given twice in one mapping")
            seen.add(key)
        return super().construct_mapping(node, deep)


def duplicate_key_problems(paths: Sequence[str | os.PathLike]) -> list[str]:
    """Every key given twice in one mapping of the config files ``paths``, as
    ``path:line: ...``; files that YAML cannot read are left to Snakemake's own error."""
    problems = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            loader = _DuplicateKeyLoader(handle, str(path))
            try:
                loader.get_single_data()
            except yaml.YAMLError:
                continue
            finally:
                loader.dispose()
        problems += loader.problems
    return problems


def frozen_alignment_problems(config: Mapping[str, Any], pair: str | None = None) -> list[str]:
    """The frozen alignment (``alignment.frozen``, or with ``pair`` the pivot bitext's of
    ``alignment.frozen_pivots``) must be a readable ``alignment`` table made with the config's
    eflomal model and symmetrisation: the config's alignment keys describe what is replayed.
    Only the Parquet footer is read; the links are checked against the bitext by the job that
    reads them (circle.grammar.extract.load_aligned_bitext, circle.align.join_pivot_language)."""
    options = config["alignment"]
    key = "alignment.frozen" if pair is None else f"alignment.frozen_pivots.{pair}"
    path = options["frozen"] if pair is None else options["frozen_pivots"].get(pair)
    if path is None:
        return []
    if not Path(path).is_file():
        return [f"{key}: {path} does not exist; {REFREEZE_HINT}"]
    try:
        meta = read_metadata(path)
    except SchemaError as error:
        return [f"{key}: {error}; {REFREEZE_HINT}"]
    if meta.get("schema") != ALIGNMENT.name:
        return [f"{key}: {path} is not an '{ALIGNMENT.name}' table (schema "
                f"'{meta.get('schema')}'); {REFREEZE_HINT}"]
    problems = []
    for option, expected, found in (
            ("symmetrization", options["symmetrization"], meta.get("symmetrization")),
            ("model", aligner_name(options["model"]), meta.get("aligner"))):
        if found != expected:
            problems.append(f"{key}: {path} was made with {found}, but "
                            f"alignment.{option} asks for {expected}; {REFREEZE_HINT}")
    return problems


def write_effective_config(config: Mapping[str, Any], path: str | os.PathLike) -> None:
    """Write the configuration an experiment runs with (config files merged, schema defaults
    filled in) as YAML to ``path``, atomically. The file is itself a complete config file."""
    header = (f"# The effective configuration of experiment '{config['experiment']}': its config "
              "files merged and the\n# schema's defaults filled in. A complete config file: "
              "snakemake --configfile <this file>\n")
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    with atomic_path(path) as tmp:
        tmp.write_text(header + text, encoding="utf-8")


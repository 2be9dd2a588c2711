"""Decoder speed on the default experiment's real decoding jobs: sentences/s/core, time split.

Decodes with the artifacts Snakemake built under ``results/<experiment>/`` for the experiment of
``config/config.yaml`` (keys the config leaves out take the defaults of
``workflow/schemas/config.schema.yaml``, as in the workflow), the way the rules do:

- translation (rule ``decode_shard``): the first N sources of the test set, the grammar filtered
  to the test set, the decoding LM (``lm.decoding_order``), the untuned translation weights,
  ``decoder.k``-best;
- paraphrasing (rule ``paraphrase_references``): the single reference of the first N tune-set
  segments, the unfiltered paraphrase grammar of ``tuning.paraphraser_bias``, the same LM, the
  tuned paraphraser weights (the untuned ones if the paraphraser is not tuned yet), k-best with
  k the largest P of the config's 1H+kP conditions.

Search settings come from the config's ``decoder`` section; ``--pop-limit``, ``--k`` (both
modes) and ``--engine`` override them. Each mode decodes its sentences twice with one decoder in
this single-threaded process: cold (every sentence new to the decoder, as in every pipeline
job, which builds a fresh decoder) and warm (the decoder's ranked rules of each matched source
side cached, so prepare is mostly matching). Rates are per CPU second of the process
(``time.process_time``), so other load on the machine changes them less than the wall-clock
rate printed beside them. Prepare is rule matching and scoring, decode is search and k-best
extraction.

Paraphrasing is also timed targeted (thesis eq. 5.1), as targeted tuning will use it: each input
is prepared once and decoded towards each of its verse's other human references, with the
targeting weight ``--target-weight``; the figure is the time per targeted decode beside the time
per untargeted decode of the same prepared inputs. Runs from any directory (paths are relative
to the repository root):

    python bench/decoder.py [--sentences 40] [--mode translation|paraphrasing]
                                 [--pop-limit 100] [--k 100] [--engine cython|python]
                                 [--target-weight -1] [--profile 15]
                                 [--configfile config/config.yaml]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from snakemake.utils import validate

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, UNTUNED_PARAPHRASE, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import ordered_references
from circle.decoder import Decoder, DecoderSettings, LanguageModel, load_grammar, read_weights
from circle.decoder.model import ENGINES
from circle.experiments.conditions import UNTUNED_TRANSLATION, Condition
from circle.paraphrase.config import bias_name

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG = ROOT / "config/config.yaml"
MODES = ("translation", "paraphrasing")


@dataclass
class Case:
    """One mode's decoding job: artifact paths (relative to ROOT), k, a note on the weights."""

    mode: str
    evalset: Path
    grammar: Path
    weights: Path
    k: int
    note: str = ""

    def sentences(self, count: int) -> list[str]:
        """The first ``count`` inputs: test-set sources or tune-set single references."""
        if self.mode == "translation":
            return list(read_table(ROOT / self.evalset, EVALSET).head(count)["source"])
        return [references[0] for references in self.references(count)]

    def targets(self, count: int) -> list[list[str]]:
        """Per paraphrasing input, its verse's other human references."""
        return [references[1:] for references in self.references(count)]

    def references(self, count: int) -> list[list[str]]:
        """The human references of the first ``count`` segments, in their seeded order."""
        table = read_table(ROOT / self.evalset, EVALSET).head(count)
        return ordered_references(table)


def load_config(path: Path) -> dict:
    """The experiment config with the schema's defaults filled in, as Snakemake sees it."""
    config = yaml.safe_load(path.read_text())
    validate(config, str(SCHEMA))
    return config


def cases(config: dict, configfile: Path, k: int | None) -> tuple[Path, dict[str, Case]]:
    """The decoding LM path and the case of each mode, with the paths the rules use."""
    results = Results.of("", config["experiment"])
    lm = results.lm(config["lm"]["decoding_order"])
    bias = bias_name(config["tuning"]["paraphraser_bias"])
    tuned = results.paraphraser_weights(bias)
    weights, note = tuned, ""
    if not (ROOT / tuned).exists():
        weights = results.weights(UNTUNED_PARAPHRASE)
        note = f"untuned: {tuned} not built yet ({snakemake_command(tuned, configfile)})"
    paraphrases = [count for count in (Condition.parse(c).paraphrases
                                       for c in config["tuning"]["conditions"]) if count]
    return lm, {
        "translation": Case("translation", results.path(EVALSET_TABLE, evalset="test"),
                            results.path(FILTERED_GRAMMAR, evalset="test"),
                            results.weights(UNTUNED_TRANSLATION),
                            config["decoder"]["k"] if k is None else k),
        "paraphrasing": Case("paraphrasing", results.path(EVALSET_TABLE, evalset="tune"),
                             results.paraphrase_grammar(bias), weights,
                             max(paraphrases, default=config["decoder"]["k"]) if k is None else k,
                             note),
    }


def snakemake_command(target: Path, configfile: Path) -> str:
    """The command that builds ``target``, run from the repository root."""
    option = "" if configfile.resolve() == DEFAULT_CONFIG else f" --configfile {configfile}"
    return f"snakemake --cores 2{option} {target}"


def check_artifacts(paths: list[Path], configfile: Path) -> None:
    """Exit naming each missing artifact and the Snakemake target that builds it."""
    missing = [path for path in dict.fromkeys(paths) if not (ROOT / path).exists()]
    if missing:
        sys.exit("\n".join(f"missing {path}: build it with `{snakemake_command(path, configfile)}`"
                           f" in {ROOT}" for path in missing))


def peak_rss_mb() -> float:
    """The process's peak resident set size so far (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def decode_pass(decoder: Decoder, sentences: list[str], k: int) -> tuple[float, float, float, int]:
    """Prepare and decode every sentence once: (prepare CPU s, decode CPU s, wall s, outputs)."""
    prepare = search = 0.0
    outputs = 0
    wall = time.perf_counter()
    for sentence in sentences:
        start = time.process_time()
        plan = decoder.prepare(sentence)
        middle = time.process_time()
        outputs += len(decoder.decode(plan, k=k))
        prepare += middle - start
        search += time.process_time() - middle
    return prepare, search, time.perf_counter() - wall, outputs


def targeted_pass(decoder: Decoder, sentences: list[str], targets: list[list[str]], k: int
                  ) -> tuple[float, float, int]:
    """Prepare each sentence, decode it untargeted and towards each of its targets: (CPU s per
    untargeted decode, CPU s per targeted decode, targeted decodes)."""
    untargeted = targeted = 0.0
    count = 0
    for sentence, strings in zip(sentences, targets, strict=True):
        plan = decoder.prepare(sentence)
        start = time.process_time()
        decoder.decode(plan, k=k)
        middle = time.process_time()
        for target in strings:
            decoder.decode(plan, target=target, k=k)
        untargeted += middle - start
        targeted += time.process_time() - middle
        count += len(strings)
    return untargeted / len(sentences), targeted / max(count, 1), count


def run_case(case: Case, lm: LanguageModel, settings: DecoderSettings, sentences: int,
             profile: int, target_weight: float) -> None:
    """Load the case's grammar, decode its sentences cold and warm, print the figures."""
    inputs = case.sentences(sentences)
    start = time.perf_counter()
    grammar = load_grammar(ROOT / case.grammar)
    load = time.perf_counter() - start
    words = sum(len(s.split()) for s in inputs) / len(inputs)
    print(f"{case.mode}: {len(inputs)} sentences ({case.evalset}), {words:.1f} words on "
          f"average, {case.k}-best")
    print(f"  grammar {case.grammar}: {len(grammar):,} rules, {grammar.num_sources:,} source "
          f"sides, loaded in {load:.1f} s")
    print(f"  weights {case.weights}" + (f" ({case.note})" if case.note else ""))
    weights = read_weights(ROOT / case.weights)
    try:
        decoder = Decoder(grammar, lm, weights, settings)
    except ImportError as error:  # the compiled search loop is missing or older than its source
        sys.exit(str(error))
    for label in ("cold", "warm"):
        prepare, search, wall, outputs = decode_pass(decoder, inputs, case.k)
        cpu = prepare + search
        print(f"  {label}: {len(inputs) / cpu:.2f} sentences/s/core ({cpu:.2f} s CPU; "
              f"{len(inputs) / wall:.2f} sentences/s wall-clock); prepare {prepare:.2f} s, "
              f"decode {search:.2f} s; {outputs / len(inputs):.1f} outputs each")
    if case.mode == "paraphrasing":
        targeted = Decoder(grammar, lm, {**weights, "target": target_weight}, settings)
        untargeted, per_target, count = targeted_pass(targeted, inputs, case.targets(sentences),
                                                      case.k)
        print(f"  targeted (weight {target_weight:g}), each input towards its verse's other "
              f"references ({count} decodes): {1000 * per_target:.1f} ms per targeted decode, "
              f"{1000 * untargeted:.1f} ms per untargeted decode of the same prepared inputs")
    print(f"  peak RSS so far {peak_rss_mb():.0f} MB")
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(decode_pass, Decoder(grammar, lm, weights, settings), inputs, case.k)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(profile)
        hidden = " (the compiled search loop counts as decode's own time)" \
            if settings.engine == "cython" else ""
        print(f"  cold pass profile, top {profile} by own time{hidden}:\n{out.getvalue()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=40, help="first N segments per mode")
    parser.add_argument("--mode", choices=MODES, help="only this mode (default: both)")
    parser.add_argument("--pop-limit", type=int, help="override decoder.pop_limit")
    parser.add_argument("--k", type=int, help="override the k-best size of both modes")
    parser.add_argument("--engine", choices=ENGINES, default=DecoderSettings.engine,
                        help="search loop (circle.decoder.DecoderSettings.engine)")
    parser.add_argument("--target-weight", type=float, default=-1.0,
                        help="targeting weight of the targeted paraphrasing pass")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile a cold pass and print its top N functions")
    parser.add_argument("--configfile", type=Path, default=DEFAULT_CONFIG)
    args = parser.parse_args()
    print("command: python " + shlex.join(sys.argv))

    config = load_config(args.configfile)
    lm_path, by_mode = cases(config, args.configfile, args.k)
    chosen = [by_mode[args.mode]] if args.mode else list(by_mode.values())
    check_artifacts([lm_path] + [p for c in chosen for p in (c.evalset, c.grammar, c.weights)],
                    args.configfile)
    limits = {key: config["decoder"][key] for key in ("pop_limit", "span_limit", "options_limit")}
    if args.pop_limit is not None:
        limits["pop_limit"] = args.pop_limit
    settings = DecoderSettings(**limits, engine=args.engine)
    print(f"settings (experiment {config['experiment']}): engine {settings.engine}, pop limit "
          f"{settings.pop_limit}, span limit {settings.span_limit}, {settings.options_limit} "
          f"options")
    start = time.perf_counter()
    lm = LanguageModel(ROOT / lm_path)
    print(f"LM {lm_path}: order {lm.order}, loaded in {time.perf_counter() - start:.1f} s")
    for case in chosen:
        run_case(case, lm, settings, args.sentences, args.profile, args.target_weight)


if __name__ == "__main__":
    main()

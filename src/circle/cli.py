"""The circle command: the package's functions for ad-hoc use, outside Snakemake.

Each subcommand only parses arguments, calls the library and prints; errors that the library
raises for bad input (corpus, schema, alignment) are printed as one clear message, exit status 2.
Paths to an experiment's tables default to those of its results directory,
``results/<experiment>`` (``--experiment``, default 'default', or ``--results``), which is found
from the project root (``--project``, else ``$CIRCLE_PROJECT``, else the checkout circle runs
from), not from the working directory (:func:`circle.translate.project_root`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

import pyarrow.parquet as pq

from circle.align import AlignmentError
from circle.core.layout import (
    BILINGUAL_GRAMMAR,
    DECODE_ONEBEST,
    EVALSET_TABLE,
    EVALUATION_CONDITIONS,
    LM_BINARY,
    PARAPHRASE_GRAMMAR,
    PARAPHRASER_RUN,
    REFERENCE_TEXT,
    REPORT_FILE,
    RESULTS,
    UNTUNED_PARAPHRASE,
    WEIGHTS,
    Results,
    under_experiment,
)
from circle.core.tables import SchemaError, parquet_errors, read_metadata
from circle.corpus.preprocess import normalize
from circle.corpus.validate import (
    CorpusError,
    decode_lines,
    decoded_lines,
    limit_problems,
    read_parallel,
)
from circle.experiments.evaluate import AR_SHUFFLES, BOOTSTRAP_SAMPLES
from circle.paraphrase.config import bias_name

if TYPE_CHECKING:
    from circle.system import System
    from circle.translate import UnknownMarks

Handler = Callable[[argparse.Namespace], None]

PARAPHRASER_BIAS = bias_name(0.0)
"""The bias of the paraphrase grammar and weights the commands paraphrase with."""
EXAMPLE_RUN = "1H.rep0"
"""The tuning run the help texts name."""
STREAM_CACHE_MB = 1024
"""MB of the grammar's row groups a translator keeps in memory with --stream, by default."""


def positive_int(text: str, least: int = 1) -> int:
    """argparse type: a whole number of at least ``least`` (1)."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least {least}, not "
                                         f"'{text}'")
    return value


def whole_number(text: str) -> int:
    """argparse type: a whole number of at least 0."""
    return positive_int(text, least=0)


def search_size(text: str) -> int:
    """argparse type: a decoder search size, from 1 to
    :data:`circle.decoder.model.MAX_SEARCH_SIZE`."""
    from circle.decoder.model import MAX_SEARCH_SIZE

    value = positive_int(text)
    if value > MAX_SEARCH_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SEARCH_SIZE}, not '{text}'")
    return value


CHECKOUT = Path(__file__).resolve().parents[2]
"""The checkout circle runs from, if it runs from one (a directory with the Snakefile)."""


def version_text(checkout: Path = CHECKOUT) -> str:
    """The package version and the commit of ``checkout``, as the README asks users to cite:
    its commit (``+dirty`` with uncommitted changes) where it is a git checkout of the project,
    else 'unknown commit'."""
    from circle.figures.summary import checkout_commit

    commit = checkout_commit(checkout) if (checkout / "Snakefile").is_file() else "unknown"
    described = "unknown commit" if commit == "unknown" else f"commit {commit}"
    return f"circle {metadata.version('circle')} ({described})"


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` and exit (git runs only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version_text())
        parser.exit()


def _in_results(args: argparse.Namespace, given: str | None, template: str, **fields) -> str:
    """``given`` if the user gave it, else the file of the layout's ``template`` (with
    ``fields``) in the ``--results`` directory."""
    return given if given is not None else str(Results.at(args.results).path(template,
                                                                             **fields))


def _in_results_help(template: str, **fields) -> str:
    """How a help text names a file of the ``--results`` directory."""
    return "RESULTS/" + under_experiment(template, **fields)


def _open_input(path: str) -> tuple[str, BinaryIO]:
    """The name and byte stream of an input: a text file, or standard input for '-'."""
    if path != "-" and not Path(path).is_file():
        raise FileNotFoundError(f"{path}: not a file (give a text file, one sentence per "
                                "line, or - for standard input)")
    if path == "-":
        return "<stdin>", sys.stdin.buffer
    return path, open(path, "rb")  # noqa: SIM115


def _read_input(path: str) -> list[str]:
    """The lines of a UTF-8 text file, or of standard input for '-', checked as corpus files
    are (:func:`circle.corpus.validate.decode_lines`)."""
    name, stream = _open_input(path)
    with stream:
        lines, problems = decode_lines(stream, name)
    if problems:
        raise CorpusError(limit_problems(name, problems))
    return lines


def _stream_input(path: str) -> Iterator[str]:
    """The lines of an input (:func:`_read_input`) one at a time, each as soon as it is
    written (a pipe's line is not held until more come); the first bad line is an error."""
    name, stream = _open_input(path)
    with stream:
        for line, problem in decoded_lines(iter(stream.readline, b""), name):
            if problem is not None:
                raise CorpusError([problem])
            yield line


def _input_lines(args: argparse.Namespace) -> Iterable[str]:
    """The input's lines: all of them read first, or with --stream one at a time (in one
    decoding process: --workers would fork a pool per line)."""
    if not args.stream:
        return _read_input(args.input)
    if args.workers > 1:
        raise ValueError("--stream decodes each line as it comes, in one process: drop "
                         "--workers")
    return _stream_input(args.input)


def _validate(args: argparse.Namespace) -> None:
    columns = read_parallel(args.files, args.max_line_chars)
    print(f"ok: {len(args.files)} file(s), {len(columns[0])} line(s) each")


def _tokenize(args: argparse.Namespace) -> None:
    for line in sys.stdin:
        print(normalize(line.rstrip("\n"), args.lang, lowercase=not args.keep_case))


def _given_or_in_results(args: argparse.Namespace, given: str) -> Path:
    """A table the user named: ``given`` where it exists (as given, relative to the working
    directory, like every table option), else ``given`` inside the ``--results`` directory;
    FileNotFoundError naming both paths tried if neither exists."""
    tried = [Path(given)]
    if not tried[0].is_absolute():
        tried.append(Path(args.results) / given)
    for path in tried:
        if path.exists():
            return path
    where = "" if len(tried) == 1 else (f" (tried {tried[0]} in the working directory and "
                                        f"{tried[1]} in the results directory)")
    raise FileNotFoundError(f"{given}: no such table{where}")


def _info(args: argparse.Namespace) -> None:
    table = _given_or_in_results(args, args.table)
    with parquet_errors(table):
        parquet = pq.ParquetFile(table)
    print(f"{table}: {parquet.metadata.num_rows} rows")
    for field in parquet.schema_arrow:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")
    print(json.dumps(read_metadata(table), indent=2, sort_keys=True))


def _paraphrases(args: argparse.Namespace) -> None:
    from circle.grammar.inspect import top_paraphrases

    grammar = _in_results(args, args.grammar, PARAPHRASE_GRAMMAR, bias=PARAPHRASER_BIAS)
    phrase = args.phrase if args.tokenized else normalize(args.phrase, "en")
    frame = top_paraphrases(grammar, phrase, args.n)
    if frame.empty:
        print(f"no paraphrases of '{phrase}' in {grammar}")
        return
    columns = ["target", "p_e2_given_e1", "p_e1_given_e2", "log_p_e1_e2",
               "neg_target_terminals", "count", "pivots"]
    print(f"paraphrases of '{phrase}':")
    print(frame[columns].to_string(index=False, float_format=lambda x: f"{x:.4g}"))


def _decode_lines(args: argparse.Namespace, lines: list[str]) -> None:
    """Decode ``lines`` (raw text, tokenised here unless --tokenized) and print the results."""
    from circle.decoder import (
        DecoderSettings,
        best_text,
        decode_corpus,
        format_nbest,
        read_weights,
    )
    from circle.decoder.model import RERANK_FEATURE
    from circle.decoder.rerank import rerank_depth

    if args.lang is None:
        from circle.translate import Experiment

        args.lang = Experiment.at(args.results).source_lang if args.command == "decode" else "en"
    sentences = lines if args.tokenized else [normalize(line, args.lang) for line in lines]
    weights = read_weights(args.weights)
    settings = DecoderSettings.from_config({}, pop_limit=args.pop_limit, k=args.k)
    if args.lm is None:
        from circle.translate import Experiment

        lm = str(Experiment.at(args.results).lm)
    else:
        lm = args.lm
    rerank_lm, depth = None, args.k
    if RERANK_FEATURE in weights:  # tuned with lm.rerank_nbest: rerank as in tuning
        from circle.translate import Experiment

        experiment = Experiment.at(args.results)
        rerank_lm = experiment.reranking_lm
        nbest = DecoderSettings.from_config(experiment.config.get("decoder", {})).k
        depth = rerank_depth(args.k, nbest, True)
    outputs = decode_corpus(sentences, args.grammar, lm, weights, settings, workers=args.workers,
                            k=depth, rerank_lm=rerank_lm)
    for number, hypotheses in enumerate(outputs):
        hypotheses = hypotheses[:args.k]
        if args.k > 1:
            print("\n".join(format_nbest(number, hypotheses)))
        else:
            print(best_text(hypotheses))


def _decode(args: argparse.Namespace) -> None:
    name = args.input or "<stdin>"
    if args.input and not Path(args.input).is_file():
        raise FileNotFoundError(f"{args.input}: not a file (--input names a text file, one "
                                "sentence per line)")
    if args.system is None and (args.grammar is None or args.weights is None):
        raise ValueError("give --grammar and --weights, or --system DIR")
    stream = open(args.input, "rb") if args.input else sys.stdin.buffer  # noqa: SIM115
    with stream:
        lines, problems = decode_lines(stream, name)
    if problems:
        raise CorpusError(limit_problems(name, problems))
    if args.system is None:
        _decode_lines(args, lines)
        return
    system, note = _translation_system(args)
    if args.lang is not None and args.lang != system.source_lang:
        raise ValueError(f"--lang {args.lang}: the system translates from {system.source_lang}")
    _translate_lines(args, system, note, lines, "tokenized", {}, None)


def _with_system(args: argparse.Namespace, *options: str) -> None:
    """Refuse the ``options`` (argparse names) that --system replaces."""
    given = [f"--{option.replace('_', '-')}" for option in (*options, "experiment", "results")
             if getattr(args, option) is not None]
    if given:
        raise ValueError(f"--system {args.system} names every file and setting; drop "
                         f"{', '.join(given)}")


def _translation_system(args: argparse.Namespace) -> tuple[System, str]:
    """The system to translate with (--system's, else the experiment's with the weights
    --weights names or the best-tuned 1H replicate's) and a sentence saying which."""
    from circle.system import System
    from circle.translate import Experiment, existing_results

    if args.system is not None:
        _with_system(args, "grammar", "lm", "weights")
        system = System.load(args.system)
        return system, (f"{system.where}: {system.source_lang} to {system.target_lang}, "
                        f"decoding with the weights {system.files['weights'].path}")
    experiment = Experiment.at(existing_results(args.results))
    if not experiment.layout.config.is_file():
        print(f"circle {args.command}: warning: {experiment.layout.config} not found; assuming "
              "Spanish to English, lowercased", file=sys.stderr)
    weights, note = experiment.translation_weights(args.weights)
    system = experiment.system(weights).overriding(grammar=args.grammar, lm=args.lm)
    return system, (f"{args.results}: {experiment.source_lang} to {experiment.target_lang}, "
                    f"decoding with {note}")


def _paraphrase(args: argparse.Namespace) -> None:
    from circle.decoder import read_weights
    from circle.decoder.model import RERANK_FEATURE
    from circle.paraphrase.paraphraser import Paraphraser
    from circle.system import System
    from circle.translate import Experiment, cased_tokens, paraphrase_lines

    if args.system is not None:
        _with_system(args, "grammar", "lm", "weights")
        system = System.load(args.system)
        note = f"the weights {system.path('paraphraser_weights')} of {system.where}"
    else:
        experiment = Experiment.at(args.results)
        system = experiment.system().overriding(paraphrase_grammar=args.grammar,
                                                paraphraser_lm=args.lm,
                                                paraphraser_weights=args.weights)
        note = (f"the weights {args.weights}" if args.weights is not None
                else experiment.paraphraser_weights()[1])
    if args.stream and args.sentence:
        raise ValueError("--stream reads the input line by line: drop --sentence")
    print(f"circle paraphrase: decoding with {note}", file=sys.stderr)
    lines = args.sentence if args.sentence else _input_lines(args)
    lang = args.lang or system.target_lang
    weights = read_weights(system.path("paraphraser_weights"))
    settings = system.decoder_settings(pop_limit=args.pop_limit, k=args.k)
    lm = system.path("paraphraser_lm")  # the LM is checked first, as Paraphraser loads it
    # weights tuned with lm.rerank_nbest: rerank the config's k-best lists as in tuning
    rerank_lm = (system.path("paraphrase_rerank_lm") if RERANK_FEATURE in weights else None)
    paraphraser = Paraphraser(system.path("paraphrase_grammar"), lm, weights, settings,
                              args.workers, rerank_lm, system.reranked_nbest())  # loaded once
    recaser = system.recaser()
    show = _shown(args.print, recaser is not None)
    number = changed = 0
    with _output(args.output) as out:
        for batch in ([line] for line in lines) if args.stream else [lines]:
            sentences = batch if args.tokenized else [
                normalize(line, lang, lowercase=system.lowercase) for line in batch]
            if args.k > 1:
                from circle.decoder import format_nbest

                for hypotheses in paraphraser.paraphrase(sentences, k=args.k):
                    out.write("".join(f"{line}\n" for line in format_nbest(number, hypotheses)))
                    number += 1
            else:
                cased = [sentence.split() if args.tokenized else
                         cased_tokens(line, sentence.split(), lang)
                         for line, sentence in zip(batch, sentences, strict=True)]
                for result in paraphrase_lines(paraphraser, sentences, cased, lang, recaser):
                    number += 1
                    out.write(getattr(result, show) + "\n")
                    changed += result.reason is None
                    if result.reason is not None:
                        where = f"line {number}" if args.stream or len(batch) > 1 \
                            else "the sentence"
                        print(f"circle paraphrase: {where}: no paraphrase of '{result.source}': "
                              f"{result.reason}", file=sys.stderr)
            if args.stream:
                out.flush()
    if args.k == 1:
        print(f"circle paraphrase: {changed:,} of {number:,} sentence(s) paraphrased"
              + (f"; wrote {args.output}" if args.output else ""), file=sys.stderr)


def _shown(given: str | None, recased: bool) -> str:
    """What --print shows: ``given``, else the recased text where there is a recaser."""
    show = given or ("recased" if recased else "detokenized")
    if show == "recased" and not recased:
        raise ValueError("--print recased: the system keeps case, there is nothing to "
                         "recase (use --print detokenized)")
    return show


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """A text file written at ``path``, else standard output."""
    if path is None:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out


def _translate(args: argparse.Namespace) -> None:
    from circle.translate import UnknownMarks

    system, note = _translation_system(args)
    lines = _input_lines(args)
    marks = UnknownMarks(args.unknown_prefix, args.unknown_suffix) if args.mark_unknown \
        else None
    show = _shown(args.print, system.lowercase)
    files = {}
    if args.output_prefix:
        kinds = ["tokenized", "detokenized"] + (["recased"] if system.lowercase else [])
        files = {kind: f"{args.output_prefix}.{kind}" for kind in kinds}
    cache_mb = args.cache_mb
    if cache_mb is None:
        cache_mb = STREAM_CACHE_MB if args.stream else 0
    _translate_lines(args, system, note, lines, show, files, marks, stream=args.stream,
                     cache_mb=cache_mb)


def _translate_lines(args: argparse.Namespace, system: System, note: str, lines: Iterable[str],
                     show: str, files: dict[str, str], marks: UnknownMarks | None,
                     stream: bool = False, cache_mb: int = 0) -> None:
    """Translate ``lines`` with ``system``: on stdout what ``show`` names (the n-best lists with
    -k > 1), into ``files`` (kind → path) the 1-best's texts; on stderr ``note``, progress and
    what was left untranslated. With ``stream``, each line is translated as it is read and its
    output flushed at once; up to ``cache_mb`` MB of the grammar's row groups are kept in
    memory from chunk to chunk."""
    from circle.decoder import format_nbest
    from circle.translate import CHUNK_SENTENCES, Translator, UntranslatedWords

    print(f"circle {args.command}: {note}", file=sys.stderr)
    translator = Translator(system, system.decoder_settings(pop_limit=args.pop_limit),
                            args.workers, cache_mb * 2**20)
    untranslated = UntranslatedWords()
    count = 0

    def progress(message: str) -> None:
        print(f"circle {args.command}: {message}", file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        outs = {kind: stack.enter_context(open(path, "w", encoding="utf-8"))
                for kind, path in files.items()}
        for count, translation in enumerate(translator.translate(
                lines, tokenized=args.tokenized, progress=progress, k=args.k, marks=marks,
                chunk=1 if stream else CHUNK_SENTENCES), start=1):
            untranslated.add(translation)
            for kind, out in outs.items():  # first: once stdout has a line, the files have it
                out.write(getattr(translation, kind) + "\n")
                if stream:
                    out.flush()
            if args.k > 1:
                print("\n".join(format_nbest(count - 1, translation.nbest)))
            else:
                print(getattr(translation, show))
            if stream:
                sys.stdout.flush()
    stats = translator.stats
    borrowed = ("" if translator.oov_paraphrases is None else
                f"; {translator.oov_paraphrases.borrowed:,} rules borrowed for OOV phrases from "
                "their distributional paraphrases")
    print(f"circle {args.command}: {count:,} line(s); {stats.rules:,} rules of "
          f"{translator.grammar_path} apply (read {stats.row_groups_read} of its "
          f"{stats.row_groups} row groups){borrowed}", file=sys.stderr)
    if files:
        print(f"circle {args.command}: wrote " + ", ".join(files.values()), file=sys.stderr)
    print(f"circle {args.command}: {untranslated.summary()}", file=sys.stderr)


def _export_system(args: argparse.Namespace) -> None:
    from circle.system import export_system
    from circle.translate import Experiment, existing_results

    experiment = Experiment.at(existing_results(args.results))
    if not experiment.layout.config.is_file():
        raise FileNotFoundError(f"{experiment.layout.config}: not found; an export "
                                "states the experiment's languages and decoder settings")
    weights, note = experiment.translation_weights(args.run)
    manifest = export_system(experiment.system(weights), experiment.results, args.dir,
                             version_text(), {"experiment": experiment.config.get("experiment"),
                                              "results": str(experiment.results),
                                              "run": args.run})
    print(f"circle export-system: wrote {manifest}, translating with {note}")


def _scoring_inputs(args: argparse.Namespace) -> tuple[list[list[str]], bool, Callable]:
    """The references (the experiment's test set, or --references files), whether the text is
    lowercased, and how an output file is read (checked against the references' segments)."""
    import logging

    from circle.experiments.scoring import (
        check_output,
        set_references,
        stream_references,
        tokenised,
    )
    from circle.translate import Experiment

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its advice is for detokenised text
    experiment = Experiment.at(args.results)
    lowercased = experiment.lowercase

    def read(path: str) -> list[str]:
        lines = _read_input(path)
        return tokenised(lines, experiment.target_lang, lowercased) if args.tokenize else lines

    if args.references:
        references = stream_references({path: read(path) for path in args.references})
    else:
        references = set_references(_in_results(args, None, EVALSET_TABLE, evalset="test"))

    def output(path: str) -> list[str]:
        lines = read(path)
        check_output(path, lines, len(references))
        return lines

    return references, lowercased, output


def _score(args: argparse.Namespace) -> None:
    from circle.experiments.scoring import SCORES, score_output

    references, lowercased, output = _scoring_inputs(args)
    for path in args.outputs:
        scores = score_output(output(path), references, lowercased)
        print(f"{path}: " + ", ".join(f"{SCORES[s]} {scores[s]:.2f}" for s in SCORES))
        for score in SCORES:
            print(f"  {SCORES[score]}: {scores[f'{score}_signature']}")


def _compare(args: argparse.Namespace) -> None:
    from circle.experiments.scoring import compare_outputs

    systems = [(path, [path]) for path in args.outputs]
    for group in args.system or []:
        if len(group) < 2:
            raise ValueError(f"--system {' '.join(group)}: give a name and at least one output")
        systems.append((group[0], group[1:]))
    names = [name for name, _ in systems]
    if len(set(names)) != len(names):
        raise ValueError(f"system names repeat: {', '.join(names)}")
    references, lowercased, output = _scoring_inputs(args)
    frame = compare_outputs({name: [output(path) for path in paths] for name, paths in systems},
                            references, lowercased, args.shuffles, args.samples, args.seed)
    print(f"{len(references)} segments; baseline {names[0]}; approximate randomisation "
          f"({args.shuffles:,} shuffles, two-sided), paired bootstrap ({args.samples:,} "
          "resamples, one-sided: not better), Welch over outputs with Holm's adjustment; "
          f"seed {args.seed}")
    print(frame.dropna(axis=1, how="all").to_string(index=False,
                                                    float_format=lambda x: f"{x:.4g}"))


def _results_docs(args: argparse.Namespace) -> None:
    from circle.figures.summary import write_results_docs

    print(write_results_docs(args.results, args.out, args.made_at))


def _ladder(args: argparse.Namespace) -> None:
    from circle.figures.summary import checkout_commit
    from circle.pipeline.ladder import write_ladder_page
    from circle.translate import project_root

    root, _ = project_root(args.project)
    results = [root / path for path in args.rungs]
    made_at = args.made_at or checkout_commit(root)
    print(write_ladder_page(results, root / args.out, made_at))


def _verdict(args: argparse.Namespace) -> None:
    from circle.figures.summary import checkout_commit
    from circle.pipeline.verdict import write_verdict_page
    from circle.translate import project_root

    root, _ = project_root(args.project)
    main, *others = (root / path for path in args.experiments)
    made_at = args.made_at or checkout_commit(root)
    print(write_verdict_page(main, others, root / args.out, made_at))


def _power(args: argparse.Namespace) -> None:
    from circle.core.schemas import CONDITION_SUMMARY
    from circle.core.tables import read_table
    from circle.experiments.replicates import SUMMARY_METRICS, summary_power, summary_tests

    path = Results.at(args.results).evaluation_conditions(args.run_set)
    summary = read_table(path, CONDITION_SUMMARY)
    try:
        power = summary_power(summary, args.difference, args.alpha, args.power)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
    print(f"{path}: {len(summary)} conditions; two-sided two-sample t-test, alpha = "
          f"{args.alpha:g}, power {args.power:g}")
    for row in power.itertuples():
        needed = "" if args.difference is None else (
            f"; {args.difference:g} BLEU needs {row.needed} replicates per condition")
        print(f"{SUMMARY_METRICS[row.metric]}: replicate sd {row.sd:.3f} (pooled over "
              f"{row.conditions} conditions); with {row.replicates} replicates per condition "
              f"the table detects {row.detectable:.2f} BLEU{needed}")
    tests = summary_tests(summary)
    if not tests.empty:
        count = int(tests[[f"{m}_p" for m in SUMMARY_METRICS]].notna().to_numpy().sum())
        print(f"replicate-level tests (Welch's t; Holm over the table's {count} tests):")
        print(tests.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


def _results_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--experiment",
                     help="the experiment whose results/<experiment> directory holds the tables "
                          "that are not given (default: default)")
    sub.add_argument("--results",
                     help="an experiment's results directory instead, absolute or relative to "
                          "the project root (not to the working directory)")
    sub.add_argument("--project",
                     help="the project root, the directory with the Snakefile (default: "
                          "$CIRCLE_PROJECT, else the checkout circle runs from)")


def _system_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--system", metavar="DIR",
                     help="a system written by circle export-system (relative to the working "
                          "directory): every file and setting from its manifest, checked "
                          "against its checksums, instead of a results directory")


def _stream_argument(sub: argparse.ArgumentParser, verb: str) -> None:
    sub.add_argument("--stream", action="store_true",
                     help=f"{verb} each input line as soon as it is read and write (and flush) "
                          "its output at once, the system loaded once until the input ends: a "
                          "warm system that another program drives through a pipe, as Moses "
                          "reads stdin (without it, the whole input is read first)")


def _nbest_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("-k", "--nbest", dest="k", type=search_size, default=1,
                     help="n-best size; >1 prints Moses n-best lines (0-based line number ||| "
                          "tokenised hypothesis ||| features ||| score)")


def _decoder_arguments(sub: argparse.ArgumentParser, grammar_help: str, weights_help: str,
                       lang: str) -> None:
    sub.add_argument("--grammar", help=grammar_help)
    sub.add_argument("--lm", help="KenLM binary model (default: "
                     f"{_in_results_help(LM_BINARY, order='<lm.decoding_order>')}, the "
                     "experiment's decoding LM)")
    sub.add_argument("--weights", help=weights_help)
    _nbest_argument(sub)
    sub.add_argument("--pop-limit", type=search_size,
                     help="cube-pruning pops per chart cell (default: the system's or "
                          "experiment's, else 100)")
    sub.add_argument("--workers", type=positive_int, default=1,
                     help="decoding processes (default: %(default)s)")
    sub.add_argument("--lang", help=f"tokeniser language (default: {lang})")
    sub.add_argument("--tokenized", action="store_true",
                     help="input is already tokenised and lowercased")
    _system_argument(sub)
    _results_argument(sub)


def _scoring_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--references", nargs="+", metavar="FILE",
                     help="reference files instead of the test set, one per reference stream, "
                          "line i for segment i, empty where a segment has fewer (as "
                          f"{_in_results_help(REFERENCE_TEXT, evalset='test', k='<k>')})")
    sub.add_argument("--tokenize", action="store_true",
                     help="the outputs and reference files are plain text (as circle "
                          "translate prints): tokenise them as the pipeline does first")
    _results_argument(sub)


def _page_of_experiments_arguments(sub: argparse.ArgumentParser, out: str) -> None:
    """The options of a command that writes one page from several experiments' results."""
    sub.add_argument("--out", default=out,
                     help="the directory to write, relative to the project root (default: "
                          "%(default)s)")
    sub.add_argument("--made-at", metavar="TEXT",
                     help="the commits the runs were made at (default: the checkout's)")
    sub.add_argument("--project",
                     help="the project root, the directory with the Snakefile (default: "
                          "$CIRCLE_PROJECT, else the checkout circle runs from)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="circle", description="The circle command: the package's functions for ad-hoc use, "
        "outside Snakemake. Tables not given default to those of --results.")
    parser.add_argument("--version", action=VersionAction,
                        help="print the package version and the commit of the checkout circle "
                             "runs from, and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="one of these; circle COMMAND --help describes it")

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    sub = command("validate", _validate, "check line-parallel corpus files (UTF-8, empty lines, "
                  "lines without a token after tokenisation, line counts, line length)")
    sub.add_argument("files", nargs="+", metavar="FILE",
                     help="line-parallel text or Parquet files, e.g. a source and its "
                          "references")
    sub.add_argument("--max-line-chars", type=positive_int, default=2000,
                     help="longest accepted line (default: %(default)s)")

    sub = command("tokenize", _tokenize, "tokenise and lowercase stdin as the pipeline does")
    sub.add_argument("--lang", default="en",
                     help="the Moses tokeniser's language (default: %(default)s)")
    sub.add_argument("--keep-case", action="store_true", help="tokenise without lowercasing")

    sub = command("info", _info, "print a pipeline table's row count, columns with their "
                  "types, schema and provenance")
    sub.add_argument("table", help="a Parquet table the pipeline wrote: a path as given "
                     "(relative to the working directory) where it exists, else one relative "
                     f"to the results directory, e.g. {under_experiment(BILINGUAL_GRAMMAR)} "
                     f"for {_in_results_help(BILINGUAL_GRAMMAR)}")
    _results_argument(sub)

    sub = command("paraphrases", _paraphrases, "print the top paraphrases of an English phrase "
                  "in a paraphrase grammar, with their features")
    sub.add_argument("phrase", help="English phrase; nonterminals as [X,1] [X,2]")
    sub.add_argument("--grammar",
                     help="paraphrase grammar table (default: "
                          f"{_in_results_help(PARAPHRASE_GRAMMAR, bias=PARAPHRASER_BIAS)})")
    sub.add_argument("-n", type=positive_int, default=10, help="how many (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="the phrase is already tokenised and lowercased")
    _results_argument(sub)

    sub = command("decode", _decode, "decode a file or stdin with a given grammar (one "
                  "filtered to the input: a full grammar does not fit in memory; 'circle "
                  "translate' filters the experiment's grammar itself), an LM and weights")
    sub.add_argument("--input", help="input file, one sentence per line (default: stdin)")
    _decoder_arguments(sub, "grammar table (Parquet), filtered to the input's phrases "
                       "(required without --system, which reads its full grammar for the "
                       "input's phrases only, as translate does)",
                       "weight file: 'name value' per line (required without --system)",
                       "the source language of the experiment's config")

    sub = command("translate", _translate, "translate new text with an experiment: its full "
                  "bilingual grammar read for the input's phrases only (bounded memory), its "
                  "language model and a run's tuned weights; the output on stdout, progress, "
                  "the choices made and the untranslated words on stderr")
    sub.add_argument("input", nargs="?", default="-",
                     help="text file, one sentence per line, or - for stdin (default)")
    sub.add_argument("--weights", help=f"a run's name ('{EXAMPLE_RUN}': "
                     f"{_in_results_help(WEIGHTS, weights=EXAMPLE_RUN)}) or a weight file "
                     "(default: the 1H replicate with the best tune score, else the untuned "
                     "weights, with a warning)")
    sub.add_argument("--print", choices=["tokenized", "detokenized", "recased"],
                     help="what stdout shows (default: recased where the experiment lowercases,"
                          " else detokenized)")
    sub.add_argument("--output-prefix", metavar="PREFIX",
                     help="also write PREFIX.tokenized, PREFIX.detokenized and (where the "
                          "experiment lowercases) PREFIX.recased")
    sub.add_argument("--grammar", help="bilingual grammar table, sorted by source side as the "
                     f"workflow writes it (default: {_in_results_help(BILINGUAL_GRAMMAR)})")
    sub.add_argument("--lm", help="KenLM binary model (default: "
                     f"{_in_results_help(LM_BINARY, order='<decoding order>')})")
    sub.add_argument("--pop-limit", type=search_size,
                     help="cube-pruning pops per chart cell (default: the experiment's)")
    sub.add_argument("--workers", type=positive_int, default=1,
                     help="decoding processes (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="input is already tokenised (and lowercased where the experiment "
                          "lowercases)")
    _nbest_argument(sub)
    sub.add_argument("--mark-unknown", action="store_true",
                     help="mark the words passed through untranslated (Moses' -mark-unknown), "
                          "e.g. UNK_miles")
    sub.add_argument("--unknown-prefix", default="UNK_",
                     help="with --mark-unknown, put before a passed-through word (default: "
                          "%(default)s)")
    sub.add_argument("--unknown-suffix", default="",
                     help="with --mark-unknown, put after a passed-through word (default: none)")
    _stream_argument(sub, "translate")
    sub.add_argument("--cache-mb", type=whole_number, metavar="MB",
                     help="keep up to MB megabytes of the grammar's row groups in memory once "
                          "read, for the lines or chunks of 200 lines after (default: "
                          f"{STREAM_CACHE_MB} with --stream, where each line reads the row groups "
                          "of its own words, else 0: a file is read in chunks of 200 lines)")
    _system_argument(sub)
    _results_argument(sub)

    sub = command("export-system", _export_system, "write a trained system into a directory "
                  "of its own: the grammar, LM, a run's weights, the recaser's spellings and "
                  "the paraphraser, with the reranking LMs of weights tuned with "
                  "lm.rerank_nbest (hard links where on the same file system, else copies) and "
                  "a manifest, DIR/system.yaml, with their SHA-256 checksums, the languages, "
                  "tokeniser and decoder settings and circle's version; translate, paraphrase "
                  "and decode read it with --system DIR from anywhere")
    sub.add_argument("run", help=f"the run whose weights it translates with, e.g. {EXAMPLE_RUN} "
                     f"({_in_results_help(WEIGHTS, weights=EXAMPLE_RUN)}), or a weight file")
    sub.add_argument("dir", help="the directory to write, new or empty")
    _results_argument(sub)

    sub = command("paraphrase", _paraphrase, "paraphrase English sentences (a file, stdin or "
                  "--sentence) with an experiment's paraphrase grammar (bias 0) and its tuned "
                  "paraphraser weights, loaded once; one 1-best paraphrase a line on stdout, and "
                  "on stderr why a sentence has none; weights tuned with lm.rerank_nbest rerank "
                  "lists of the config's decoder.k with the paraphraser's reranking LM")
    sub.add_argument("input", nargs="?", default="-",
                     help="text file, one sentence per line, or - for stdin (default)")
    sub.add_argument("-s", "--sentence", action="append",
                     help="a sentence to paraphrase instead of the input (repeatable)")
    _decoder_arguments(
        sub, "paraphrase grammar table (default: "
        f"{_in_results_help(PARAPHRASE_GRAMMAR, bias=PARAPHRASER_BIAS)})",
        "weight file (default: "
        f"{_in_results_help(WEIGHTS, weights=PARAPHRASER_RUN.format(bias=PARAPHRASER_BIAS))}, "
        "the tuned paraphraser, if it exists, else "
        f"{_in_results_help(WEIGHTS, weights=UNTUNED_PARAPHRASE)}); which one is used is "
        "printed on stderr", "the target language of the experiment's config")
    sub.add_argument("--print", choices=["tokenized", "detokenized", "recased"],
                     help="what is written (default: recased where the experiment lowercases, "
                          "else detokenized)")
    sub.add_argument("--output", metavar="FILE",
                     help="write the paraphrases to FILE instead of stdout")
    _stream_argument(sub, "paraphrase")

    sub = command("score", _score, "score outputs of the test set as the report tables do: "
                  "BLEU, TER and chrF (sacrebleu, percent, with signatures) on the pipeline's "
                  "tokenisation, lowercased where the experiment lowercases, against every "
                  f"reference of {_in_results_help(EVALSET_TABLE, evalset='test')}")
    sub.add_argument("outputs", nargs="+", metavar="OUTPUT",
                     help="an output, one line per test segment in the set's order, tokenised "
                          f"as {_in_results_help(DECODE_ONEBEST, weights='RUN', evalset='test')}"
                          " (or plain text with --tokenize)")
    _scoring_arguments(sub)

    sub = command("compare", _compare, "compare systems' outputs of the test set with the "
                  "project's significance tests: approximate randomisation over all of a "
                  "system's outputs, the paired bootstrap for one output each, and Welch's "
                  "t-test over the outputs (Holm-adjusted) when each system has several "
                  "(tuning replicates); the first system is the baseline")
    sub.add_argument("outputs", nargs="*", metavar="OUTPUT",
                     help="one output per system, named by its path")
    sub.add_argument("--system", nargs="+", action="append", metavar="NAME_AND_OUTPUTS",
                     help="a system given as NAME OUTPUT [OUTPUT ...], one output per tuning "
                          "replicate (repeatable; after the positional outputs)")
    sub.add_argument("--shuffles", type=positive_int, default=AR_SHUFFLES,
                     help="approximate randomisation shuffles (default: %(default)s, as the "
                          "tables)")
    sub.add_argument("--samples", type=positive_int, default=BOOTSTRAP_SAMPLES,
                     help="bootstrap resamples (default: %(default)s)")
    sub.add_argument("--seed", type=int, default=0,
                     help="the tests' random seed (default: %(default)s; the tables use the "
                          "config's seed)")
    _scoring_arguments(sub)

    sub = command("results-docs", _results_docs, "write a run's results documentation: "
                  f"OUT/index.md, every report page of {_in_results_help(REPORT_FILE, file='')}"
                  " on one page under the "
                  "findings of its significance marks, the run's commit and effective config, "
                  "with the plots copied beside it (rerun after a rerun to refresh the numbers)")
    sub.add_argument("out", help="the documentation directory to write, e.g. "
                     "docs/results/default")
    sub.add_argument("--made-at", metavar="TEXT",
                     help="the run's commits, where one commit does not say it (a run resumed "
                          "or extended at later commits); default: the commit its summary page "
                          "names, else its checkout's")
    _results_argument(sub)

    sub = command("power", _power, "the power analysis of an experiment's tuning replicates: "
                  "their spread (sd of the replicates' test BLEU, raw and at a common length), "
                  "the difference its replicates can detect, the replicates a given difference "
                  "needs, and each condition's replicate-level test against its baseline")
    sub.add_argument("--difference", type=float,
                     help="a difference in BLEU to detect: print the replicates it needs")
    sub.add_argument("--alpha", type=float, default=0.05,
                     help="the two-sided test's level (default: %(default)s)")
    sub.add_argument("--power", type=float, default=0.8,
                     help="the power wanted (default: %(default)s)")
    sub.add_argument("--run-set", default="", metavar="DIR",
                     help="the run set of "
                          f"{_in_results_help(EVALUATION_CONDITIONS, run_set='<run set>')}"
                          ", e.g. dose/ (default: the "
                          "config's conditions)")
    _results_argument(sub)

    sub = command("verdict", _verdict, "the powered experiment's verdict by the decision rules "
                  "of docs/results.md: 2H against 1H, each paraphraser's 1H+1P against 1H and "
                  "half the human gain (Welch's t over the tuning replicates at a common length, "
                  "Holm over the paraphrasers), the controls' check; it reads complete "
                  "conditions only, of experiments that share the MT system")
    sub.add_argument("experiments", nargs="+", metavar="RESULTS",
                     help="the results directories (relative to the project root): the powered "
                          "experiment first (its dose-response run set evaluated), then the "
                          "paraphraser experiments, e.g. results/powered "
                          "results/powered-languages-english results/powered-identity")
    _page_of_experiments_arguments(sub, RESULTS.format(experiment="verdict"))

    sub = command("ladder", _ladder, "write the ladder of paraphrasers: experiments with the "
                  "same MT system and their own paraphrasers side by side (the ladder table: "
                  "grammar sizes, pivot cost, the 1-best paraphrase's quality, test gains over "
                  "1H), and the thesis's Fig. 4.3 and 5.10 with one series per experiment")
    sub.add_argument("rungs", nargs="+", metavar="RESULTS",
                     help="the experiments' results directories (results/<experiment>, relative "
                          "to the project root), the baseline first")
    _page_of_experiments_arguments(sub, RESULTS.format(experiment="ladder"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "results") and getattr(args, "system", None) is None:
            from circle.translate import results_directory

            args.results = str(results_directory(args.results, args.experiment, args.project))
        args.handler(args)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (CorpusError, SchemaError, AlignmentError, FileNotFoundError, ValueError) as error:
        print(f"circle {args.command}: error: {error}", file=sys.stderr)
        return 2
    except MemoryError as error:
        print(f"circle {args.command}: error: out of memory: "
              f"{str(error) or 'an allocation failed'}", file=sys.stderr)
        return 1
    except OSError as error:  # a full disk or a failing device, stdout's included: one line
        where = error.filename
        try:
            sys.stdout.flush()
        except OSError:  # what stdout could not take is dropped, not retried at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            where = "standard output"
        print(f"circle {args.command}: error: {f'{where}: ' if where else ''}"
              f"{error.strerror or error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

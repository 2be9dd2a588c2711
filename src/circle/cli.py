"""The circle command: the package's functions for ad-hoc use, outside Snakemake.

Each subcommand only parses arguments, calls the library and prints; errors that the library
raises for bad input (corpus, schema, alignment) are printed as one clear message, exit status 2.
Paths to an experiment's tables default to the default experiment's results, relative to the
current directory (``--results``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq

from circle.align import AlignmentError
from circle.corpus.validate import CorpusError, decode_lines, limit_problems, read_parallel
from circle.preprocess import normalize
from circle.tables import SchemaError, parquet_errors, read_metadata

Handler = Callable[[argparse.Namespace], None]

DEFAULT_RESULTS = "results/default"
PARAPHRASE_GRAMMAR = "paraphrase/bias0.parquet"
TUNED_PARAPHRASE_WEIGHTS = "weights/paraphraser-bias0.txt"
UNTUNED_PARAPHRASE_WEIGHTS = "weights/untuned-paraphrase.txt"
DECODING_LM = "lm/3gram.binary"


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not '{text}'")
    return value


def search_size(text: str) -> int:
    """argparse type: a decoder search size, from 1 to
    :data:`circle.decoder.model.MAX_SEARCH_SIZE`."""
    from circle.decoder.model import MAX_SEARCH_SIZE

    value = positive_int(text)
    if value > MAX_SEARCH_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SEARCH_SIZE}, not '{text}'")
    return value


def _in_results(args: argparse.Namespace, given: str | None, relative: str) -> str:
    """``given`` if the user gave it, else ``relative`` inside the ``--results`` directory."""
    return given if given is not None else str(Path(args.results) / relative)


def _validate(args: argparse.Namespace) -> None:
    columns = read_parallel(args.files, args.max_line_chars)
    print(f"ok: {len(args.files)} file(s), {len(columns[0])} line(s) each")


def _tokenize(args: argparse.Namespace) -> None:
    for line in sys.stdin:
        print(normalize(line.rstrip("\n"), args.lang, lowercase=not args.keep_case))


def _info(args: argparse.Namespace) -> None:
    with parquet_errors(args.table):
        parquet = pq.ParquetFile(args.table)
    print(f"{args.table}: {parquet.metadata.num_rows} rows")
    for field in parquet.schema_arrow:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")
    print(json.dumps(read_metadata(args.table), indent=2, sort_keys=True))


def _paraphrases(args: argparse.Namespace) -> None:
    from circle.grammar.inspect import top_paraphrases

    grammar = _in_results(args, args.grammar, PARAPHRASE_GRAMMAR)
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
    from circle.decoder import DecoderSettings, decode_corpus, format_nbest, read_weights

    sentences = lines if args.tokenized else [normalize(line, args.lang) for line in lines]
    weights = read_weights(args.weights)
    settings = DecoderSettings(pop_limit=args.pop_limit, k=args.k)
    lm = _in_results(args, args.lm, DECODING_LM)
    outputs = decode_corpus(sentences, args.grammar, lm, weights, settings, workers=args.workers)
    for number, hypotheses in enumerate(outputs):
        if args.k > 1:
            print("\n".join(format_nbest(number, hypotheses)))
        else:
            print(hypotheses[0].text if hypotheses else "")


def _decode(args: argparse.Namespace) -> None:
    name = args.input or "<stdin>"
    if args.input and not Path(args.input).is_file():
        raise FileNotFoundError(f"{args.input}: not a file (--input names a text file, one "
                                "sentence per line)")
    stream = open(args.input, "rb") if args.input else sys.stdin.buffer  # noqa: SIM115
    with stream:
        lines, problems = decode_lines(stream, name)
    if problems:
        raise CorpusError(limit_problems(name, problems))
    _decode_lines(args, lines)


def _paraphrase(args: argparse.Namespace) -> None:
    args.grammar = _in_results(args, args.grammar, PARAPHRASE_GRAMMAR)
    tuned = Path(args.results) / TUNED_PARAPHRASE_WEIGHTS
    if args.weights is not None:
        note = f"the weights {args.weights}"
    elif tuned.exists():
        args.weights = str(tuned)
        note = f"the tuned paraphraser weights {tuned}"
    else:
        args.weights = str(Path(args.results) / UNTUNED_PARAPHRASE_WEIGHTS)
        note = f"the untuned weights {args.weights} (there are no tuned ones at {tuned})"
    print(f"circle paraphrase: decoding with {note}", file=sys.stderr)
    _decode_lines(args, [args.sentence])


def _results_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--results", default=DEFAULT_RESULTS,
                     help="an experiment's results directory, where the tables that are not "
                          "given are found (default: %(default)s)")


def _decoder_arguments(sub: argparse.ArgumentParser, grammar_help: str, weights_help: str,
                       lang: str, required: bool) -> None:
    sub.add_argument("--grammar", required=required, help=grammar_help)
    sub.add_argument("--lm", help=f"KenLM binary model (default: RESULTS/{DECODING_LM})")
    sub.add_argument("--weights", required=required, help=weights_help)
    sub.add_argument("-k", type=search_size, default=1,
                     help="n-best size; >1 prints Moses n-best lines")
    sub.add_argument("--pop-limit", type=search_size, default=100,
                     help="cube-pruning pops per chart cell (default: %(default)s)")
    sub.add_argument("--workers", type=positive_int, default=1,
                     help="decoding processes (default: %(default)s)")
    sub.add_argument("--lang", default=lang, help="tokeniser language (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="input is already tokenised and lowercased")
    _results_argument(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="circle", description="The circle command: the package's functions for ad-hoc use, "
        "outside Snakemake. Tables not given default to those of --results.")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {metadata.version('circle')}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    sub = command("validate", _validate, "check line-parallel corpus files (UTF-8, empty lines, "
                  "lines without a token after tokenisation, line counts, line length)")
    sub.add_argument("files", nargs="+")
    sub.add_argument("--max-line-chars", type=positive_int, default=2000,
                     help="longest accepted line (default: %(default)s)")

    sub = command("tokenize", _tokenize, "tokenise and lowercase stdin as the pipeline does")
    sub.add_argument("--lang", default="en")
    sub.add_argument("--keep-case", action="store_true")

    sub = command("info", _info, "print a pipeline table's row count, columns with their "
                  "types, schema and provenance")
    sub.add_argument("table")

    sub = command("paraphrases", _paraphrases, "print the top paraphrases of an English phrase "
                  "in a paraphrase grammar, with their features")
    sub.add_argument("phrase", help="English phrase; nonterminals as [X,1] [X,2]")
    sub.add_argument("--grammar",
                     help=f"paraphrase grammar table (default: RESULTS/{PARAPHRASE_GRAMMAR})")
    sub.add_argument("-n", type=positive_int, default=10, help="how many (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="the phrase is already tokenised and lowercased")
    _results_argument(sub)

    sub = command("decode", _decode, "decode a file or stdin with a grammar, an LM and weights")
    sub.add_argument("--input", help="input file, one sentence per line (default: stdin)")
    _decoder_arguments(sub, "grammar table (Parquet)", "weight file: 'name value' per line",
                       "es", required=True)

    sub = command("paraphrase", _paraphrase, "paraphrase one English sentence with an "
                  "experiment's paraphrase grammar (bias 0) and its tuned paraphraser weights")
    sub.add_argument("sentence")
    _decoder_arguments(
        sub, f"paraphrase grammar table (default: RESULTS/{PARAPHRASE_GRAMMAR})",
        f"weight file (default: RESULTS/{TUNED_PARAPHRASE_WEIGHTS}, the tuned paraphraser, "
        f"if it exists, else RESULTS/{UNTUNED_PARAPHRASE_WEIGHTS}); which one is used is "
        "printed on stderr", "en", required=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (CorpusError, SchemaError, AlignmentError, FileNotFoundError, ValueError) as error:
        print(f"circle {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

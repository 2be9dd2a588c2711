"""The ``circle`` command: the package's functions for ad-hoc use, outside Snakemake.

Each subcommand only parses arguments, calls the library and prints; errors that the library
raises for bad input (corpus, schema, alignment) are printed as one clear message, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from circle.align import AlignmentError
from circle.corpus.validate import CorpusError, decode_lines, limit_problems, read_parallel
from circle.preprocess import normalize
from circle.tables import SchemaError, read_metadata

Handler = Callable[[argparse.Namespace], None]

DEFAULT_PARAPHRASE_GRAMMAR = "results/default/paraphrase/bias0.parquet"
DEFAULT_PARAPHRASE_WEIGHTS = "results/default/weights/untuned-paraphrase.txt"


def _validate(args: argparse.Namespace) -> None:
    columns = read_parallel(args.files, args.max_line_chars)
    print(f"ok: {len(args.files)} file(s), {len(columns[0])} line(s) each")


def _tokenize(args: argparse.Namespace) -> None:
    for line in sys.stdin:
        print(normalize(line.rstrip("\n"), args.lang, lowercase=not args.keep_case))


def _info(args: argparse.Namespace) -> None:
    print(json.dumps(read_metadata(args.table), indent=2, sort_keys=True))


def _paraphrases(args: argparse.Namespace) -> None:
    from circle.grammar.inspect import top_paraphrases

    phrase = args.phrase if args.tokenized else normalize(args.phrase, "en")
    frame = top_paraphrases(args.grammar, phrase, args.n)
    if frame.empty:
        print(f"no paraphrases of '{phrase}' in {args.grammar}")
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
    outputs = decode_corpus(sentences, args.grammar, args.lm, weights, settings,
                            workers=args.workers)
    for number, hypotheses in enumerate(outputs):
        if args.k > 1:
            print("\n".join(format_nbest(number, hypotheses)))
        else:
            print(hypotheses[0].text if hypotheses else "")


def _decode(args: argparse.Namespace) -> None:
    name = args.input or "<stdin>"
    stream = open(args.input, "rb") if args.input else sys.stdin.buffer  # noqa: SIM115
    with stream:
        lines, problems = decode_lines(stream, name)
    if problems:
        raise CorpusError(limit_problems(name, problems))
    _decode_lines(args, lines)


def _paraphrase(args: argparse.Namespace) -> None:
    _decode_lines(args, [args.sentence])


def _decoder_arguments(sub: argparse.ArgumentParser, grammar: str | None, weights: str | None,
                       lang: str) -> None:
    required = {"required": True} if grammar is None else {"default": grammar}
    sub.add_argument("--grammar", **required, help="grammar table (Parquet)")
    sub.add_argument("--lm", default="results/default/lm/3gram.binary",
                     help="KenLM binary model (default: %(default)s)")
    weights_arg = {"required": True} if weights is None else {"default": weights}
    sub.add_argument("--weights", **weights_arg, help="weight file: 'name value' per line")
    sub.add_argument("-k", type=int, default=1, help="n-best size; >1 prints Moses n-best lines")
    sub.add_argument("--pop-limit", type=int, default=100)
    sub.add_argument("--workers", type=int, default=1)
    sub.add_argument("--lang", default=lang, help="tokeniser language (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="input is already tokenised and lowercased")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="circle", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    sub = command("validate", _validate, "check line-parallel corpus files (UTF-8, empty lines, "
                  "lines without a token after tokenisation, line counts, line length)")
    sub.add_argument("files", nargs="+")
    sub.add_argument("--max-line-chars", type=int, default=2000)

    sub = command("tokenize", _tokenize, "tokenise and lowercase stdin as the pipeline does")
    sub.add_argument("--lang", default="en")
    sub.add_argument("--keep-case", action="store_true")

    sub = command("info", _info, "print a pipeline table's schema and provenance")
    sub.add_argument("table")

    sub = command("paraphrases", _paraphrases, "print the top paraphrases of an English phrase "
                  "in a paraphrase grammar, with their features")
    sub.add_argument("phrase", help="English phrase; nonterminals as [X,1] [X,2]")
    sub.add_argument("--grammar", default=DEFAULT_PARAPHRASE_GRAMMAR,
                     help="paraphrase grammar table (default: %(default)s)")
    sub.add_argument("-n", type=int, default=10, help="how many (default: %(default)s)")
    sub.add_argument("--tokenized", action="store_true",
                     help="the phrase is already tokenised and lowercased")

    sub = command("decode", _decode, "decode a file or stdin with a grammar, an LM and weights")
    sub.add_argument("--input", help="input file, one sentence per line (default: stdin)")
    _decoder_arguments(sub, None, None, "es")

    sub = command("paraphrase", _paraphrase, "paraphrase one English sentence with the default "
                  "experiment's paraphrase grammar")
    sub.add_argument("sentence")
    _decoder_arguments(sub, DEFAULT_PARAPHRASE_GRAMMAR, DEFAULT_PARAPHRASE_WEIGHTS, "en")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except (CorpusError, SchemaError, AlignmentError, FileNotFoundError, ValueError) as error:
        print(f"circle {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

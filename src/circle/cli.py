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
from circle.corpus.validate import CorpusError, read_parallel
from circle.preprocess import normalize
from circle.tables import SchemaError, read_metadata

Handler = Callable[[argparse.Namespace], None]


def _validate(args: argparse.Namespace) -> None:
    columns = read_parallel(args.files, args.max_line_chars)
    print(f"ok: {len(args.files)} file(s), {len(columns[0])} line(s) each")


def _tokenize(args: argparse.Namespace) -> None:
    for line in sys.stdin:
        print(normalize(line.rstrip("\n"), args.lang, lowercase=not args.keep_case))


def _info(args: argparse.Namespace) -> None:
    print(json.dumps(read_metadata(args.table), indent=2, sort_keys=True))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="circle", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    sub = command("validate", _validate, "check line-parallel corpus files (UTF-8, empty lines, "
                  "line counts, line length)")
    sub.add_argument("files", nargs="+")
    sub.add_argument("--max-line-chars", type=int, default=2000)

    sub = command("tokenize", _tokenize, "tokenise and lowercase stdin as the pipeline does")
    sub.add_argument("--lang", default="en")
    sub.add_argument("--keep-case", action="store_true")

    sub = command("info", _info, "print a pipeline table's schema and provenance")
    sub.add_argument("table")
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

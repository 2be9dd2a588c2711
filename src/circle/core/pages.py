"""Report pages as files: Markdown, the HTML the Snakemake report shows, CSV, written atomically.

Every stage that writes a page (the experiments' tables, the thesis's figures, the summary) uses
these, so that every page reads and renders alike."""

from __future__ import annotations

import html
import io
import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import groupby
from pathlib import Path

import pandas as pd

from circle.core.tables import atomic_path

P_VALUE_DIGITS = 4
"""Significant digits of the p-values in a table's CSV."""


def write_text_atomically(text: str, path: str | os.PathLike) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


CHARACTER_REFERENCE = re.compile(
    r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
"""A complete HTML character reference (``&apos;``, ``&#124;``, ``&#x5b;``), as Markdown reads
it: the character it stands for."""


LINK = re.compile(r"\[([^\]\n]+)\]\(([^()\s]+)\)")
"""A Markdown link, ``[text](target)``: the summary's contents links to its sections."""


IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^()\s]+)\)\s*$")
"""A Markdown image on a line of its own, ``![alt](file.png)``."""


PLACEHOLDER = re.compile(r"<([A-Za-z][\w.-]*)>")
"""A placeholder such as ``<k>``, ``<variant>`` or ``<series>``, which Markdown renderers read
as an HTML tag and drop."""

_FENCE_OR_CODE = re.compile(r"^```.*?^```[^\n]*$|(`+).+?\1", re.M | re.S)


def escape_placeholders(text: str) -> str:
    """Markdown with every :data:`PLACEHOLDER` outside code spans and fenced blocks written
    ``&lt;word&gt;``, so that ``H<k>`` reads as such on a forge instead of as ``H``."""
    kept = [(m.start(), m.end()) for m in _FENCE_OR_CODE.finditer(text)]
    parts, position = [], 0
    for start, end in [*kept, (len(text), len(text))]:
        parts.append(PLACEHOLDER.sub(r"&lt;\1&gt;", text[position:start]))
        parts.append(text[start:end])
        position = end
    return "".join(parts)


def _inline_html(text: str) -> str:
    """One line of the pages' Markdown as HTML: escaped once, ``**bold**``, code and links
    kept.

    As in Markdown, a character reference stands for its character: the pipeline's tokenised
    text holds the Moses tokeniser's escapes (``&apos;``, ``&quot;``, ``&amp;``, ``&#124;``),
    which are resolved before the text is escaped, so the reader sees ``'`` and never
    ``&apos;``; any other ``&``, ``<`` and ``>`` are escaped."""
    resolved = CHARACTER_REFERENCE.sub(lambda match: html.unescape(match[0]), text)
    escaped = html.escape(resolved, quote=False)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return LINK.sub(lambda m: f'<a href="{m[2].replace(chr(34), "%22")}">{m[1]}</a>', escaped)


def heading_id(title: str) -> str:
    """The anchor of a heading as GitHub makes it from the heading's text (lowercase; spaces to
    hyphens; other punctuation dropped), so one link works on GitHub and in the HTML page."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _table_html(rows: list[str]) -> list[str]:
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    header, rule, body = cells[0], cells[1], cells[2:]
    align = ["right" if c.endswith(":") and not c.startswith(":") else "left" for c in rule]

    def row_html(row: list[str], tag: str) -> str:
        return "<tr>" + "".join(f'<{tag} style="text-align:{a}">{_inline_html(c)}</{tag}>'
                                for c, a in zip(row, align, strict=False)) + "</tr>"

    return ['<div class="wide"><table>', "<thead>", row_html(header, "th"), "</thead>",
            "<tbody>", *(row_html(row, "td") for row in body), "</tbody>", "</table></div>"]


FORGE_COLUMNS = 8
"""The most columns a page's first table has: about what a forge shows of a table at its page
width before the reader has to scroll."""


def pipe_table(header: Sequence[str], rows: Iterable[Sequence[str]],
               left: Collection[str] = ()) -> list[str]:
    """A pipe table's lines: the columns named in ``left`` (text) aligned left, the others
    (numbers) right."""
    return ["| " + " | ".join(header) + " |",
            "|" + "|".join(":---" if name in left else "---:" for name in header) + "|",
            *("| " + " | ".join(cells) + " |" for cells in rows)]


def split_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                parts: Sequence[Sequence[str]], left: Collection[str] = ()) -> list[str]:
    """A table too wide for a forge's page as one pipe table per part of ``parts`` (column
    names), one under the other, each led by the first column (the rows' names): the first part
    the columns a reader needs for the page's finding (at most :data:`FORGE_COLUMNS` with the
    first), the others the rest. Every column is in exactly one part, so nothing is dropped;
    ValueError otherwise."""
    rest = list(header[1:])
    placed = [name for part in parts for name in part]
    if sorted(placed) != sorted(rest):
        raise ValueError(f"the parts {[list(part) for part in parts]} do not split the columns "
                         f"{rest} (each exactly once)")
    if len(parts[0]) + 1 > FORGE_COLUMNS:
        raise ValueError(f"the first table has {len(parts[0]) + 1} columns, more than "
                         f"{FORGE_COLUMNS}")
    index = {name: number for number, name in enumerate(header)}
    lines: list[str] = []
    for part in parts:
        columns = [0, *(index[name] for name in part)]
        lines += [*([""] if lines else []),
                  *pipe_table([header[c] for c in columns],
                              ([row[c] for c in columns] for row in rows), left)]
    return lines


def markdown_html(text: str, title: str,
                  image_source: Callable[[str], str] | None = None) -> str:
    """A report page's Markdown (headings, paragraphs, ``-`` lists, pipe tables, bold, links,
    images on lines of their own) as one HTML document, for the Snakemake report, which shows
    HTML but not Markdown. ``image_source`` maps an image's file name to the ``src`` to use
    (e.g. a data URI, for a self-contained page); by default the name itself."""
    image_source = image_source or (lambda name: name)
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    body: list[str] = []
    for block in filter(None, blocks):
        if block[0].startswith("|"):
            body += _table_html(block)
        elif all(IMAGE.match(line) for line in block):
            body += [f'<p><img alt="{html.escape(m[1])}" src="{html.escape(image_source(m[2]))}"'
                     ' style="max-width:100%"></p>' for m in map(IMAGE.match, block)]
        elif match := re.match(r"(#+) (.*)", block[0]):
            level = len(match.group(1))
            body.append(f'<h{level} id="{heading_id(match.group(2))}">'
                        f"{_inline_html(match.group(2))}</h{level}>")
            if block[1:]:
                body.append(f"<p>{_inline_html(' '.join(block[1:]))}</p>")
        elif any(line.startswith("- ") for line in block):
            # a list, or lines of text with a list under them
            for is_list, run in groupby(block, key=lambda line: line.startswith("- ")):
                lines = list(run)
                if is_list:
                    body += ["<ul>", *(f"<li>{_inline_html(line[2:])}</li>" for line in lines),
                             "</ul>"]
                else:
                    body.append(f"<p>{_inline_html(' '.join(lines))}</p>")
        else:
            body.append(f"<p>{_inline_html(' '.join(block))}</p>")
    return "\n".join([
        "<!DOCTYPE html>", '<html><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:1em;line-height:1.4}"
        "table{border-collapse:collapse;margin:0.5em 0}th{background:#f2f2f2}"
        "th,td{border:1px solid #ccc;padding:2px 6px}td[style*=right]{white-space:nowrap}"
        ".wide{overflow-x:auto}code{background:#f4f4f4}</style>",
        "</head><body>", *body, "</body></html>", ""])


def write_page(text: str, markdown_path: str | os.PathLike,
               html_path: str | os.PathLike, title: str) -> None:
    """Write a report page as Markdown (placeholders escaped: :func:`escape_placeholders`) and
    as HTML (:func:`markdown_html`)."""
    text = escape_placeholders(text)
    write_text_atomically(text, markdown_path)
    write_text_atomically(markdown_html(text, title), html_path)


SUMMARY_PAGE = "index"
"""The stem of the report page that shows every other (:mod:`circle.figures.summary`)."""


def finished_line(report_directory: str | os.PathLike) -> str:
    """The line that ends a run: the summary page, the report pages (tables) in
    ``report_directory``, and where their CSVs and plots are."""
    directory = Path(report_directory)
    pages = sorted(page for page in directory.glob("*.md") if page.stem != SUMMARY_PAGE)
    if not pages:
        return f"No report tables in {directory} yet."
    summary = directory / f"{SUMMARY_PAGE}.html"
    return ((f"Summary: {summary} (one page, open it in a browser). " if summary.exists()
             else "")
            + f"Tables: {', '.join(str(page) for page in pages)}; their HTML, CSV and plots "
            f"are beside them in {directory}/ (all with captions: snakemake --report "
            "report.zip).")


def p_value_text(value) -> str:
    """A p-value as a CSV shows it: :data:`P_VALUE_DIGITS` significant digits (``9.999e-05``,
    not ``9.999000099990002e-05``), empty where there is none."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{float(value):.{P_VALUE_DIGITS}g}"


def csv_text(table: pd.DataFrame) -> str:
    """A table as CSV text (no index, ``\\n`` line ends): scores at full precision, p-values
    (columns ending in ``p_value``) at :data:`P_VALUE_DIGITS` significant digits."""
    frame = table.copy()
    for column in [c for c in frame.columns if str(c).endswith("p_value")]:
        frame[column] = [p_value_text(v) for v in frame[column]]
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()

"""Placeholders such as H<k>, noise<p>, T<n> or kH_oov-<variant> in the project's Markdown: a
CommonMark renderer (markdown-it, as forges render) must see text, not an HTML tag that it
would drop, in the documentation and in every page the report writers produce."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from circle.core.pages import escape_placeholders, write_page
from circle.figures.summary import write_results_docs, write_summary

ROOT = Path(__file__).resolve().parents[2]
RENDERER = MarkdownIt("commonmark").enable("table")


def html_tags(text: str) -> list[str]:
    """The raw HTML a CommonMark renderer finds in ``text``: what it would pass through as tags
    instead of showing."""
    found = []
    for token in RENDERER.parse(text):
        for part in [token, *(token.children or [])]:
            if part.type in ("html_inline", "html_block"):
                found.append(part.content.strip())
    return found


def test_placeholders_are_escaped_outside_code_only():
    text = ("kH_oov-<variant>, H<k> and noise<p>; `results/<exp>` and ``a <b>`` stay; "
            "p < 0.05; <https://example.org>\n\n```\nsnakemake <target>\n```\n")
    escaped = escape_placeholders(text)
    assert escaped == ("kH_oov-&lt;variant&gt;, H&lt;k&gt; and noise&lt;p&gt;; `results/<exp>` "
                       "and ``a <b>`` stay; p < 0.05; <https://example.org>\n\n```\n"
                       "snakemake <target>\n```\n")
    assert html_tags(text) == ["<variant>", "<k>", "<p>"]  # what a forge would swallow
    assert html_tags(escaped) == [] and escape_placeholders(escaped) == escaped
    rendered = RENDERER.render(escaped)
    assert "H&lt;k&gt;" in rendered and "<code>results/&lt;exp&gt;</code>" in rendered


@pytest.mark.parametrize("path", sorted(
    str(p.relative_to(ROOT)) for p in [ROOT / "README.md", ROOT / "CHANGELOG.md",
                                       ROOT / "config/README.md", *ROOT.glob("docs/**/*.md")]))
def test_the_documentation_has_no_bare_placeholder(path):
    assert html_tags((ROOT / path).read_text(encoding="utf-8")) == []


def test_report_pages_and_the_summary_are_written_escaped(tmp_path):
    report = tmp_path / "results" / "exp" / "report"
    report.mkdir(parents=True)
    page = "# Tuning on one extra reference\n\n| condition | BLEU |\n|:---|---:|\n" \
           "| 1H+1X_noise<p> | 40.1 |\n\nH<k> = the k-th human reference; T<n> the tuning set.\n"
    write_page(page, report / "dose_response.md", report / "dose_response.html", "Dose")
    markdown = (report / "dose_response.md").read_text()
    assert html_tags(markdown) == [] and "1H+1X_noise&lt;p&gt;" in markdown
    assert "H&lt;k&gt; = the k-th" in (report / "dose_response.html").read_text()
    write_summary(report.parent, ["dose_response"], report / "index.md", report / "index.html")
    summary = (report / "index.md").read_text()
    assert "T&lt;n&gt; the tuning set" in summary and html_tags(summary) == []
    docs = write_results_docs(report.parent, tmp_path / "docs")
    assert html_tags(docs.read_text()) == []

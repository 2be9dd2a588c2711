"""circle.figures.summary: the page that shows every report page of a run under the findings of its
significance marks, as Markdown, as self-contained HTML and as results documentation."""

from __future__ import annotations

import base64
import re
import subprocess

import pandas as pd
import pytest
from tests.unit.test_report import evaluation, summary

from circle.core.pages import heading_id, markdown_html, write_page
from circle.figures.report import write_report
from circle.figures.summary import (
    checkout_commit,
    page_order,
    report_pages,
    run_commit,
    summary_inputs,
    table_findings,
    write_results_docs,
    write_summary,
)


def report_directory(tmp_path):
    """A results directory with a real Fig. 4.3 page (table, CSV, plot) and two more pages."""
    results = tmp_path / "results" / "exp"
    report = results / "report"
    report.mkdir(parents=True)
    (results / "config.yaml").write_text("experiment: exp\nseed: 13\n")
    frame = evaluation()
    table = write_report(frame, report / "fig4_3.md", report / "fig4_3.html",
                         report / "fig4_3.csv", report / "fig4_3.png",
                         conditions=summary(frame), figure="4.3")
    (report / "tuning_curves.png").write_bytes((report / "fig4_3.png").read_bytes()[::-1])
    write_page("# The single reference of 1H\n\n| a | b |\n|---|---:|\n| web | 1 |\n",
               report / "single_reference.md", report / "single_reference.html", "single")
    write_page("# Fig. 4.8 table\n\nReading: x.\n", report / "fig4_8.md",
               report / "fig4_8.html", "fig4_8")
    return results, table


def test_pages_come_in_reading_order_and_the_summary_is_not_a_page():
    pages = page_order(["paraphraser-bias0", "grid_search", "index", "fig5_10", "fig4_3",
                        "fig4_8"])
    assert [page.stem for page in pages] == ["fig4_3", "fig5_10", "grid_search", "fig4_8",
                                             "paraphraser-bias0"]
    assert pages[0].images == ("fig4_3.png", "tuning_curves.png") and pages[3].images == ()
    # the rule's inputs: every page, the samples written beside Fig. 5.10, the plots
    assert summary_inputs("r", ["fig5_10", "grid_search"]) == [
        "r/fig5_10.md", "r/fig5_10.png", "r/grid_search.md", "r/fig5_3.png", "r/fig5_8.png",
        "r/targeted_samples.md"]


def test_findings_count_the_marks_of_the_table(tmp_path):
    results, _ = report_directory(tmp_path)
    csv = pd.read_csv(results / "report/fig4_3.csv")
    lines = table_findings(csv, "1H")
    text = (results / "report/fig4_3.md").read_text()
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ")][2:]
    human_marks = [cells[1].strip()[-1] for cells in rows]  # the Human BLEU column
    better = human_marks.count("*")
    worse = human_marks.count("†")
    tested = int(csv["human_bleu_p_value"].notna().sum())
    assert lines[0].startswith(f"human references (kH) against 1H: BLEU: better in {better} "
                               f"of {tested} rows")
    assert f"worse in {worse}" in lines[0] and "BLEU at a common length" in lines[0]
    assert better == 1 and worse == 1 and tested == 3  # the fixture's p-values
    assert len(lines) == 2  # human and untargeted; the targeted series has no test


def test_the_summary_holds_every_page_its_plots_inlined_and_its_provenance(tmp_path):
    results, _ = report_directory(tmp_path)
    report = results / "report"
    write_summary(results, ["fig4_3", "single_reference"], report / "index.md",
                  report / "index.html")
    text = (report / "index.md").read_text()
    assert "made at commit " in text and "`results/exp/config.yaml` (sha256 " in text
    assert str(tmp_path) not in text  # no path of the machine that ran it
    assert "- **Thesis Fig. 4.3**, human references (kH) against 1H: BLEU: better in 1" in text
    # the pages, one level down, in reading order, with their plots
    assert text.index("## Test-set scores") < text.index("## The single reference of 1H")
    assert "![fig4_3.png](fig4_3.png)\n![tuning_curves.png](tuning_curves.png)" in text
    assert "Fig. 4.8" not in text  # a page the summary was not given
    # every contents link points to a heading of the page
    anchors = re.findall(r"- \[[^\]]+\]\(#([^)]+)\)", text)
    headings = [heading_id(line.lstrip("#")) for line in text.splitlines()
                if line.startswith("## ")]
    assert len(anchors) == 2 and set(anchors) <= set(headings)
    html = (report / "index.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert [base64.b64decode(image) for image in images] == [
        (report / "fig4_3.png").read_bytes(), (report / "tuning_curves.png").read_bytes()]
    assert 'src="fig4_3.png"' not in html  # self-contained
    for anchor in anchors:
        assert f'id="{anchor}"' in html and f'href="#{anchor}"' in html


def test_results_docs_hold_every_page_with_the_run_commit(tmp_path):
    results, _ = report_directory(tmp_path)
    out = tmp_path / "docs" / "results" / "exp"
    page = write_results_docs(results, out)
    text = page.read_text()
    assert page == out / "index.md"
    assert sorted(path.name for path in out.iterdir()) == ["fig4_3.png", "index.md",
                                                          "tuning_curves.png"]
    for heading in ("(thesis Fig. 4.3)\n", "## The single reference of 1H\n",
                    "## Fig. 4.8 table\n"):
        assert text.count(heading) == 1, heading
    assert "circle results-docs --results results/exp " in text
    assert "- **Fig. 4.8 table**: x.\n" in text  # a page's own reading is a finding
    # the run's own summary names the commit the run was made at: the docs keep it
    write_summary(results, ["fig4_3"], results / "report/index.md",
                  results / "report/index.html")
    (results / "report/index.md").write_text(re.sub(
        r"made at commit \S+ with", "made at commit 1234567 with",
        (results / "report/index.md").read_text()))
    assert run_commit(results) == "1234567"
    text = write_results_docs(results, out).read_text()
    assert "made at commit 1234567 with" in text
    assert [page.stem for page in report_pages(results / "report")] == [
        "fig4_3", "single_reference", "fig4_8"]  # the summary is not one of its own pages
    text = write_results_docs(results, out, made_at="abc1234 (resumed on def5678)").read_text()
    assert "made at commit abc1234 (resumed on def5678) with" in text
    assert "--made-at 'abc1234 (resumed on def5678)'` at commit" in text
    with pytest.raises(FileNotFoundError, match="no report pages"):
        write_results_docs(tmp_path / "results" / "none", out)


def test_the_commit_is_the_checkout_s_or_unknown(tmp_path):
    assert checkout_commit(tmp_path) == "unknown"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("a")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "m"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert checkout_commit(tmp_path) == head
    (tmp_path / "f").write_text("b")
    assert checkout_commit(tmp_path) == f"{head}+dirty"


def test_links_images_and_heading_anchors_in_html():
    text = markdown_html("# Fig. 5.10 (thesis)\n\nSee [the table](#fig-510-thesis).\n\n"
                         "![plot](p.png)\n", "t", image_source=lambda name: f"x/{name}")
    assert '<h1 id="fig-510-thesis">Fig. 5.10 (thesis)</h1>' in text
    assert '<a href="#fig-510-thesis">the table</a>' in text
    assert '<img alt="plot" src="x/p.png"' in text

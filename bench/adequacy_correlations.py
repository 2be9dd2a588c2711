"""Does the tuning gain follow the extra reference's adequacy? The readings of the ladder page
(:func:`circle.figures.ladder.adequacy_reading`) and of the dose-response page
(:func:`circle.figures.dose_response.dose_reading`), computed by the pages' own functions
from the tables the docs print, for when the runs' results directories are not at hand.

* The ladder: its rungs from the ladder page's table (``docs/results/ladder/ladder.md``: P1
  BLEU, 1H+1P − 1H raw and at a common length), and the five paraphrasers that page leaves
  out as docs/results.md prints them (:data:`ELSEWHERE`); the reading over the page's rungs
  and over all of them.
* The dose-response: its table on the default run's page (``docs/results/default/index.md``:
  adequacy BLEU, gain over 1H raw and at a common length, the test's marks).

Run from the repository root:

    python bench/adequacy_correlations.py [--ladder docs/results/ladder/ladder.md]
        [--default docs/results/default/index.md]
"""

import argparse
from pathlib import Path

import pandas as pd

from circle.experiments.evaluate import MATCHED_BLEU
from circle.figures.dose_response import dose_reading
from circle.figures.ladder import adequacy_reading

ELSEWHERE = [
    # experiment, P1 adequacy BLEU, 1H+1P − 1H raw, at a common length; docs/results.md section
    ("ladder-es-english", 33.2, 0.64, -0.32),  # "Five foreign languages with the KJV", its table
    ("ladder-languages-kjv", 22.8, -0.67, -0.68),  # the same table
    ("samt-paraphraser", 13.7, -1.49, -1.89),  # "A labelled paraphraser", its table
    ("samt-identity", 44.9, -0.04, -0.08),  # "Decoding with labels", its table
    ("samt-labelled", 44.8, 0.27, 0.16),  # the same table
]
"""The paraphrasers the ladder page leaves out, as docs/results.md prints them."""

DOSE_EXTRAS = {"2H": "H2", "1H+1P": "P1"}
"""The dose-response's conditions that are not ``1H+1X_<extra>``, and their extra reference."""


def number(cell: str) -> float:
    """The leading number of a table cell ("-1.21† (p = 0.0001)", "19.4 / 44.4 / 66.2")."""
    return float(cell.split()[0].rstrip("*†").replace("−", "-"))


def markdown_table(page: Path, first: str) -> list[dict[str, str]]:
    """The rows of the page's Markdown table whose first column is headed ``first``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first} |"))
    cells = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return [dict(zip(cells[0], row, strict=True)) for row in cells[2:]]


def ladder_gains(page: Path) -> pd.DataFrame:
    """The ladder page's rungs as :func:`circle.pipeline.ladder.adequacy_gains`'s frame."""
    rows = markdown_table(page, "experiment")
    return pd.DataFrame({
        "experiment": [row["experiment"] for row in rows],
        "adequacy_bleu": [number(row["P1 BLEU / chrF / TER"]) for row in rows],
        "bleu": [number(row["1H+1P − 1H BLEU"]) for row in rows],
        MATCHED_BLEU: [number(row["at common length"]) for row in rows]})


def dose_frame(page: Path) -> pd.DataFrame:
    """The dose-response table of a results page as :func:`dose_reading` reads it (extra
    reference, adequacy, mean gains, the test's marks)."""
    rows = markdown_table(page, "extra reference")

    def significant(cell: str) -> bool:
        return cell.endswith(("*", "†"))

    return pd.DataFrame({
        "extra": [DOSE_EXTRAS.get(row["condition"], row["condition"].split("_", 1)[-1])
                  for row in rows],
        "adequacy_bleu": [number(row["adequacy BLEU"]) for row in rows],
        "gain_mean": [number(row["gain over 1H"]) for row in rows],
        "matched_gain_mean": [number(row["gain at common length"]) for row in rows],
        "bleu_difference": [number(row["gain over 1H"]) for row in rows],
        "bleu_significant": [significant(row["test BLEU"]) for row in rows],
        "matched_bleu_difference": [number(row["gain at common length"]) for row in rows],
        "matched_bleu_significant": [significant(row["gain at common length"])
                                     for row in rows]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladder", type=Path, default=Path("docs/results/ladder/ladder.md"))
    parser.add_argument("--default", type=Path, default=Path("docs/results/default/index.md"))
    arguments = parser.parse_args()
    page = ladder_gains(arguments.ladder)
    every = pd.concat([page, pd.DataFrame(ELSEWHERE, columns=page.columns)],
                      ignore_index=True)
    for name, gains in (("the ladder page's rungs", page), ("every paraphraser", every)):
        print(f"Ladder, {name} ({', '.join(gains['experiment'])}):")
        print(adequacy_reading(gains))
    print("Dose-response, the default run:")
    print(dose_reading(dose_frame(arguments.default)))


if __name__ == "__main__":
    main()

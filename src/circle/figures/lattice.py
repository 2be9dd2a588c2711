"""One verse's word lattice as a report page, drawn as Pang, Knight & Marcu (2003) draw theirs
(Fig. 2 and 6): the verse's translations, the squeezed lattice of their merged parse trees
(Graphviz ``dot``), its counts, and the sentences on its paths that no translator wrote.

The verse is chosen, not given: among the groups whose squeezed lattice fits a page
(:data:`MAX_DRAWN_STATES`) and holds at least one new sentence, the one with the most distinct
sentences (ties: the lowest segment id), so that the picture shows what merging found where it
found most, and says how rare that is (:func:`lattice_page`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from circle.core.external import run_tool
from circle.core.tables import atomic_path
from circle.grammar.tree import Tree
from circle.lattice.evaluate import group_lattice
from circle.lattice.fsa import Lattice, count_paths, count_sentences, paths, to_dot

MAX_DRAWN_STATES = 40
"""The most states a drawn lattice may have (a wider drawing is unreadable on a page)."""
MAX_LISTED = 10
"""The most new sentences the page lists."""


@dataclass(frozen=True)
class DrawnGroup:
    """One verse's group: its segment id, its translations (words as written), the squeezed
    lattice (lowercased words, :func:`~circle.lattice.fsa.forest_to_lattice`), its number of
    distinct sentences and the sentences on its paths that none of the translations is."""

    segment: int
    translations: tuple[tuple[str, ...], ...]
    lattice: Lattice
    distinct_sentences: int
    new_sentences: tuple[tuple[str, ...], ...]


def drawn_group(segment: int, trees: Sequence[Tree]) -> DrawnGroup:
    """The group of ``trees`` (one verse's translations) merged, its lattice squeezed (Fig. 4),
    and its new sentences in path order (enumerated only where the lattice fits a page)."""
    _, squeezed, _ = group_lattice(trees)
    translations = tuple(tuple(tree.words()) for tree in trees)
    new: tuple[tuple[str, ...], ...] = ()
    if squeezed.states <= MAX_DRAWN_STATES:
        known = {tuple(word.lower() for word in words) for words in translations}  # as edges
        new = tuple(dict.fromkeys(p for p in paths(squeezed) if p not in known))
    return DrawnGroup(segment, translations, squeezed, count_sentences(squeezed), new)


def pick_group(groups: Mapping[int, Sequence[Tree]]) -> tuple[DrawnGroup | None, int, int]:
    """The group to draw (module doc) or None, with the number of groups that have a new
    sentence and fit a page, and the number of groups."""
    candidates = [drawn_group(segment, trees) for segment, trees in sorted(groups.items())]
    fitting = [g for g in candidates if g.new_sentences]
    best = max(fitting, key=lambda g: (g.distinct_sentences, -g.segment), default=None)
    return best, len(fitting), len(candidates)


def lattice_page(group: DrawnGroup | None, fitting: int, total: int, names: Sequence[str],
                 image: str) -> str:
    """The page's Markdown: the verse's translations (``names`` in their order), the drawing
    (``image``, a PNG beside the page), the lattice's counts and its new sentences."""
    lines = ["# A word lattice of one verse (Pang, Knight & Marcu 2003)", ""]
    if group is None:
        return "\n".join([*lines, f"None of the {total:,} verses' lattices fits a page "
                          f"({MAX_DRAWN_STATES} states) with a sentence no translator wrote.",
                          ""])
    lattice = group.lattice
    lines += [f"Test verse {group.segment}: its {len(names)} translations, parsed, merged top "
              "down where their trees expand alike (keywords checked), turned into a lattice "
              "and squeezed (the seed's Fig. 4). The verse drawn is, among the "
              f"{fitting:,} of {total:,} test verses whose lattice has at most "
              f"{MAX_DRAWN_STATES} states and a sentence no translator wrote, the one with the "
              "most distinct sentences: the best case, not a typical one.", ""]
    lines += [f"- {name}: {' '.join(words)}" for name, words in
              zip(names, group.translations, strict=True)]
    lines += ["", f"![the lattice of test verse {group.segment}]({image})", "",
              "| states | edges | paths | distinct sentences | new sentences |",
              "|---:|---:|---:|---:|---:|",
              f"| {lattice.states} | {len(lattice.edges)} | {count_paths(lattice):,} | "
              f"{group.distinct_sentences:,} | {len(group.new_sentences):,} |", ""]
    listed = group.new_sentences[:MAX_LISTED]
    lines += [f"New sentences (the first {len(listed)} in path order):", ""]
    lines += [f"- {' '.join(words)}" for words in listed]
    return "\n".join([*lines, ""])


def draw(lattice: Lattice | None, dot_path: str | os.PathLike, png_path: str | os.PathLike,
         log_path: str | os.PathLike | None = None) -> None:
    """Write the lattice's Graphviz text (:func:`~circle.lattice.fsa.to_dot`) and its PNG,
    drawn by Graphviz's ``dot`` (Debian ``graphviz``, installed by ``envs/setup.sh``); None
    (no verse to draw) draws BEGIN and END alone, so that a run always has both files."""
    lattice = lattice if lattice is not None else Lattice(2, ())
    with atomic_path(dot_path) as tmp:
        Path(tmp).write_text(to_dot(lattice), encoding="utf-8")
    with atomic_path(png_path) as tmp:
        run_tool("dot", ["-Tpng", str(dot_path), "-o", str(tmp)], log_path)

"""The package's floor plan follows the circle: every import of circle's own code goes to the
same stage or an earlier one, and no module imports itself through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "circle"

STAGES: tuple[str, ...] = (
    "core", "corpus", "align", "lm", "distributional", "grammar", "decoder", "tune",
    "paraphrase", "lattice", "experiments", "figures", "pipeline", "system", "translate", "cli",
)
"""circle's top-level modules and packages in the order of the circle: infrastructure, corpus,
alignment, LMs, monolingual paraphrases of unseen source words, grammars, the decoder, tuning,
paraphrasing, word lattices, the experiments, their figures and pages, the Snakemake-facing
code, a trained system's files, and the user's commands."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Every module of the package (dotted name) and the circle modules it imports (``from
    package import submodule`` imports the submodule; compiled modules are named by their
    ``.pyx`` source)."""
    sources = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in [*sources, *PACKAGE.rglob("*.pyx")]}
    graph: dict[str, set[str]] = {}
    for path in sources:
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}"
                         if f"{node.module}.{alias.name}" in modules else node.module
                         for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            targets.update(name for name in names if name.split(".")[0] == "circle")
        graph[module_name(path)] = targets
    return graph


def stage(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_every_module_belongs_to_a_stage():
    unplaced = sorted({stage(m) for m in imports() if m != "circle"} - set(STAGES))
    assert unplaced == []


def test_no_module_imports_a_later_stage():
    rank = {name: position for position, name in enumerate(STAGES)}
    upward = sorted(f"{module} -> {target}" for module, targets in imports().items()
                    if module != "circle" for target in targets
                    if rank[stage(target)] > rank[stage(module)])
    assert upward == []


def test_no_import_cycle_between_modules():
    graph = imports()
    known = {module: {t for t in targets if t in graph} for module, targets in graph.items()}
    state: dict[str, int] = {}

    def cycle_from(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for target in sorted(known[module]):
            if state.get(target) == 1:
                return [*path, module, target]
            if target not in state and (found := cycle_from(target, [*path, module])):
                return found
        state[module] = 2
        return None

    for module in sorted(known):
        if module not in state and (found := cycle_from(module, [])):
            pytest.fail(" -> ".join(found))


SCRIPTS = PACKAGE.parents[1] / "workflow" / "scripts"


def test_no_workflow_script_parses_a_run_name():
    """The plan resolves runs once (circle.pipeline.runs); the rules give their scripts the
    runs as data, so no script turns a run or condition name back into one."""
    parsing = sorted(
        f"{path.name}:{node.lineno}"
        for path in SCRIPTS.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in ("TuningRun", "Condition")
        and node.func.attr in ("parse", "of"))
    assert parsing == []

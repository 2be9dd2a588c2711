"""The package's floor plan follows the circle: every import of circle's own code goes to the
same stage or an earlier one, and no module imports itself through others."""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from circle.core import layout

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "circle"

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


LAYOUT = PACKAGE / "core" / "layout.py"

RUN_NAME_MODULE = PACKAGE / "experiments" / "conditions.py"
"""Where a tuning run's name, ``<condition>.rep<replicate>``, is defined (TuningRun)."""


def layout_names() -> set[str]:
    """The first component of every path template of circle.core.layout under
    ``results/<experiment>/`` (``weights``, ``lm``, ``config.yaml``, ...)."""
    prefix = "results/{experiment}/"
    return {node.value.value.removeprefix(prefix).split("/")[0]
            for node in ast.parse(LAYOUT.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str) and node.value.value.startswith(prefix)}


def layout_spellings(path: Path, names: set[str]) -> list[str]:
    """The places in ``path`` that spell a file of an experiment's results directory instead of
    naming it through circle.core.layout: a path string (no blanks; docstrings and ``help=``
    texts aside) rooted at ``results/``, or a directory of the layout and a file in it
    (``weights/x.txt``; a run set such as ``oov/`` names no file), or ending in
    ``gram.binary``; a path joined with ``/ "<directory or file of the layout>"``; a run name
    spelt with ``.rep``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    docs |= {id(keyword.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
             for keyword in node.keywords if keyword.arg == "help"}
    joined = {id(node.right) for node in ast.walk(tree)
              if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) \
                or id(node) in docs or any(c.isspace() for c in node.value):
            continue
        text = node.value
        first, _, rest = text.partition("/")
        if (text.startswith("results/") or "gram.binary" in text
                or (first in names and (rest or id(node) in joined))
                or (path != RUN_NAME_MODULE and (".rep{" in text or ".rep*" in text
                                                 or text == ".rep"))):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text!r}")
    return found


def test_only_the_layout_module_spells_the_results_layout():
    """The files of ``results/<experiment>/`` are spelt once, by circle.core.layout's
    templates; every other module names them through it (its templates, or Results)."""
    names = layout_names()
    assert {"weights", "lm", "decode", "report", "evaluation", "config.yaml", "tune"} <= names
    spelt = [place for path in sorted(PACKAGE.rglob("*.py")) if path != LAYOUT
             for place in layout_spellings(path, names)]
    assert spelt == []


WORKFLOW = PACKAGE.parents[1] / "Snakefile", *sorted((SCRIPTS.parent / "rules").glob("*.smk"))
"""The Snakefile and its rules: the code Snakemake runs to build the workflow, in every job
too."""

HEAVY = ("circle.decoder.search", "circle.decoder.chart", "circle.decoder.lm", "circle.tune.loop",
         "circle.tune.mert", "circle.experiments.evaluate", "circle.experiments.dose_response",
         "circle.experiments.oov_masking", "circle.figures.reference_table", "duckdb",
         "sacrebleu", "kenlm", "matplotlib")
"""What building the workflow leaves to the jobs that run it: the decoder's search and its
LM, MERT and the tuner loop, the evaluation and the pages, DuckDB, sacrebleu, KenLM, plots."""


def test_the_workflow_build_imports_no_decoder_tuner_or_page():
    """The circle modules the Snakefile and its rules import at the top, the config check and
    the plan of the default config with every run set's runs load none of :data:`HEAVY`: a
    rule's helper that needs one imports it when it runs."""
    imported = sorted({match for path in WORKFLOW
                       for match in re.findall(r"^(?:from|import) (circle[\w.]*)",
                                               path.read_text(encoding="utf-8"), re.MULTILINE)})
    assert "circle.pipeline.plan" in imported
    root = PACKAGE.parents[1]
    code = "\n".join([
        "import sys, yaml", *(f"import {module}" for module in imported),
        "from circle.pipeline.config import check_config",
        "from circle.pipeline.plan import RUN_SETS, Plan",
        f"path = {str(root / 'config' / 'config.yaml')!r}",
        "config = yaml.safe_load(open(path, encoding='utf-8'))",
        "check_config(config, [path])",
        "plan = Plan(config)",
        "for run_set in RUN_SETS:",
        "    plan.evaluated_runs(plan.experiment, run_set)",
        "print(*sys.modules)",
    ])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=root, env=env, check=False)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert "circle.pipeline.plan" in loaded
    assert [m for m in loaded if any(m == h or m.startswith(f"{h}.") for h in HEAVY)] == []


def test_no_bench_spells_the_results_layout():
    """The benches open an experiment's files through circle.core.layout too."""
    names = layout_names()
    spelt = [place for path in sorted((ROOT / "bench").glob("*.py"))
             for place in layout_spellings(path, names)]
    assert spelt == []


def template_patterns() -> list[re.Pattern]:
    """Each path template of circle.core.layout under ``results/<experiment>/`` as a pattern
    whose fields (the experiment's among them) match anything: ``{EXPERIMENT}``,
    ``{{experiment}}`` or an f-string's ``{wildcards.experiment}`` as much as the wildcard."""
    templates = [value for value in vars(layout).values()
                 if isinstance(value, str) and value.startswith(layout.RESULTS + "/")]
    return [re.compile("".join(".*" if field.startswith("{") else re.escape(field)
                               for field in re.split(r"(\{\w+\})", template)))
            for template in templates]


def snakemake_strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a Snakemake file, as written (an f-string's ``{expression}``
    and ``{{`` included), without their prefixes and quotes; with their lines."""
    text = path.read_text(encoding="utf-8")
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    strings, starts = [], []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING:
            strings.append((token.start[0], token.string))
        elif token.type == getattr(tokenize, "FSTRING_START", None):  # Python >= 3.12
            starts.append(token.start)
        elif token.type == getattr(tokenize, "FSTRING_END", None):
            (row, column), (end_row, end_column) = starts.pop(), token.end
            strings.append((row, text[offsets[row - 1] + column:
                                      offsets[end_row - 1] + end_column]))
    return [(row, re.sub(r"^[rRbBuUfF]*(\"\"\"|'''|\"|')(.*)\1$", r"\2", string, flags=re.S))
            for row, string in strings]


def test_no_rule_spells_the_results_layout():
    """The rules name the files of circle.core.layout through its templates
    (``WEIGHTS.format(...)``, ``report_file("fig4_3.md")``), never as a literal path such as
    ``f"results/{EXPERIMENT}/report/fig4_3.md"``; files the layout has no template for (a
    rule's temporary and intermediate tables) the rules still spell themselves. Docstrings
    (strings with blanks) aside."""
    patterns = template_patterns()
    spelt = [f"{path.relative_to(ROOT)}:{row}: {string!r}"
             for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
             for row, string in snakemake_strings(path)
             if not any(c.isspace() for c in string)
             and any(pattern.fullmatch(string) for pattern in patterns)]
    assert spelt == []

"""The package's declared dependencies: every third-party module that src/ imports is declared in
pyproject.toml, every declared package is pinned in the lock files, and the documentation
installs the project with its own commands (PyPI's "circle" is another project)."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def declared() -> dict[str, list[str]]:
    """Normalised names of the runtime dependencies and of each optional group."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"": project["dependencies"], **project.get("optional-dependencies", {})}
    return {group: [normalise(re.split(r"[<>=!~ ;\[]", spec)[0]) for spec in specs]
            for group, specs in groups.items()}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> set[str]:
    """Top-level modules imported anywhere under src/ (also inside functions)."""
    modules = set()
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"circle"}


def test_every_imported_package_is_a_declared_dependency():
    distributions = packages_distributions()
    runtime = set(declared()[""])
    missing = {module: distributions.get(module) for module in sorted(imported_modules())
               if not runtime & {normalise(d) for d in distributions.get(module, [module])}}
    assert not missing, f"imported by src/ but not in pyproject.toml dependencies: {missing}"


def test_every_declared_package_is_pinned_in_the_lock_files():
    pinned = {normalise(line.split("==")[0])
              for lock in ("requirements.lock.txt", "requirements-bible.lock.txt")
              for line in (ROOT / "envs" / lock).read_text().splitlines() if "==" in line}
    unpinned = {name for names in declared().values() for name in names} - pinned
    assert not unpinned, f"declared in pyproject.toml but not pinned in envs/: {unpinned}"


def test_nothing_tells_users_to_install_circle_from_pypi():
    texts = [*ROOT.glob("*.md"), *(ROOT / "resources").rglob("*.md"), *(ROOT / "config").glob(
        "*.md"), *(ROOT / "src").rglob("*.py")]
    advice = re.compile(r"pip install\s+['\"]?circle\b")
    assert not [str(path.relative_to(ROOT)) for path in texts
                if advice.search(path.read_text(encoding="utf-8"))]

"""Imports point one way (issue 17): ``metrics`` ← app core ← study-type logic ← generic
platform ← views. Every import counts, at module level or inside a function (relative ones
resolved), ``importlib.import_module`` / ``__import__`` of a literal name too; the imports between
``studyapp`` modules form no cycle, nor do those between ``metrics`` modules (a package's
``__init__``, which re-exports its modules, aside), and the generic platform reaches a study type
only through the registry (``studyapp.studytypes`` and its ``base``), never a type's package.

Layers, lowest first:

0. ``metrics``: the metric package; never imports ``studyapp``, ``streamlit`` or ``sqlmodel``.
1. app core (:data:`CORE`): configuration, database, accounts, safe text, images, charts —
   what a study type may build on.
2. study-type logic: the registry ``studyapp.studytypes``, its ``base`` and each type's package
   ``studyapp/studytypes/<type>/`` except its ``view`` module.
3. generic platform (:data:`PLATFORM`): specs, studies, assignment, exports, analysis,
   dashboard and the commands; it reaches a type only through the registry's hooks.
4. views: ``studyapp/views/``, ``studyapp/app.py``, the Streamlit helpers and the server process (:data:`VIEWS`) and
   each type's ``view`` module. Only these import ``streamlit``.

A new ``studyapp`` module outside ``studytypes/`` and ``views/`` has to be placed in a list
below, so its layer is a decision.
"""

from __future__ import annotations

import ast
from pathlib import Path

from projectpaths import ROOT

CORE = {"studyapp", "studyapp.config", "studyapp.models", "studyapp.migrations", "studyapp.storage",
        "studyapp.auth", "studyapp.accounts", "studyapp.inert", "studyapp.images", "studyapp.charts"}
PLATFORM = {"studyapp.study_spec", "studyapp.specs", "studyapp.studies", "studyapp.assignment", "studyapp.claim_order",
            "studyapp.adaptive", "studyapp.exports", "studyapp.analysis", "studyapp.dashboard",
            "studyapp.simulate", "studyapp.matrix_versions", "studyapp.scoring", "studyapp.overview",
            "studyapp.backup", "studyapp.ops", "studyapp.demo", "studyapp.demo_images",
            "studyapp.report_cache", "studyapp.cli", "studyapp.__main__", "studyapp.prolific",
            "studyapp.ppi_estimates"}
VIEWS = {"studyapp.app", "studyapp.ui", "studyapp.components", "studyapp.server"}
LAYER_NAMES = ("metrics", "app core", "study-type logic", "generic platform", "views")


def module_files() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) of ``metrics`` and ``studyapp``."""
    out = {}
    for package in ("metrics", "studyapp"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


MODULES = module_files()


def imports_of(name: str) -> set[str]:
    """Every module ``name`` imports anywhere in its file (``from a import b`` names ``a.b`` when
    that is a module of the project, else ``a``)."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (literal := dynamic_import(node, package)) is not None:
            found.add(literal)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source)
    return found


def dynamic_import(node: ast.AST, package: str) -> str | None:
    """The module of ``importlib.import_module("x")`` / ``import_module(".x", __package__)`` /
    ``__import__("x")`` with a literal name (relative ones resolved), else None."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if called not in ("import_module", "__import__"):
        return None
    name = node.args[0].value
    if name.startswith("."):
        dots = len(name) - len(name.lstrip("."))
        base = package.split(".")[:len(package.split(".")) - dots + 1]
        name = ".".join(base + [name.lstrip(".")])
    return name


def layer(name: str) -> int:
    if name == "metrics" or name.startswith("metrics."):
        return 0
    if name in CORE:
        return 1
    if name.startswith("studyapp.studytypes"):
        return 4 if name.endswith(".view") else 2
    if name in PLATFORM:
        return 3
    if name in VIEWS or name.startswith("studyapp.views."):
        return 4
    raise AssertionError(f"{name} has no layer: add it to CORE, PLATFORM or VIEWS in {__file__}")


def project_module(name: str) -> str | None:
    """The project module an import names (the longest known prefix), or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return ".".join(parts[:end])
    return None


def graph() -> dict[str, set[str]]:
    return {name: {m for m in map(project_module, imports_of(name)) if m and m != name} for name in MODULES}


def test_every_module_has_a_layer():
    for name in MODULES:
        layer(name)


def test_no_import_goes_to_a_higher_layer():
    upward = [f"{name} ({LAYER_NAMES[layer(name)]}) imports {target} ({LAYER_NAMES[layer(target)]})"
              for name, targets in graph().items() for target in sorted(targets)
              if layer(target) > layer(name)]
    assert not upward, "\n".join(upward)


def test_metrics_stands_alone():
    offending = [f"{name} imports {target}" for name in MODULES if layer(name) == 0
                 for target in sorted(imports_of(name))
                 if target.split(".")[0] in ("studyapp", "streamlit", "sqlmodel")]
    assert not offending, "\n".join(offending)


def test_only_views_import_streamlit():
    offending = [name for name in MODULES if layer(name) < 4
                 and any(t.split(".")[0] == "streamlit" for t in imports_of(name))]
    assert not offending, f"import streamlit outside the views: {offending}"


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a list of nodes (first repeated last), or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_studyapp_imports_form_no_cycle():
    studyapp = {name: {t for t in targets if t.startswith("studyapp")}
                for name, targets in graph().items() if name.startswith("studyapp")}
    cycle = find_cycle(studyapp)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_reports_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_platform_reaches_a_type_only_through_the_registry():
    registry = {"studyapp.studytypes", "studyapp.studytypes.base"}
    offending = [f"{name} imports {target}" for name, targets in graph().items() if layer(name) == 3
                 for target in sorted(targets) if target.startswith("studyapp.studytypes") and target not in registry]
    assert not offending, "\n".join(offending)


def test_metrics_imports_form_no_cycle():
    modules = {name: {t for t in targets if t.startswith("metrics") and not MODULES[t][1]}
               for name, targets in graph().items() if name.startswith("metrics")}
    cycle = find_cycle(modules)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_literal_importlib_imports_count(tmp_path):
    tree = ast.parse("import importlib\nimportlib.import_module('studyapp.views.console')\n"
                     "__import__('studyapp.cli')\nfrom importlib import import_module\n"
                     "import_module('.storage', __package__)\nimport_module(name)\n")
    found = {dynamic_import(node, "studyapp") for node in ast.walk(tree)} - {None}
    assert found == {"studyapp.views.console", "studyapp.cli", "studyapp.storage"}


def test_the_platform_does_not_import_the_metric_commands():
    """``metrics.commands`` are the command line's modules, not an API (the console imported
    ``compare_lines`` from ``metrics.commands._matrix``)."""
    offending = [f"{name} imports {target}" for name, targets in graph().items() if name.startswith("studyapp")
                 for target in sorted(targets) if target.startswith("metrics.commands")]
    assert not offending, "\n".join(offending)


def private(name: str) -> bool:
    """An implementation module of the metric package: a part of its name starts with one
    underscore (``metrics.detection._scoring``); packages and ``metrics.api`` are its public face."""
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def test_the_platform_imports_only_the_public_face_of_metrics():
    """Issue 32: ``studyapp`` imports ``metrics`` and its packages (``metrics.study``,
    ``metrics.core``, ...), whose ``__init__`` re-exports what the platform needs, never a
    private module (tests may)."""
    assert private("metrics.vocab._wordnet") and not private("metrics.vocab") and not private("metrics.__main__")
    offending = [f"{name} imports {target}" for name, targets in graph().items() if name.startswith("studyapp")
                 for target in sorted(targets) if target.startswith("metrics") and private(target)]
    assert not offending, "\n".join(offending)

"""Imports point one way: ``metrics`` ← app core ← study-type logic ← generic platform ← views,
and inside ``metrics`` core ← vocab / datasets ← detection ← evaluators ← diagnosis / study ← api ←
commands. Every import counts, at module level or inside a function (relative ones resolved),
``importlib.import_module`` / ``__import__`` of a literal name too, and so does a string constant
(not a docstring) that names a module of the project (``"studyapp.views.server"``,
``"package.module:ATTRIBUTE"``): no lower layer names an upper one; the imports between
``studyapp`` modules form no cycle, nor do those between ``metrics`` modules (a package's
``__init__``, which re-exports its modules, aside), and the generic platform reaches a study type
only through the registry (``studyapp.studytypes`` and its ``base``), never a type's package.

Layers, lowest first:

0. ``metrics``: the metric package; never imports ``studyapp``, ``streamlit`` or ``sqlmodel``.
1. app core (``studyapp/core/``): configuration, database, accounts, safe text, images, charts —
   what a study type may build on.
2. study-type logic: the registry ``studyapp.studytypes``, its ``base`` and each type's package
   ``studyapp/studytypes/<type>/``.
3. generic platform (``studyapp/platform/``): specs, studies, assignment, exports, analysis,
   dashboard and the commands; it reaches a type only through the registry's hooks.
4. views (``studyapp/views/``): the pages, the entry page, the Streamlit helpers, the server
   process and each type's view (``studyapp/views/studytypes/<type>.py``, found by the type's
   name through the entry-point group ``hoi_semantic_eval.study_views``). Only these import
   ``streamlit``.

A module's layer is the folder it sits in (:data:`LAYER_FOLDERS`), so placing a new module is
choosing its layer; a module directly in ``studyapp/`` fails the test. A lower layer reaches an
upper one only through entry points (the views of the study types) or files: ``serve`` runs the
server script ``studyapp/views/server.py`` and the entry page beside it by their paths, found from
the views folder next to the commands' package.

Inside the generic platform each module sits in a room (:data:`PLATFORM_ROOMS`), lowest first:
``specs`` (the spec model and checker), ``assignment`` (joining, claims, ratings, adaptive
collection, Prolific), ``records`` (studies, exports, simulated raters), ``launch`` (spec files,
uploads, demo), ``reporting`` (analysis, report, dashboard, estimates), ``operations`` (backup,
matrix versions, scoring) and ``commands`` (``python -m studyapp``). A module imports its own room
and lower ones; a module directly in ``studyapp/platform/`` (its ``__init__`` aside) fails.

Inside ``metrics`` (:data:`METRICS_LAYERS`), lowest first:

0. core: ``metrics.core`` and ``metrics._lazy`` — errors, option checks, readers, writers, the
   plugin loader.
1. vocab / datasets: ``metrics.vocab`` (WordNet, matching, similarity matrices), the dataset
   registry ``metrics.datasets`` and each dataset's ``_vocabulary``.
2. detection: ``metrics.detection`` (detections, boxes, AP, scores).
3. evaluators: the rest of each dataset package (its official evaluation, readers) and
   ``metrics.crosshoi``.
4. diagnosis / study: ``metrics.diagnosis``, ``metrics.study``, ``metrics.llm``, ``metrics.imsitu``.
5. api: ``metrics.api`` and the package's face ``metrics/__init__``.
6. commands: ``metrics.commands``, ``metrics.cli``, ``metrics.__main__``.

A module imports its own room (package, or a module listed on its own) and lower layers. A
name imported from a package that re-exports it (``from metrics import shoe_map``) counts as an
import of the module that defines it; a package's ``lazy_exports`` map imports each module it
names. The rooms form no cycle. :data:`KNOWN_METRICS_EDGES` lists, with its reason, each edge
the tree still has against this; the planted tests below show that an upward import, a lazy
export across layers, an ``importlib`` literal and a package cycle each fail.
"""

from __future__ import annotations

import ast
import re
import shutil
from functools import lru_cache
from pathlib import Path

from projectpaths import ROOT

#: The folders of the ``studyapp`` layers: a module's layer is the folder it sits in.
#: ``studyapp`` itself and ``studyapp.__main__`` (``python -m studyapp``) sit directly in the package.
LAYER_FOLDERS = {"core": 1, "studytypes": 2, "platform": 3, "views": 4}
PACKAGE_LAYERS = {"studyapp": 1, "studyapp.__main__": 3}
LAYER_NAMES = ("metrics", "app core", "study-type logic", "generic platform", "views")


def module_files(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) of ``metrics`` and ``studyapp``."""
    out = {}
    for package in ("metrics", "studyapp"):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
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
    if name in PACKAGE_LAYERS:
        return PACKAGE_LAYERS[name]
    parts = name.split(".")
    if parts[0] == "studyapp" and len(parts) > 1 and parts[1] in LAYER_FOLDERS:
        return LAYER_FOLDERS[parts[1]]
    raise AssertionError(f"{name} sits in no layer folder: move it into studyapp/core/, studyapp/platform/ or "
                         "studyapp/views/")


def project_module(name: str, modules: dict = MODULES) -> str | None:
    """The project module an import names (the longest known prefix), or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
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


#: A dotted name of the project in a string: ``studyapp.views.server``, ``studyapp.x.y:ATTRIBUTE``.
DOTTED_NAME = re.compile(r"(?<![\w.])(?:studyapp|metrics)(?:\.\w+)+")


def names_in_strings(tree: ast.AST) -> set[str]:
    """The project modules the string constants of ``tree`` name, docstrings (and any other string
    standing alone as a statement) aside."""
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return {module for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
            for text in DOTTED_NAME.findall(node.value) if (module := project_module(text))}


def upward_names(trees: dict[str, ast.AST]) -> list[str]:
    """Every string of a module (name -> its parsed file) that names a module of a higher layer."""
    return [f"{name} ({LAYER_NAMES[layer(name)]}) names {target} ({LAYER_NAMES[layer(target)]}) in a string"
            for name, tree in trees.items() for target in sorted(names_in_strings(tree)) if layer(target) > layer(name)]


def parsed(name: str, appended: str = "") -> ast.Module:
    return ast.parse(MODULES[name][0].read_text(encoding="utf-8") + appended)


def test_no_string_names_a_module_of_a_higher_layer():
    offending = upward_names({name: parsed(name) for name in MODULES})
    assert not offending, "\n".join(offending)


def test_a_planted_upward_name_in_a_string_fails():
    cli = "studyapp.platform.commands.cli"
    planted = ('\n\ndef planted():\n    """Starts ``studyapp.views.app``."""\n'
               '    return ["-m", "studyapp.views.server"], f"{cli}studyapp.views.studytypes.hoi_similarity:VIEW"\n')
    assert upward_names({cli: parsed(cli)}) == []
    assert upward_names({cli: parsed(cli, planted)}) == [
        f"{cli} (generic platform) names studyapp.views.server (views) in a string",
        f"{cli} (generic platform) names studyapp.views.studytypes.hoi_similarity (views) in a string"]


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


#: The rooms of the generic platform, lowest first: a module imports its own room and lower ones.
PLATFORM_ROOMS = ("specs", "assignment", "records", "launch", "reporting", "operations", "commands")


def platform_room(name: str) -> int:
    """The index in :data:`PLATFORM_ROOMS` of a ``studyapp.platform`` module's room."""
    parts = name.split(".")
    if len(parts) > 2 and parts[2] in PLATFORM_ROOMS:
        return PLATFORM_ROOMS.index(parts[2])
    raise AssertionError(f"{name} sits in no room of studyapp/platform/: move it into one of {PLATFORM_ROOMS}")


def platform_violations(edges: dict[str, set[str]]) -> list[str]:
    """Every import from a platform module to a module of a higher room."""
    def inside(name: str) -> bool:
        return name.startswith("studyapp.platform.")
    return [f"{name} ({PLATFORM_ROOMS[platform_room(name)]}) imports {target} "
            f"({PLATFORM_ROOMS[platform_room(target)]})"
            for name, targets in edges.items() if inside(name)
            for target in sorted(targets) if inside(target) and platform_room(target) > platform_room(name)]


def test_every_platform_module_sits_in_a_room():
    for name in MODULES:
        if name.startswith("studyapp.platform."):
            platform_room(name)
    try:
        platform_room("studyapp.platform.loose")
    except AssertionError as exc:
        assert "sits in no room" in str(exc)
    else:
        raise AssertionError("a module directly in studyapp/platform/ was given a room")


def test_no_platform_import_goes_to_a_higher_room():
    violations = platform_violations(graph())
    assert not violations, "\n".join(violations)


def test_a_planted_upward_platform_import_fails():
    planted = {"studyapp.platform.specs.spec_model": {"studyapp.platform.records.exports"},
               "studyapp.platform.commands.cli": {"studyapp.platform.specs.spec_model"}}
    assert platform_violations(planted) == [
        "studyapp.platform.specs.spec_model (specs) imports studyapp.platform.records.exports (records)"]


def test_metrics_imports_form_no_cycle():
    modules = {name: {t for t in targets if t.startswith("metrics") and not MODULES[t][1]}
               for name, targets in graph().items() if name.startswith("metrics")}
    cycle = find_cycle(modules)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_literal_importlib_imports_count(tmp_path):
    tree = ast.parse("import importlib\nimportlib.import_module('studyapp.views.console')\n"
                     "__import__('studyapp.platform.commands.cli')\nfrom importlib import import_module\n"
                     "import_module('.storage', __package__)\nimport_module(name)\n")
    found = {dynamic_import(node, "studyapp.core") for node in ast.walk(tree)} - {None}
    assert found == {"studyapp.views.console", "studyapp.platform.commands.cli", "studyapp.core.storage"}


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
    """``studyapp`` imports ``metrics`` and its packages (``metrics.study``,
    ``metrics.core``, ...), whose ``__init__`` re-exports what the platform needs, never a
    private module (tests may)."""
    assert private("metrics.vocab._wordnet") and not private("metrics.vocab") and not private("metrics.__main__")
    offending = [f"{name} imports {target}" for name, targets in graph().items() if name.startswith("studyapp")
                 for target in sorted(targets) if target.startswith("metrics") and private(target)]
    assert not offending, "\n".join(offending)


# ---------------------------------------------------------------------------- layers inside metrics
#: The layers of ``metrics``, lowest first, each with its rooms: packages (with their subpackages),
#: the modules directly in ``metrics/``, and modules that sit apart from their package's layer (a
#: dataset package's ``_vocabulary`` is a vocabulary, the rest of the package its evaluator). A
#: module imports its own room and lower layers only, and the rooms form no cycle.
METRICS_LAYERS = (
    ("core", {"metrics._lazy", "metrics.core"}),
    ("vocab / datasets", {"metrics.vocab", "metrics.datasets", "metrics.datasets.hico_det._vocabulary",
                          "metrics.datasets.vcoco._vocabulary", "metrics.datasets.swig_hoi._vocabulary"}),
    ("detection", {"metrics.detection"}),
    ("evaluators", {"metrics.datasets.hico_det", "metrics.datasets.vcoco", "metrics.datasets.swig_hoi",
                    "metrics.crosshoi"}),
    # imsitu aligns its criteria with human marks through the study's agreement statistics
    ("diagnosis / study", {"metrics.diagnosis", "metrics.study", "metrics.llm", "metrics.imsitu"}),
    ("api", {"metrics.api", "metrics"}),
    ("commands", {"metrics.commands", "metrics.cli", "metrics.__main__"}),
)
#: Room -> room edges the tree still has against the layers, each with its reason. They are left
#: out of both checks; test_the_known_metrics_edges_still_exist fails once one is gone, so that
#: its line goes too.
KNOWN_METRICS_EDGES: set[tuple[str, str]] = set()


def room(name: str) -> str:
    """The room of a ``metrics`` module: the longest of its names (itself, its packages) that
    :data:`METRICS_LAYERS` lists (``metrics`` itself only for its ``__init__``)."""
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        if any(".".join(parts[:end]) in members for _, members in METRICS_LAYERS):
            return ".".join(parts[:end])
    if name == "metrics":
        return name
    raise AssertionError(f"{name} has no layer: add its package to METRICS_LAYERS in {__file__}")


def metrics_layer(name: str) -> int:
    """The layer of a ``metrics`` module: its room's in :data:`METRICS_LAYERS`."""
    return next(level for level, (_, members) in enumerate(METRICS_LAYERS) if room(name) in members)


def resolve_relative(name: str, package: str) -> str:
    """``name`` (``"._scoring"``, ``"..study._ppi"`` or absolute) as an absolute module name."""
    dots = len(name) - len(name.lstrip("."))
    if not dots:
        return name
    base = package.split(".")[:len(package.split(".")) - dots + 1]
    return ".".join(base + [name.lstrip(".")])


def lazy_targets(tree: ast.Module, package: str) -> dict[str, str]:
    """Public name -> module of the ``lazy_exports(__name__, {...})`` maps of a package ``__init__``
    (the dict written in the call or assigned to a name before it; ``**dict.fromkeys(names, m)`` too)."""
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    found = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports" and len(node.args) > 1):
            continue
        mapping = assigned.get(getattr(node.args[1], "id", None), node.args[1])
        for key, value in zip(getattr(mapping, "keys", ()), getattr(mapping, "values", ())):
            if key is None and isinstance(value, ast.Call) and len(value.args) == 2:   # **dict.fromkeys(names, m)
                names, value = [e.value for e in getattr(value.args[0], "elts", ())], value.args[1]
            else:
                names = [key.value] if isinstance(key, ast.Constant) else []
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.update(dict.fromkeys(names, resolve_relative("." + value.value, package)))
    return found


def metrics_edges(modules: dict) -> dict[str, dict[str, str]]:
    """Module -> {imported module: how ("import", "lazy", "importlib")} of every ``metrics`` module.
    A name imported from a package that re-exports it (``from metrics import shoe_map``) counts as
    an import of the module that defines it; a package's lazy map imports each module it names."""
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, (path, _) in modules.items()
             if name.split(".")[0] == "metrics"}
    exports = {name: lazy_targets(tree, name) for name, tree in trees.items() if modules[name][1]}
    for name, tree in trees.items():
        if modules[name][1]:
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    source = resolve_relative("." * node.level + node.module, name)
                    exports[name].update({a.asname or a.name: f"{source}.{a.name}" if f"{source}.{a.name}" in modules
                                          else source for a in node.names})

    def defining(source: str, name: str, seen=()) -> str:
        if f"{source}.{name}" in modules:
            return f"{source}.{name}"
        target = exports.get(source, {}).get(name)
        if target is None or target == source or target in seen:
            return source
        return defining(target, name, (*seen, source)) if target in exports else target

    edges = {}
    for name, tree in trees.items():
        package = name if modules[name][1] else name.rpartition(".")[0]
        found = dict.fromkeys(exports.get(name, {}).values() if modules[name][1] else (), "lazy")
        for node in ast.walk(tree):
            if (literal := dynamic_import(node, package)) is not None:
                found[literal] = "importlib"
            elif isinstance(node, ast.Import):
                found.update(dict.fromkeys((a.name for a in node.names), "import"))
            elif isinstance(node, ast.ImportFrom):
                source = resolve_relative("." * node.level + (node.module or ""), package).rstrip(".")
                found.update({defining(source, a.name): "import" for a in node.names})
        edges[name] = {target: how for t, how in found.items()
                       if (target := project_module(t, modules)) in trees and target != name}
    return edges


def metrics_layer_violations(edges: dict[str, dict[str, str]]) -> list[str]:
    """Every import (:func:`metrics_edges`) from a ``metrics`` module to a higher layer, but the known ones."""
    out = []
    for name, targets in edges.items():
        for target, how in sorted(targets.items()):
            low, high = metrics_layer(name), metrics_layer(target)
            if high > low and (room(name), room(target)) not in KNOWN_METRICS_EDGES:
                out.append(f"{name} ({METRICS_LAYERS[low][0]}) imports {target} ({METRICS_LAYERS[high][0]}) by {how}")
    return out


def metrics_package_graph(edges: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import, the known edges left out."""
    rooms: dict[str, set[str]] = {}
    for name, targets in edges.items():
        source = room(name)
        rooms.setdefault(source, set()).update(
            r for t in targets if (r := room(t)) != source and (source, r) not in KNOWN_METRICS_EDGES)
    return rooms


@lru_cache(maxsize=1)
def tree_edges() -> dict[str, dict[str, str]]:
    return metrics_edges(MODULES)


def test_every_metrics_module_has_a_layer():
    for name in MODULES:
        if name.split(".")[0] == "metrics":
            metrics_layer(name)


def test_no_metrics_import_goes_to_a_higher_layer():
    violations = metrics_layer_violations(tree_edges())
    assert not violations, "\n".join(violations)


def test_metrics_packages_form_no_cycle():
    cycle = find_cycle(metrics_package_graph(tree_edges()))
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


def test_the_known_metrics_edges_still_exist():
    edges = {(room(name), room(target)) for name, targets in tree_edges().items() for target in targets}
    gone = KNOWN_METRICS_EDGES - edges
    assert not gone, f"remove {sorted(gone)} from KNOWN_METRICS_EDGES: the tree no longer has them"


def planted_edges(tmp_path: Path, plants: dict[str, str]) -> dict[str, dict[str, str]]:
    """The edges of a copy of ``metrics`` (its modules only) with ``plants`` (file -> text) appended."""
    shutil.copytree(ROOT / "metrics", tmp_path / "metrics", ignore=shutil.ignore_patterns("data", "__pycache__"))
    for file, text in plants.items():
        path = tmp_path / file
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + text, encoding="utf-8")
    return metrics_edges(module_files(tmp_path))


PLANTED_FUNCTION = "def _planted():\n    {}\n"


def test_a_planted_upward_import_fails(tmp_path):
    edges = planted_edges(tmp_path, {
        "metrics/vocab/_matching.py": PLANTED_FUNCTION.format("from metrics.detection import _ap"),
        "metrics/core/_errors.py": PLANTED_FUNCTION.format("from metrics import shoe_map"),   # a re-exported name
    })
    assert metrics_layer_violations(edges) == [
        "metrics.core._errors (core) imports metrics.api._detection (api) by import",
        "metrics.vocab._matching (vocab / datasets) imports metrics.detection._ap (detection) by import"]


def test_a_planted_lazy_export_across_layers_fails(tmp_path):
    edges = planted_edges(tmp_path, {"metrics/core/__init__.py": 'lazy_exports(__name__, {"ppi_mean": ".study._ppi"})'})
    assert metrics_layer_violations(edges) == [
        "metrics.core (core) imports metrics.study._ppi (diagnosis / study) by lazy"]


def test_a_planted_importlib_literal_fails(tmp_path):
    edges = planted_edges(tmp_path, {"metrics/detection/_boxes.py": PLANTED_FUNCTION.format(
        'import importlib; return importlib.import_module("metrics.datasets.vcoco._evaluation")')})
    assert metrics_layer_violations(edges) == [
        "metrics.detection._boxes (detection) imports metrics.datasets.vcoco._evaluation (evaluators) by importlib"]


def test_a_planted_package_cycle_fails(tmp_path):
    """``diagnosis`` imports ``study`` (its report's figures); ``study`` importing ``diagnosis`` back
    stays within one layer, so only the cycle check catches it."""
    edges = planted_edges(tmp_path, {"metrics/study/_agreement.py": PLANTED_FUNCTION.format(
        "from metrics.diagnosis import _scene")})
    assert metrics_layer_violations(edges) == []
    assert find_cycle(metrics_package_graph(edges)) == ["metrics.diagnosis", "metrics.study", "metrics.diagnosis"]
    assert find_cycle(metrics_package_graph(tree_edges())) is None

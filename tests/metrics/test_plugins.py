"""The plugin loader (``metrics.core._plugins``): the project's own entry points (its built-ins) and
other packages' load on first use, each on its own, so a broken one is skipped with one line
naming it and recorded while the others load; an entry point named otherwise than its object is
refused; ``HOI_PLUGINS_AUTOLOAD=0`` loads the built-ins only and ``HOI_PLUGINS_REQUIRE`` fails a
command whose required plugin did not load; ``python -m metrics plugins`` lists them all and exits
1 when one failed."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest
from projectpaths import ROOT

from metrics import datasets
from metrics.core import PluginGroup

GROUP = "hoi_semantic_eval.test_only"


def install(where, name, modules: dict[str, str], entry_points: str):
    """A distribution ``name`` 1.0 on a path entry ``where``: its modules and entry points."""
    for module, text in modules.items():
        (where / f"{module}.py").write_text(textwrap.dedent(text))
    dist = where / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    install(tmp_path, "testplugins", {
        "good_plugin": "VALUE = 41\n",
        "broken_plugin": "import no_such_module_here\n",
    }, f"""\
        [{GROUP}]
        good = good_plugin:VALUE
        broken = broken_plugin:VALUE
        missing = good_plugin:NOTHING
        odd = good_plugin:VALUE
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def add_integer(value, name):
    if name == "odd":
        raise ValueError("odd is refused by the registry")
    return value + 1


def test_each_entry_point_loads_on_its_own_and_a_broken_one_is_recorded(plugins, caplog):
    group = PluginGroup(GROUP, kind="number", add=add_integer)
    assert "good_plugin" not in sys.modules           # nothing loads before the first use
    with caplog.at_level(logging.WARNING, logger="metrics.plugins"):
        assert group.load() == {"good": 42}
    assert {r.name: r.status for r in group.records} == {"broken": "failed", "good": "loaded", "missing": "failed",
                                                         "odd": "failed"}
    problems = {r.name: r.problem for r in group.failures}
    assert problems["broken"] == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert problems["missing"].startswith("AttributeError") and "NOTHING" in problems["missing"]
    assert problems["odd"] == "ValueError: odd is refused by the registry"
    lines = caplog.messages
    assert len(lines) == 3 and all("\n" not in line for line in lines)
    assert lines[0] == ("number plugin broken = broken_plugin:VALUE (testplugins 1.0) skipped: "
                        "ModuleNotFoundError: No module named 'no_such_module_here'")
    assert group.load() == {"good": 42} and len(caplog.messages) == 3   # loaded once


def test_a_group_without_add_lists_without_importing(plugins):
    group = PluginGroup(GROUP, kind="number")
    assert group.load() == {} and {r.status for r in group.records} == {"listed"}
    assert "broken_plugin" not in sys.modules
    assert {r.source for r in group.records} == {"testplugins 1.0"}


TOY_DATASET = '''
from metrics.datasets import Dataset, get

HICO = get("hico-det")
DATASET = Dataset(name="toy", title="Toy", vocabulary=HICO.vocabulary, baseline_verb=HICO.baseline_path("v"),
                  baseline_object=HICO.baseline_path("n"))
WRONG_NAME = Dataset(name="other", title="Other", vocabulary=HICO.vocabulary,
                     baseline_verb=HICO.baseline_path("v"), baseline_object=HICO.baseline_path("n"))
'''


def run_metrics(env, *args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_broken_dataset_plugin_is_skipped_and_listed(tmp_path):
    install(tmp_path, "toydata", {"toydata": TOY_DATASET, "toybroken": "raise RuntimeError('bad release')\n"}, """\
        [hoi_semantic_eval.datasets]
        toy = toydata:DATASET
        broken = toybroken:DATASET
        vcoco = toydata:DATASET
        renamed = toydata:WRONG_NAME
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    vocab = run_metrics(env, "vocab", "--dataset", "toy", "--pos", "verb", "--json", str(tmp_path / "v.json"))
    assert vocab.returncode == 0, vocab.stderr
    assert json.loads((tmp_path / "v.json").read_text())["verbs"]["ride"] == "ride.v.01"
    skipped = [line for line in vocab.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 3 and skipped[0].startswith("dataset plugin broken = toybroken:DATASET (toydata 1.0) "
                                                       "skipped: RuntimeError: bad release")
    listed = run_metrics(env, "plugins", "--json", str(tmp_path / "p.json"))
    assert listed.returncode == 1, listed.stderr
    assert listed.stderr == ""                       # each failure is reported once, in the listing
    rows = json.loads((tmp_path / "p.json").read_text())
    status = {(r["kind"], r["name"], r["source"]): r["status"] for r in rows["plugins"]}
    assert status[("dataset", "toy", "toydata 1.0")] == "loaded"
    assert status[("dataset", "vcoco", "this project")] == "built in"
    assert status[("error type", "duplicate", "this project")] == "built in"
    assert sorted(r["name"] for r in rows["failed"]) == ["broken", "renamed", "vcoco"]
    assert "dataset plugin broken = toybroken:DATASET failed: RuntimeError: bad release" in listed.stdout


def test_without_plugins_the_datasets_are_the_built_in_ones():
    assert datasets.names() == datasets.builtin_names() == ["hico-det", "swig-hoi", "vcoco"]
    assert {r.status for r in datasets.PLUGINS.records} == {"built in"}


def test_the_built_ins_are_declared_as_entry_points_like_a_plugin():
    """The project's own datasets, error types and study types come from its entry points (read
    from the installed metadata), not from a list in the code."""
    from importlib.metadata import distribution

    declared = {(e.group, e.name): e.value for e in distribution("hoi-semantic-eval").entry_points}
    assert declared[("hoi_semantic_eval.datasets", "vcoco")] == "metrics.datasets.vcoco:DATASET"
    records = {(r.kind, r.name): r for r in datasets.PLUGINS.records}
    assert records[("dataset", "vcoco")].target == "metrics.datasets.vcoco:DATASET"
    assert records[("dataset", "vcoco")].source == "this project"
    from metrics import ERROR_REGISTRY
    assert {r.name for r in ERROR_REGISTRY.plugins.records if r.status == "built in"} == set(ERROR_REGISTRY.oracles)
    assert {name for group, name in declared if group == "hoi_semantic_eval.diagnosis_errors"} == \
        set(ERROR_REGISTRY.oracles)


NAMED = """
class Warmth:
    name = "warmth"
"""


def test_an_entry_point_named_otherwise_than_its_object_is_refused(tmp_path, monkeypatch, caplog):
    install(tmp_path, "renamed", {"warmth_plugin": NAMED}, f"""\
        [{GROUP}]
        again = warmth_plugin:Warmth
        warmth = warmth_plugin:Warmth
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    group = PluginGroup(GROUP, kind="study type", add=lambda obj, name: obj)
    with caplog.at_level(logging.WARNING, logger="metrics.plugins"):
        assert list(group.load()) == ["warmth"]
    failed = {r.name: r.problem for r in group.failures}
    assert failed == {"again": "ValueError: the entry point is named 'again' but its study type is named 'warmth'; "
                               "name the entry point 'warmth'"}
    assert len(caplog.messages) == 1


def test_autoload_off_loads_only_the_built_ins_and_the_required(plugins, monkeypatch):
    monkeypatch.setenv("HOI_PLUGINS_AUTOLOAD", "0")
    monkeypatch.delitem(sys.modules, "good_plugin", raising=False)   # another test may have loaded it
    group = PluginGroup(GROUP, kind="number", add=add_integer)
    assert group.load() == {}
    assert {r.status for r in group.records} == {"listed"} and "good_plugin" not in sys.modules
    monkeypatch.setenv("HOI_PLUGINS_REQUIRE", "test_only:good")
    group = PluginGroup(GROUP, kind="number", add=add_integer)
    assert group.load() == {"good": 42}
    assert {r.name: r.status for r in group.records}["broken"] == "listed"


def test_a_required_plugin_that_does_not_load_fails_the_command(tmp_path):
    install(tmp_path, "toydata", {"toybroken": "raise RuntimeError('bad release')\n"}, """\
        [hoi_semantic_eval.datasets]
        broken = toybroken:DATASET
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
           "HOI_PLUGINS_REQUIRE": "datasets:broken,datasets:absent"}
    done = run_metrics(env, "vocab", "--dataset", "hico-det", "--pos", "verb")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert lines == ["metrics vocab: error: HOI_PLUGINS_REQUIRE: required dataset plugins did not load "
                     "(absent: not installed; broken: RuntimeError: bad release)"], done.stderr


def test_a_failure_names_no_absolute_path(tmp_path, monkeypatch):
    install(tmp_path, "pathy", {"pathy": "VALUE = 1\n"}, f"""\
        [{GROUP}]
        module = pathy
        """)
    monkeypatch.syspath_prepend(str(tmp_path))

    def add_class(obj, name):
        if not isinstance(obj, type):
            raise TypeError(f"{obj!r} is not a class")
        return obj

    group = PluginGroup(GROUP, kind="number", add=add_class)
    group.load()
    (problem,) = [r.problem for r in group.failures]
    assert str(tmp_path) not in problem and problem == "TypeError: <module 'pathy' from 'pathy.py'> is not a class"

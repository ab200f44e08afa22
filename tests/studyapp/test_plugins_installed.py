"""Plugins that install: the wheel built from a clean checkout holds every package of the tree,
study types and datasets included (packages are found, not listed); a third-party package adds a
study type and a Diag-HOI error type through its entry points, seen by the commands as processes,
with no edit to the project; `simulate` answers on the type's own scale (a binary toy scale
failed with "response 4 is not on the scale"); and a third-party wheel with every kind of
plugin (a study type with its view), a study type and an error type in one module, and one broken plugin works in a fresh
virtual environment that has this project's wheel installed (its runtime requirements are the
test environment's own, on the path; ``tests/metrics/test_install_alone.py`` installs them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest
from installhelpers import build_wheel, pip
from projectpaths import ROOT
from test_plugin_type import SHOW_PARITY, SPEC, TOY_MODULE, TOY_VIEW_MODULE

from metrics.detection import Detections, write_jsonl

pytestmark = pytest.mark.slow

ERROR_MODULE = '''
from metrics.diagnosis import ErrorType


class LostPrediction(ErrorType):
    """A prediction with neither box right for any ground truth; its oracle removes it."""

    name, title, section, group, priority = "lost", "Lost prediction", "toy", "false_positive", 5.5

    def test(self, f):
        return ~f.human & ~f.object

    def fix(self, state, d):
        state.keep[d.kind == self.code] = False
'''


def test_a_wheel_from_a_clean_checkout_holds_every_package(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    wheel = build_wheel(clone, tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "ls-files", "metrics", "studyapp"], cwd=clone, capture_output=True,
                             text=True, check=True).stdout.split()
    packages = [p for p in tracked if p.endswith("__init__.py")]
    assert {"studyapp/studytypes/imsitu_correctness/__init__.py", "metrics/datasets/vcoco/__init__.py"} <= set(packages)
    missing = [p for p in tracked if p.endswith((".py", ".js", ".css", ".npz", ".csv", "py.typed")) and p not in names]
    assert not missing, f"not in the wheel: {missing}"


def plugin_path(tmp_path):
    """A package installed elsewhere: its module and a dist-info with the two entry points."""
    (tmp_path / "toyplugin.py").write_text(TOY_MODULE)             # one module per entry point
    (tmp_path / "toyplugin_errors.py").write_text(ERROR_MODULE)
    dist = tmp_path / "toyplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent("""\
        [hoi_semantic_eval.study_types]
        parity = toyplugin:Parity

        [hoi_semantic_eval.diagnosis_errors]
        lost = toyplugin_errors:LostPrediction
        """))
    return {**os.environ, "PYTHONPATH": str(tmp_path), "STUDYAPP_DB": str(tmp_path / "db.sqlite"),
            "STUDYAPP_EXPORTS": str(tmp_path / "exports")}


def run(env, *args):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_an_installed_plugin_adds_a_study_type_on_its_own_scale(tmp_path):
    env = plugin_path(tmp_path)
    (tmp_path / "parity.toml").write_text(SPEC)
    created = run(env, "studyapp", "create", str(tmp_path / "parity.toml"))
    assert created.returncode == 0, created.stderr
    assert "created study 'parity'" in created.stdout
    simulated = run(env, "studyapp", "simulate", "parity", "--k", "2")
    assert simulated.returncode == 2 and "simulate does not support 'parity'" in simulated.stderr
    without = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    assert "unknown study type 'parity'" in run(without, "studyapp", "export", "parity").stderr


def test_simulate_answers_on_the_types_scale(tmp_path):
    env = plugin_path(tmp_path)
    (tmp_path / "toyplugin.py").write_text((tmp_path / "toyplugin.py").read_text().replace(
        "    def attention_items(self, items, count):",
        "    def simulated_scores(self, fields_list):\n"
        "        return [4.0 * (f['number'] % 2 == 0) for f in fields_list]\n\n"
        "    def attention_items(self, items, count):"))
    (tmp_path / "parity.toml").write_text(SPEC)
    assert run(env, "studyapp", "create", str(tmp_path / "parity.toml")).returncode == 0
    simulated = run(env, "studyapp", "simulate", "parity", "--k", "2", "--noise", "0")
    assert simulated.returncode == 0, simulated.stderr
    assert run(env, "studyapp", "export", "parity", "--out", str(tmp_path / "out")).returncode == 0
    (ratings,) = (tmp_path / "out").rglob("ratings.csv")
    import pandas as pd
    rows = pd.read_csv(ratings)
    main = rows[rows["phase"] == "main"]
    items = pd.read_csv(ratings.parent / "items.csv").set_index("item_id")
    # neutral raters without noise: 4 for an even number -> 1 ("even"), 0 -> 0 ("odd"); the
    # strict rater's shift of 0.5 rounds back to the same end
    for row in main.itertuples():
        assert row.rating == int(items.loc[row.item_id, "number"] % 2 == 0), row


def test_an_installed_plugin_adds_a_diag_hoi_error_type(tmp_path):
    env = plugin_path(tmp_path)
    h, o, far = [0, 0, 10, 10], [20, 0, 30, 10], [200, 200, 210, 210]
    gt = Detections.from_arrays(["a", "b"], [h, h], [o, o], ["ride", "feed"], ["horse", "horse"])
    pred = Detections.from_arrays(["a", "a", "b", "b"], [h, far, h, far], [o, far, o, far],
                                  ["ride", "ride", "feed", "feed"], ["horse"] * 4, [0.9, 0.95, 0.8, 0.7])
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "pred.jsonl")
    args = ("metrics", "diagnose", "--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "pred.jsonl"),
            "--map-protocol", "all-point", "--json")
    done = run(env, *args, str(tmp_path / "with.json"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "with.json").read_text())
    assert result["error_counts"]["lost"] == 2 and result["error_counts"]["both_boxes"] == 0
    without = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    assert run(without, *args, str(tmp_path / "without.json")).returncode == 0
    assert "lost" not in json.loads((tmp_path / "without.json").read_text())["error_counts"]


TOY_DATASET = '''
import pandas as pd

from metrics.datasets import Dataset, Vocabulary, get

HICO = get("hico-det")


def vocabulary():
    verbs = pd.DataFrame({"label": ["pet", "feed"], "synset": ["pet.v.01", "feed.v.02"], "note": ["", ""]})
    hico = HICO.vocabulary()
    return Vocabulary("toy", verbs, hico.objects, hico.classes.iloc[:0])


DATASET = Dataset(name="toy", title="Toy", vocabulary=vocabulary, baseline_verb=HICO.baseline_path("v"),
                  baseline_object=HICO.baseline_path("n"))
'''

THIRD_PARTY = {
    "pyproject.toml": textwrap.dedent('''\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "hoi-toy-plugins"
        version = "1.0"

        [project.entry-points."hoi_semantic_eval.study_types"]
        parity = "hoi_toy_plugins.both:Parity"

        [project.entry-points."hoi_semantic_eval.study_views"]
        parity = "hoi_toy_plugins.views:VIEW"

        [project.entry-points."hoi_semantic_eval.diagnosis_errors"]
        lost = "hoi_toy_plugins.both:LostPrediction"
        broken = "hoi_toy_plugins.broken:NeedsMissingPackage"

        [project.entry-points."hoi_semantic_eval.datasets"]
        toy = "hoi_toy_plugins.data:DATASET"

        [tool.setuptools]
        packages = ["hoi_toy_plugins"]
        '''),
    "hoi_toy_plugins/__init__.py": '"""Toy plugins of every kind for hoi-semantic-eval."""\n',
    "hoi_toy_plugins/both.py": TOY_MODULE + ERROR_MODULE,       # a study type and an error type
    "hoi_toy_plugins/views.py": TOY_VIEW_MODULE,                 # the study type's view (Streamlit)
    "hoi_toy_plugins/data.py": TOY_DATASET,
    "hoi_toy_plugins/broken.py": "import hoi_toy_missing_dependency\n",
}


def test_a_third_party_wheel_with_every_kind_works_in_a_fresh_environment(tmp_path):
    source = tmp_path / "project"   # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".data", ".git", "exports", "test-artifacts", "__pycache__", "build", "*.egg-info"))
    ours = build_wheel(source, tmp_path / "ours")
    plugins = tmp_path / "hoi-toy-plugins"
    for name, text in THIRD_PARTY.items():
        (plugins / name).parent.mkdir(parents=True, exist_ok=True)
        (plugins / name).write_text(text)
    theirs = build_wheel(plugins, tmp_path / "theirs")
    env_dir = tmp_path / "venv"
    venv.create(env_dir)
    python = str(env_dir / "bin" / "python")
    # the runtime requirements: this venv's own, on the fresh one's path after its site-packages
    # (a plain path line: the editable install's .pth beside them is not run, so only the
    # wheels installed below answer for ``metrics``, ``studyapp`` and the plugins)
    fresh_site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
    (Path(fresh_site) / "runtime_requirements.pth").write_text(sysconfig.get_path("purelib") + "\n")
    work = tmp_path / "work"   # outside the project: only the installed packages can answer
    work.mkdir()
    # without PYTHONPATH: pip would take the project folder's editable install for this one
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "HOI_NLTK_DATA": str(ROOT / ".data" / "nltk_data"), "STUDYAPP_DB": str(work / "db.sqlite"),
           "STUDYAPP_EXPORTS": str(work / "exports")}
    install = pip(python, "install", "--no-deps", str(ours), str(theirs), env=env)
    assert install.returncode == 0, install.stderr[-2000:]

    def run_fresh(*args):
        return subprocess.run([python, *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)

    where = run_fresh("-c", "import metrics, studyapp, hoi_toy_plugins as t; print(metrics.__file__, t.__file__)")
    assert where.stdout.count(str(env_dir)) == 2, where.stdout + where.stderr

    listed = run_fresh("-m", "metrics", "plugins", "--json", "plugins.json")
    assert listed.returncode == 1 and listed.stderr == "", listed.stderr    # one plugin failed: said once
    rows = {(r["kind"], r["name"]): r for r in json.loads((work / "plugins.json").read_text())["plugins"]}
    assert {key: rows[key]["status"] for key in [("dataset", "toy"), ("error type", "lost"),
                                                ("error type", "broken"), ("study type", "parity"),
                                                ("study view", "parity")]} == {
        ("dataset", "toy"): "loaded", ("error type", "lost"): "loaded", ("error type", "broken"): "failed",
        ("study type", "parity"): "listed", ("study view", "parity"): "listed"}
    assert rows[("study view", "parity")]["target"] == "hoi_toy_plugins.views:VIEW"
    assert rows[("dataset", "toy")]["source"] == "hoi-toy-plugins 1.0"
    assert rows[("error type", "duplicate")]["status"] == "built in"
    why = "ModuleNotFoundError: No module named 'hoi_toy_missing_dependency'"
    assert rows[("error type", "broken")]["problem"] == why
    assert f"error type plugin broken = hoi_toy_plugins.broken:NeedsMissingPackage failed: {why}" in listed.stdout

    platform = run_fresh("-m", "studyapp", "plugins")
    assert platform.returncode == 1 and platform.stderr == "", platform.stderr
    parity = next(line.split() for line in platform.stdout.splitlines() if " parity " in line)
    assert parity[:5] == ["study", "type", "parity", "loaded", "hoi-toy-plugins"]
    view = next(line.split() for line in platform.stdout.splitlines() if line.startswith("study view  parity "))
    assert view[:5] == ["study", "view", "parity", "listed", "hoi-toy-plugins"]
    assert "hoi_toy_plugins.broken:NeedsMissingPackage failed" in platform.stdout

    h, o, far = [0, 0, 10, 10], [20, 0, 30, 10], [200, 200, 210, 210]
    write_jsonl(Detections.from_arrays(["a", "b"], [h, h], [o, o], ["ride", "feed"], ["horse", "horse"]),
                work / "gt.jsonl", with_scores=False)
    write_jsonl(Detections.from_arrays(["a", "a", "b", "b"], [h, far, h, far], [o, far, o, far],
                                       ["ride", "ride", "feed", "feed"], ["horse"] * 4, [0.9, 0.95, 0.8, 0.7]),
                work / "pred.jsonl")
    diagnosed = run_fresh("-m", "metrics", "diagnose", "--gt", "gt.jsonl", "--pred", "pred.jsonl",
                          "--map-protocol", "all-point", "--json", "diagnosis.json")
    assert diagnosed.returncode == 0, diagnosed.stderr
    assert diagnosed.stderr.splitlines() == [
        f"error type plugin broken = hoi_toy_plugins.broken:NeedsMissingPackage (hoi-toy-plugins 1.0) skipped: {why}"]
    counts = json.loads((work / "diagnosis.json").read_text())["error_counts"]
    assert counts["lost"] == 2 and counts["both_boxes"] == 0

    vocab = run_fresh("-m", "metrics", "vocab", "--dataset", "toy", "--pos", "verb", "--json", "vocab.json")
    assert vocab.returncode == 0, vocab.stderr
    assert json.loads((work / "vocab.json").read_text())["verbs"] == {"pet": "pet.v.01", "feed": "feed.v.02"}

    (work / "parity.toml").write_text(SPEC)
    created = run_fresh("-m", "studyapp", "create", "parity.toml")
    assert created.returncode == 0, created.stderr
    assert "created study 'parity'" in created.stdout
    shown = run_fresh("-c", SHOW_PARITY)
    assert shown.stdout.strip() == "[['p', {}, 'Number: ', ['strong', {}, '3']]]", shown.stderr

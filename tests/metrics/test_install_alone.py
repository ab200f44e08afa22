"""``metrics`` installs alone: ``pip install .`` (the project's uv) into a fresh, plain
virtual environment (no system site packages; dependencies from the package index) pulls
neither Streamlit nor the database stack nor matplotlib; scoring works there, from the
installed copy, and equals the project environment's result on the same files; ``import
studyapp`` names the missing Streamlit; ``diagnose --out``, which needs the ``report`` extra for
its plots, says so in one line and writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv

import pytest
from installhelpers import pip
from projectpaths import ROOT

APP_STACK = {"streamlit", "sqlalchemy", "sqlmodel", "psycopg", "psycopg-binary", "altair", "pillow", "matplotlib"}
GT = {"image": "a.jpg", "hois": [{"human_box": [0, 0, 10, 10], "object_box": [10, 10, 20, 20], "verb": "ride",
                                  "object": "horse"}]}


@pytest.mark.slow
def test_the_metric_package_installs_alone_in_a_fresh_venv(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("metrics", "studyapp"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = tmp_path / "env"
    venv.create(env_dir, system_site_packages=False)
    python = str(env_dir / "bin" / "python")
    start = time.perf_counter()
    install = pip(python, "install", str(source))
    assert install.returncode == 0, install.stderr[-2000:]
    print(f"install took {time.perf_counter() - start:.0f} s")
    listed = pip(python, "list", "--format", "json")
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "hoi-semantic-eval" in installed and not installed & APP_STACK, installed & APP_STACK

    run_env = {**os.environ, "HOI_NLTK_DATA": str(ROOT / ".data" / "nltk_data"), "PYTHONPATH": ""}
    work = tmp_path / "work"
    work.mkdir()
    (work / "gt.jsonl").write_text(json.dumps(GT) + "\n")
    pred = {**GT, "hois": [{**GT["hois"][0], "score": 0.9}]}
    (work / "pred.jsonl").write_text(json.dumps(pred) + "\n")

    def metrics(*args):
        return subprocess.run([python, "-m", "metrics", *args], cwd=work, capture_output=True, text=True,
                              env=run_env, timeout=600)
    done = metrics("score", "--gt", "gt.jsonl", "--pred", "pred.jsonl", "--json", "s.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((work / "s.json").read_text())["shoe_map"] == pytest.approx(1.0, abs=1e-6)
    from benchmarks.score_hico_scale import workload
    from metrics.detection._detections import write_jsonl

    gt, pred = workload(30, 100, 20, seed=1)
    write_jsonl(gt, work / "gt30.jsonl", with_scores=False)
    write_jsonl(pred, work / "pred30.jsonl")
    scored = {}
    for name, interpreter in (("fresh", python), ("ours", sys.executable)):
        done = subprocess.run([interpreter, "-m", "metrics", "score", "--gt", "gt30.jsonl", "--pred", "pred30.jsonl",
                               "--json", f"{name}.json"], cwd=work, capture_output=True, text=True, timeout=600,
                              env=run_env if name == "fresh" else None)
        assert done.returncode == 0, done.stderr[-2000:]
        scored[name] = json.loads((work / f"{name}.json").read_text())
    assert scored["fresh"] == scored["ours"]
    where = subprocess.run([python, "-c", "import metrics; print(metrics.__file__)"], cwd=work,
                           capture_output=True, text=True, env=run_env)
    assert str(env_dir) in where.stdout   # the installed copy, not the sources
    app = subprocess.run([python, "-c", "import studyapp.views.ui"], cwd=work, capture_output=True, text=True,
                         env=run_env)
    assert "No module named 'streamlit'" in app.stderr
    imported = subprocess.run([python, "-c", "import sys, metrics, metrics.api, metrics.datasets; "
                               "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                               "('streamlit', 'sqlalchemy', 'sqlmodel', 'studyapp', 'matplotlib')))"],
                              cwd=work, capture_output=True, text=True, env=run_env)
    assert imported.returncode == 0 and imported.stdout.strip() == "[]", imported.stderr
    report = metrics("diagnose", "--gt", "gt.jsonl", "--pred", "pred.jsonl", "--out", "report")
    assert report.returncode == 2 and report.stderr.count("\n") == 1, report.stderr
    assert report.stderr.startswith("metrics diagnose: error: argument --out: ")
    assert "matplotlib" in report.stderr and "pip install 'hoi-semantic-eval[report]'" in report.stderr
    assert not (work / "report").exists()
    assert sys.executable != python

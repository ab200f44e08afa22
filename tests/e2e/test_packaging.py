"""``pip install ./`` in a fresh virtual environment gives the metric package alone: a working
``python -m metrics score`` without Streamlit, SQLAlchemy or matplotlib, whose result equals
the one from the project's own environment on the same files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv

import pytest
from projectpaths import ROOT

from metrics.detection._detections import write_jsonl

pytestmark = pytest.mark.slow


def test_pip_install_gives_metrics_alone_with_a_working_score(tmp_path):
    from benchmarks.score_hico_scale import workload

    source = tmp_path / "source"   # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".data", ".git", "exports", "test-artifacts", "__pycache__", "build", "*.egg-info"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              str(source)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]

    gt, pred = workload(30, 100, 20, seed=1)
    work = tmp_path / "work"   # outside the project: only the installed package can answer
    work.mkdir()
    write_jsonl(gt, work / "gt.jsonl", with_scores=False)
    write_jsonl(pred, work / "pred.jsonl")
    args = ["-m", "metrics", "score", "--gt", "gt.jsonl", "--pred", "pred.jsonl", "--json"]
    fresh = subprocess.run([str(python), *args, "fresh.json"], cwd=work, capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    ours = subprocess.run([sys.executable, *args, "ours.json"], cwd=work, capture_output=True, text=True)
    assert ours.returncode == 0, ours.stderr[-2000:]
    assert json.loads((work / "fresh.json").read_text()) == json.loads((work / "ours.json").read_text())

    where = subprocess.run([str(python), "-c", "import metrics; print(metrics.__file__)"], cwd=work,
                           capture_output=True, text=True)
    assert str(env_dir) in where.stdout   # the installed copy, not the sources
    for absent in ("streamlit", "sqlalchemy", "matplotlib"):   # the extras `app`, `report`
        probe = subprocess.run([str(python), "-c", f"import {absent}"], cwd=work, capture_output=True, text=True)
        assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr, absent
    # the app's code is in the wheel, its dependencies are not: it says which one is missing
    probe = subprocess.run([str(python), "-c", "import studyapp.views.ui"], cwd=work, capture_output=True, text=True)
    assert "No module named 'streamlit'" in probe.stderr

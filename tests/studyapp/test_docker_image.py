"""The image as the Dockerfile builds it: no tests or benchmarks inside, the project installed
from a wheel, the app answering its health check, and a source edit rebuilding only the layers
after the dependencies and WordNet. Needs a Docker engine; skips where none answers."""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
import uuid

import pytest
from projectpaths import ROOT

pytestmark = pytest.mark.slow


def docker(*args: str, timeout: float = 1800, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=check)


@pytest.fixture(scope="module")
def engine():
    if shutil.which("docker") is None or docker("info", timeout=30, check=False).returncode != 0:
        pytest.skip("no Docker engine answers on this machine")


def build(tag: str, context) -> str:
    done = docker("build", "--progress=plain", "-t", tag, str(context))
    return done.stdout + done.stderr


def test_the_image_holds_no_tests_and_serves(engine, tmp_path):
    tag = f"studyapp-test-{uuid.uuid4().hex[:8]}"
    build(tag, ROOT)
    try:
        listing = docker("run", "--rm", tag, "sh", "-c",
                         "ls /app; python3 -c 'import studyapp, metrics; print(studyapp.__file__)'").stdout
        assert "tests" not in listing.split() and "benchmarks" not in listing.split()
        assert "site-packages/studyapp" in listing
        name = f"{tag}-run"
        docker("run", "-d", "--name", name, "-p", "127.0.0.1:8597:8501", tag)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:8597/_stcore/health", timeout=4) as answer:
                        assert answer.status == 200
                        break
                except OSError:
                    assert time.monotonic() < deadline, docker("logs", name, check=False).stdout
                    time.sleep(2)
        finally:
            docker("rm", "-f", name, check=False)
    finally:
        docker("rmi", "-f", tag, check=False)


def test_a_source_edit_rebuilds_only_the_source_layers(engine, tmp_path):
    context = tmp_path / "context"
    shutil.copytree(ROOT, context, ignore=shutil.ignore_patterns(".venv", ".data", ".git", "__pycache__", "exports",
                                                                   "tests", "benchmarks", "test-artifacts"))
    tag = f"studyapp-test-{uuid.uuid4().hex[:8]}"
    build(tag, context)
    try:
        module = context / "studyapp" / "core" / "config.py"
        module.write_text(module.read_text() + "\n# an edit\n")
        log = build(tag, context)
        cached = {line for line in log.splitlines() if "CACHED" in line}
        assert any("requirements.txt" in line for line in cached), log
        assert any("install_wordnet.py --data-only" in line for line in cached), log
    finally:
        docker("rmi", "-f", tag, check=False)

"""The linter and the type checker run with the tests, so in CI: ruff with the settings of
pyproject.toml (syntax errors, pyflakes, McCabe complexity at most 10) passes on the whole tree,
mypy with its ``[tool.mypy]`` settings passes on ``metrics``, and each catches what it is set
to catch."""

from __future__ import annotations

import subprocess
import sys

from projectpaths import ROOT


def ruff(*args: str, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_tree_passes_the_linter():
    done = ruff(".")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_linter_catches_an_unused_import_and_a_complex_function(tmp_path):
    bad = tmp_path / "probe.py"
    branches = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(21))
    bad.write_text("import os\n\n\ndef f(x):\n" + branches + "    return -1\n")
    done = ruff("--config", str(ROOT / "pyproject.toml"), str(bad), cwd=tmp_path)
    assert done.returncode == 1 and "F401" in done.stdout and "C901" in done.stdout, done.stdout


def test_the_complexity_limit_is_ten(tmp_path):
    # n if-statements make a function of complexity n + 1: 9 pass, 10 are one too many
    for n_ifs, flagged in ((9, False), (10, True)):
        probe = tmp_path / f"probe{n_ifs}.py"
        branches = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(n_ifs))
        probe.write_text("def f(x):\n" + branches + "    return -1\n")
        done = ruff("--config", str(ROOT / "pyproject.toml"), str(probe), cwd=tmp_path)
        assert (done.returncode == 1 and f"({n_ifs + 1} > 10)" in done.stdout) == flagged, done.stdout
        assert done.returncode == (1 if flagged else 0), done.stdout


def mypy(*args: str, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_the_metric_package_passes_the_type_checker():
    done = mypy()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_type_checker_catches_a_wrong_type(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def half(x: int) -> int:\n    return x / 2\n")
    done = mypy("--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
                str(probe), cwd=tmp_path)
    assert done.returncode == 1 and "probe.py:2: error: Incompatible return value type" in done.stdout, done.stdout

"""``studyapp serve``'s server process imports the pages' modules before Streamlit starts
(``studyapp.server``), without needing Streamlit's runtime: the first browser session after a
start does not wait for them. The served app itself is exercised by every browser test
(``tests.browserhelpers.running_app`` starts this command)."""

from __future__ import annotations

import subprocess
import sys

from projectpaths import ROOT
from studyapp import cli, server

CODE = """
import sys
from studyapp import server
server.preload()
heavy = ("altair", "scipy.stats", "sqlmodel", "studyapp.dashboard", "metrics.study.report")
print(",".join(name for name in heavy if name not in sys.modules) or "all loaded")
print("streamlit" in sys.modules)
"""


def test_serve_runs_streamlit_through_the_preloading_process():
    command = cli.streamlit_command(8599, "127.0.0.1")
    assert command[1:5] == ["-m", "studyapp.server", "run", str(cli.APP)]


def test_preloading_imports_the_heavy_modules_without_streamlit():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["all", "loaded", "False"]
    assert all(name.startswith(("studyapp.", "metrics.")) for name in server.PRELOADED)

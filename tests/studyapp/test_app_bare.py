"""The entry page run in bare mode, outside a server: a process that multiprocessing's spawn
starts re-runs the parent's main module, and in a process where Streamlit ran the app (AppTest,
a test worker) that module is ``app.py``. It must run through quietly there (a component has
no server to declare its files to); when it raised, a ``Pool`` kept replacing its dead workers
and the benchmark that used it never returned."""

import subprocess
import sys

from projectpaths import ROOT


def test_the_entry_page_runs_in_bare_mode():
    run = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('studyapp/views/app.py', "
                          "run_name='__mp_main__')"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr

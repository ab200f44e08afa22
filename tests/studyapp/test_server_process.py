"""``studyapp serve``'s server process imports the pages' modules before Streamlit starts
(``studyapp/views/server.py``), without needing Streamlit's runtime: the first browser session after a
start does not wait for them. The served app itself is exercised by every browser test
(``tests.browserhelpers.running_app`` starts this command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from projectpaths import ROOT

from studyapp.platform.commands import cli
from studyapp.views import server

CODE = """
import sys
from studyapp.views import server
server.preload()
heavy = ("altair", "scipy.stats", "sqlmodel", "studyapp.platform.reporting.dashboard", "metrics.study._report", "metrics.study._shoe_pool")
print(",".join(name for name in heavy if name not in sys.modules) or "all loaded")
print("streamlit" in sys.modules)
"""


def test_serve_runs_streamlit_through_the_preloading_process():
    command = cli.streamlit_command(8599, "127.0.0.1")
    assert command[1:4] == [str(cli.SERVER), "run", str(cli.WEB)]
    assert (cli.SERVER, cli.WEB, cli.APP) == (ROOT / "studyapp" / "views" / "server.py", ROOT / "studyapp" / "views" / "web.py",
                                              ROOT / "studyapp" / "views" / "app.py")
    assert cli.SERVER.resolve() == Path(server.__file__).resolve()


def test_preloading_imports_the_heavy_modules_without_streamlit():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["all", "loaded", "False"]
    assert all(name.startswith(("studyapp.", "metrics.")) for name in server.PRELOADED)


def test_warm_up_computes_each_rated_studys_dashboard_once(tmp_path, monkeypatch):
    """``dashboard.warm`` (the server's background thread) fills the cache for studies with
    ratings only; a console session and the warm-up asking at once compute it once."""
    import threading

    from studyhelpers import make_study

    from studyapp.platform.records.simulate import simulate_study
    from studyapp.platform.reporting import dashboard

    make_study(tmp_path, n_items=6, raters=2, slug="rated")
    simulate_study("rated", k=2, seed=1)
    (tmp_path / "b").mkdir()
    make_study(tmp_path / "b", n_items=4, raters=2, slug="empty")
    computed = []
    compute = dashboard.compute_dashboard

    def counted(study, *args, **kwargs):
        computed.append(study.slug)
        return compute(study, *args, **kwargs)

    monkeypatch.setattr(dashboard, "compute_dashboard", counted)
    dashboard._CACHE.clear()
    sessions = [threading.Thread(target=dashboard.study_dashboard, args=("rated",)) for _ in range(3)]
    for thread in sessions:
        thread.start()
    assert dashboard.warm() == ["rated"]          # "empty" has no ratings: left to the console
    for thread in sessions:
        thread.join()
    assert computed == ["rated"]                   # four callers, one computation
    board = dashboard.study_dashboard("rated")
    assert computed == ["rated"] and board.progress["ratings_done"] == 12   # 6 items x 2 raters


def test_warm_up_in_a_child_process_fills_this_processs_cache(tmp_path, monkeypatch):
    """The server's warm-up computes in a child process (this one's interpreter stays free for
    the annotators' pages) and keeps its dashboards here: the same figures as computed here.
    The child runs at this process's priority: at the server's ``WARM_NICENESS`` it yields to
    every other test worker and waits minutes for the CPU on a busy test machine."""
    from studyhelpers import make_study

    from studyapp.platform.records.simulate import simulate_study
    from studyapp.platform.reporting import dashboard

    monkeypatch.setattr(dashboard, "WARM_NICENESS", 0)
    make_study(tmp_path, n_items=6, raters=2, slug="rated")
    simulate_study("rated", k=2, seed=1)
    dashboard._CACHE.clear()
    assert dashboard.warm_in_child() == ["rated"]
    (key, board), = dashboard._CACHE.items()
    assert key[1] == "rated" and board.progress["ratings_done"] == 12
    fresh = dashboard.compute_dashboard(*_study_and_fingerprint("rated"))
    assert board.fingerprint == fresh.fingerprint
    assert board.annotators.equals(fresh.annotators) and board.unavailable == fresh.unavailable
    assert dashboard.study_dashboard("rated") is board   # nothing new: not computed again


def test_no_warm_up_process_starts_while_no_study_has_ratings(tmp_path, monkeypatch):
    """A server whose studies have no ratings yet (a new one's case) starts no warm-up child."""
    from studyhelpers import make_study

    from studyapp.platform.reporting import dashboard

    make_study(tmp_path, n_items=4, raters=2, slug="empty")
    started = []
    monkeypatch.setattr(dashboard.subprocess, "run", lambda *args, **kwargs: started.append(args))
    assert dashboard.warm_in_child() == [] and started == []


def _study_and_fingerprint(slug: str):
    from sqlmodel import select

    from studyapp.core import storage
    from studyapp.core.models import Study
    from studyapp.platform.reporting import dashboard

    with storage.read_session() as session:
        study = session.exec(select(Study).where(Study.slug == slug)).one()
    return study, dashboard.ratings_fingerprint(study.id)


PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "from studyapp.core.children import exit_with_parent; "
                          "exit_with_parent(0.1); print('watching', flush=True); import time; time.sleep(120)"])
print(child.pid, flush=True)
time.sleep(120)
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "\nState:\tZ" not in status.read()   # an unreaped zombie has ended
    except FileNotFoundError:
        return False


def test_a_warm_up_child_ends_when_the_server_is_killed():
    """The warm-up children call ``exit_with_parent``: a SIGKILLed server (nothing of it runs
    to stop them) does not leave them computing."""
    import os
    import signal
    import time

    import pytest

    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to see the child")
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = {parent.stdout.readline().strip() for _ in range(2)}   # the parent's and the child's, either first
    assert "watching" in lines, lines                               # the child watches its parent
    child = int(next(line for line in lines if line != "watching"))
    assert _running(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(child)
    from studyapp.platform.reporting import dashboard
    assert "exit_with_parent()" in dashboard._WARM_CODE

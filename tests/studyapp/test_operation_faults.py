"""Faults during restore, recalibrate, matrix versions and the report cache.

The probes of the other fault tests (a database that is full, read-only or loses its
connection; a disk that fills when an output is named; a process killed mid-write) applied to
``studyapp restore``, ``studyapp recalibrate`` (which saves a matrix version), ``studyapp
matrices export`` and ``studyapp report`` (which fills the report cache). After each fault the
previous state is intact -- every file under the world's folder and every database row -- and
the same command, run again without the fault, succeeds.

The database faults are SQLite's own: ``PRAGMA max_page_count`` at the current size (SQLITE_FULL,
"database or disk is full"), ``PRAGMA query_only`` (a read-only database) and a statement that
fails as a dropped connection does. The disk fills (ENOSPC) when an output is named.
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faults import COMMANDS, Refusal, check_refused, expand, run_in_process, state, world, world_template  # noqa: F401
from projectpaths import ROOT
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

# what a complete run of the operation writes: (database file, table), or a whole database file
WRITES = {"restore": {"out/restored.sqlite"},
          "recalibrate": {("studyapp.sqlite", "matrix_version"), ("studyapp.sqlite", "event")}}

OPERATIONS = {
    "restore": "restore",
    "recalibrate": "studyapp recalibrate",
    "matrix-version-export": "matrices export",
    "report-cache": "report",
}


def prepare(operation: str, world: dict, capsys) -> list[str]:
    """The command line of ``operation``: two simulated annotators rate every item of study
    ``t`` first (an analysis needs them: the report includes them beside alice, the one person);
    a matrix version ``v1`` is saved first for the export."""
    if operation != "restore":
        status, _out, err = run_in_process("studyapp", expand(COMMANDS["simulate"][1], world), capsys)
        assert status == 0, err
    if operation == "matrix-version-export":
        status, _out, err = run_in_process("studyapp", expand(COMMANDS["studyapp recalibrate"][1], world), capsys)
        assert status == 0, err
    extra = ["--include-simulated"] if operation == "report-cache" else []
    return expand(COMMANDS[OPERATIONS[operation]][1] + extra, world)


class DatabaseFault:
    """Every SQLite connection opened while it is on gets the fault (``full``, ``read-only``) or
    loses its connection at the ``after``-th statement (``lost``)."""

    def __init__(self, kind: str, after: int = 3):
        self.kind, self.after, self.seen = kind, after, 0

    def __enter__(self):
        from studyapp.core import storage
        storage.dispose_all()  # connections opened before the fault are not reused
        event.listen(Engine, "connect", self._connect)
        event.listen(Engine, "before_cursor_execute", self._statement)
        return self

    def __exit__(self, *exc):
        from studyapp.core import storage
        event.remove(Engine, "connect", self._connect)
        event.remove(Engine, "before_cursor_execute", self._statement)
        storage.dispose_all()

    def _connect(self, dbapi_conn, _record):
        if not isinstance(dbapi_conn, sqlite3.Connection):
            return
        cursor = dbapi_conn.cursor()
        if self.kind == "full":
            (pages,) = cursor.execute("PRAGMA page_count").fetchone()
            cursor.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        elif self.kind == "read-only":
            cursor.execute("PRAGMA query_only = 1")
        cursor.close()

    def _statement(self, conn, cursor, statement, params, context, executemany):
        if self.kind == "lost" and not statement.lstrip().upper().startswith("PRAGMA"):
            self.seen += 1
            if self.seen >= self.after:
                raise OperationalError(statement, params, Exception("server closed the connection unexpectedly"))


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", str(args[-1]) if args else None)


def _check_after(operation: str, world: dict, status: int, out: str, err: str, before: dict) -> None:
    assert "Traceback" not in err, err
    if status != 0:  # refused: one line, and nothing written or changed
        check_refused(status, out, err, Refusal([]), operation)
        assert state(Path(world["w"])) == before, f"{operation}: the previous state changed"


def _retry_succeeds(operation: str, argv: list[str], world: dict, capsys) -> None:
    status, out, err = run_in_process("studyapp", argv, capsys)
    assert status == 0, f"{operation}: the retry failed: {err}"
    _complete(operation, world)


def _complete(operation: str, world: dict) -> None:
    """The operation's result is there, whole, and no temporary is left."""
    root = Path(world["w"])
    if operation == "restore":
        rows = sqlite3.connect(root / "out" / "restored.sqlite").execute("SELECT slug FROM study").fetchall()
        assert rows == [("t",)]
    elif operation == "recalibrate":
        names = sqlite3.connect(root / "studyapp.sqlite").execute("SELECT name FROM matrix_version").fetchall()
        assert names == [("v1",)]
    elif operation == "matrix-version-export":
        assert {"object.csv", "object.npz", "provenance.json", "verb.csv", "verb.npz"} <= {
            p.name for p in (root / "out" / "m").iterdir()}
    else:
        reports = root / "out" / "reports" / "t"
        assert len(list(reports.glob("*/report/report.html"))) >= 1
        assert len(list((reports / ".report-cache").glob("*/report.html"))) == 1
    leftovers = [p for p in root.rglob(".*") if p.name != ".report-cache"]
    assert not leftovers, leftovers


@pytest.mark.parametrize("fault", ["full", "read-only", "lost"])
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_database_fault_leaves_the_previous_state_and_a_retry_succeeds(world, capsys, operation, fault):
    argv = prepare(operation, world, capsys)
    before = state(Path(world["w"]))
    with DatabaseFault(fault):
        status, out, err = run_in_process("studyapp", argv, capsys)
    _check_after(operation, world, status, out, err, before)
    if operation in ("restore", "recalibrate") and fault != "lost":
        assert status == 2  # both write rows: a full or read-only database must refuse them
    if fault == "lost":
        assert status == 2 and "server closed the connection" in err
    if status == 0:  # a read-only database does not stop a command that only reads it
        _complete(operation, world)
    _retry_succeeds(operation, argv, world, capsys)


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_disk_that_fills_when_the_output_is_named(world, capsys, monkeypatch, operation):
    argv = prepare(operation, world, capsys)
    before = state(Path(world["w"]))
    with monkeypatch.context() as patch:
        for name in ("link", "rename", "replace"):
            patch.setattr(os, name, _disk_full)
        status, out, err = run_in_process("studyapp", argv, capsys)
    _check_after(operation, world, status, out, err, before)
    if operation in ("restore", "recalibrate"):  # they write rows only (the full database: above)
        assert status == 0, err
        _complete(operation, world)
    else:
        assert status == 2 and "no space left on device" in err.lower()
        _retry_succeeds(operation, argv, world, capsys)


def _duration(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "studyapp", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


@pytest.mark.slow
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_killed_part_way_leaves_the_previous_state_and_a_retry_succeeds(world, world_template, tmp_path, capsys,
                                                                        operation):
    """SIGKILL at moments spread over a normal run of the command, as a real process: the
    database rows are those of before (or, killed after the commit, those of a complete run),
    and the next run succeeds and leaves no temporary behind."""
    import shutil
    argv = prepare(operation, world, capsys)
    root = Path(world["w"])
    env = {**os.environ, "STUDYAPP_DB": world["studyapp.sqlite"], "PYTHONPATH": str(ROOT)}
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    full = _duration(argv, env)
    for fraction in (0.3, 0.6, 0.85):
        shutil.rmtree(root)
        shutil.copytree(pristine, root)
        before = state(root)
        proc = subprocess.Popen([sys.executable, "-m", "studyapp", *argv], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=full * fraction)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        after = state(root)
        if after["rows"].get("out/restored.sqlite") == {}:  # a restore killed before its commit:
            del after["rows"]["out/restored.sqlite"]     # an empty database file, as good as none
        done = after["rows"] != before["rows"]
        if done:  # killed after the commit: only what a complete run writes changed (times differ)
            assert operation in ("restore", "recalibrate"), f"{operation} killed at {fraction} changed rows"
            for db, tables in after["rows"].items():
                for table, rows in tables.items():
                    if db not in WRITES[operation] and (db, table) not in WRITES[operation]:
                        assert rows == before["rows"].get(db, {}).get(table), (operation, fraction, db, table)
        _retry_or_done(operation, argv, world, capsys, done=done)


def _retry_or_done(operation, argv, world, capsys, done: bool) -> None:
    if done and operation in ("restore", "recalibrate"):  # the kill came after the commit
        _complete(operation, world)
        return
    _retry_succeeds(operation, argv, world, capsys)


def test_a_report_killed_in_its_own_folder_leaves_nothing_after_the_next_run(world, capsys):
    """A run killed after it made ``<study>/<timestamp>/`` and its hidden temporary folder (the
    next run has another timestamp, so the sweep beside its own output never saw them)."""
    argv = prepare("report-cache", world, capsys)
    abandoned = Path(world["w"]) / "out" / "reports" / "t" / "20300101T000000Z"
    (abandoned / ".report.999999999.abcd1234.tmp").mkdir(parents=True)
    (abandoned / ".report.999999999.abcd1234.tmp" / "report.html").write_text("half")
    _retry_succeeds("report-cache", argv, world, capsys)
    assert not abandoned.exists()

"""Killed while writing: ``score --json``, ``export`` and ``backup`` as real processes.

Each command first writes a result; then it runs again and is killed mid-write, many times:

- at exact moments, found with an audit hook (PEP 578) the test installs in the child process
  only: when the output's temporary file is opened, when its complete content is about to be
  named, when it is about to be renamed into place (for ``export``: when its temporary folder
  is made, while its files are written, when it is about to be renamed into place). There the
  child says READY and waits; the test sends SIGKILL (nothing can clean up) or SIGTERM (the
  command line's handler removes what it started);
- at random moments of a run (SIGKILL).

After every kill the previous result is still there, byte for byte (or, after a random kill
that came late, the new result complete); after SIGTERM no temporary file or folder is left;
after SIGKILL none is left once the next run of the command has finished (the unnamed
``O_TMPFILE`` of a single file leaves nothing even before).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from faults import COMMANDS, expand, world, world_template  # noqa: F401 (fixtures)
from projectpaths import ROOT

pytestmark = pytest.mark.slow

BOOT = r"""
import os, runpy, sys, time
module, point, nth, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), os.path.realpath(sys.argv[4])
sys.argv = [module] + sys.argv[5:]
seen = 0

def inside(path):
    return isinstance(path, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(path)).startswith(target)

def hook(event, args):
    global seen
    hit = ((point == "tmpfile" and event == "open" and args[2] is not None and inside(args[0])
            and args[2] & os.O_TMPFILE == os.O_TMPFILE)
           or (point == "link" and event == "os.link" and inside(args[1]))
           or (point == "rename" and event == "os.rename" and inside(args[1]))
           or (point == "mkdir" and event == "os.mkdir" and inside(args[0])
               and os.path.basename(os.fsdecode(args[0])).startswith("."))
           or (point == "file" and event == "open" and inside(args[0]) and "/." in os.fsdecode(args[0])
               and os.fsdecode(args[0]).endswith("ratings_history.csv")))
    if hit:
        seen += 1
        if seen == nth:
            sys.stderr.write("READY\n")
            sys.stderr.flush()
            time.sleep(120)

sys.addaudithook(hook)
runpy.run_module(module, run_name="__main__")
"""


def start(module: str, argv: list[str], point: str, nth: int, target: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", BOOT, module, point, str(nth), str(target), *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def kill_at(module, argv, point, nth, target, env, sig) -> tuple[int, str]:
    proc = start(module, argv, point, nth, target, env)
    line = proc.stderr.readline()
    assert line.strip() == "READY", f"never reached {point}#{nth}: {line}{proc.stderr.read()}"
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return proc.returncode, proc.stderr.read()


def kill_after(module, argv, delay, env) -> int:
    proc = subprocess.Popen([sys.executable, "-m", module, *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=60)
    return proc.returncode


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*"))


def timed_run(module, argv, env) -> float:
    start_time = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start_time


KILL_POINTS = {  # command -> [(point, occurrence)]: occurrence 1 of "tmpfile" is the option check's probe
    "score": [("tmpfile", 2), ("link", 1), ("rename", 1)],
    "backup": [("tmpfile", 2), ("link", 1), ("rename", 1)],
    "export": [("mkdir", 1), ("file", 1), ("rename", 1)],
}
RANDOM_KILLS = 4


def setup(command: str, world: dict) -> tuple[str, list[str], Path, dict]:
    module, base = COMMANDS[command]
    argv = expand(base, world)
    env = {**os.environ, "STUDYAPP_DB": world["studyapp.sqlite"], "PYTHONPATH": str(ROOT)}
    target = {"score": Path(world["out"]), "backup": Path(world["out"]),
              "export": Path(world["out"]) / "exports" / "t"}[command]
    return module, argv, target, env


def result_of(command: str, target: Path) -> dict:
    """What must survive: the result files, byte for byte."""
    if command == "export":
        return {str(p.relative_to(target)): p.read_bytes() for p in sorted(target.rglob("*"))
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(target).parts)}
    name = "r.json" if command == "score" else "b.zip"
    return {name: (target / name).read_bytes()}


def complete(command: str, target: Path, previous: dict) -> None:
    """The result in place is the previous one or a complete new one."""
    now = result_of(command, target)
    if command == "score":
        assert now == previous or json.loads(now["r.json"]) == json.loads(previous["r.json"])
    elif command == "backup":
        if now != previous:
            with zipfile.ZipFile(target / "b.zip") as zf:
                assert zf.testzip() is None and "manifest.json" in zf.namelist()
    else:
        for name, data in previous.items():
            assert now[name] == data, f"{name} of the previous export changed"
        for folder in {Path(n).parts[0] for n in now} - {Path(n).parts[0] for n in previous}:
            assert (target / folder / "ratings.csv").exists(), f"partial export {folder}"


@pytest.mark.parametrize("command", ["score", "export", "backup"])
def test_killed_mid_write_the_previous_result_survives(world, command):
    module, argv, target, env = setup(command, world)
    duration = timed_run(module, argv, env)
    previous = result_of(command, target)
    assert previous and not temporaries(target)
    kills = 0
    for point, nth in KILL_POINTS[command]:
        for sig in (signal.SIGKILL, signal.SIGTERM):
            status, err = kill_at(module, argv, point, nth, target, env, sig)
            kills += 1
            assert result_of(command, target) == previous, f"{command} {point} {sig.name}: result changed"
            if sig == signal.SIGTERM:
                assert status == 2 and "terminated" in err, (status, err)
                assert not temporaries(target), f"{command} {point} SIGTERM left {temporaries(target)}"
            elif point in ("tmpfile", "link"):  # an unnamed file: nothing to leave behind
                assert not temporaries(target), f"{command} {point} SIGKILL left {temporaries(target)}"
    rng = random.Random(18)
    for _ in range(RANDOM_KILLS):
        kill_after(module, argv, rng.uniform(0.2, 1.0) * duration, env)
        kills += 1
        complete(command, target, previous)
        previous = result_of(command, target)
    timed_run(module, argv, env)  # the next run removes what the killed ones left
    assert not temporaries(target), f"{command}: {temporaries(target)} left after the next run"
    assert kills == len(KILL_POINTS[command]) * 2 + RANDOM_KILLS

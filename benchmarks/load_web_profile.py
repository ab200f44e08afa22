"""A sampling profile of an app instance during a load run (``py-spy``, when installed): where
its CPU goes, as shares of the samples. Only the thread holding the interpreter lock is sampled
(``--gil``), so a thread waiting on the database or a socket is not counted as running."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

GROUPS = (("studyapp/", "studyapp"), ("metrics/", "metrics"), ("sqlalchemy/", "SQLAlchemy"),
          ("sqlite3", "SQLite"), ("psycopg", "psycopg"), ("google/protobuf", "protobuf"),
          ("streamlit/", "Streamlit"), ("uvicorn/", "uvicorn"), ("starlette/", "Starlette"),
          ("websockets/", "websockets"), ("asyncio/", "asyncio"))


def start(pid: int, seconds: float, out: Path) -> subprocess.Popen | None:
    """Start recording ``pid`` for ``seconds`` into ``out`` (collapsed stacks); None without py-spy."""
    exe = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if exe is None:
        return None
    return subprocess.Popen([exe, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "50",
                             "--gil", "--format", "raw", "--nonblocking", "--output", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize(path: Path, top: int = 15) -> dict:
    """Shares of the samples that were running (idle waits left out): by the library a sample's
    innermost frame is in, and by the project function (``studyapp``/``metrics``) deepest in it."""
    by_group, by_function, total = Counter(), Counter(), 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or any(w in frames[-1] for w in ("wait (threading", "select (selectors",
                                                                  "_run_once", "poll (", "sleep")):
            continue
        n = int(count)
        total += n
        leaf = frames[-1]
        by_group[next((name for key, name in GROUPS if key in leaf), "other")] += n
        own = [f for f in frames if "studyapp/" in f or "metrics/" in f]
        by_function[own[-1].split(" (")[0] + " (" + own[-1].split("/")[-1] if own else "outside the project"] += n
    share = lambda c: [(k, round(v / total, 3)) for k, v in c.most_common(top)]
    return {"samples": total, "innermost_library": share(by_group), "project_function": share(by_function)}

"""What ``benchmarks.load_web`` measures besides latency: the server processes' CPU and memory
from ``/proc`` (sampled over time), the load generator's own CPU, and the check of every answer
against the database."""

from __future__ import annotations

import os
import resource
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def database_cpu_seconds() -> float:
    """User + system CPU of this machine's PostgreSQL so far: every live ``postgres`` process,
    plus what the postmasters collected from backends that have exited (0 with no local server)."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as fh:
                head, fields = fh.read().rsplit(")", 1)
        except OSError:
            continue
        if not head.endswith("(postgres"):
            continue
        fields = fields.split()
        total += (int(fields[11]) + int(fields[12])) / TICKS
        if _command(int(fields[1])) != "postgres":   # the postmaster: its exited children too
            total += (int(fields[13]) + int(fields[14])) / TICKS
    return total


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def client_cpu_seconds() -> float:
    """This process's CPU (the load generator: every session's protocol work)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Samples:
    """Server processes sampled every ``every`` seconds: time, sessions open, RSS per pid, CPU."""
    pids: dict[str, int]
    rows: list[dict] = field(default_factory=list)

    def take(self, t: float, sessions: int) -> dict:
        row = {"t": round(t, 1), "sessions": sessions, "load": os.getloadavg()[0],
               "rss": {name: round(rss_mib(pid), 1) for name, pid in self.pids.items()},
               "cpu": {name: round(cpu_seconds(pid), 2) for name, pid in self.pids.items()},
               "client_cpu": round(client_cpu_seconds(), 2), "database_cpu": round(database_cpu_seconds(), 2)}
        self.rows.append(row)
        return row


def app_names(samples: Samples) -> list[str]:
    return [name for name in samples.pids if name != "haproxy"]


def resources(samples: Samples, answers: int, baseline: dict) -> dict:
    """CPU per answer (app instances, balancer, load generator, a local PostgreSQL) between ``baseline`` and the
    last sample, and memory: total, per instance, and per open session at the peak."""
    last = samples.rows[-1]
    apps = app_names(samples)
    server_cpu = sum(last["cpu"][n] - baseline["cpu"][n] for n in apps)
    peak = max(samples.rows, key=lambda r: r["sessions"])
    rss_base = sum(baseline["rss"][n] for n in apps)
    rss_peak = sum(peak["rss"][n] for n in apps)
    per = max(answers, 1)
    return {"server_cpu_s": round(server_cpu, 1), "server_cpu_ms_per_answer": round(1000 * server_cpu / per, 1),
            "haproxy_cpu_ms_per_answer": round(1000 * (last["cpu"].get("haproxy", 0)
                                                      - baseline["cpu"].get("haproxy", 0)) / per, 2),
            "client_cpu_ms_per_answer": round(1000 * (last["client_cpu"] - baseline["client_cpu"]) / per, 1),
            "database_cpu_ms_per_answer": round(1000 * (last["database_cpu"] - baseline["database_cpu"]) / per, 1),
            "rss_total_mib": round(sum(last["rss"][n] for n in apps), 1),
            "rss_peak_mib": round(rss_peak, 1), "peak_sessions": peak["sessions"],
            "mib_per_session": round((rss_peak - rss_base) / peak["sessions"], 2) if peak["sessions"] else None}


def flatness(samples: Samples, tolerance: float = 0.10) -> dict:
    """Memory per instance over a soak: the median RSS of the second quarter of the samples
    against the last quarter (the first quarter is the warm-up); flat when no instance grew by
    more than ``tolerance`` (a fraction) between them."""
    rows = samples.rows
    q = max(len(rows) // 4, 1)
    out = {}
    for name in app_names(samples):
        early = float(np.median([r["rss"][name] for r in rows[q:2 * q]]))
        late = float(np.median([r["rss"][name] for r in rows[-q:]]))
        out[name] = {"early_mib": round(early, 1), "late_mib": round(late, 1),
                     "growth": round((late - early) / early, 3) if early else None}
    flat = all(v["growth"] is not None and v["growth"] <= tolerance for v in out.values())
    return {"instances": out, "flat": flat, "tolerance": tolerance}


@dataclass
class Press:
    """One answer a session sent: the item on its screen, the value, whether the next screen
    acknowledged it (arrived without an error notice), the time to the next screen's data, and
    the bytes the server sent meanwhile (every ``ForwardMsg`` of the run the answer started)."""
    assignment_id: int
    value: str
    acked: bool
    seconds: float | None
    sent: float = 0.0   # time.monotonic() when it was sent
    received: int | None = None   # ForwardMsg bytes from the answer sent to its run's end


def check_answers(pressed: dict[int, list[Press]]) -> dict:
    """Every answer against the database (``pressed``: annotator id -> presses). Per assignment:
    as many rating rows as acknowledged presses (a first answer plus one revision per changed
    answer), at most one more for a press that got no acknowledgement; the last stored response
    is the last acknowledged value; no row on an item that was never on the annotator's screen."""
    from studyapp.core import storage

    if not pressed:
        return {"acked": 0, "stored": 0, "lost": 0, "doubled": 0, "wrong_item": 0, "wrong_value": 0}
    ids = ",".join(str(int(a)) for a in pressed)
    with storage.get_engine().connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT annotator_id, assignment_id, revision, response FROM rating "
            f"WHERE annotator_id IN ({ids}) ORDER BY annotator_id, assignment_id, revision").all()
    stored = defaultdict(list)
    for annotator_id, assignment_id, _revision, response in rows:
        stored[(annotator_id, assignment_id)].append(str(response))
    counts = Counter()
    for annotator_id, presses in pressed.items():
        by_item = defaultdict(list)
        for press in presses:
            by_item[press.assignment_id].append(press)
            counts["acked"] += press.acked
        for assignment_id, item_presses in by_item.items():
            acked = [p for p in item_presses if p.acked]
            got = stored.pop((annotator_id, assignment_id), [])
            unacked = len(item_presses) - len(acked)
            if len(got) < len(acked):
                counts["lost"] += len(acked) - len(got)
            elif len(got) > len(acked) + unacked:
                counts["doubled"] += len(got) - len(acked) - unacked
            if acked and got and got[-1] != acked[-1].value and len(got) == len(acked):
                counts["wrong_value"] += 1
    counts["wrong_item"] = sum(len(v) for v in stored.values())  # rows on items never on screen
    counts["stored"] = len(rows)
    return {k: int(counts[k]) for k in ("acked", "stored", "lost", "doubled", "wrong_item", "wrong_value")}


def latency_ms(presses: list[Press]) -> dict:
    values = np.array([p.seconds for p in presses if p.acked and p.seconds is not None]) * 1000
    if not len(values):
        return {"p50": None, "p95": None, "p99": None, "n": 0}
    p50, p95, p99 = (round(float(np.percentile(values, q)), 1) for q in (50, 95, 99))
    return {"p50": p50, "p95": p95, "p99": p99, "n": int(len(values))}


def bytes_per_answer(presses: list[Press]) -> dict:
    """The ForwardMsg bytes received per acknowledged answer: median, 95th percentile, mean."""
    values = np.array([p.received for p in presses if p.acked and p.received is not None])
    if not len(values):
        return {"median": None, "p95": None, "mean": None, "n": 0}
    return {"median": int(np.median(values)), "p95": int(np.percentile(values, 95)),
            "mean": int(values.mean()), "n": int(len(values))}


def slowest(presses: list[Press], t0: float, count: int = 10) -> list[tuple[float, float]]:
    """(seconds into the run, seconds to the next screen) of the ``count`` slowest answers."""
    timed = sorted((p for p in presses if p.seconds is not None), key=lambda p: -p.seconds)[:count]
    return [(round(p.sent - t0, 1), round(p.seconds, 2)) for p in timed]

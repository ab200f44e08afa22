"""A study's HTML report, computed once per state of its ratings.

``study_report(slug)`` writes ``<exports>/<study>/<timestamp>/report/`` like
``analysis.write_study_report``. The computed report is also kept in
``<exports>/<study>/.report-cache/<key>/``, where ``key`` is a SHA-256 of everything the report
depends on: the study's ``ratings.csv`` and ``items.csv`` as exported, the resample and
permutation counts, and the code (the files of the ``metrics`` and ``studyapp`` packages, and the
versions of the libraries that compute and draw it). While nothing
of that changes, a report is the cached one copied into the new folder: no analysis, and none of
scipy, scikit-learn or matplotlib imported (a fresh ``studyapp report`` of a 500 x 5 study
~0.8 s instead of ~4 s). A new rating, a revision, a new annotator or an upgrade makes a new key.

Entries are written through ``StagedFolder`` (complete or absent); the newest ``KEEP`` per study
are kept. The bootstrap intervals and permutation p-values are seeded, so a recomputation of the
same key gives the same numbers: the cache changes when a report is computed, never what it says.

When the console's dashboard sees ratings it has not seen, ``warm_in_background`` computes the
report into the cache in a process of its own, once per state of the ratings, so that the
download is a copy (the console's download first waits for a warm-up still running, ``wait_for_warm_up``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from sqlalchemy.engine import Engine

from metrics.core import StagedFolder, remove_abandoned_subfolders

from ...core import config
from ..records.exports import csv_bytes, study_folder, study_tables

KEEP = 3   # cached reports kept per study
LIBRARIES = ("numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "krippendorff")


@dataclass(frozen=True)
class StudyReport:
    path: Path            # report.html in the new report folder
    summary: dict         # n_items, n_annotators, level, alpha, agreement, qwk
    computed_at: str      # when the report's numbers were computed (UTC, ISO 8601)
    cached: bool          # True: copied from the cache, not recomputed


def study_report(slug: str, out_dir: str | Path | None = None, *, n_resamples: int = 1000,
                 permutations: int = 1000, use_cache: bool = True, engine: Engine | None = None,
                 now: datetime | None = None, include_simulated: bool = False) -> StudyReport:
    """The study's report in ``<out_dir or exports>/<study>/<timestamp>/report/``, from the
    cache when the ratings, items, options and code are those of a cached one."""
    now = now or datetime.now(UTC)
    entry, meta, cached = cached_report(slug, out_dir, n_resamples=n_resamples, permutations=permutations,
                                        use_cache=use_cache, engine=engine, now=now,
                                        include_simulated=include_simulated)
    path = _copy_report(entry, study_folder(slug, out_dir, now) / "report")
    return StudyReport(path, meta["summary"], meta["computed_at"], cached)


def report_html(slug: str, *, engine: Engine | None = None, include_simulated: bool = False) -> bytes:
    """The study's report.html for a download: the cache entry's own file, computed into the cache
    when there is none, so a download writes no report folder of its own."""
    entry, _, _ = cached_report(slug, engine=engine, include_simulated=include_simulated)
    return (entry / "report.html").read_bytes()


def cached_report(slug: str, out_dir: str | Path | None = None, *, n_resamples: int = 1000,
                  permutations: int = 1000, use_cache: bool = True, engine: Engine | None = None,
                  now: datetime | None = None, include_simulated: bool = False) -> tuple[Path, dict, bool]:
    """``(cache entry, its summary.json, whether it was cached)`` for the study's current state:
    the report is computed into a new entry when there is no complete one (or ``use_cache`` is
    False). Simulated raters are left out unless ``include_simulated``."""
    tables = study_tables(slug, engine)
    remove_abandoned_subfolders(Path(out_dir or config.exports_dir()) / slug)
    entry = (Path(out_dir or config.exports_dir()) / slug / ".report-cache"
             / report_key(tables, n_resamples, permutations, include_simulated))
    meta = _cached_meta(entry) if use_cache else None
    if meta is not None:
        return entry, meta, True

    from .analysis import analyse_study, write_report_folder

    analysis = analyse_study(slug, n_resamples, permutations, engine=engine, tables=tables,
                             include_simulated=include_simulated)
    a = analysis.agreement
    meta = {"summary": {"n_items": a.n_items, "n_annotators": a.n_annotators, "level": a.level,
                        "alpha": a.krippendorff_alpha, "agreement": a.mean_pairwise_agreement, "qwk": a.mean_qwk,
                        "simulated_left_out": len(analysis.simulated_left_out)},
            "computed_at": (now or datetime.now(UTC)).isoformat(timespec="seconds")}
    staged = StagedFolder(entry)
    with staged as folder:
        write_report_folder(folder, slug, analysis)
        (folder / "summary.json").write_text(json.dumps(meta) + "\n")
    _drop_old_entries(entry.parent)
    return entry, meta, False


def warm(slug: str, *, engine: Engine | None = None) -> bool:
    """Compute the study's report into the cache only (``cached_report``: no report folder), so
    that the next download is a copy; False when the cache held it already. The console runs
    this in a background process when its dashboard sees new ratings."""
    return not cached_report(slug, engine=engine)[2]


# (database, study) -> (the dashboard fingerprint it was started for, the warm-up process). Kept
# here, not in the console page: a page script's globals are new on every run.
_WARM_UPS: dict[tuple[str, str], tuple[tuple, subprocess.Popen]] = {}
_WARM_UPS_LOCK = threading.Lock()


def warm_in_background(slug: str, fingerprint: tuple) -> subprocess.Popen | None:
    """Start :func:`warm` for the study in a process of its own (not niced: a download may wait
    for it, and a niced process starves on a busy server), at most once per ``fingerprint`` (the
    state of the ratings the console's dashboard saw) and one at a time per study; returns that
    study's warm-up process. ``STUDYAPP_REPORT_WARMUP=0`` turns warm-ups off (None)."""
    if os.environ.get("STUDYAPP_REPORT_WARMUP", "1") == "0":
        return None
    key = (config.database_url(), slug)
    with _WARM_UPS_LOCK:
        last = _WARM_UPS.get(key)
        if last is not None and (last[0] == fingerprint or last[1].poll() is None):
            return last[1]
        code = ("import sys; from studyapp.core.children import exit_with_parent; exit_with_parent(); "
                "from studyapp.platform.reporting import report_cache; report_cache.warm(sys.argv[1])")
        process = subprocess.Popen([sys.executable, "-c", code, slug], cwd=config.ROOT, stdout=subprocess.DEVNULL)
        _WARM_UPS[key] = (fingerprint, process)
        return process


def warm_up_of(slug: str) -> subprocess.Popen | None:
    """The study's latest warm-up process (running or finished), or None."""
    with _WARM_UPS_LOCK:
        last = _WARM_UPS.get((config.database_url(), slug))
    return None if last is None else last[1]


def wait_for_warm_up(slug: str) -> None:
    """Return once the study's warm-up process (if one was started) has finished."""
    if (process := warm_up_of(slug)) is not None:
        process.wait()


def report_key(tables: dict, n_resamples: int, permutations: int, include_simulated: bool = False) -> str:
    """SHA-256 (hex) of the report's inputs, options and code."""
    digest = hashlib.sha256(code_fingerprint().encode())
    digest.update(f"resamples={n_resamples};permutations={permutations}".encode())
    if include_simulated:
        digest.update(b";include_simulated")
    for name in ("ratings.csv", "items.csv"):
        data = csv_bytes(tables[name])
        digest.update(f"{name}:{len(data)}:".encode() + data)
    return digest.hexdigest()


def code_packages() -> tuple[Path, Path]:
    """The folders of the ``metrics`` and ``studyapp`` packages."""
    import metrics
    import studyapp

    return Path(metrics.__file__).parent, Path(studyapp.__file__).parent


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the files of the ``metrics`` and ``studyapp`` packages (the study types'
    analyses included) and the versions of the libraries the report is computed and drawn with."""
    digest = hashlib.sha256()
    for package in code_packages():
        for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(package.parent)).encode() + path.read_bytes())
    for library in LIBRARIES:
        digest.update(f"{library}={metadata.version(library)}".encode())
    return digest.hexdigest()


def _cached_meta(entry: Path) -> dict | None:
    """The entry's ``summary.json``, or None when the entry is absent or damaged (a missing or
    unreadable summary or report.html: the report is then computed again and the entry rewritten)."""
    try:
        meta = json.loads((entry / "summary.json").read_text())
        complete = (entry / "report.html").is_file() and {"summary", "computed_at"} <= set(meta)
    except (OSError, ValueError, TypeError):
        return None
    return meta if complete else None


def _copy_report(entry: Path, target: Path) -> Path:
    staged = StagedFolder(target)
    with staged as folder:
        for item in entry.iterdir():
            if item.name != "summary.json":
                shutil.copy2(item, folder / item.name)
    return staged.path / "report.html"


def _drop_old_entries(cache: Path) -> None:
    """Keep the newest ``KEEP`` cache entries of a study."""
    entries = sorted((p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)

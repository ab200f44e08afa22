"""A study's live dashboard for the console: progress, annotators, agreement with intervals and
how it has moved, the rater model, reliability and the study type's own analyses.

:func:`study_dashboard` is computed once per state of the study's ratings (the number of
rating rows and the last rating id, read with one query) and kept in this process, so the
console shows an unchanged study at once and a study with new ratings after one
recomputation. Live figures use ``LIVE_RESAMPLES`` bootstrap resamples and permutations (the
count is shown); the downloadable HTML report uses the full counts of
:func:`studyapp.platform.reporting.analysis.analyse_study`. A statistic that cannot be computed yet says why in
words (:attr:`Dashboard.unavailable`), never with a traceback.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from threading import Lock

import pandas as pd
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from metrics import InputError
from metrics.study import validate_ratings

from ...core.models import Rating, Study
from ...core.storage import get_engine, read_session
from ...studytypes import Section, get_type
from ..records.exports import study_tables
from ..records.studies import progress, study_by_slug, study_items
from ..specs.spec_model import spec_of
from .analysis import LIVE_RESAMPLES, rater_tables, rating_analyses, why_no_agreement
from .ppi_estimates import ppi_section


@dataclass
class Dashboard:
    fingerprint: tuple[int, int]
    progress: dict
    annotators: pd.DataFrame
    agreement: dict | None = None            # alpha, eq13, qwk: value and interval
    over_time: pd.DataFrame | None = None    # ratings, annotators, alpha, agreement (with intervals)
    rater_model: object | None = None        # metrics.study.RaterModel
    reliability: dict | None = None
    adaptive: dict | None = None
    sections: list[Section] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    resamples: int = LIVE_RESAMPLES
    include_simulated: bool = False
    simulated: list[str] = field(default_factory=list)   # simulated raters (left out unless included)


_CACHE: dict[tuple, Dashboard] = {}   # (database URL, study slug, study id) -> last dashboard
_LOCK = Lock()
_COMPUTING: dict[tuple, Lock] = {}    # one computation per study at a time; others wait for it


def ratings_fingerprint(study_id: int, engine: Engine | None = None) -> tuple[int, int]:
    """(rating rows, last rating id) of a study: changes with every new answer or revision."""
    with read_session(engine) as session:
        count, last = session.exec(select(func.count(Rating.id), func.max(Rating.id))
                                   .where(Rating.study_id == study_id)).one()
    return int(count), int(last or 0)


def study_dashboard(slug: str, engine: Engine | None = None, *, include_simulated: bool = False) -> Dashboard:
    """The dashboard of study ``slug``, recomputed only when its ratings changed; simulated raters
    left out of its statistics unless ``include_simulated``."""
    with read_session(engine) as session:
        study = study_by_slug(session, slug)
    key = (str((engine or get_engine()).url), slug, study.id) + (("simulated",) if include_simulated else ())
    with _LOCK:
        computing = _COMPUTING.setdefault(key, Lock())
    with computing:   # a second caller (a warm-up, another session) waits, then reads the cache
        fingerprint = ratings_fingerprint(study.id, engine)
        with _LOCK:
            cached = _CACHE.get(key)
        if cached is not None and cached.fingerprint == fingerprint:
            cached.progress = progress(study.id, engine)   # status and claims change without ratings
            return cached
        board = compute_dashboard(study, fingerprint, engine, include_simulated=include_simulated)
        with _LOCK:
            _CACHE[key] = board
    return board


def rated_studies(engine: Engine | None = None) -> list[str]:
    """The slugs of the studies that have ratings, oldest first."""
    with read_session(engine) as session:
        return list(session.exec(select(Study.slug).where(
            select(Rating.id).where(Rating.study_id == Study.id).exists()).order_by(Study.id)))


def warm(engine: Engine | None = None) -> list[str]:
    """Compute the dashboards of the studies that have ratings, one after another (the server
    process does this in a background thread at start, so the first researcher after a restart
    does not wait for a large study's first computation); returns their slugs. A study that
    cannot be computed is left to the console, which shows why."""
    done = []
    for slug in rated_studies(engine):
        try:
            study_dashboard(slug, engine)
        except InputError:
            continue
        done.append(slug)
    return done


WARM_NICENESS = 10  # the warm-up process yields the CPU to the server's page runs
_WARM_CODE = ("import pickle, sys; from studyapp.core.children import exit_with_parent; exit_with_parent(); "
              "from studyapp.platform.reporting import dashboard; dashboard.warm(); "
              "sys.stdout.buffer.write(pickle.dumps(dict(dashboard._CACHE)))")


def warm_in_child() -> list[str]:
    """:func:`warm` in a child process at a low CPU priority, its dashboards then kept here;
    returns their slugs. Computed in this process, a large study's dashboard would hold the
    interpreter lock for minutes (110 s for 100,000 ratings at load 5), stalling every
    annotator's page run meanwhile; the child inherits the environment, so it reads the same
    database. A dashboard computed here in the meantime is newer and is kept. No child starts
    while no study has ratings (a new server's case: its imports alone cost ~2 s of CPU)."""
    if not rated_studies():
        return []
    done = subprocess.run([sys.executable, "-c", _WARM_CODE], capture_output=True,
                          preexec_fn=lambda: os.nice(WARM_NICENESS), check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace").strip().splitlines()[-1:])
    boards = pickle.loads(done.stdout)   # written by the child above, from our own code
    with _LOCK:
        for key, board in boards.items():
            _CACHE.setdefault(key, board)
    return [key[1] for key in boards]


def compute_dashboard(study: Study, fingerprint: tuple[int, int], engine: Engine | None = None, *,
                      include_simulated: bool = False) -> Dashboard:
    """Everything the dashboard shows, from the study's export tables (simulated raters left out
    of the statistics and the rater table unless ``include_simulated``)."""
    tables = study_tables(study.slug, engine)
    simulated = tables["annotators.csv"].loc[tables["annotators.csv"]["source"] == "simulated", "annotator"]
    tables, _ = rater_tables(tables, include_simulated=include_simulated)
    ratings = tables["ratings.csv"]
    main = ratings[ratings["phase"] == "main"]
    board = Dashboard(fingerprint, progress(study.id, engine), annotator_table(tables["annotators.csv"]),
                      include_simulated=include_simulated, simulated=simulated.astype(str).tolist())
    study_type = get_type(study.study_type)
    if study_type.custom_response:
        board.unavailable["agreement"] = ("the answers of this study type are marks, not ratings on a "
                                          "scale: see the analyses below")
    else:
        rating_statistics(board, main)
    spec = spec_of(study)
    if spec.adaptive:
        from ..assignment.adaptive import adaptive_progress
        board.adaptive = adaptive_progress(study, spec, engine)
    try:
        fields_by_key = {key: fields for key, _role, fields in study_items(study.id, engine)}
        board.sections = study_type.dashboard_sections(study.slug, tables, fields_by_key, LIVE_RESAMPLES)
    except InputError as exc:
        board.unavailable["analyses"] = str(exc)
    if (section := ppi_section(tables, spec)) is not None:
        board.sections.insert(0, section)
    return board


def annotator_table(annotators: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: status, answers, median seconds per item and attention checks passed."""
    columns = ["annotator", "source", "status", "n_ratings", "median_seconds", "attention_checks", "attention_passed"]
    return annotators[[c for c in columns if c in annotators.columns]].reset_index(drop=True)


def rating_statistics(board: Dashboard, main: pd.DataFrame) -> None:
    """Agreement with intervals, its course over time, the rater model and reliability: the
    report's computation (``analysis.rating_analyses``) with the live resample count."""
    reason = why_no_agreement(main)
    if reason:
        for name in ("agreement", "over_time", "rater_model", "reliability"):
            board.unavailable[name] = reason
        return
    try:
        result = rating_analyses(validate_ratings(main, source="the study's ratings"), LIVE_RESAMPLES)
    except InputError as exc:
        board.unavailable["agreement"] = str(exc)
        return
    report, ci = result.agreement, result.agreement.intervals
    board.agreement = {
        "alpha": (report.krippendorff_alpha, ci.get("krippendorff_alpha")),
        "eq13": (report.mean_pairwise_agreement, ci.get("mean_pairwise_agreement")),
        "qwk": (report.mean_qwk, None),   # no interval: one scikit-learn kappa per pair and resample
        "qwk_by_shared_items": report.mean_qwk_by_shared_items, "qwk_pairs": report.qwk_pairs,
        "level": report.level, "n_items": report.n_items, "n_annotators": report.n_annotators,
        "n_ratings": report.n_ratings, "report": report}
    board.over_time, board.rater_model, board.reliability = result.over_time, result.rater_model, result.reliability
    board.unavailable.update(result.unavailable)

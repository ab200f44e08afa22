"""Raw exports of a study (docs/contracts.md, "Ratings and items of a study").

- ``ratings.csv``: one row per answered assignment, its current (latest) answer:
  ``study, item_id, annotator, rating, phase, created_at, seconds_spent, revisions`` —
  ``created_at`` is when that answer was given, ``seconds_spent`` the time on the item summed
  over every revision, ``revisions`` how many answers were given (1 = never changed),
  ``seen_ms`` how long the item had been fully drawn when that answer came and ``in_view``
  whether every row it records had been in view, uncovered (both empty for answers not given on
  an item screen, e.g. simulated ones), then ``rater_kind`` (``human`` or ``simulated``).
- ``ratings_history.csv``: every stored rating row, superseded ones included (with its
  ``seen_ms``, ``in_view`` and ``rater_kind``).
- ``items.csv``: ``item_id, role, expected`` and the study type's columns (``export_item``;
  its ``export_columns`` first).
- ``annotators.csv``: pseudonym, how they joined, status, ``outcome`` (how the session ended, as
  Prolific sees it: completed, attention failed, screened out, routed, returned, timed out) and
  ``code_shown`` (the code its end page showed), times, ratings and attention checks.
- ``items_model.csv`` (``item_id, score, se, n``) and ``raters_model.csv`` (``annotator,
  severity, consistency, flag``): the ordinal rater model (``metrics.study._rater_model``) fitted to
  the main ratings, for study types whose answers are ratings on the scale (written by
  :func:`export_study`; :func:`model_tables` computes them from ``ratings.csv``).
- With ``[answers] comments = true``: a ``comment`` column in both ratings files; with
  ``cant_judge = true``: ``cant_judge.csv`` (``item_id, annotator, phase, created_at,
  comment``) lists the current "can't judge" answers, which ``ratings.csv`` leaves out.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from metrics.core import StagedFolder

from ...core import config
from ...core.accounts import CLI, Actor, require_studies
from ...core.models import CANT_JUDGE, Annotator, Assignment, Item, Rating
from ...core.storage import log_event, read_session, write_session
from ...studytypes import get_type
from ..specs.spec_model import spec_of
from .studies import annotator_status, study_by_slug

RATING_COLUMNS = ["study", "item_id", "annotator", "rating", "phase", "created_at",
                  "seconds_spent", "revisions", "seen_ms", "in_view"]


SIMULATED = "simulated"   # annotators.source of `studyapp simulate`'s raters


def rater_kind(source: str) -> str:
    """ratings.csv's ``rater_kind`` of an annotator's ``source``: ``simulated`` or ``human``."""
    return SIMULATED if source == SIMULATED else "human"


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat(timespec="seconds") if value else None


@dataclass
class _StudyRows:
    """A study's stored rows, read in one session, with the lookups the export tables share."""

    study: object
    items: list
    annotators: list
    assignments: dict          # assignment id -> Assignment
    ratings: list              # by assignment, then revision

    def __post_init__(self):
        self.study_type = get_type(self.study.study_type)
        self.item_key = {item.id: item.item_key for item in self.items}
        self.expected = {item.id: item.expected for item in self.items}
        self.fields_of = {item.id: json.loads(item.fields_json) for item in self.items}
        self.pseudonym = {a.id: a.pseudonym for a in self.annotators}
        self.kind = {a.id: rater_kind(a.source) for a in self.annotators}
        self.spec = spec_of(self.study)
        self.by_assignment: dict[int, list[Rating]] = {}
        for r in self.ratings:
            self.by_assignment.setdefault(r.assignment_id, []).append(r)

    def comment(self, r: Rating) -> dict:
        return {"comment": r.comment or ""} if self.spec.comments else {}


def _read_study_rows(slug: str, engine: Engine | None) -> _StudyRows:
    with read_session(engine) as session:
        study = study_by_slug(session, slug)
        items = list(session.exec(select(Item).where(Item.study_id == study.id).order_by(Item.position)))
        annotators = list(session.exec(select(Annotator).where(Annotator.study_id == study.id)
                                       .order_by(Annotator.id)))
        assignments = {a.id: a for a in session.exec(select(Assignment).where(
            Assignment.study_id == study.id))}
        ratings = list(session.exec(select(Rating).where(Rating.study_id == study.id)
                                    .order_by(Rating.assignment_id, Rating.revision)))
    return _StudyRows(study, items, annotators, assignments, ratings)


def _history_table(d: _StudyRows) -> pd.DataFrame:
    """ratings_history.csv: every stored rating row."""
    return _seen_typed(pd.DataFrame([{
        "study": d.study.slug, "rating_id": r.id, "item_id": d.item_key[r.item_id],
        "annotator": d.pseudonym[r.annotator_id], "rating": r.response,
        "phase": d.assignments[r.assignment_id].phase, "revision": r.revision,
        "supersedes": r.supersedes_id, "created_at": _iso(r.created_at),
        "seconds_spent": r.seconds_spent, "seen_ms": r.seen_ms, "in_view": r.in_view,
        "rater_kind": d.kind[r.annotator_id], **d.comment(r)} for r in d.ratings],
        columns=["study", "rating_id", "item_id", "annotator", "rating", "phase", "revision",
                 "supersedes", "created_at", "seconds_spent", "seen_ms", "in_view", "rater_kind"]
        + (["comment"] if d.spec.comments else [])))


def _seen_typed(frame: pd.DataFrame) -> pd.DataFrame:
    """``seen_ms`` as whole milliseconds and ``in_view`` as a boolean, both empty where unknown."""
    return frame.astype({"seen_ms": "Int64", "in_view": "boolean"})


def _current_rows(d: _StudyRows) -> tuple[list[dict], list[dict]]:
    """The latest answer of each assignment: ratings, and the "can't judge" answers apart."""
    current, cant_judge = [], []
    for assignment_id, rows in d.by_assignment.items():
        last = rows[-1]
        assignment = d.assignments[assignment_id]
        if last.response == CANT_JUDGE:  # not a rating: listed apart
            cant_judge.append({"item_id": d.item_key[last.item_id], "annotator": d.pseudonym[last.annotator_id],
                               "phase": assignment.phase,
                               "created_at": _iso(last.created_at), "comment": last.comment or ""})
            continue
        current.append({"study": d.study.slug, "item_id": d.item_key[last.item_id],
                        "annotator": d.pseudonym[last.annotator_id], "rating": last.response,
                        "phase": assignment.phase, "created_at": _iso(last.created_at),
                        "seconds_spent": round(sum(r.seconds_spent for r in rows), 3),
                        "revisions": len(rows), "seen_ms": last.seen_ms, "in_view": last.in_view,
                        "rater_kind": d.kind[last.annotator_id],
                        "_position": assignment.position,
                        "_annotator_id": last.annotator_id, **d.comment(last),
                        **d.study_type.rating_columns(d.fields_of[last.item_id], d.pseudonym[last.annotator_id])})
    return current, cant_judge


def _ratings_table(current: list[dict]) -> pd.DataFrame:
    """ratings.csv: the current answers by annotator, then item position; type columns after the fixed ones."""
    extra = list(dict.fromkeys(k for row in current for k in row
                               if k not in RATING_COLUMNS and not k.startswith("_")))
    current_df = _seen_typed(pd.DataFrame(current, columns=RATING_COLUMNS + extra + ["_position", "_annotator_id"]))
    return current_df.sort_values(["_annotator_id", "_position"]).drop(
        columns=["_position", "_annotator_id"]).reset_index(drop=True)


def _items_table(d: _StudyRows) -> pd.DataFrame:
    """items.csv: the study type's columns (its export_columns first), role, expected, and the
    LLM rating and active-sampling draw when the study has them."""
    item_rows = []
    for item in d.items:
        row = {"item_id": item.item_key,
               **d.study_type.export_item(d.fields_of[item.id]),
               "role": item.role, "expected": item.expected}
        if d.spec.llm:
            row["llm_rating"] = item.llm_rating
        if d.spec.active:   # the draw that keeps the estimates unbiased (Item.active_*)
            row["active_probability"] = item.active_probability
            row["active_selected"] = bool(item.active_priority) if item.role == "main" else None
        item_rows.append(row)
    items_df = pd.DataFrame(item_rows)
    first = [c for c in d.study_type.export_columns if c in items_df.columns]   # a column no item has: absent
    return items_df[first + [c for c in items_df.columns if c not in first]]


def _annotator_row(d: _StudyRows, a, current_df: pd.DataFrame) -> dict:
    mine = current_df[current_df["annotator"] == a.pseudonym]
    checks = [(r.response, d.expected[r.item_id]) for assignment_id, rows in d.by_assignment.items()
              for r in rows[-1:] if d.assignments[assignment_id].annotator_id == a.id
              and d.assignments[assignment_id].phase == "attention"]
    passed = sum(1 for got, want in checks if got == want)
    status = annotator_status(a, len(mine))
    outcome, code = _outcome(d, a, status, len(checks) - passed)
    return {
        "annotator": a.pseudonym, "source": a.source,
        "status": "attention failed" if outcome == "attention failed" else status,
        "outcome": outcome, "code_shown": code,
        "created_at": _iso(a.created_at), "started_at": _iso(a.started_at),
        "completed_at": _iso(a.completed_at), "n_ratings": len(mine),
        "median_seconds": round(float(mine["seconds_spent"].median()), 3) if len(mine) else None,
        "attention_checks": len(checks),
        "attention_passed": passed,
        "prolific_pid": a.prolific_pid, "prolific_study_id": a.prolific_study_id,
        "prolific_session_id": a.prolific_session_id, "prolific_status": a.prolific_status,
        "routed_at": _iso(a.routed_at)}


def _outcome(d: _StudyRows, a, status: str, failed_checks: int) -> tuple[str, str | None]:
    """How the participant's session ended and the code its end page showed
    (:func:`studyapp.platform.assignment.prolific.outcome_kind`): ``completed``, ``attention failed``, ``screened
    out``, ``routed``, ``returned``, ``timed out`` (Prolific ended it: no code), or the status
    of a session still open (``rating``, ``invited``, ``revoked``: no code)."""
    from ..assignment.prolific import ENDED, outcome_kind

    if a.prolific_status in ENDED:
        return ENDED[a.prolific_status], None
    if status not in ("completed", "screened out", "routed out"):
        return status, None
    kind, code = outcome_kind(d.spec, comprehension_failures=a.comprehension_failures,
                              routed=a.routed_at is not None, failed_checks=failed_checks)
    return kind.replace("_", " "), code


def _annotators_table(d: _StudyRows, current_df: pd.DataFrame) -> pd.DataFrame:
    """annotators.csv: how each joined, status, times, ratings and attention checks."""
    return pd.DataFrame([_annotator_row(d, a, current_df) for a in d.annotators], columns=[
        "annotator", "source", "status", "outcome", "code_shown", "created_at", "started_at", "completed_at",
        "n_ratings", "median_seconds", "attention_checks", "attention_passed", "prolific_pid",
        "prolific_study_id", "prolific_session_id", "prolific_status", "routed_at"])


def study_tables(slug: str, engine: Engine | None = None) -> dict[str, pd.DataFrame]:
    """The export tables of a study, by file name."""
    d = _read_study_rows(slug, engine)
    history = _history_table(d)
    current, cant_judge = _current_rows(d)
    current_df = _ratings_table(current)
    tables = {"ratings.csv": current_df, "ratings_history.csv": history, "items.csv": _items_table(d),
              "annotators.csv": _annotators_table(d, current_df)}
    if d.spec.cant_judge:
        tables["cant_judge.csv"] = pd.DataFrame(
            cant_judge, columns=["item_id", "annotator", "phase", "created_at", "comment"])
    tables.update(d.study_type.export_tables(tables, {d.item_key[i]: f for i, f in d.fields_of.items()}))
    return tables


def model_tables(ratings: pd.DataFrame, scale) -> dict[str, pd.DataFrame]:
    """``items_model.csv`` and ``raters_model.csv`` from the current main ratings (headers only
    while there are none)."""
    from metrics.study import fit_rater_model

    main = ratings[ratings["phase"] == "main"]
    items = pd.DataFrame(columns=["item_id", "score", "se", "n"])
    raters = pd.DataFrame(columns=["annotator", "severity", "consistency", "flag"])
    if len(main):
        model = fit_rater_model(main.astype({"rating": float}), scale=scale)
        items = model.items.rename_axis("item_id").reset_index()
        raters = model.raters.rename_axis("annotator").reset_index()
    return {"items_model.csv": items, "raters_model.csv": raters}


def study_model_tables(study, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The rater-model tables of a rating study's export (none for a study type whose answers
    are marks, not ratings on a scale)."""
    if get_type(study.study_type).custom_response:
        return {}
    return model_tables(tables["ratings.csv"], spec_of(study).scale.values)


def export_study(slug: str, out_dir: str | Path | None = None, engine: Engine | None = None,
                 now: datetime | None = None, *, actor: Actor = CLI) -> Path:
    """Write the export tables into ``<out_dir>/<study>/<UTC timestamp>/``; returns that folder.

    The folder is built under a temporary name and renamed into place complete; a second export
    in the same second gets ``<timestamp>-2`` (names are claimed by exclusive creation)."""
    (study,) = require_studies(actor, "change", [slug], engine)
    tables = study_tables(slug, engine)
    tables.update(study_model_tables(study, tables))
    staged = StagedFolder(study_folder(slug, out_dir, now), unique=True)
    with staged as folder:
        for name, frame in tables.items():
            (folder / name).write_bytes(csv_bytes(frame))
    try:
        with write_session(engine) as session:
            log_event(session, "exported", study.id, actor=actor.name, folder=str(staged.path),
                      ratings=len(tables["ratings.csv"]))
    except BaseException:
        shutil.rmtree(staged.path, ignore_errors=True)  # not logged: not exported
        raise
    return staged.path


def study_folder(slug: str, out_dir: str | Path | None = None, now: datetime | None = None) -> Path:
    """``<out_dir or exports>/<study>/<UTC time>``: where an export or a report of ``now`` goes."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return Path(out_dir or config.exports_dir()) / slug / stamp


def csv_bytes(frame: pd.DataFrame | str) -> bytes:
    if isinstance(frame, str):
        return frame.encode("utf-8")
    return frame.to_csv(index=False).encode("utf-8")


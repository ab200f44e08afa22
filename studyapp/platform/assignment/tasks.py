"""What an annotator sees: the ``Task`` on screen, the planned length of their sequence, their
pace, the items to go back to and the feedback on a practice item."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import bindparam, func, null, union_all
from sqlalchemy.engine import Engine, Row
from sqlmodel import Session, select

from ...core.models import Annotator, Assignment, Item, Rating, Study
from ...core.storage import fetch_row, read_session
from ...studytypes import get_type
from ..specs.spec_model import StudySpec, spec_of
from .claim_order import ASSIGNMENTS, study_cached


@dataclass(frozen=True)
class Task:
    """One item as an annotator sees it."""

    assignment_id: int
    item_key: str
    phase: str
    position: int
    fields: dict
    number: int          # 1-based place in the annotator's sequence
    total: int           # planned length of the sequence
    response: str | None  # the current answer when revisiting
    seconds_per_item: float | None = None  # the annotator's recent pace (median), once known
    comment: str | None = None  # the comment with the current answer when revisiting

    def seconds_left(self) -> float | None:
        """Estimated time for the items left, from the annotator's own recent pace."""
        if self.seconds_per_item is None:
            return None
        left = self.total - self.number + (1 if self.response is None else 0)
        return max(left, 0) * self.seconds_per_item


def planned_total(spec: StudySpec, n_main: int, n_practice: int = 0) -> int:
    """How many items an annotator is meant to rate (practice + main + attention checks +
    repeats)."""
    k = min(spec.items_per_annotator or n_main, n_main)
    return n_practice + k + spec.attention_checks + min(spec.repeat_items, k)


def plan(session: Session, annotator: Annotator | Row, study: Study | Row) -> int:
    """``planned_total`` for this annotator (their eligible main items, the practice items)."""
    return planned_total(spec_of(study), n_items_for(session, annotator, study),
                         n_items(session, study, "practice"))




# The statements of a page run, prepared once as Core (an ORM query built per call costs
# ~0.5 ms more, most of a page run's server time).
RATINGS = Rating.__table__
LATEST_ANSWER = (select(RATINGS.c.response, RATINGS.c.comment)
                 .where(RATINGS.c.assignment_id == bindparam("assignment"))
                 .order_by(RATINGS.c.revision.desc()).limit(1))
PLACE_IN_SEQUENCE = select(func.count(ASSIGNMENTS.c.id)).where(
    ASSIGNMENTS.c.annotator_id == bindparam("annotator"), ASSIGNMENTS.c.position <= bindparam("position"))
PACE_WINDOW, PACE_MIN = 20, 3
RECENT_SECONDS = (select(RATINGS.c.seconds_spent)
                  .where(RATINGS.c.annotator_id == bindparam("annotator"), RATINGS.c.revision == 0)
                  .order_by(RATINGS.c.id.desc()).limit(PACE_WINDOW))
# the annotator's sequence per phase, and (in rows of their own) the seconds of their recent pace
_RECENT = RECENT_SECONDS.subquery("recent")
SEQUENCE = union_all(
    select(ASSIGNMENTS.c.phase, func.count(ASSIGNMENTS.c.id), func.max(ASSIGNMENTS.c.position),
           func.count(ASSIGNMENTS.c.id).filter(ASSIGNMENTS.c.answered_at.is_(None)), null())
    .where(ASSIGNMENTS.c.annotator_id == bindparam("annotator")).group_by(ASSIGNMENTS.c.phase),
    select(null(), null(), null(), null(), _RECENT.c.seconds_spent))
ANSWERED = select(func.count(ASSIGNMENTS.c.id)).where(ASSIGNMENTS.c.annotator_id == bindparam("annotator"),
                                                    ASSIGNMENTS.c.answered_at.is_not(None))


def task_of(session: Session, assignment, total: int, number: int | None = None, *,
            fresh: bool = False, item: Row | None = None, recent: list[float] | None = None) -> Task:
    """The ``Task`` of ``assignment`` (a model object or a row of its table); ``fresh``: a claim
    made in this transaction, which has no answer yet (not looked up); ``item``: its item's
    ``item_key`` and ``fields_json``, and ``recent``: the seconds of the annotator's pace
    (``History.recent``), when already read."""
    run = session.connection().execute
    item = item or fetch_row(session, Item, assignment.item_id)
    latest, comment = (None, None) if fresh else (
        run(LATEST_ANSWER, {"assignment": assignment.id}).first() or (None, None))
    if number is None:
        number = run(PLACE_IN_SEQUENCE, {"annotator": assignment.annotator_id,
                                         "position": assignment.position}).scalar_one()
    return Task(assignment.id, item.item_key, assignment.phase, assignment.position,
                json.loads(item.fields_json), number, total, latest, _pace(
                    run(RECENT_SECONDS, {"annotator": assignment.annotator_id}).scalars().all()
                    if recent is None else recent), comment)


def _pace(recent: list[float]) -> float | None:
    """Median seconds of the annotator's last ``PACE_WINDOW`` first answers (None before
    ``PACE_MIN``): what the "time left" estimate multiplies."""
    return float(statistics.median(recent)) if len(recent) >= PACE_MIN else None


STUDY_PACE_WINDOW, STUDY_PACE_MIN = 200, 20
PACE_FLOOR_S = 1.0  # an answer quicker than this says nothing about how long an item takes


def expected_effort(annotator_id: int, engine: Engine | None = None) -> tuple[int, float]:
    """(items planned for the annotator, seconds an item): the median seconds of the study's
    last ``STUDY_PACE_WINDOW`` first answers given by people on an item screen (``seen_ms``
    known; never a simulated annotator's) that took at least ``PACE_FLOOR_S``, once there are
    ``STUDY_PACE_MIN`` of them; else the spec's ``[display] seconds_per_item``."""
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        recent = session.exec(select(Rating.seconds_spent)
                              .join(Annotator, Annotator.id == Rating.annotator_id)
                              .where(Rating.study_id == study.id, Rating.revision == 0,
                                     Rating.seen_ms.is_not(None), Annotator.source != "simulated",
                                     Rating.seconds_spent >= PACE_FLOOR_S)
                              .order_by(Rating.id.desc()).limit(STUDY_PACE_WINDOW)).all()
        seconds = (float(statistics.median(recent)) if len(recent) >= STUDY_PACE_MIN
                   else spec_of(study).seconds_per_item)
        return plan(session, annotator, study), seconds


class History(NamedTuple):
    """An annotator's sequence as ``sequence`` reads it."""

    counts: dict[str, int]   # assignments per phase
    position: int            # the position of their next assignment
    open_now: int            # how many of them are unanswered
    recent: list[float]      # the seconds of their last first answers (their pace, ``task_of``)


def sequence(session: Session, annotator_id: int) -> History:
    """The annotator's ``History``, read in one statement."""
    rows = session.connection().execute(SEQUENCE, {"annotator": annotator_id}).all()
    phases = [row for row in rows if row[0] is not None]
    return History({phase: count for phase, count, *_ in phases},
                     max((last + 1 for _, _, last, *_ in phases), default=0),
                     sum(open_now for *_, open_now, _ in phases), [row[4] for row in rows if row[0] is None])


def n_items(session: Session, study: Study | Row, role: str = "main") -> int:
    return study_cached(session, study, f"n {role}", lambda: session.exec(
        select(func.count(Item.id)).where(Item.study_id == study.id, Item.role == role)).one())


def n_items_for(session: Session, annotator: Annotator | Row, study: Study | Row) -> int:
    """How many main items this annotator may get (the type may restrict them, e.g. a
    with-image pass to the pairs the annotator rated before)."""
    eligible = eligible_ids(session, annotator, study)
    if spec_of(study).active:   # only the items drawn for humans
        return session.exec(select(func.count(Item.id)).where(
            Item.study_id == study.id, Item.role == "main", Item.active_priority > 0,
            *([Item.id.in_(eligible)] if eligible is not None else []))).one()
    return n_items(session, study) if eligible is None else len(eligible)


def eligible_ids(session: Session, annotator: Annotator | Row, study: Study | Row) -> list[int] | None:
    """Item ids the study type allows for this annotator (None: every item), e.g. a with-image
    pass hands each annotator only the pairs they rated before."""
    study_type = get_type(study.study_type)
    if not study_type.restricts_items:
        return None
    # a study's items never change after it is created: the answer is kept per study and
    # pseudonym (reading every item cost ~200 ms per next item on a 10,000-pair pass)
    def compute() -> tuple[int, ...]:
        rows = session.exec(select(Item.id, Item.fields_json).where(Item.study_id == study.id,
                                                                     Item.role == "main")).all()
        return tuple(i for i, f in rows if study_type.eligible(json.loads(f), annotator.pseudonym))
    return list(study_cached(session, study, f"eligible {annotator.pseudonym}", compute))


def task_before(annotator_id: int, position: int | None,
                engine: Engine | None = None) -> Task | None:
    """The answered item just before ``position`` (None: before the current one), to revise."""
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        query = select(Assignment).where(Assignment.annotator_id == annotator_id,
                                         Assignment.answered_at.is_not(None))
        if position is not None:
            query = query.where(Assignment.position < position)
        previous = session.exec(query.order_by(Assignment.position.desc()).limit(1)).first()
        if previous is None:
            return None
        return task_of(session, previous, plan(session, annotator, study))


def task_at(annotator_id: int, position: int, engine: Engine | None = None) -> Task | None:
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        found = session.exec(select(Assignment).where(Assignment.annotator_id == annotator_id,
                                                      Assignment.position == position)).first()
        if found is None:
            return None
        return task_of(session, found, plan(session, annotator, study))


@dataclass(frozen=True)
class Feedback:
    """What the annotator is told after answering a practice item."""

    fields: dict
    given: str
    expected: str
    explanation: str

    @property
    def correct(self) -> bool:
        return self.given == self.expected


def practice_feedback(annotator_id: int, assignment_id: int,
                      engine: Engine | None = None) -> Feedback | None:
    """The feedback for the annotator's answer to a practice item (None for other items)."""
    with read_session(engine) as session:
        assignment = session.get(Assignment, assignment_id)
        if assignment is None or assignment.annotator_id != annotator_id \
                or assignment.phase != "practice":
            return None
        item = session.get(Item, assignment.item_id)
        given = session.exec(select(Rating.response).where(Rating.assignment_id == assignment_id)
                             .order_by(Rating.revision.desc()).limit(1)).first()
    if given is None:
        return None
    fields = json.loads(item.fields_json)
    return Feedback(fields, given, item.expected, fields.get("feedback", ""))


def planned_count(annotator_id: int, engine: Engine | None = None) -> int:
    """How many items the annotator was meant to rate (``planned_total`` for them)."""
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        return plan(session, annotator, session.get(Study, annotator.study_id))


def answered_count(annotator_id: int, engine: Engine | None = None) -> int:
    with read_session(engine) as session:
        return session.connection().execute(ANSWERED, {"annotator": annotator_id}).scalar_one()

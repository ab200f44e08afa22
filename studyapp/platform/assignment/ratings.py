"""Submitting and revising ratings: an answer applies only to the item on screen, once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import bindparam, func, insert, update
from sqlalchemy.engine import Engine, Row
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from metrics import InputError

from ...core import auth
from ...core.models import CANT_JUDGE, Annotator, Rating, utcnow
from ...core.storage import log_event, row_type, write_session
from ...studytypes import get_type
from ..specs.spec_model import StudySpec, spec_of
from .join import lock_annotator, refuse_ended
from .tasks import ASSIGNMENTS, RATINGS


class StaleAnswer(InputError):
    """An answer for an item that is neither the current one nor one the annotator went back to."""


class AnswerTooSoon(InputError):
    """An answer given before its item had been fully drawn for the study's ``min_seen_ms``."""


def refuse_under_seen_floor(spec: StudySpec, seen_ms: int | None) -> None:
    """The seen floor, the one place the server enforces it: an answer from an item screen
    (``seen_ms`` not None: how long the item had been fully drawn when the answer came) below
    the study's ``min_seen_ms`` is refused (``AnswerTooSoon``), whatever the page let through.
    Answers not given on a screen (``seen_ms`` None: simulations, imports) are not timed."""
    if seen_ms is not None and seen_ms < spec.min_seen_ms:
        raise AnswerTooSoon(f"that answer came {max(int(seen_ms), 0)} ms after the item was shown, before "
                            f"it could be read (at least {spec.min_seen_ms} ms); it was not stored")


def submit(annotator_id: int, assignment_id: int, response, seconds_spent: float,
           engine: Engine | None = None, *, revise: bool = False,
           comment: str | None = None, seen_ms: int | None = None,
           in_view: bool | None = None) -> Rating:
    """Store a rating durably (committed on return). The same answer again returns the stored
    row; a different one is a new revision that supersedes it, allowed only with ``revise``
    (the annotator went back to the item). An answer to an item that is not the annotator's
    current one is refused (``StaleAnswer``) and logged. ``CANT_JUDGE`` and a ``comment`` are
    accepted when the study's spec enables them (``[answers]``). ``seen_ms`` / ``in_view``: what the
    item screen reports (how long the item had been fully drawn; whether every row the answer
    records had been in view), stored with the rating; an answer under the study's seen floor is
    refused (``refuse_under_seen_floor``) and logged. In an adaptive study the SEs
    are brought up to date afterwards (``adaptive.after_rating``): the rating is committed by
    then, so an error there is logged, not raised, and never retried. The page's key press goes
    through ``keypress.answer`` instead, which also claims the next item in the same transaction."""
    press = KeyPress(annotator_id, assignment_id, response, seconds_spent, revise=revise,
                     comment=comment, seen_ms=seen_ms, in_view=in_view)
    for attempt in range(3):
        try:
            with refusals_logged(press, engine), write_session(engine) as session:
                stored = store_answer(session, *lock_annotator(session, annotator_id), press)
            break
        except IntegrityError:
            if attempt == 2:
                raise
    after_answer(stored, engine)
    return Rating(**stored.rating._asdict())


@dataclass(frozen=True)
class KeyPress:
    """One answer as the item screen sends it (see ``submit`` for the fields)."""

    annotator_id: int
    assignment_id: int
    response: object
    seconds_spent: float
    revise: bool = False
    comment: str | None = None
    seen_ms: int | None = None
    in_view: bool | None = None

    def seen(self) -> dict:
        return {"seen_ms": None if self.seen_ms is None else int(self.seen_ms),
                "in_view": None if self.in_view is None else bool(self.in_view)}


@dataclass(frozen=True)
class Stored:
    """An answer stored (or the same one found): the rating, the annotator and study rows it
    was checked against, and the assignment as it was before the answer (rows of their tables)."""

    rating: Row
    annotator: Row
    study: Row
    assignment: Row


def after_answer(stored: Stored, engine: Engine | None) -> None:
    """Once the answer is committed: in an adaptive study, the SEs of a main item brought up to
    date (``adaptive.after_rating``; never raises)."""
    spec = spec_of(stored.study)
    if spec.adaptive and stored.assignment.phase == "main":
        from . import adaptive
        adaptive.after_rating(stored.study, spec, stored.rating.item_id, engine,
                              annotator_id=stored.annotator.id)


@contextmanager
def refusals_logged(press: KeyPress, engine: Engine | None) -> Iterator[None]:
    """A refused answer (``StaleAnswer``, ``AnswerTooSoon``) counted as an event in a transaction
    of its own (the answer's rolled back), then raised."""
    try:
        yield
    except (StaleAnswer, AnswerTooSoon) as exc:
        kind = "stale_answer_refused" if isinstance(exc, StaleAnswer) else "answer_under_floor"
        with write_session(engine) as session:
            study_id = session.exec(select(Annotator.study_id)
                                    .where(Annotator.id == press.annotator_id)).one()
            log_event(session, kind, study_id, press.annotator_id, assignment=press.assignment_id,
                      response=str(press.response), reason=str(exc), seen_ms=press.seen()["seen_ms"])
        raise


MAX_COMMENT = 2000


def _comment(text: str | None, enabled: bool) -> str | None:
    """The comment as stored: trimmed, None when empty; refused when the study has none or
    it holds control characters other than line breaks and tabs."""
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        return None
    if not enabled:
        raise InputError("this study does not take comments; your answer was not stored")
    if len(text) > MAX_COMMENT:
        raise InputError(f"your comment is {len(text)} characters long; at most {MAX_COMMENT}, "
                         "please shorten it (your answer was not stored)")
    if any(ord(c) < 32 and c not in "\n\t" or ord(c) == 127 for c in text):
        raise InputError("your comment holds control characters; your answer was not stored")
    return text


# The statements of an answer, prepared once as Core (see ``tasks``). The assignment answered
# is read with the annotator's current item and the number of its latest rating's revision: a
# first answer to the current item (every key press but a repeat or a revision) needs no more.
_OTHER = ASSIGNMENTS.alias("other")
TO_ANSWER = (select(ASSIGNMENTS,
                    select(_OTHER.c.id).where(_OTHER.c.annotator_id == bindparam("annotator"),
                                              _OTHER.c.answered_at.is_(None))
                    .order_by(_OTHER.c.position).limit(1).scalar_subquery().label("current_id"),
                    select(func.max(RATINGS.c.revision)).where(RATINGS.c.assignment_id == ASSIGNMENTS.c.id)
                    .scalar_subquery().label("last_revision"))
             .where(ASSIGNMENTS.c.id == bindparam("assignment")).with_for_update(of=ASSIGNMENTS))
LATEST = (select(RATINGS).where(RATINGS.c.assignment_id == bindparam("assignment"))
          .order_by(RATINGS.c.revision.desc()).limit(1))
MARK_ANSWERED = (update(ASSIGNMENTS)
                 .where(ASSIGNMENTS.c.id == bindparam("assignment"),
                        ASSIGNMENTS.c.annotator_id == bindparam("annotator"))
                 .values(answered_at=func.coalesce(ASSIGNMENTS.c.answered_at, bindparam("now"))))
ADD_RATING = insert(RATINGS)


def _submittable(session: Session, annotator: Row | None, study: Row | None, assignment_id: int):
    """The annotator's assignment (locked FOR UPDATE; with ``current_id``, the annotator's current
    item, and ``last_revision``, its latest rating's, None before any), when their study is open;
    else why not."""
    # FOR UPDATE: concurrent submits of one item queue here on PostgreSQL, so each sees the
    # last one's rating (SQLite's IMMEDIATE transaction already serialises writers)
    if annotator is not None:
        refuse_ended(annotator)   # its open items were released: say why, not "not yours"
    assignment = session.connection().execute(TO_ANSWER, {"assignment": assignment_id,
                                                          "annotator": annotator and annotator.id}).first()
    if assignment is None or annotator is None or assignment.annotator_id != annotator.id:
        raise InputError("this item is not assigned to you (any more)")
    if auth.is_revoked(annotator.token_hash):
        raise InputError("your access to this study has been withdrawn")
    if study.status != "open":
        raise InputError(f"this study is {study.status}; your answer was not stored")
    return assignment


def _parsed_response(study: Row, spec: StudySpec, response):
    if response == CANT_JUDGE and spec.cant_judge:
        return CANT_JUDGE
    return get_type(study.study_type).parse_response(response, spec.scale)


def _refuse_stale(latest, revise: bool, assignment) -> None:
    """A key press meant for another item: already answered (without revising), or not current."""
    if latest is not None and not revise:
        raise StaleAnswer("this item was already answered (perhaps in another tab); "
                          "your key press was not applied to it")
    if latest is None and assignment.answered_at is None and assignment.current_id != assignment.id:
        raise StaleAnswer("this item is not the one you are at; your answer was not stored")


def store_answer(session: Session, annotator: Row | None, study: Row | None, press: KeyPress) -> Stored:
    """The rating stored (or the same one found) in the caller's transaction, checked against
    ``annotator`` and ``study`` (their rows as ``lock_annotator`` read them; None: no such
    annotator)."""
    annotator_id, assignment_id = press.annotator_id, press.assignment_id
    assignment = _submittable(session, annotator, study, assignment_id)
    spec = spec_of(study)
    seen = press.seen()
    refuse_under_seen_floor(spec, seen["seen_ms"])
    value = _parsed_response(study, spec, press.response)
    comment = _comment(press.comment, spec.comments)
    run = session.connection().execute
    latest = None if assignment.last_revision is None else run(LATEST, {"assignment": assignment_id}).first()
    if latest is not None and (latest.response, latest.comment) == (value, comment):
        return Stored(row_type(RATINGS)._make(latest), annotator, study, assignment)
    _refuse_stale(latest, press.revise, assignment)
    now = utcnow()
    owned = run(MARK_ANSWERED, {"assignment": assignment_id, "annotator": annotator_id, "now": now})
    if owned.rowcount != 1:
        raise InputError("this item is not assigned to you (any more)")
    values = dict(study_id=study.id, assignment_id=assignment_id, annotator_id=annotator_id,
                  item_id=assignment.item_id, revision=0 if latest is None else latest.revision + 1,
                  response=value, seconds_spent=round(max(0.0, float(press.seconds_spent)), 3),
                  created_at=now, supersedes_id=None if latest is None else latest.id,
                  comment=comment, **seen)
    rating = row_type(RATINGS)(id=run(ADD_RATING, values).inserted_primary_key[0], **values)
    if latest is not None:
        log_event(session, "rating_revised", study.id, annotator_id, assignment=assignment_id,
                  old=latest.response, new=value)
    return Stored(rating, annotator, study, assignment)


def log_keys_not_applied(annotator_id: int, keys: list[str], item_id: int | None,
                         engine: Engine | None = None) -> None:
    """Count keys the page dropped (pressed while an answer was being saved, or continuing keys
    typed for the previous item; the page said "too fast — nothing was recorded"): one
    ``keys_not_applied`` event with the keys."""
    with write_session(engine) as session:
        study_id = session.exec(select(Annotator.study_id).where(Annotator.id == annotator_id)).one()
        log_event(session, "keys_not_applied", study_id, annotator_id, count=len(keys),
                  keys=[str(k)[:20] for k in keys[:50]], next_item=item_id)

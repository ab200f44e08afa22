"""One key press, one transaction: the answer stored and the next screen read together.

``answer`` is the door an annotator's key press goes through. In one write transaction it
locks the annotator's row (``join.lock_annotator``, the first lock, as for every write of their
sequence), reads it and the study once (in that statement), checks the answer as ``submit`` does (the seen floor,
a stale or repeated press, revising), stores it, claims the next item (``claim.claim_next``),
counts the answers given, and returns what the page draws next as a frozen ``Screen``. The
page keeps that screen for the one run that follows the press; any other run (a reload, a
reconnect, another tab) reads the database.

Two cases take more than the one transaction, both after it commits: a refused answer is
counted as an event in a transaction of its own (the answer's is rolled back), and in an
adaptive study the SEs are brought up to date (``adaptive.after_rating``). With spec
``[routing]`` that update may refit the rater model, which decides whether the annotator gets
another item, so there the next item is claimed after it, in a second transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from ...core.models import Annotator, Item, utcnow
from ...core.storage import fetch_row, write_session
from ..specs.spec_model import spec_of
from .claim import CLAIM_ATTEMPTS, Claimed, claim_next, refuse_inactive
from .join import AnnotatorSession, lock_annotator, session_info
from .ratings import KeyPress, Stored, after_answer, refusals_logged, store_answer
from .tasks import ANSWERED, Feedback, Task


@dataclass(frozen=True)
class Screen:
    """What the page shows after an answer: the annotator and study as the answer's transaction
    left them (``info``), the next item (None: the sequence is over, ``info`` says how), how
    many items are answered, the feedback on a practice item just answered, and the rating's id."""

    info: AnnotatorSession
    task: Task | None
    answered: int
    feedback: Feedback | None
    rating_id: int | None


def answer(annotator_id: int, assignment_id: int, response, seconds_spent: float,
           engine: Engine | None = None, *, revise: bool = False, comment: str | None = None,
           seen_ms: int | None = None, in_view: bool | None = None) -> Screen:
    """Store the answer (as ``submit``: refused with ``StaleAnswer``, ``AnswerTooSoon`` or
    ``InputError`` as there, and logged) and return the next ``Screen``, in one transaction
    (see the module's docstring for the exceptions). A claim race (another annotator took the
    slot) rolls the whole transaction back and runs it again."""
    press = KeyPress(annotator_id, assignment_id, response, seconds_spent, revise=revise,
                     comment=comment, seen_ms=seen_ms, in_view=in_view)

    def store_and_claim() -> tuple[Stored, Screen | None]:
        with refusals_logged(press, engine), write_session(engine) as session:
            annotator, study = lock_annotator(session, annotator_id)
            stored = store_answer(session, annotator, study, press)
            if spec_of(stored.study).routing and stored.assignment.phase == "main":
                return stored, None   # the refit may decide the next item: claimed after it
            return stored, _screen(session, stored, claim_next(session, annotator, stored.study, utcnow()))

    def claim_after(stored: Stored) -> Screen:
        with write_session(engine) as session:
            annotator, study = lock_annotator(session, annotator_id)
            refuse_inactive(annotator)
            return _screen(session, replace(stored, annotator=annotator, study=study),
                           claim_next(session, annotator, study, utcnow()))

    stored, screen = _retried(store_and_claim, "store the answer and claim")
    after_answer(stored, engine)
    return screen if screen is not None else _retried(lambda: claim_after(stored), "claim an item")


def _retried(attempt, what: str):
    """``attempt()``, run again (from a new transaction) while a claim race makes it fail: a
    slot taken meanwhile, or the same answer stored by another request."""
    for _ in range(CLAIM_ATTEMPTS):
        try:
            return attempt()
        except IntegrityError:
            continue
    raise RuntimeError(f"could not {what} after {CLAIM_ATTEMPTS} attempts")


def _screen(session: Session, stored: Stored, claimed: Claimed) -> Screen:
    annotator, study = stored.annotator, stored.study
    if claimed.task is None:   # the claim may have marked the annotator completed or routed
        session.flush()
        annotator = fetch_row(session, Annotator, annotator.id)
    answered = claimed.answered
    if answered is None:
        answered = session.connection().execute(ANSWERED, {"annotator": annotator.id}).scalar_one()
    return Screen(session_info(annotator.id, annotator, study), claimed.task, answered,
                  _feedback(session, stored), stored.rating.id)


def _feedback(session: Session, stored: Stored) -> Feedback | None:
    """The feedback on a practice item just answered (None for other items)."""
    if stored.assignment.phase != "practice":
        return None
    item = fetch_row(session, Item, stored.assignment.item_id)
    fields = json.loads(item.fields_json)
    return Feedback(fields, stored.rating.response, item.expected, fields.get("feedback", ""))

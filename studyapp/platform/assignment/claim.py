"""The next item: the first unanswered assignment, else a new claim by the first of the named
claim steps that has one (``CLAIM_STEPS``: practice, an attention check due, a main item's free
slot by compare-and-set under the study's policy, a stale claim taken over, the attention
checks still owed, a retest), after the routing check; the step that served is logged at DEBUG.

A claim runs under the annotator's row lock, taken before anything else is locked
(``join.lock_annotator``; the package docstring states the lock order), and looks for an open
item again under it. The annotator and the study are read as rows of their tables (in the
statement that takes the lock, ``join.lock_annotator``, or by ``storage.fetch_row``), and the
statements every claim runs are prepared once: a key press waits on this path
(``keypress.answer``)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import BigInteger, bindparam, case, cast, exists, func, insert, or_, update
from sqlalchemy.engine import Engine, Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased
from sqlmodel import Session, select

from metrics import InputError

from ...core import auth
from ...core.models import Annotator, Assignment, Item, Study, utcnow
from ...core.storage import fetch_row, log_event, row_type, write_session
from ..specs.spec_model import StudySpec, spec_of
from .claim_order import (
    ASSIGNMENTS,
    ITEMS,
    PERMUTATION_MODULUS,
    annotator_order,
    forget_order,
    least_claimed_in_order,
    main_items,
    permuted,
)
from .join import lock_annotator, refuse_ended
from .tasks import Task, eligible_ids, n_items, n_items_for, planned_total, sequence, task_of

LOG = logging.getLogger("studyapp.platform.assignment.claim")

CLAIM_ATTEMPTS = 50

# The statements of a new claim, prepared once as Core (see ``tasks``).
OPEN_ASSIGNMENT = (select(ASSIGNMENTS)
                   .where(ASSIGNMENTS.c.annotator_id == bindparam("annotator"),
                          ASSIGNMENTS.c.answered_at.is_(None))
                   .order_by(ASSIGNMENTS.c.position).limit(1))
COUNT_CLAIM = (update(ITEMS).where(ITEMS.c.id == bindparam("item"), ITEMS.c.n_claims == bindparam("seen"))
               .values(n_claims=bindparam("seen") + 1).returning(ITEMS.c.item_key, ITEMS.c.fields_json))
ADD_ASSIGNMENT = insert(ASSIGNMENTS)


def _order_key(annotator: Row, spec: StudySpec):
    """The annotator's own item order: a seeded permutation of item ids, ``(a·id + b)³ mod p``,
    or the file order."""
    if spec.order == "fixed":
        return Item.position
    return _permuted(cast(Item.id, BigInteger), annotator)


def _permuted(ids, annotator: Row):
    """``claim_order.permuted`` by the annotator's permutation."""
    return permuted(ids, *_permutation(annotator))


def _permutation(annotator: Row) -> tuple[int, int]:
    """(a, b) of the annotator's permutation; b is never small, so even seed 0 is scrambled."""
    return (1 + annotator.seed % (PERMUTATION_MODULUS - 1),
            (annotator.seed * 7919 + 1_000_003) % PERMUTATION_MODULUS)


def _rank(session: Session, annotator: Row, study: Row, spec: StudySpec):
    """``_order_key`` in Python: item id -> its rank in the annotator's order."""
    if spec.order == "fixed":
        positions = dict(main_items(session, study))
        return positions.__getitem__
    return lambda item_id: _permuted(item_id, annotator)


def _in_order(ids, rank, annotator: Row, spec: StudySpec) -> list[int]:
    """``ids`` sorted by ``rank`` (``_rank``'s); the permutation's keys computed for all ids at
    once in int64, a tenth of sorting by the Python key."""
    if spec.order == "fixed":
        return sorted(ids, key=rank)
    ordered = np.fromiter(ids, dtype=np.int64)
    return ordered[np.argsort(_permuted(ordered, annotator))].tolist()


def next_item(annotator_id: int, engine: Engine | None = None,
              now: datetime | None = None) -> Task | None:
    """The annotator's first unanswered item, claiming a new one when needed; None when the
    sequence is finished (the annotator is then marked completed, unless nothing was left for
    them to rate at all)."""
    for _ in range(CLAIM_ATTEMPTS):
        try:
            with write_session(engine) as session:
                annotator = fetch_row(session, Annotator, annotator_id)
                refuse_inactive(annotator)
                study = fetch_row(session, Study, annotator.study_id)
                shown = open_item(session, annotator, study)
                if shown is not None:   # read without a lock: a read-only database still shows it
                    return shown
                annotator, study = lock_annotator(session, annotator_id)   # the claim: first lock
                refuse_inactive(annotator)
                return claim_next(session, annotator, study, now or utcnow()).task
        except IntegrityError:
            continue  # another annotator took the slot (or this one, in another tab): look again
    raise RuntimeError(f"could not claim an item after {CLAIM_ATTEMPTS} attempts")


def refuse_inactive(annotator: Row) -> None:
    """An annotator whose access was withdrawn, or whose Prolific submission ended, gets no item."""
    if auth.is_revoked(annotator.token_hash):
        raise InputError("your access to this study has been withdrawn")
    refuse_ended(annotator)


@dataclass(frozen=True)
class Claimed:
    """What ``claim_next`` found: the item on screen next (None: the sequence is over) and how
    many of the annotator's assignments are answered (None when not counted on the way)."""

    task: Task | None
    answered: int | None


@dataclass
class _NewAssignment:
    """Where the annotator's next assignment goes: its position, number and claim time, and the
    seconds of the annotator's pace (``tasks.History.recent``)."""

    session: Session
    study_id: int
    annotator_id: int
    position: int
    now: datetime
    total: int
    number: int
    recent: list[float]

    def add(self, item_id: int, phase: str, slot: int | None = None, item: Row | None = None) -> Task:
        """The assignment added; ``item``: its item's row, when already read."""
        values = dict(study_id=self.study_id, annotator_id=self.annotator_id, item_id=item_id, phase=phase,
                      position=self.position, slot=slot, claimed_at=self.now, answered_at=None)
        assignment = row_type(ASSIGNMENTS)(
            id=self.session.connection().execute(ADD_ASSIGNMENT, values).inserted_primary_key[0], **values)
        return task_of(self.session, assignment, self.total, self.number, fresh=True, item=item,
                       recent=self.recent)


@dataclass
class ClaimState:
    """What every claim step looks at: the annotator and study rows, the spec, the assignments
    per phase so far, the main items meant for the annotator (``k``) and the practice items."""

    session: Session
    annotator: Row
    study: Row
    spec: StudySpec
    counts: dict
    k: int
    n_practice: int
    new: _NewAssignment

    def count(self, phase: str) -> int:
        return self.counts.get(phase, 0)


def practice_step(state: ClaimState) -> Task | None:
    """Practice items come first, in file order."""
    if state.count("practice") >= state.n_practice:
        return None
    item_id = state.session.exec(select(Item.id).where(
        Item.study_id == state.study.id, Item.role == "practice", not_mine(state.annotator.id))
        .order_by(Item.position).limit(1)).first()
    return None if item_id is None else state.new.add(item_id, "practice")


def attention_due_step(state: ClaimState) -> Task | None:
    """An attention check when one is due: the checks are spread evenly through the main items."""
    n_att, checks = state.count("attention"), state.spec.attention_checks
    if not (n_att < checks and state.count("main") >= (n_att + 1) * state.k // (checks + 1)):
        return None
    item_id = _attention_item(state.session, state.annotator, state.spec)
    return None if item_id is None else state.new.add(item_id, "attention")


def main_step(state: ClaimState) -> Task | None:
    """A free slot of a main item (by the study's policy, ``main_policy``), counted on the item
    by compare-and-set."""
    if state.count("main") >= state.k:
        return None
    claim = free_slot(state.session, state.annotator, state.study, state.spec,
                      handed=state.count("main"))
    if claim is None:
        return None
    item_id, seen = claim
    counted = state.session.connection().execute(COUNT_CLAIM, {"item": item_id, "seen": seen}).first()
    if counted is None:
        raise IntegrityError("claim counter moved", None, Exception())  # look again
    return state.new.add(item_id, "main", slot=seen, item=counted)


def take_over_step(state: ClaimState) -> Task | None:
    """No main item has a free slot: a claim left unanswered past the timeout, taken over."""
    if state.count("main") >= state.k:
        return None
    new = state.new
    taken = _take_over(state.session, state.annotator, state.study, state.spec, new.position, new.now)
    return None if taken is None else task_of(state.session, taken, new.total, new.number, recent=new.recent)


def attention_owed_step(state: ClaimState) -> Task | None:
    """Once the main items run out: the attention checks still owed."""
    if state.count("main") == 0 or state.count("attention") >= state.spec.attention_checks:
        return None
    item_id = _attention_item(state.session, state.annotator, state.spec)
    return None if item_id is None else state.new.add(item_id, "attention")


def retest_step(state: ClaimState) -> Task | None:
    """Last, ``repeat_items`` of the annotator's own answered main items again."""
    if state.count("main") == 0 or state.count("retest") >= min(state.spec.repeat_items, state.k):
        return None
    item_id = _retest_item(state.session, state.annotator)
    return None if item_id is None else state.new.add(item_id, "retest")


# The claim policies in the order they are tried; the first that hands out an item serves it.
CLAIM_STEPS = (("practice", practice_step), ("attention", attention_due_step), ("main", main_step),
               ("take-over", take_over_step), ("attention", attention_owed_step), ("retest", retest_step))


def main_policy(spec: StudySpec) -> str:
    """How the main step picks its item: ``adaptive`` (spec ``[adaptive]``), ``active``
    (``[active]``), both, or ``default`` (least claimed, then the annotator's own order)."""
    return "+".join(name for name, on in (("active", spec.active), ("adaptive", spec.adaptive)) if on) or "default"


def _planned(session: Session, annotator: Row, study: Row, spec: StudySpec) -> tuple[int, int, int]:
    """(the planned length of the annotator's sequence, their main items, the practice items)."""
    n_main_items = n_items_for(session, annotator, study)
    n_practice = n_items(session, study, "practice")
    return planned_total(spec, n_main_items, n_practice), n_main_items, n_practice


def open_item(session: Session, annotator: Row, study: Row) -> Task | None:
    """The annotator's first unanswered item, if any (read only: no lock, nothing written)."""
    open_one = session.connection().execute(OPEN_ASSIGNMENT, {"annotator": annotator.id}).first()
    if open_one is None:
        return None
    return task_of(session, open_one, _planned(session, annotator, study, spec_of(study))[0])


def claim_next(session: Session, annotator: Row, study: Row, now: datetime) -> Claimed:
    """``next_item`` in the caller's transaction, for an annotator whose row ``lock_annotator``
    read (and locked) first: the open item, else a new claim by the first of ``CLAIM_STEPS``
    that has one (after the routing check), else the end of the sequence."""
    spec = spec_of(study)
    total, n_main_items, n_practice = _planned(session, annotator, study, spec)
    history = sequence(session, annotator.id)
    counts = history.counts
    if history.open_now:
        open_one = session.connection().execute(OPEN_ASSIGNMENT, {"annotator": annotator.id}).first()
        return Claimed(task_of(session, open_one, total, recent=history.recent), None)
    if study.status != "open":
        raise InputError(f"this study is {study.status}")
    answered = sum(counts.values())   # nothing is open: every assignment is answered
    if spec.routing and _routed_out(session, annotator, study, spec, counts.get("main", 0), now):
        LOG.debug("annotator %s: the routing step ended the session", annotator.id)
        forget_order(session, study, _order_name(annotator))
        return Claimed(None, answered)
    new = _NewAssignment(session, study.id, annotator.id, history.position, now, total, answered + 1,
                         history.recent)
    state = ClaimState(session, annotator, study, spec, counts,
                       min(spec.items_per_annotator or n_main_items, n_main_items), n_practice, new)
    for name, step in CLAIM_STEPS:
        task = step(state)
        if task is not None:
            LOG.debug("annotator %s: item %s (assignment %s) from the %s step", annotator.id,
                      task.item_key, task.assignment_id, main_policy(spec) if name == "main" else name)
            return Claimed(task, answered)
    _mark_completed(session, annotator, study, answered + 1, now)
    return Claimed(None, answered)


def _mark_completed(session: Session, annotator: Row, study: Row, number: int,
                    now: datetime) -> None:
    forget_order(session, study, _order_name(annotator))   # no more claims: their order is done
    if annotator.completed_at is None and number > 1:  # nothing rated yet: not "completed"
        session.get(Annotator, annotator.id).completed_at = now
        log_event(session, "completed", study.id, annotator.id, rated=number - 1)


def _routed_out(session: Session, annotator: Row, study: Row, spec: StudySpec,
                n_main: int, now: datetime) -> bool:
    """Spec ``[routing]``: whether the annotator's session ends here because the study's fitted
    rater model puts their consistency below the threshold (``adaptive.routed_consistency``);
    checked before each new item, so nothing of theirs is left unanswered. Marks them routed
    and completed (their part ends; they are paid as agreed, with ``routed_code``)."""
    if annotator.routed_at is not None:
        return True
    if study.rater_model is None:
        return False
    from .adaptive import routed_consistency
    consistency = routed_consistency(json.loads(study.rater_model), annotator.pseudonym, n_main,
                                     spec.routing)
    if consistency is None:
        return False
    stored = session.get(Annotator, annotator.id)
    stored.routed_at = now
    stored.completed_at = stored.completed_at or now
    log_event(session, "routed_out", study.id, annotator.id, consistency=round(consistency, 3),
              ratings=n_main)
    return True


def _order_name(annotator: Row) -> str:
    return f"order {annotator.id}"


def not_mine(annotator_id: int):
    """The item (``Item.id``) has never been handed to this annotator."""
    other = aliased(Assignment)
    return ~exists().where(other.item_id == Item.id, other.annotator_id == annotator_id)


def free_slot(session: Session, annotator: Row, study: Row, spec: StudySpec,
              handed: int = 0) -> tuple[int, int] | None:
    """(item id, slot) of the least-claimed item with a free slot that the annotator lacks;
    ``handed``: how many main items they had so far (where the walk of their order starts its
    first window, ``least_claimed_in_order``)."""
    eligible = eligible_ids(session, annotator, study)
    if not spec.active and not spec.adaptive:
        rank = _rank(session, annotator, study, spec)
        order = annotator_order(session, study, _order_name(annotator), lambda: _in_order(
            (i for i, _ in main_items(session, study)) if eligible is None else eligible, rank, annotator, spec))
        found = least_claimed_in_order(session, study, annotator.id, eligible, order, rank, handed,
                                       None if spec.order == "fixed" else _permutation(annotator))
        if found is not None:
            return found
        # other annotators' claims between its queries can empty the claim level it read first:
        # the single query below then decides (it finds nothing only when no slot is free)
    conditions = [Item.study_id == study.id, Item.role == "main",
                  Item.n_claims < study.raters_per_item, not_mine(annotator.id)]
    if eligible is not None:
        conditions.append(Item.id.in_(eligible))
    query = select(Item.id, Item.n_claims).where(*conditions)
    order = [Item.n_claims, _order_key(annotator, spec)]
    if spec.active:   # only the drawn items; among the least claimed, the most uncertain first
        query = query.where(Item.active_priority > 0)
        order = [Item.n_claims, Item.active_priority]
    if spec.adaptive:
        below_min = Item.n_claims < spec.adaptive["min_raters"]
        query = query.where(or_(below_min, Item.model_se.is_(None),
                                Item.model_se > spec.adaptive["target_se"]))
        order = [case((below_min, 0), else_=1), func.coalesce(Item.model_se, 1e9).desc(), *order]
    row = session.exec(query.order_by(*order).limit(1)).first()
    return (row[0], row[1]) if row else None


def _take_over(session: Session, annotator: Row, study: Row, spec: StudySpec,
               position: int, now: datetime) -> Assignment | None:
    """Move a stale unanswered main claim to this annotator (compare-and-set update)."""
    cutoff = now - timedelta(minutes=spec.claim_timeout_minutes)
    stale = session.exec(
        select(Assignment).join(Item, Item.id == Assignment.item_id)
        .where(Assignment.study_id == study.id, Assignment.phase == "main",
               Assignment.answered_at.is_(None), Assignment.claimed_at < cutoff,
               Assignment.annotator_id != annotator.id, not_mine(annotator.id),
               *([Item.id.in_(eligible)] if (eligible := eligible_ids(session, annotator, study))
                 is not None else []))
        .order_by(Assignment.claimed_at).limit(1)).first()
    if stale is None:
        return None
    previous = stale.annotator_id
    result = session.exec(
        update(Assignment)
        .where(Assignment.id == stale.id, Assignment.annotator_id == previous,
               Assignment.answered_at.is_(None))
        .values(annotator_id=annotator.id, position=position, claimed_at=now))
    if result.rowcount != 1:
        return None
    log_event(session, "claim_taken_over", study.id, annotator.id, assignment=stale.id,
              previous_annotator=previous)
    session.expire(stale)
    return session.get(Assignment, stale.id)


def _attention_item(session: Session, annotator: Row, spec: StudySpec) -> int | None:
    return session.exec(select(Item.id).where(Item.study_id == annotator.study_id,
                                              Item.role == "attention", not_mine(annotator.id))
                        .order_by(_order_key(annotator, spec)).limit(1)).first()


def _retest_item(session: Session, annotator: Row) -> int | None:
    """One of the annotator's answered main items not yet repeated, in a seeded order."""
    retested = select(Assignment.item_id).where(Assignment.annotator_id == annotator.id,
                                                Assignment.phase == "retest")
    candidates = list(session.exec(
        select(Assignment.item_id).where(Assignment.annotator_id == annotator.id,
                                         Assignment.phase == "main",
                                         Assignment.answered_at.is_not(None),
                                         Assignment.item_id.not_in(retested))
        .order_by(Assignment.position)))
    if not candidates:
        return None
    return candidates[annotator.seed % len(candidates)]

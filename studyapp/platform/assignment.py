"""The annotator side: joining a study, the next item, submitting and revising ratings.

Rules (all state lives in the database, so a closed tab, another device or a server restart
resumes where the annotator stopped):

- An annotator's sequence is a list of assignments with increasing ``position``. The next item
  is the first unanswered assignment; only when there is none is a new one claimed.
- A main-phase claim takes one of the item's ``raters_per_item`` slots: the insert names the
  slot (the item's claim counter as read), the counter moves only from the value read
  (compare-and-set), and ``(item_id, slot)`` is unique, so two annotators racing for the last
  slot cannot both get it; the loser's transaction rolls back and it looks again. Candidates are items the
  annotator has not had and that still have a free slot, least-claimed first, then in the
  annotator's own order (a permutation fixed by the stored seed, or the file order).
- In a study with active selection (spec ``[active]``) only the items drawn for humans
  (``Item.active_priority`` > 0) are handed out: least-claimed first, then the most uncertain
  (priority 1 first); an item not drawn is never handed out, so the recorded inclusion
  probabilities (``Item.active_probability``) keep the estimates unbiased.
- With spec ``[routing]`` an annotator whose fitted consistency falls below the threshold
  after ``min_ratings`` main ratings gets no new item: the session ends (``routed_at``).
- In an adaptive study (spec ``[adaptive]``, ``studyapp.platform.adaptive``) the slots are
  ``max_raters``, and the candidates are the items below ``min_raters`` claims or whose rater
  model SE is above ``target_se`` (or not known yet): those below ``min_raters`` first, then
  the largest SE, then least-claimed; the claim itself is the same compare-and-set.
- A claim left unanswered for ``claim_timeout_minutes`` may be taken over by another
  annotator once no item has a free slot (a conditional update: only one taker wins).
- A Prolific submission reported RETURNED or TIMED-OUT gives its unanswered claims back
  (``prolific.release_claims``): the item's highest slot moves into the freed one and the
  counter goes down by one, so the slots stay 0..n_claims-1; that annotator's session ends.
- Attention checks are spread evenly through the main items; ``repeat_items`` of the
  annotator's own items come back at the end (phase ``retest``).
- Ratings are appended: a changed answer is a new revision superseding the previous one; the
  same answer again (a double submit) returns the stored row.
- An answer names the assignment that was on screen. It is applied only to the annotator's
  current item (the first unanswered one) or, with ``revise=True``, to an item they went back
  to; anything else (a key press reaching an item already answered, e.g. in another tab) is
  refused with ``StaleAnswer`` and counted as a ``stale_answer_refused`` event.
"""

from __future__ import annotations

import json
import secrets
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, case, cast, exists, func, or_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased
from sqlmodel import Session, select

from metrics import InputError
from metrics.core import check_name

from ..core import auth
from ..core.models import CANT_JUDGE, Annotator, Assignment, Item, Rating, Study, utcnow
from ..core.storage import log_event, read_session, write_session
from ..studytypes import get_type
from .claim_order import annotator_order, least_claimed_in_order, main_items, study_cached
from .prolific import ENDED, NOT_JOINABLE, ended_message, participant_ids, takes_prolific
from .spec_model import StudySpec, spec_of

PERMUTATION_MODULUS = 2_147_483_647  # prime; (id * a + b) mod p permutes ids below p
CLAIM_ATTEMPTS = 50


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


def plan(session: Session, annotator: Annotator, study: Study) -> int:
    """``planned_total`` for this annotator (their eligible main items, the practice items)."""
    return planned_total(spec_of(study), _n_items_for(session, annotator, study),
                         _n_items(session, study, "practice"))


_plan = plan


def _order_key(annotator: Annotator, spec: StudySpec):
    """The annotator's own item order: a seeded permutation of item ids, or the file order."""
    if spec.order == "fixed":
        return Item.position
    a, b = _permutation(annotator)
    return (cast(Item.id, BigInteger) * a + b) % PERMUTATION_MODULUS


def _permutation(annotator: Annotator) -> tuple[int, int]:
    return (1 + annotator.seed % (PERMUTATION_MODULUS - 1),
            (annotator.seed * 7919) % PERMUTATION_MODULUS)


def _rank(session: Session, annotator: Annotator, study: Study, spec: StudySpec):
    """``_order_key`` in Python: item id -> its rank in the annotator's order."""
    if spec.order == "fixed":
        positions = dict(main_items(session, study))
        return positions.__getitem__
    a, b = _permutation(annotator)
    return lambda item_id: (item_id * a + b) % PERMUTATION_MODULUS


# ---------------------------------------------------------------------------------- joining
def annotator_by_token(session: Session, token: str) -> Annotator | None:
    if not token:
        return None
    return session.exec(select(Annotator).where(Annotator.token_hash == auth.token_hash(token))).first()


def join_with_code(slug: str, code: str, pseudonym: str,
                   engine: Engine | None = None) -> tuple[Annotator, str]:
    """A new annotator from the study's access code and a chosen pseudonym; returns the
    annotator and their personal token (the key of their resume link)."""
    pseudonym = check_name(pseudonym, "the pseudonym")
    if not 1 <= len(pseudonym) <= 64:
        raise InputError("choose a pseudonym of 1 to 64 characters")
    with write_session(engine) as session:
        study = session.exec(select(Study).where(Study.slug == slug)).first()
        if study is None or not study.access_code_hash or not auth.check_slow_hash(
                code, study.access_code_hash):
            raise InputError("unknown study or wrong access code")
        if study.status == "closed":
            raise InputError("this study is closed")
        taken = session.exec(select(Annotator.id).where(Annotator.study_id == study.id,
                                                        Annotator.pseudonym == pseudonym)).first()
        if taken is not None:
            raise InputError(f"the pseudonym {pseudonym!r} is taken; to continue an earlier "
                             "session open your personal link")
        token = auth.new_token()
        annotator = Annotator(study_id=study.id, pseudonym=pseudonym, source="code",
                              token_hash=auth.token_hash(token), seed=secrets.randbits(30))
        session.add(annotator)
        session.flush()
        log_event(session, "annotator_joined", study.id, annotator.id, source="code")
    return annotator, token


def join_prolific(slug: str, pid: str, prolific_study: str, prolific_session: str,
                  engine: Engine | None = None) -> Annotator:
    """The annotator of a Prolific participant (created on first arrival, found afterwards).
    Ids not in Prolific's format, an unknown study, and a new arrival at a study that is not
    open or takes no Prolific participants all get ``prolific.NOT_JOINABLE``."""
    pid, prolific_study, prolific_session = participant_ids(pid, prolific_study, prolific_session)
    for attempt in range(2):
        try:
            with write_session(engine) as session:
                study = session.exec(select(Study).where(Study.slug == slug)).first()
                if study is None:
                    raise InputError(NOT_JOINABLE)
                found = session.exec(select(Annotator).where(Annotator.study_id == study.id,
                                                             Annotator.prolific_pid == pid)).first()
                if found is not None:
                    if auth.is_revoked(found.token_hash):
                        raise InputError("your access to this study has been withdrawn")
                    _refuse_ended(found)
                    return found
                if study.status != "open" or not takes_prolific(spec_of(study)):
                    raise InputError(NOT_JOINABLE)
                annotator = Annotator(
                    study_id=study.id, pseudonym=f"prolific-{auth.token_hash(pid)[:10]}",
                    source="prolific", token_hash=auth.token_hash(auth.new_token()),
                    seed=secrets.randbits(30), prolific_pid=pid,
                    prolific_study_id=prolific_study, prolific_session_id=prolific_session)
                session.add(annotator)
                session.flush()
                log_event(session, "annotator_joined", study.id, annotator.id, source="prolific")
                return annotator
        except IntegrityError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def accept_instructions(annotator_id: int, engine: Engine | None = None) -> None:
    with write_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        if annotator.started_at is None:
            annotator.started_at = utcnow()
            session.add(annotator)
            log_event(session, "instructions_accepted", annotator.study_id, annotator.id)


# ---------------------------------------------------------------------------------- items
def _task(session: Session, assignment: Assignment, total: int, number: int | None = None) -> Task:
    item = session.get(Item, assignment.item_id)
    latest, comment = session.exec(select(Rating.response, Rating.comment)
                                   .where(Rating.assignment_id == assignment.id)
                                   .order_by(Rating.revision.desc()).limit(1)).first() or (None, None)
    if number is None:
        number = session.exec(select(func.count(Assignment.id)).where(
            Assignment.annotator_id == assignment.annotator_id,
            Assignment.position <= assignment.position)).one()
    return Task(assignment.id, item.item_key, assignment.phase, assignment.position,
                json.loads(item.fields_json), number, total, latest,
                _pace(session, assignment.annotator_id), comment)


PACE_WINDOW, PACE_MIN = 20, 3


def _pace(session: Session, annotator_id: int) -> float | None:
    """Median seconds of the annotator's last ``PACE_WINDOW`` first answers (None before
    ``PACE_MIN``): what the "time left" estimate multiplies."""
    recent = session.exec(select(Rating.seconds_spent).where(Rating.annotator_id == annotator_id,
                                                             Rating.revision == 0)
                          .order_by(Rating.id.desc()).limit(PACE_WINDOW)).all()
    return float(statistics.median(recent)) if len(recent) >= PACE_MIN else None


STUDY_PACE_WINDOW, STUDY_PACE_MIN = 200, 20


def expected_effort(annotator_id: int, engine: Engine | None = None) -> tuple[int, float]:
    """(items planned for the annotator, seconds an item): the median seconds of the study's
    last ``STUDY_PACE_WINDOW`` first answers once there are ``STUDY_PACE_MIN``, else the spec's
    ``[display] seconds_per_item``."""
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        recent = session.exec(select(Rating.seconds_spent).where(Rating.study_id == study.id,
                                                                 Rating.revision == 0)
                              .order_by(Rating.id.desc()).limit(STUDY_PACE_WINDOW)).all()
        seconds = (float(statistics.median(recent)) if len(recent) >= STUDY_PACE_MIN
                   else spec_of(study).seconds_per_item)
        return _plan(session, annotator, study), seconds


def _counts(session: Session, annotator_id: int) -> dict[str, int]:
    rows = session.exec(select(Assignment.phase, func.count(Assignment.id))
                        .where(Assignment.annotator_id == annotator_id)
                        .group_by(Assignment.phase)).all()
    return dict(rows)


def _n_items(session: Session, study: Study, role: str = "main") -> int:
    return study_cached(session, study, f"n {role}", lambda: session.exec(
        select(func.count(Item.id)).where(Item.study_id == study.id, Item.role == role)).one())


def _n_items_for(session: Session, annotator: Annotator, study: Study) -> int:
    """How many main items this annotator may get (the type may restrict them, e.g. a
    with-image pass to the pairs the annotator rated before)."""
    eligible = _eligible_ids(session, annotator, study)
    if spec_of(study).active:   # only the items drawn for humans
        return session.exec(select(func.count(Item.id)).where(
            Item.study_id == study.id, Item.role == "main", Item.active_priority > 0,
            *([Item.id.in_(eligible)] if eligible is not None else []))).one()
    return _n_items(session, study) if eligible is None else len(eligible)


def next_item(annotator_id: int, engine: Engine | None = None,
              now: datetime | None = None) -> Task | None:
    """The annotator's first unanswered item, claiming a new one when needed; None when the
    sequence is finished (the annotator is then marked completed, unless nothing was left for
    them to rate at all)."""
    for _ in range(CLAIM_ATTEMPTS):
        try:
            with write_session(engine) as session:
                return _next_item(session, annotator_id, now or utcnow())
        except IntegrityError:
            continue  # another annotator took the slot (or this one, in another tab): look again
    raise RuntimeError(f"could not claim an item after {CLAIM_ATTEMPTS} attempts")


@dataclass
class _NewAssignment:
    """Where the annotator's next assignment goes: its position, number and claim time."""

    session: Session
    study_id: int
    annotator_id: int
    position: int
    now: datetime
    total: int
    number: int

    def add(self, item_id: int, phase: str, slot: int | None = None) -> Task:
        assignment = Assignment(study_id=self.study_id, annotator_id=self.annotator_id, item_id=item_id,
                                phase=phase, position=self.position, slot=slot, claimed_at=self.now)
        self.session.add(assignment)
        self.session.flush()
        return _task(self.session, assignment, self.total, self.number)


def _next_position(session: Session, annotator_id: int) -> int:
    last = session.exec(select(func.max(Assignment.position))
                        .where(Assignment.annotator_id == annotator_id)).one()
    return 0 if last is None else last + 1


def _practice_item(session: Session, study: Study, annotator: Annotator) -> int | None:
    """The first practice item (file order) not yet handed to the annotator."""
    return session.exec(select(Item.id).where(Item.study_id == study.id, Item.role == "practice",
                                              _not_mine(annotator.id))
                        .order_by(Item.position).limit(1)).first()


def _claim_main(session: Session, annotator: Annotator, study: Study, spec: StudySpec,
                new: _NewAssignment) -> Task | None:
    """A free slot of a main item, counted on the item; else an expired claim taken over."""
    claim = _free_slot(session, annotator, study, spec)
    if claim is not None:
        item_id, seen = claim
        counted = session.exec(update(Item).where(Item.id == item_id, Item.n_claims == seen)
                               .values(n_claims=seen + 1))
        if counted.rowcount != 1:
            raise IntegrityError("claim counter moved", None, Exception())  # look again
        return new.add(item_id, "main", slot=seen)
    taken = _take_over(session, annotator, study, spec, new.position, new.now)
    if taken is not None:
        return _task(session, taken, new.total, new.number)
    return None


def _after_main(session: Session, annotator: Annotator, spec: StudySpec, counts: dict, k: int,
                new: _NewAssignment) -> Task | None:
    """Once main items run out: the attention checks still owed, then the retest items."""
    n_main, n_att, n_retest = (counts.get(p, 0) for p in ("main", "attention", "retest"))
    if n_main > 0 and n_att < spec.attention_checks:
        item_id = _attention_item(session, annotator, spec)
        if item_id is not None:
            return new.add(item_id, "attention")
    if n_main > 0 and n_retest < min(spec.repeat_items, k):
        item_id = _retest_item(session, annotator)
        if item_id is not None:
            return new.add(item_id, "retest")
    return None


def _mark_completed(session: Session, annotator: Annotator, study: Study, number: int,
                    now: datetime) -> None:
    if annotator.completed_at is None and number > 1:  # nothing rated yet: not "completed"
        annotator.completed_at = now
        session.add(annotator)
        log_event(session, "completed", study.id, annotator.id, rated=number - 1)


def _new_task(session: Session, annotator: Annotator, study: Study, spec: StudySpec, counts: dict,
              k: int, n_practice: int, new: _NewAssignment) -> Task | None:
    """The next item in order: practice, an attention check due, a main item, then the rest."""
    n_main, n_att = counts.get("main", 0), counts.get("attention", 0)
    if counts.get("practice", 0) < n_practice:  # practice items come first, in file order
        item_id = _practice_item(session, study, annotator)
        if item_id is not None:
            return new.add(item_id, "practice")
    attention_due = n_att < spec.attention_checks and n_main >= (n_att + 1) * k // (spec.attention_checks + 1)
    if attention_due:
        item_id = _attention_item(session, annotator, spec)
        if item_id is not None:
            return new.add(item_id, "attention")
    if n_main < k:
        task = _claim_main(session, annotator, study, spec, new)
        if task is not None:
            return task
    return _after_main(session, annotator, spec, counts, k, new)


def _next_item(session: Session, annotator_id: int, now: datetime) -> Task | None:
    annotator = session.get(Annotator, annotator_id)
    if auth.is_revoked(annotator.token_hash):
        raise InputError("your access to this study has been withdrawn")
    _refuse_ended(annotator)
    study = session.get(Study, annotator.study_id)
    spec = spec_of(study)
    n_main_items = _n_items_for(session, annotator, study)
    n_practice = _n_items(session, study, "practice")
    total = planned_total(spec, n_main_items, n_practice)
    mine = select(Assignment).where(Assignment.annotator_id == annotator_id)
    open_one = session.exec(mine.where(Assignment.answered_at.is_(None))
                            .order_by(Assignment.position).limit(1)).first()
    if open_one is not None:
        return _task(session, open_one, total)
    if study.status != "open":
        raise InputError(f"this study is {study.status}")
    counts = _counts(session, annotator_id)
    number = sum(counts.values()) + 1
    position = _next_position(session, annotator_id)
    k = min(spec.items_per_annotator or n_main_items, n_main_items)
    if spec.routing and _routed_out(session, annotator, study, spec, counts.get("main", 0), now):
        return None
    new = _NewAssignment(session, study.id, annotator_id, position, now, total, number)
    task = _new_task(session, annotator, study, spec, counts, k, n_practice, new)
    if task is None:
        _mark_completed(session, annotator, study, number, now)
    return task


def _routed_out(session: Session, annotator: Annotator, study: Study, spec: StudySpec,
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
    annotator.routed_at = now
    annotator.completed_at = annotator.completed_at or now
    session.add(annotator)
    log_event(session, "routed_out", study.id, annotator.id, consistency=round(consistency, 3),
              ratings=n_main)
    return True


def _not_mine(annotator_id: int):
    """The item (``Item.id``) has never been handed to this annotator."""
    other = aliased(Assignment)
    return ~exists().where(other.item_id == Item.id, other.annotator_id == annotator_id)


def _free_slot(session: Session, annotator: Annotator, study: Study,
               spec: StudySpec) -> tuple[int, int] | None:
    """(item id, slot) of the least-claimed item with a free slot that the annotator lacks."""
    conditions = [Item.study_id == study.id, Item.role == "main",
                  Item.n_claims < study.raters_per_item, _not_mine(annotator.id)]
    eligible = _eligible_ids(session, annotator, study)
    if eligible is not None:
        conditions.append(Item.id.in_(eligible))
    if not spec.active and not spec.adaptive:
        rank = _rank(session, annotator, study, spec)
        order = annotator_order(session, study, f"order {annotator.id}", lambda: sorted(
            (i for i, _ in main_items(session, study)) if eligible is None else eligible, key=rank))
        mine = set(session.exec(select(Assignment.item_id).where(Assignment.annotator_id == annotator.id)))
        if (found := least_claimed_in_order(session, conditions, order, rank, mine)) is not None:
            return found
        # other annotators' claims between its queries can empty the claim level it read first:
        # the single query below then decides (it finds nothing only when no slot is free)
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


def _eligible_ids(session: Session, annotator: Annotator, study: Study) -> list[int] | None:
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


def _take_over(session: Session, annotator: Annotator, study: Study, spec: StudySpec,
               position: int, now: datetime) -> Assignment | None:
    """Move a stale unanswered main claim to this annotator (compare-and-set update)."""
    cutoff = now - timedelta(minutes=spec.claim_timeout_minutes)
    stale = session.exec(
        select(Assignment).join(Item, Item.id == Assignment.item_id)
        .where(Assignment.study_id == study.id, Assignment.phase == "main",
               Assignment.answered_at.is_(None), Assignment.claimed_at < cutoff,
               Assignment.annotator_id != annotator.id, _not_mine(annotator.id),
               *([Item.id.in_(eligible)] if (eligible := _eligible_ids(session, annotator, study))
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


def _refuse_ended(annotator: Annotator) -> None:
    """A Prolific submission reported returned or timed out ends its session."""
    if annotator.prolific_status in ENDED:
        raise InputError(ended_message(annotator.prolific_status))


def _attention_item(session: Session, annotator: Annotator, spec: StudySpec) -> int | None:
    return session.exec(select(Item.id).where(Item.study_id == annotator.study_id,
                                              Item.role == "attention", _not_mine(annotator.id))
                        .order_by(_order_key(annotator, spec)).limit(1)).first()


def _retest_item(session: Session, annotator: Annotator) -> int | None:
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
        return _task(session, previous, _plan(session, annotator, study))


def task_at(annotator_id: int, position: int, engine: Engine | None = None) -> Task | None:
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        found = session.exec(select(Assignment).where(Assignment.annotator_id == annotator_id,
                                                      Assignment.position == position)).first()
        if found is None:
            return None
        return _task(session, found, _plan(session, annotator, study))


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
        return _plan(session, annotator, session.get(Study, annotator.study_id))


def answered_count(annotator_id: int, engine: Engine | None = None) -> int:
    with read_session(engine) as session:
        return session.exec(select(func.count(Assignment.id)).where(
            Assignment.annotator_id == annotator_id, Assignment.answered_at.is_not(None))).one()


# ---------------------------------------------------------------------------------- ratings
class StaleAnswer(InputError):
    """An answer for an item that is neither the current one nor one the annotator went back to."""


def submit(annotator_id: int, assignment_id: int, response, seconds_spent: float,
           engine: Engine | None = None, *, revise: bool = False,
           comment: str | None = None) -> Rating:
    """Store a rating durably (committed on return). The same answer again returns the stored
    row; a different one is a new revision that supersedes it, allowed only with ``revise``
    (the annotator went back to the item). An answer to an item that is not the annotator's
    current one is refused (``StaleAnswer``) and logged. ``CANT_JUDGE`` and a ``comment`` are
    accepted when the study's spec enables them (``[answers]``). In an adaptive study the SEs
    are brought up to date afterwards (``adaptive.after_rating``): the rating is committed by
    then, so an error there is logged, not raised, and never retried."""
    rating, study, phase = _store_rating(annotator_id, assignment_id, response, seconds_spent,
                                         engine, revise, comment)
    spec = spec_of(study)
    if spec.adaptive and phase == "main":
        from . import adaptive
        adaptive.after_rating(study, spec, rating.item_id, engine, annotator_id=annotator_id)
    return rating


def _store_rating(annotator_id: int, assignment_id: int, response, seconds_spent: float,
                  engine: Engine | None, revise: bool,
                  comment: str | None) -> tuple[Rating, Study, str]:
    """``_submit`` in its own transaction, retried after a unique-constraint race; returns the
    rating, its study and the assignment's phase."""
    for attempt in range(3):
        try:
            with write_session(engine) as session:
                rating = _submit(session, annotator_id, assignment_id, response, seconds_spent,
                                 revise, comment)
                return (rating, session.get(Study, rating.study_id),
                        session.get(Assignment, rating.assignment_id).phase)
        except StaleAnswer as exc:
            with write_session(engine) as session:
                study_id = session.exec(select(Annotator.study_id)
                                        .where(Annotator.id == annotator_id)).one()
                log_event(session, "stale_answer_refused", study_id, annotator_id,
                          assignment=assignment_id, response=str(response), reason=str(exc))
            raise
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


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


def _current_assignment(session: Session, annotator_id: int) -> int | None:
    return session.exec(select(Assignment.id).where(Assignment.annotator_id == annotator_id,
                                                    Assignment.answered_at.is_(None))
                        .order_by(Assignment.position).limit(1)).first()


def _submittable(session: Session, annotator_id: int, assignment_id: int) -> tuple[Assignment, Study]:
    """The annotator's assignment (locked FOR UPDATE) and its open study; else why not."""
    # FOR UPDATE: concurrent submits of one item queue here on PostgreSQL, so each sees the
    # last one's rating (SQLite's IMMEDIATE transaction already serialises writers)
    annotator = session.get(Annotator, annotator_id)
    if annotator is not None:
        _refuse_ended(annotator)   # its open items were released: say why, not "not yours"
    assignment = session.get(Assignment, assignment_id, with_for_update=True)
    if assignment is None or assignment.annotator_id != annotator_id:
        raise InputError("this item is not assigned to you (any more)")
    if auth.is_revoked(annotator.token_hash):
        raise InputError("your access to this study has been withdrawn")
    study = session.get(Study, assignment.study_id)
    if study.status != "open":
        raise InputError(f"this study is {study.status}; your answer was not stored")
    return assignment, study


def _parsed_response(study: Study, spec: StudySpec, response):
    if response == CANT_JUDGE and spec.cant_judge:
        return CANT_JUDGE
    return get_type(study.study_type).parse_response(response, spec.scale)


def _refuse_stale(session: Session, latest: Rating | None, revise: bool, assignment: Assignment,
                  annotator_id: int) -> None:
    """A key press meant for another item: already answered (without revising), or not current."""
    if latest is not None and not revise:
        raise StaleAnswer("this item was already answered (perhaps in another tab); "
                          "your key press was not applied to it")
    if latest is None and assignment.answered_at is None \
            and _current_assignment(session, annotator_id) != assignment.id:
        raise StaleAnswer("this item is not the one you are at; your answer was not stored")


def _submit(session: Session, annotator_id: int, assignment_id: int, response,
            seconds_spent: float, revise: bool, comment: str | None) -> Rating:
    assignment, study = _submittable(session, annotator_id, assignment_id)
    spec = spec_of(study)
    value = _parsed_response(study, spec, response)
    comment = _comment(comment, spec.comments)
    latest = session.exec(select(Rating).where(Rating.assignment_id == assignment_id)
                          .order_by(Rating.revision.desc()).limit(1)).first()
    if latest is not None and (latest.response, latest.comment) == (value, comment):
        return latest
    _refuse_stale(session, latest, revise, assignment, annotator_id)
    now = utcnow()
    owned = session.exec(update(Assignment)
                         .where(Assignment.id == assignment_id, Assignment.annotator_id == annotator_id)
                         .values(answered_at=func.coalesce(Assignment.answered_at, now)))
    if owned.rowcount != 1:
        raise InputError("this item is not assigned to you (any more)")
    rating = Rating(study_id=study.id, assignment_id=assignment_id, annotator_id=annotator_id,
                    item_id=assignment.item_id, revision=0 if latest is None else latest.revision + 1,
                    response=value, seconds_spent=round(max(0.0, float(seconds_spent)), 3),
                    created_at=now, supersedes_id=None if latest is None else latest.id,
                    comment=comment)
    session.add(rating)
    session.flush()
    if latest is not None:
        log_event(session, "rating_revised", study.id, annotator_id, assignment=assignment_id,
                  old=latest.response, new=value)
    return rating


def log_keys_not_applied(annotator_id: int, keys: list[str], item_id: int | None,
                         engine: Engine | None = None) -> None:
    """Count keys the page dropped (pressed while an answer was being saved, or continuing keys
    typed for the previous item; the page said "too fast — nothing was recorded"): one
    ``keys_not_applied`` event with the keys."""
    with write_session(engine) as session:
        study_id = session.exec(select(Annotator.study_id).where(Annotator.id == annotator_id)).one()
        log_event(session, "keys_not_applied", study_id, annotator_id, count=len(keys),
                  keys=[str(k)[:20] for k in keys[:50]], next_item=item_id)


# ---------------------------------------------------------------------------------- page state
@dataclass(frozen=True)
class AnnotatorSession:
    """What the annotator pages need to know about an annotator and their study."""

    annotator_id: int
    pseudonym: str
    started: bool
    completed: bool
    study_slug: str
    study_title: str
    study_status: str
    study_type: str
    spec: StudySpec
    comprehension_failures: int = 0
    prolific_status: str | None = None
    routed: bool = False   # spec [routing]: routed out for a low fitted consistency


def annotator_session(annotator_id: int, engine: Engine | None = None) -> AnnotatorSession:
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        study = session.get(Study, annotator.study_id)
        return AnnotatorSession(annotator.id, annotator.pseudonym, annotator.started_at is not None,
                        annotator.completed_at is not None, study.slug, study.title,
                        study.status, study.study_type, spec_of(study), annotator.comprehension_failures,
                        annotator.prolific_status, annotator.routed_at is not None)


def resolve_token(token: str, engine: Engine | None = None) -> int | None:
    """The annotator id of an invite / personal token, None when it is unknown."""
    with read_session(engine) as session:
        annotator = annotator_by_token(session, token)
        return annotator.id if annotator else None

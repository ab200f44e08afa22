"""Prolific's lifecycle of a participant: completion codes by outcome, the comprehension check,
and the submission statuses Prolific reports.

Following Prolific's researcher help (cited in docs/studies.md):

- **Completion codes** ("Custom completion codes"): a study may give different codes for
  different outcomes so the researcher can sort submissions by code. The spec's ``[prolific]``
  ``completion_code`` ends a finished session, ``attention_failed_code`` replaces it when the
  participant failed at least ``attention_fail_limit`` attention checks (default 2), and
  ``screened_out_code`` ends a session screened out by the comprehension check. When
  ``completion_url`` is Prolific's ``...?cc=CODE`` link, each outcome links with its own code.
- **Comprehension check** (Prolific's attention and comprehension check policy): asked at the
  start, right after the instructions, with two attempts; failing both ends the session
  politely with the screened-out code, before any item is claimed.
- **Routed out** (spec ``[routing]``): a rater whose fitted consistency stays low gets no further
  items; the session ends politely with ``routed_code`` (paid as agreed), or the completion code
  when the spec has none.
- **Returned and timed-out submissions** ("Setting the maximum allowed time"): Prolific opens
  the place to a new participant. ``apply_statuses`` takes Prolific's statuses (its
  submissions CSV export, or one participant at a time) and gives the unanswered items of a
  RETURNED or TIMED-OUT submission back to the pool (``release_claims``); that
  participant's link then ends politely. Answers given before are kept and exported with the
  status (``annotators.csv``: ``prolific_status``), so an analysis can leave them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from metrics import InputError
from metrics.core import csv_rows, read_text

from ...core.accounts import CLI, Actor, require
from ...core.models import Annotator, Assignment, Item, Rating, Study, utcnow
from ...core.storage import log_event, read_session, write_session
from ..specs.spec_model import StudySpec, spec_of

# the statuses of Prolific's submissions (its export's "Status" column)
STATUSES = ("ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED", "RETURNED", "TIMED-OUT",
            "SCREENED OUT", "PARTIALLY APPROVED")
ENDED = {"RETURNED": "returned", "TIMED-OUT": "timed out"}   # their places go to the next participant
ATTEMPTS = 2   # comprehension check: Prolific's policy allows two attempts
PID_COLUMN, STATUS_COLUMN = "Participant id", "Status"
# Prolific's participant, study and submission (session) ids are 24 hexadecimal characters
PROLIFIC_ID = re.compile(r"[0-9a-fA-F]{24}")
URL_PARAMETERS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
# the one page every refused arrival gets: it says nothing about which study names exist
NOT_JOINABLE = ("This study link is not valid, or the study is not open for joining. "
                "Please check the link you were given.")


def participant_ids(pid: str | None, study_id: str | None, session_id: str | None) -> tuple[str, str, str]:
    """``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` once each has Prolific's format (24
    hexadecimal characters), else ``InputError(NOT_JOINABLE)``: checked before anything is
    written, so a made-up or crafted link creates no annotator. Lower-cased: the ids are
    hexadecimal, so an upper-cased link names the same participant.

    >>> participant_ids("5F8A1B2C3D4E5F6A7B8C9D01", "64a1b2c3d4e5f6a7b8c9d0e1", "65b2c3d4e5f6a7b8c9d0e1f2")[0]
    '5f8a1b2c3d4e5f6a7b8c9d01'
    """
    ids = (pid, study_id, session_id)
    if not all(isinstance(value, str) and PROLIFIC_ID.fullmatch(value) for value in ids):
        raise InputError(NOT_JOINABLE)
    return pid.lower(), study_id.lower(), session_id.lower()


def takes_prolific(spec: StudySpec) -> bool:
    """Whether a study takes Prolific participants (its spec has a ``[prolific]`` code or URL)."""
    return bool(spec.completion_code or spec.completion_url)


def ended_message(status: str) -> str:
    """What a participant whose submission Prolific ended is told."""
    return (f"Prolific reports your submission as {ENDED[status]}, so this session has ended and "
            "its remaining items went to other participants. Your answers so far are kept. Thank you!")


@dataclass(frozen=True)
class Outcome:
    """How a Prolific session ended: ``completed``, ``attention_failed``, ``screened_out`` or
    ``routed`` (spec ``[routing]``; ``routed_code``, else the completion code),
    with the code to show and the link back to Prolific (None when the spec has none)."""

    kind: str
    code: str | None
    url: str | None


def completion_link(url: str | None, code: str | None) -> str | None:
    """``url`` with its ``cc`` parameter set to ``code`` (Prolific's completion link), else
    ``url`` itself.

    >>> completion_link("https://app.prolific.com/submissions/complete?cc=C1", "SCR")
    'https://app.prolific.com/submissions/complete?cc=SCR'
    """
    if not url or not code:
        return url
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(key == "cc" for key, _ in query):
        return url
    return urlunsplit(parts._replace(query=urlencode([(k, code if k == "cc" else v) for k, v in query])))


def outcome(annotator_id: int, engine: Engine | None = None) -> Outcome:
    """The outcome of an annotator's session, by the spec's ``[prolific]`` codes."""
    with read_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        spec = spec_of(session.get(Study, annotator.study_id))
        failed = failed_attention_checks(session, annotator_id)
    kind, code = outcome_kind(spec, comprehension_failures=annotator.comprehension_failures,
                              routed=annotator.routed_at is not None, failed_checks=failed)
    url = spec.completion_url if kind == "completed" else completion_link(spec.completion_url, code)
    if kind != "completed" and url == spec.completion_url:
        url = None   # the link carries the completed code: not for this outcome
    return Outcome(kind, code, url)


def outcome_codes(spec: StudySpec) -> list[tuple[str, str]]:
    """(outcome, code) of every code the spec's ``[prolific]`` gives, as :func:`outcome` hands
    them out: what to set up in Prolific (one completion code per outcome)."""
    codes = [("completion", spec.completion_code), ("attention failed", spec.attention_failed_code),
             ("screened out", spec.screened_out_code),
             ("routed out", spec.routed_code or (spec.completion_code if spec.routing else None))]
    return [(kind, code) for kind, code in codes if code]
def outcome_kind(spec, *, comprehension_failures: int, routed: bool, failed_checks: int) -> tuple[str, str | None]:
    """``(kind, code)`` of a session that ended by the study's rules — the one rule the end page
    and annotators.csv share: screened out, else routed, else attention failed (at least
    ``attention_fail_limit`` failed checks, when the spec has ``attention_failed_code``), else
    completed."""
    if comprehension_failures >= ATTEMPTS:
        return "screened_out", spec.screened_out_code
    if routed:
        return "routed", spec.routed_code or spec.completion_code
    if spec.attention_failed_code and failed_checks >= spec.attention_fail_limit:
        return "attention_failed", spec.attention_failed_code
    return "completed", spec.completion_code


def failed_attention_checks(session, annotator_id: int) -> int:
    """How many of the annotator's attention checks got another answer than the expected one
    (the latest answer of each)."""
    rows = session.exec(select(Assignment.id, Item.expected, Rating.response, Rating.revision)
                        .join(Item, Item.id == Assignment.item_id)
                        .join(Rating, Rating.assignment_id == Assignment.id)
                        .where(Assignment.annotator_id == annotator_id, Assignment.phase == "attention")).all()
    latest: dict[int, tuple[int, str, str]] = {}
    for assignment_id, expected, response, revision in rows:
        if assignment_id not in latest or revision > latest[assignment_id][0]:
            latest[assignment_id] = (revision, expected, response)
    return sum(1 for _rev, expected, response in latest.values() if response != expected)


def answer_comprehension(annotator_id: int, choice: str, engine: Engine | None = None) -> str:
    """Check an answer to the spec's comprehension question: ``passed`` (the annotator starts,
    as with the instructions' Start), ``retry`` (one attempt left) or ``screened_out`` (the
    second wrong answer; nothing was claimed, so nothing is released)."""
    with write_session(engine) as session:
        annotator = session.get(Annotator, annotator_id)
        spec = spec_of(session.get(Study, annotator.study_id))
        if spec.comprehension is None:
            raise InputError("this study has no comprehension check")
        if annotator.comprehension_failures >= ATTEMPTS:
            return "screened_out"
        if annotator.started_at is not None:
            return "passed"
        attempt = annotator.comprehension_failures + 1
        if choice == spec.comprehension["answer"]:
            annotator.started_at = utcnow()
            session.add(annotator)
            log_event(session, "comprehension_passed", annotator.study_id, annotator.id, attempt=attempt)
            log_event(session, "instructions_accepted", annotator.study_id, annotator.id)
            return "passed"
        annotator.comprehension_failures = attempt
        session.add(annotator)
        log_event(session, "comprehension_failed", annotator.study_id, annotator.id, attempt=attempt,
                  answer=str(choice)[:200])
        if attempt >= ATTEMPTS:
            log_event(session, "screened_out", annotator.study_id, annotator.id)
            return "screened_out"
        return "retry"


def read_statuses(path: str | Path) -> list[tuple[int, str, str]]:
    """``(line, participant id, status)`` of Prolific's submissions export (CSV with the columns
    ``Participant id`` and ``Status``; other columns are ignored)."""
    where = str(path)
    header, rows = csv_rows(read_text(path), where)
    for column in (PID_COLUMN, STATUS_COLUMN):
        if column not in header:
            raise InputError(f"{where}: missing column {column!r} (Prolific's submissions export has "
                             f"'{PID_COLUMN}' and '{STATUS_COLUMN}'; the header is {','.join(header)})")
    pid_at, status_at = header.index(PID_COLUMN), header.index(STATUS_COLUMN)
    out = []
    for line, fields in rows:
        fields = fields + [""] * (len(header) - len(fields))
        out.append((line, fields[pid_at].strip(), check_status(fields[status_at], f"{where}: line {line}")))
        if not out[-1][1]:
            raise InputError(f"{where}: line {line}: empty '{PID_COLUMN}'")
    return out


def check_status(text: str, where: str) -> str:
    """A Prolific status as Prolific writes it (``timed out`` and ``Timed-Out`` are TIMED-OUT)."""
    status = " ".join(text.strip().upper().replace("_", " ").split())
    status = {"TIMED OUT": "TIMED-OUT"}.get(status, status)
    if status not in STATUSES:
        raise InputError(f"{where}: status {text.strip()!r} is not one of Prolific's ({', '.join(STATUSES)})")
    return status


@dataclass(frozen=True)
class StatusReport:
    """What ``apply_statuses`` did: per participant of the study ``(pid, pseudonym, old, new,
    items released)``, and the participant ids the study has never seen."""

    changed: list[tuple[str, str, str | None, str, int]]
    unchanged: int
    unknown: list[str]

    def lines(self) -> list[str]:
        out = [f"{pid} ({pseudonym}): {old or 'no status'} -> {new}"
               + (f", {released} unanswered item(s) back in the pool" if released else "")
               for pid, pseudonym, old, new, released in self.changed]
        out.append(f"{len(self.changed)} status(es) changed, {self.unchanged} unchanged, "
                   f"{len(self.unknown)} participant(s) never opened this study"
                   + (f" ({', '.join(self.unknown[:5])}{', ...' if len(self.unknown) > 5 else ''})"
                      if self.unknown else ""))
        return out


def apply_statuses(study_id: int, statuses: list[tuple[str, str]], engine: Engine | None = None, *,
                   actor: Actor = CLI, source: str = "") -> StatusReport:
    """Record Prolific's status of each ``(participant id, status)`` in one transaction; a
    RETURNED or TIMED-OUT submission's unanswered items go back to the pool. A participant
    listed twice is refused (Prolific's export has one row per submission)."""
    seen: set[str] = set()
    statuses = [(pid.lower(), status) for pid, status in statuses]   # hexadecimal ids: case is no part
    for pid, _status in statuses:
        if pid in seen:
            raise InputError(f"{source or 'statuses'}: participant {pid!r} is listed twice")
        seen.add(pid)
    changed, unchanged, unknown = [], 0, []
    with write_session(engine) as session:
        study = session.get(Study, study_id)
        require(actor, "change", study)
        if not takes_prolific(spec_of(study)):
            raise InputError(f"study {study.slug!r} has no [prolific] section: it takes no Prolific participants")
        by_pid = {a.prolific_pid: a for a in session.exec(
            select(Annotator).where(Annotator.study_id == study_id, Annotator.prolific_pid.in_(list(seen))))}
        for pid, status in statuses:
            annotator = by_pid.get(pid)
            if annotator is None:
                unknown.append(pid)
                continue
            if annotator.prolific_status == status:
                unchanged += 1
                continue
            old, annotator.prolific_status = annotator.prolific_status, status
            session.add(annotator)
            released = release_claims(session, annotator) if status in ENDED and old not in ENDED else 0
            changed.append((pid, annotator.pseudonym, old, status, released))
            log_event(session, "prolific_status", study_id, annotator.id, old=old, new=status, released=released)
        log_event(session, "prolific_statuses", study_id, actor=actor.name, source=source,
                  changed=len(changed), unchanged=unchanged, unknown=len(unknown))
    return StatusReport(changed, unchanged, unknown)


def release_claims(session: Session, annotator: Annotator) -> int:
    """Give back the annotator's unanswered claims (their submission was returned or timed
    out): each main claim's slot goes back to its item for the next participant, the item's
    highest slot moving into the freed one (slots stay 0..n_claims-1); returns how many main
    items were released. The claims stay as rows of phase ``released`` without a slot, so an
    assignment id is never used twice (SQLite would reuse the id of a deleted last row, and a
    press meant for the old claim could then land on the new one). Answered items are kept.
    The annotator's row is locked first, as a claim locks it (the package's lock order)."""
    session.exec(select(Annotator.id).where(Annotator.id == annotator.id).with_for_update(key_share=True))
    released = 0
    for claim in session.exec(select(Assignment).where(Assignment.annotator_id == annotator.id,
                                                       Assignment.answered_at.is_(None))).all():
        phase, slot = claim.phase, claim.slot
        claim.phase, claim.slot = "released", None
        session.add(claim)
        session.flush()
        if phase != "main":
            continue
        item = session.get(Item, claim.item_id, with_for_update=True)
        top = item.n_claims - 1
        if slot != top:
            session.exec(update(Assignment).where(Assignment.item_id == item.id, Assignment.slot == top)
                         .values(slot=slot))
        session.exec(update(Item).where(Item.id == item.id).values(n_claims=top))
        session.expire(item)
        released += 1
    if released:
        log_event(session, "claims_released", annotator.study_id, annotator.id, items=released)
    return released


def summary(study_id: int, engine: Engine | None = None) -> dict[str, int]:
    """How many of a study's Prolific participants are in each state the console shows:
    Prolific's status where one was passed in (``returned``, ``timed out``, ``approved``, ...),
    ``screened out`` for a failed comprehension check, else ``no status yet``."""
    with read_session(engine) as session:
        rows = session.exec(select(Annotator.prolific_status, Annotator.comprehension_failures)
                            .where(Annotator.study_id == study_id, Annotator.source == "prolific")).all()
    counts: dict[str, int] = {}
    for status, failures in rows:
        key = (ENDED.get(status) or status.lower()) if status else (
            "screened out" if failures >= ATTEMPTS else "no status yet")
        counts[key] = counts.get(key, 0) + 1
    return counts


def summary_line(study_id: int, engine: Engine | None = None) -> str | None:
    """``summary`` as the console's Progress tab and ``status`` print it (``returned: 1,
    screened out: 2``), or None for a study that takes no Prolific participants."""
    with read_session(engine) as session:
        study = session.get(Study, study_id)
    if study is None or not takes_prolific(spec_of(study)):
        return None
    counts = summary(study_id, engine)
    return ", ".join(f"{status}: {n}" for status, n in sorted(counts.items())) if counts else "no participant yet"

"""Joining a study (access code, Prolific), the instructions, and what the annotator pages
know about an annotator (``AnnotatorSession``)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import bindparam
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from metrics import InputError
from metrics.core import check_name

from ...core import auth
from ...core.models import Annotator, Study, utcnow
from ...core.storage import log_event, read_session, row_type, write_session
from ..specs.spec_model import StudySpec, spec_of
from .prolific import ENDED, NOT_JOINABLE, ended_message, participant_ids, takes_prolific


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
                    refuse_ended(found)
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


def refuse_ended(annotator: Annotator) -> None:
    """A Prolific submission reported returned or timed out ends its session."""
    if annotator.prolific_status in ENDED:
        raise InputError(ended_message(annotator.prolific_status))


def lock_annotator(session: Session, annotator_id: int) -> tuple[tuple | None, tuple | None]:
    """The annotator's row and their study's, read in one statement ((None, None) when there is
    no such annotator); the annotator's is locked for the rest of the transaction on PostgreSQL
    (``FOR NO KEY UPDATE``: rows that merely reference the annotator can still be added). Every
    write of the annotator's sequence (an answer, a claim, Prolific's release of their claims)
    takes this lock first, so two of them never interleave; on SQLite the write transaction's
    lock already serialises them."""
    row = session.connection().execute(LOCK_ANNOTATOR, {"annotator": annotator_id}).first()
    if row is None:
        return None, None
    split = len(ANNOTATORS.c)
    return row_type(ANNOTATORS)._make(row[:split]), row_type(STUDIES)._make(row[split:])


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


ANNOTATORS, STUDIES = Annotator.__table__, Study.__table__
LOCK_ANNOTATOR = (select(ANNOTATORS, STUDIES)
                  .join_from(ANNOTATORS, STUDIES, STUDIES.c.id == ANNOTATORS.c.study_id)
                  .where(ANNOTATORS.c.id == bindparam("annotator"))
                  .with_for_update(key_share=True, of=ANNOTATORS))
SESSION_OF = (select(ANNOTATORS.c.pseudonym, ANNOTATORS.c.started_at, ANNOTATORS.c.completed_at,
                     ANNOTATORS.c.comprehension_failures, ANNOTATORS.c.prolific_status,
                     ANNOTATORS.c.routed_at, STUDIES.c.slug, STUDIES.c.title, STUDIES.c.status,
                     STUDIES.c.study_type, STUDIES.c.spec_json)
              .join_from(ANNOTATORS, STUDIES, STUDIES.c.id == ANNOTATORS.c.study_id)
              .where(ANNOTATORS.c.id == bindparam("annotator")))


def annotator_session(annotator_id: int, engine: Engine | None = None) -> AnnotatorSession:
    """The ``AnnotatorSession`` of an annotator (one prepared query: every page run asks it)."""
    with read_session(engine) as session:
        row = session.connection().execute(SESSION_OF, {"annotator": annotator_id}).one()
        return session_info(annotator_id, row, row)


def session_info(annotator_id: int, annotator, study) -> AnnotatorSession:
    """The ``AnnotatorSession`` of an annotator's row and their study's (one row may be both)."""
    return AnnotatorSession(annotator_id, annotator.pseudonym, annotator.started_at is not None,
                            annotator.completed_at is not None, study.slug, study.title, study.status,
                            study.study_type, spec_of(study), annotator.comprehension_failures,
                            annotator.prolific_status, annotator.routed_at is not None)


def resolve_token(token: str, engine: Engine | None = None) -> int | None:
    """The annotator id of an invite / personal token, None when it is unknown."""
    with read_session(engine) as session:
        annotator = annotator_by_token(session, token)
        return annotator.id if annotator else None

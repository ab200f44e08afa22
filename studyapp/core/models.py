"""The platform's tables (SQLModel). Schema changes go through ``studyapp.core.migrations``.

Times are timezone-aware UTC. Ratings are append-only: a changed answer is a new row with the next
``revision`` that names the row it ``supersedes``; ``(assignment_id, revision)`` is unique, so
a double submit of the same answer cannot create a second row.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class Setting(SQLModel, table=True):
    """Platform-wide key/value settings (e.g. the admin password hash)."""

    key: str = Field(primary_key=True, max_length=64)
    value: str = Field(sa_column=Column(Text, nullable=False))


class Study(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(unique=True, max_length=64)
    title: str = Field(max_length=200)
    study_type: str = Field(max_length=64)
    spec_json: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="open", max_length=16)  # open | paused | closed
    raters_per_item: int
    items_per_annotator: int | None = None  # None: all items
    access_code_hash: str | None = Field(default=None, max_length=128)
    created_at: datetime = Field(default_factory=utcnow)
    rater_model: str | None = Field(default=None, sa_type=Text)  # adaptive studies: fitted raters (JSON)
    owner: str | None = Field(default=None, max_length=64)  # the researcher account that created it
    shared_with: str | None = Field(default=None, sa_type=Text)  # accounts it is shared with (JSON list)


class Item(SQLModel, table=True):
    """``n_claims`` counts the item's main-phase assignments (kept in step with them in the
    same transaction) so the next item is found without counting assignments. ``model_se`` is
    the rater model's standard error of the item's score (adaptive studies; None before any).
    ``llm_rating``, ``active_probability`` and ``active_priority`` are set at creation from the
    spec's ``[llm]`` and ``[active]`` sections (None without them)."""

    __table_args__ = (UniqueConstraint("study_id", "item_key"),
                      Index("ix_item_claims", "study_id", "role", "n_claims"))
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    item_key: str = Field(max_length=64)
    role: str = Field(default="main", max_length=16)  # main | attention
    position: int
    fields_json: str = Field(sa_column=Column(Text, nullable=False))
    expected: str | None = Field(default=None, max_length=64)  # attention checks
    n_claims: int = Field(default=0)
    model_se: float | None = None
    llm_rating: float | None = None          # the LLM ensemble's mean rating (spec [llm])
    active_probability: float | None = None  # active selection (spec [active]): inclusion probability
    active_priority: int | None = None       # ... 1 = asked first; 0 = not drawn, never handed out


class Annotator(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("study_id", "pseudonym"),
                      Index("ix_annotator_prolific", "study_id", "prolific_pid", unique=True))
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    pseudonym: str = Field(max_length=64)
    source: str = Field(max_length=16)  # invite | code | prolific
    token_hash: str = Field(unique=True, max_length=64)
    seed: int
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    completed_at: datetime | None = None
    prolific_pid: str | None = Field(default=None, max_length=64)
    prolific_study_id: str | None = Field(default=None, max_length=64)
    prolific_session_id: str | None = Field(default=None, max_length=64)
    prolific_status: str | None = Field(default=None, max_length=16)  # as Prolific reports it (RETURNED, ...)
    comprehension_failures: int = Field(default=0)  # wrong answers to the spec's comprehension check
    routed_at: datetime | None = None  # spec [routing]: routed out for low fitted consistency


class Assignment(SQLModel, table=True):
    """An item handed to an annotator. Main-phase claims hold one of the item's
    ``raters_per_item`` slots; ``(item_id, slot)`` is unique, which caps the raters."""

    __table_args__ = (UniqueConstraint("item_id", "slot"),
                      UniqueConstraint("annotator_id", "position"),
                      UniqueConstraint("annotator_id", "item_id", "phase"))
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    phase: str = Field(max_length=16)  # main | attention | retest | practice | released
    position: int
    slot: int | None = None
    claimed_at: datetime = Field(default_factory=utcnow)
    answered_at: datetime | None = None


CANT_JUDGE = "cant_judge"  # Rating.response of "I can't judge this item" (spec: answers.cant_judge)


class Rating(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("assignment_id", "revision"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    assignment_id: int = Field(foreign_key="assignment.id", index=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    revision: int
    response: str = Field(max_length=200)
    seconds_spent: float
    created_at: datetime = Field(default_factory=utcnow)
    supersedes_id: int | None = Field(default=None, foreign_key="rating.id")
    comment: str | None = Field(default=None, sa_type=Text)
    seen_ms: int | None = None     # how long the item had been fully drawn when the answer came
    in_view: bool | None = None    # whether every row the answer records had been in view, uncovered


class Event(SQLModel, table=True):
    """Append-only log of what happened (joins, revisions, status changes, exports, ...)."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int | None = Field(default=None, foreign_key="study.id", index=True)
    annotator_id: int | None = Field(default=None, foreign_key="annotator.id")
    kind: str = Field(max_length=40)
    detail: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    actor: str | None = Field(default=None, max_length=64)  # the account (or "cli") that acted
    created_at: datetime = Field(default_factory=utcnow)


class MatrixVersion(SQLModel, table=True):
    """A saved pair of recalibrated matrices (``.npz`` files, base64) and how they were made
    (``studyapp.platform.operations.matrix_versions``); rows are only ever added."""

    __tablename__ = "matrix_version"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=64, unique=True)
    created_at: datetime = Field(default_factory=utcnow)
    provenance_json: str = Field(sa_column=Column(Text, nullable=False))
    verb_npz: str = Field(sa_column=Column(Text, nullable=False))
    object_npz: str = Field(sa_column=Column(Text, nullable=False))
    owner: str | None = Field(default=None, max_length=64)  # the account that saved it
    shared_with: str | None = Field(default=None, sa_type=Text)  # accounts it is shared with (JSON list)


class Researcher(SQLModel, table=True):
    """A console account (``studyapp.core.accounts``): unique name, role, scrypt password hash."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=64, unique=True)
    role: str = Field(max_length=16)  # owner | researcher | viewer
    password_hash: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)

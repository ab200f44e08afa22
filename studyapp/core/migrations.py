"""Schema versions and the upgrade path.

A database is built by applying the migrations in order, fresh or old alike, so every
installation reaches the same schema (``studyapp.core.models``) the same way; each step is recorded
in ``schema_version``. Steps use SQLAlchemy Core, so they run on SQLite and PostgreSQL.

- 1: studies, items, annotators (invite token or access code), assignments, ratings, events,
  settings.
- 2: Prolific-style participants: the annotator's PROLIFIC_PID / STUDY_ID / SESSION_ID, unique
  per study.
- 3: a per-item claim counter (``item.n_claims``, back-filled from the assignments) with an
  index, so finding the least-claimed item no longer counts every assignment of the study.
- 4: an optional comment per answer (``rating.comment``), for studies that enable comments.
- 5: adaptive collection: the rater model's standard error per item (``item.model_se``) and the
  study's fitted rater parameters (``study.rater_model``, JSON).
- 6: named, immutable recalibrated matrix versions (``matrix_version``).
- 7: researcher accounts, study owners and the actor of each event.
- 8: Prolific's lifecycle: the status Prolific reports for a participant's submission
  (``annotator.prolific_status``) and the wrong answers to the comprehension check
  (``annotator.comprehension_failures``).
- 9: LLM ratings and active selection per item (``item.llm_rating``, ``item.active_probability``,
  ``item.active_priority``) and rater routing per annotator (``annotator.routed_at``).
- 10: ownership of matrix versions (``matrix_version.owner``) and explicit shares of studies and
  versions (``shared_with``, a JSON list of accounts). A version saved before owners existed
  belongs to the owner of the studies it was recalibrated from when they all have one owner,
  else (owner NULL) to the platform owner alone.
- 11: what the annotator had seen when an answer came: how long its item had been fully drawn
  (``rating.seen_ms``) and whether every row the answer records had been in view, uncovered
  (``rating.in_view``); both NULL for answers not given on an item screen.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    text,
)
from sqlalchemy.engine import Connection

from .models import utcnow


def _v1_tables() -> MetaData:
    """The schema as version 1 defined it (frozen: never edit, add a migration instead)."""
    md = MetaData()
    Table("setting", md, Column("key", String(64), primary_key=True),
          Column("value", Text, nullable=False))
    Table("schema_version", md, Column("version", Integer, primary_key=True, autoincrement=False),
          Column("description", String(200), nullable=False),
          Column("applied_at", DateTime(timezone=True), nullable=False))
    Table("study", md, Column("id", Integer, primary_key=True),
          Column("slug", String(64), nullable=False, unique=True),
          Column("title", String(200), nullable=False),
          Column("study_type", String(64), nullable=False),
          Column("spec_json", Text, nullable=False),
          Column("status", String(16), nullable=False),
          Column("raters_per_item", Integer, nullable=False),
          Column("items_per_annotator", Integer),
          Column("access_code_hash", String(128)),
          Column("created_at", DateTime(timezone=True), nullable=False))
    Table("item", md, Column("id", Integer, primary_key=True),
          Column("study_id", Integer, ForeignKey("study.id"), nullable=False, index=True),
          Column("item_key", String(64), nullable=False),
          Column("role", String(16), nullable=False),
          Column("position", Integer, nullable=False),
          Column("fields_json", Text, nullable=False),
          Column("expected", String(64)),
          UniqueConstraint("study_id", "item_key"))
    Table("annotator", md, Column("id", Integer, primary_key=True),
          Column("study_id", Integer, ForeignKey("study.id"), nullable=False, index=True),
          Column("pseudonym", String(64), nullable=False),
          Column("source", String(16), nullable=False),
          Column("token_hash", String(64), nullable=False, unique=True),
          Column("seed", Integer, nullable=False),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("started_at", DateTime(timezone=True)),
          Column("completed_at", DateTime(timezone=True)),
          UniqueConstraint("study_id", "pseudonym"))
    Table("assignment", md, Column("id", Integer, primary_key=True),
          Column("study_id", Integer, ForeignKey("study.id"), nullable=False, index=True),
          Column("annotator_id", Integer, ForeignKey("annotator.id"), nullable=False, index=True),
          Column("item_id", Integer, ForeignKey("item.id"), nullable=False, index=True),
          Column("phase", String(16), nullable=False),
          Column("position", Integer, nullable=False),
          Column("slot", Integer),
          Column("claimed_at", DateTime(timezone=True), nullable=False),
          Column("answered_at", DateTime(timezone=True)),
          UniqueConstraint("item_id", "slot"),
          UniqueConstraint("annotator_id", "position"),
          UniqueConstraint("annotator_id", "item_id", "phase"))
    Table("rating", md, Column("id", Integer, primary_key=True),
          Column("study_id", Integer, ForeignKey("study.id"), nullable=False, index=True),
          Column("assignment_id", Integer, ForeignKey("assignment.id"), nullable=False, index=True),
          Column("annotator_id", Integer, ForeignKey("annotator.id"), nullable=False, index=True),
          Column("item_id", Integer, ForeignKey("item.id"), nullable=False, index=True),
          Column("revision", Integer, nullable=False),
          Column("response", String(200), nullable=False),
          Column("seconds_spent", Float, nullable=False),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("supersedes_id", Integer, ForeignKey("rating.id")),
          UniqueConstraint("assignment_id", "revision"))
    Table("event", md, Column("id", Integer, primary_key=True),
          Column("study_id", Integer, ForeignKey("study.id"), index=True),
          Column("annotator_id", Integer, ForeignKey("annotator.id")),
          Column("kind", String(40), nullable=False),
          Column("detail", Text, nullable=False),
          Column("created_at", DateTime(timezone=True), nullable=False))
    return md


def _create_v1(conn: Connection) -> None:
    _v1_tables().create_all(conn)


def _add_prolific_ids(conn: Connection) -> None:
    for column in ("prolific_pid", "prolific_study_id", "prolific_session_id"):
        conn.execute(text(f"ALTER TABLE annotator ADD COLUMN {column} VARCHAR(64)"))
    annotator = Table("annotator", MetaData(), autoload_with=conn)
    Index("ix_annotator_prolific", annotator.c.study_id, annotator.c.prolific_pid,
          unique=True).create(conn)


def _add_claim_counter(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE item ADD COLUMN n_claims INTEGER NOT NULL DEFAULT 0"))
    conn.execute(text("UPDATE item SET n_claims = (SELECT COUNT(*) FROM assignment "
                      "WHERE assignment.item_id = item.id AND assignment.phase = 'main')"))
    item = Table("item", MetaData(), autoload_with=conn)
    Index("ix_item_claims", item.c.study_id, item.c.role, item.c.n_claims).create(conn)


def _add_rating_comment(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE rating ADD COLUMN comment TEXT"))


def _add_rater_model(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE item ADD COLUMN model_se FLOAT"))
    conn.execute(text("ALTER TABLE study ADD COLUMN rater_model TEXT"))


def _add_matrix_versions(conn: Connection) -> None:
    md = MetaData()
    Table("matrix_version", md, Column("id", Integer, primary_key=True),
          Column("name", String(64), nullable=False, unique=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("provenance_json", Text, nullable=False), Column("verb_npz", Text, nullable=False),
          Column("object_npz", Text, nullable=False))
    md.create_all(conn)


def _add_accounts(conn: Connection) -> None:
    md = MetaData()
    Table("researcher", md, Column("id", Integer, primary_key=True),
          Column("name", String(64), nullable=False, unique=True), Column("role", String(16), nullable=False),
          Column("password_hash", String(200), nullable=False),
          Column("created_at", DateTime(timezone=True), nullable=False))
    md.create_all(conn)
    conn.execute(text("ALTER TABLE study ADD COLUMN owner VARCHAR(64)"))
    conn.execute(text("ALTER TABLE event ADD COLUMN actor VARCHAR(64)"))


def _add_prolific_lifecycle(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE annotator ADD COLUMN prolific_status VARCHAR(16)"))
    conn.execute(text("ALTER TABLE annotator ADD COLUMN comprehension_failures INTEGER NOT NULL DEFAULT 0"))


def _add_active_selection(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE item ADD COLUMN llm_rating FLOAT"))
    conn.execute(text("ALTER TABLE item ADD COLUMN active_probability FLOAT"))
    conn.execute(text("ALTER TABLE item ADD COLUMN active_priority INTEGER"))
    conn.execute(text("ALTER TABLE annotator ADD COLUMN routed_at TIMESTAMP WITH TIME ZONE"))


def _add_ownership(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE matrix_version ADD COLUMN owner VARCHAR(64)"))
    for table in ("study", "matrix_version"):
        conn.execute(text(f"ALTER TABLE {table} ADD COLUMN shared_with TEXT"))
    owners = dict(conn.execute(text("SELECT slug, owner FROM study")).all())
    for version_id, provenance in conn.execute(text("SELECT id, provenance_json FROM matrix_version")).all():
        behind = {owners.get(slug) for slug in json.loads(provenance).get("studies", [])}
        if len(behind) == 1 and None not in behind:
            conn.execute(text("UPDATE matrix_version SET owner = :o WHERE id = :i"),
                         {"o": behind.pop(), "i": version_id})


def _add_seen(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE rating ADD COLUMN seen_ms INTEGER"))
    conn.execute(text("ALTER TABLE rating ADD COLUMN in_view BOOLEAN"))


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema", _create_v1),
    (2, "Prolific participant, study and session ids", _add_prolific_ids),
    (3, "per-item claim counter", _add_claim_counter),
    (4, "optional comment per answer", _add_rating_comment),
    (5, "rater model per study and its standard error per item", _add_rater_model),
    (6, "named recalibrated matrix versions", _add_matrix_versions),
    (7, "researcher accounts, study owners and the actor of each event", _add_accounts),
    (8, "Prolific submission status and comprehension check failures per annotator", _add_prolific_lifecycle),
    (9, "LLM ratings and active selection per item, rater routing per annotator", _add_active_selection),
    (10, "owners of matrix versions, shares of studies and versions", _add_ownership),
    (11, "time the item had been drawn and all-in-view flag per answer", _add_seen),
]
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    """The highest applied version (0 for an empty database)."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    return conn.execute(text("SELECT MAX(version) FROM schema_version")).scalar() or 0


def upgrade(conn: Connection, target: int = LATEST) -> list[int]:
    """Apply the missing migrations up to ``target``, each recorded; returns the versions applied."""
    have = current_version(conn)
    if have > LATEST:
        raise RuntimeError(f"database schema version {have} is newer than this code ({LATEST})")
    applied = []
    for version, description, step in MIGRATIONS:
        if have < version <= target:
            step(conn)
            conn.execute(text("INSERT INTO schema_version (version, description, applied_at) "
                              "VALUES (:v, :d, :t)"), {"v": version, "d": description, "t": utcnow()})
            applied.append(version)
    return applied

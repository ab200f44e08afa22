"""Database access: engine set-up, schema upgrade, and read / write sessions.

SQLite (the default) runs in WAL mode with foreign keys on and a busy timeout; write
transactions start with ``BEGIN IMMEDIATE`` so concurrent writers queue instead of failing
when they upgrade a read lock. Any other SQLAlchemy URL (PostgreSQL) is used as is.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

from . import config, migrations
from .models import Event

SQLITE_BUSY_TIMEOUT_S = 30
_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def _sqlite_engine(url: str) -> Engine:
    path = make_url(url).database
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S,
                                              "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # transactions are begun explicitly below
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


def get_engine(url: str | None = None) -> Engine:
    """The engine for ``url`` (default: ``config.database_url()``), schema upgraded, cached."""
    url = url or config.database_url()
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _sqlite_engine(url) if url.startswith("sqlite") else create_engine(
                url, pool_pre_ping=True, pool_size=config.pool_size(), max_overflow=10)
            with engine.execution_options(sqlite_begin="IMMEDIATE").begin() as conn:
                migrations.upgrade(conn)
            _engines[url] = engine
    return engine


def dispose_all() -> None:
    """Close every cached engine (tests and benchmarks switch databases)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
        _writers.clear()


@contextmanager
def read_session(engine: Engine | None = None) -> Iterator[Session]:
    """A session for reading (no commit)."""
    with Session(engine or get_engine(), expire_on_commit=False) as session:
        yield session


_writers: dict[str, threading.RLock] = {}


@contextmanager
def _queue_writers(engine: Engine) -> Iterator[None]:
    """SQLite: the threads of one process (Streamlit's sessions) take turns for the write lock
    in arrival order instead of polling SQLite's busy handler, which starves some of them
    under many concurrent writers. Other processes still wait through the busy timeout."""
    if engine.dialect.name != "sqlite":
        yield
        return
    with _lock:
        lock = _writers.setdefault(str(engine.url), threading.RLock())
    got = lock.acquire(timeout=SQLITE_BUSY_TIMEOUT_S)
    try:
        yield
    finally:
        if got:
            lock.release()


@contextmanager
def write_session(engine: Engine | None = None) -> Iterator[Session]:
    """A session whose transaction holds the write lock from the start; committed on exit."""
    engine = (engine or get_engine()).execution_options(sqlite_begin="IMMEDIATE")
    with _queue_writers(engine), Session(engine, expire_on_commit=False) as session:
        with session.begin():
            yield session


def log_event(session: Session, kind: str, study_id: int | None = None,
              annotator_id: int | None = None, **detail) -> None:
    """Append one event to the log (in the caller's transaction)."""
    session.add(Event(study_id=study_id, annotator_id=annotator_id, kind=kind,
                      detail=json.dumps(detail, default=str, sort_keys=True)))

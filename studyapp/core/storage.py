"""Database access: engine set-up, schema upgrade, and read / write sessions.

SQLite (the default) runs in WAL mode with foreign keys on and a busy timeout; write
transactions start with ``BEGIN IMMEDIATE`` so concurrent writers queue instead of failing
when they upgrade a read lock. Any other SQLAlchemy URL (PostgreSQL) is used as is.
"""

from __future__ import annotations

import json
import threading
from collections import namedtuple
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from sqlalchemy import bindparam, event, exc, select
from sqlalchemy.engine import Connection, Engine, Row, make_url
from sqlmodel import Session, create_engine

from metrics import InputError

from . import config, migrations
from .models import Event

SQLITE_BUSY_TIMEOUT_S = 30
_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def unusable_database(error: BaseException) -> bool:
    """True for the errors of a database that cannot be used as it stands (unreachable,
    locked, read-only, not a database, damaged) rather than of the code using it."""
    return isinstance(error, exc.OperationalError) or type(error) is exc.DatabaseError


def database_error(url: str, error: BaseException, source: str | None = None) -> InputError:
    """The one-line message for a URL or database that cannot be used."""
    where = f"{source or config.database_source()} ({describe(url)})"
    if isinstance(error, exc.NoSuchModuleError) or isinstance(error, ImportError):
        return InputError(f"{where}: unknown database kind {url.split(':', 1)[0]!r}; use "
                          "sqlite:///PATH or postgresql+psycopg://USER@HOST/NAME")
    if isinstance(error, exc.ArgumentError):
        return InputError(f"{where}: not a database URL; use sqlite:///PATH or "
                          "postgresql+psycopg://USER@HOST/NAME")
    cause = str(getattr(error, "orig", None) or error).strip().splitlines()
    first = cause[0] if cause else type(error).__name__
    return InputError(f"{where}: cannot be used ({first}); check the setting, or restore a backup")


def describe(url: str) -> str:
    """The URL without its password (the text itself when it is not a URL)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except exc.ArgumentError:
        return url


def check_sqlite_file(url: str, source: str | None = None, must_exist: bool = False) -> None:
    """A SQLite URL must name a file (not a folder) in a folder, existing when ``must_exist``."""
    path = config.sqlite_path(url)
    if path is None:
        return
    where = f"{source or config.database_source()} {path}"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{where}: {parent} is a file, not a folder")
            break
    if path.is_dir():
        raise InputError(f"{where}: is a folder; give the path of a SQLite file")
    if path.exists() and not path.is_file():
        raise InputError(f"{where}: is not a regular file")
    if must_exist and not path.exists():
        raise InputError(f"{where}: no such database (nothing to read; check the path)")


def no_database_yet(url: str | None = None) -> bool:
    """True for a SQLite file that does not exist yet: it holds nothing, and looking would make it."""
    path = config.sqlite_path(url or config.database_url())
    return path is not None and not path.exists()


def open_engine(url: str, source: str | None = None, must_exist: bool = False) -> Engine:
    """A new engine for ``url``; a URL or file that cannot be a database is a one-line
    :class:`InputError` naming where the URL came from (``source``)."""
    check_sqlite_file(url, source, must_exist)
    try:
        return _sqlite_engine(url) if url.startswith("sqlite") else create_engine(
            url, pool_pre_ping=True, pool_size=config.pool_size(), max_overflow=10)
    except (exc.ArgumentError, ImportError) as error:
        raise database_error(url, error, source) from None


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
            engine = open_engine(url)
            try:
                with engine.execution_options(sqlite_begin="IMMEDIATE").begin() as conn:
                    migrations.upgrade(conn)
            except Exception as error:
                engine.dispose()
                if unusable_database(error):
                    raise database_error(url, error) from None
                raise
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


def fetch_row(session: Session, model: type, key: int, *, for_update: bool = False) -> Row | None:
    """The row of ``model``'s table with primary key ``key`` (None when there is none), read-only,
    its columns as attributes like the model's; ``for_update`` locks it on PostgreSQL. A
    prepared Core statement on the session's connection: about a quarter of ``session.get``'s
    time, which matters on the paths an annotator's key press runs."""
    return session.connection().execute(_by_key(model.__table__, for_update), {"key": key}).first()


@cache
def row_type(table) -> type:
    """A named tuple of ``table``'s columns, in order: a row built in Python (or split from a
    joined read), read like the rows ``fetch_row`` returns."""
    return namedtuple(f"{table.name.title()}Row", table.c.keys())


@cache
def _by_key(table, for_update: bool):
    query = select(table).where(table.c.id == bindparam("key"))
    return query.with_for_update() if for_update else query


_writers: dict[str, threading.RLock] = {}


@contextmanager
def _queue_writers(engine: Engine) -> Iterator[None]:
    """SQLite: the threads of one process (Streamlit's sessions) take turns for the write lock
    in arrival order instead of polling SQLite's busy handler, which starves some of them
    under many concurrent writers. Other processes still wait through the busy timeout."""
    if engine.dialect.name != "sqlite" or isinstance(engine, Connection):
        yield  # a connection passed in already holds its transaction (one all-or-nothing change)
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
              annotator_id: int | None = None, *, actor: str | None = None, **detail) -> None:
    """Append one event to the log (in the caller's transaction); ``actor``: the account (or
    "cli") behind a console or command-line action (``studyapp.core.accounts``' audit log)."""
    session.add(Event(study_id=study_id, annotator_id=annotator_id, kind=kind, actor=actor,
                      detail=json.dumps(detail, default=str, sort_keys=True)))

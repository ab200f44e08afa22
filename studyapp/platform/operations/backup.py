"""Portable logical backups: every table to JSON Lines in one zip, restorable on any backend.

A backup file (``python -m studyapp backup FILE``) is a zip holding

- ``manifest.json``: ``format`` (``studyapp-backup``), ``format_version``, the database's
  ``schema_version``, the source dialect, the UTC time, and per table its row count and the
  SHA-256 of its file;
- ``tables/<table>.jsonl``: one JSON object per row (column -> value), in primary-key order.
  Times are ISO 8601 in UTC; everything else is a JSON string, number or null.

It is read in one transaction (a consistent snapshot on SQLite in WAL mode and on PostgreSQL
with REPEATABLE READ), so the app may keep running. ``restore`` loads a backup into an *empty*
database of either backend in one transaction (all or nothing): it builds the schema at the
backup's version, inserts the rows in foreign-key order, moves PostgreSQL's id sequences past
the restored ids, then applies any newer migrations. Counts and checksums are verified.

A backup is untrusted input: before anything is read, a file larger than
``STUDYAPP_MAX_BACKUP_MB`` (default 2048), an entry whose name climbs out (``..``) or is
absolute, a symbolic link, an encrypted entry, an entry that is not ``manifest.json`` or
``tables/<name>.jsonl``, and an entry that expands more than ``MAX_EXPANSION`` times its stored size (a zip bomb) are
refused in one line; the manifest and every row follow the JSON policy of
:mod:`metrics.core._inputs` (no repeated keys, NaN or infinity).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import zipfile
import zlib
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import DateTime, MetaData, Table, inspect, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DataError, IntegrityError

from metrics import InputError
from metrics.core import atomic_file, parse_json, whole_problem

from ...core import config, migrations
from ...core.auth import ADMIN_KEY, ANSWER_SECRET_KEY
from ...core.models import utcnow

FORMAT = "studyapp-backup"
FORMAT_VERSION = 1
MAX_EXPANSION = 200            # uncompressed / compressed size of one entry (JSON Lines: ~5-20)
MEMBER = re.compile(r"^(manifest\.json|tables/[a-z_][a-z0-9_]{0,62}\.jsonl)$")
STARTED_SETTINGS = (ADMIN_KEY, ANSWER_SECRET_KEY)   # what a server only started has stored


def max_backup_bytes() -> int:
    """The largest backup file ``restore`` reads (``STUDYAPP_MAX_BACKUP_MB``, default 2048)."""
    try:
        return max(1, int(os.environ.get("STUDYAPP_MAX_BACKUP_MB", 2048))) * 2**20
    except ValueError:
        raise InputError("STUDYAPP_MAX_BACKUP_MB must be a whole number of megabytes, got "
                         f"{os.environ['STUDYAPP_MAX_BACKUP_MB']!r}") from None


def _tables(conn: Connection) -> list[Table]:
    """The database's tables (as the schema stands), parents before children."""
    md = MetaData()
    md.reflect(conn)
    return list(md.sorted_tables)


def _json_value(value):
    if isinstance(value, datetime):
        if value.tzinfo is None:  # SQLite keeps UTC wall-clock times without an offset
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat()
    return value


def _raw_engine(url: str | None, must_exist: bool = False) -> Engine:
    """An engine that does not upgrade the schema on open (restore builds it itself); with
    ``must_exist`` a SQLite file that is not there is refused rather than created."""
    from ...core.storage import open_engine
    return open_engine(url or config.database_url(), "--url" if url else None, must_exist)


def backup(path: str | Path, url: str | None = None) -> dict:
    """Write a backup of the database at ``url`` (default: the app's) to ``path``; returns
    the manifest. The file appears complete or not at all (the previous one survives)."""
    path = Path(path)
    engine = _raw_engine(url, must_exist=True)
    try:
        options = {"isolation_level": "REPEATABLE READ"} if engine.dialect.name == "postgresql" else {}
        with engine.connect().execution_options(**options) as conn, conn.begin():
            version = migrations.current_version(conn)
            if version == 0:
                raise InputError(f"{_describe(engine)}: no studyapp database to back up")
            manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                        "schema_version": version, "dialect": engine.dialect.name,
                        "created_at": utcnow().isoformat(), "tables": {}}
            with atomic_file(path) as handle, \
                    zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as zf:
                for table in _tables(conn):
                    digest, n = hashlib.sha256(), 0
                    order = list(table.primary_key.columns) or list(table.columns)
                    rows = conn.execution_options(yield_per=2000).execute(
                        select(table).order_by(*order))
                    with zf.open(f"tables/{table.name}.jsonl", "w") as out:
                        for row in rows.mappings():
                            line = (json.dumps({k: _json_value(v) for k, v in row.items()},
                                               ensure_ascii=False, allow_nan=False) + "\n").encode()
                            digest.update(line)
                            out.write(line)
                            n += 1
                    manifest["tables"][table.name] = {"rows": n, "sha256": digest.hexdigest()}
                zf.writestr("manifest.json", json.dumps(manifest, indent=2))
    finally:
        engine.dispose()
    return manifest


def _describe(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def check_entries(zf: zipfile.ZipFile, name: str) -> None:
    """Refuse a zip whose entries could escape, link or explode (module docstring)."""
    for info in zf.infolist():
        entry = info.filename
        where = f"{name}: entry {entry!r}"
        parts = entry.replace("\\", "/").split("/")
        if entry.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", entry):
            raise InputError(f"{where} has an absolute path; a backup holds relative names only")
        if ".." in parts:
            raise InputError(f"{where} climbs out of the backup ('..'); refused")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise InputError(f"{where} is a symbolic link; refused")
        if info.flag_bits & 0x1:   # zipfile would stop for a password at extraction
            raise InputError(f"{where} is encrypted; a studyapp backup never is")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise InputError(f"{where} uses compression method {info.compress_type}; a studyapp backup is "
                             "stored or deflated")
        if not MEMBER.match(entry):
            raise InputError(f"{where} is not part of a studyapp backup (manifest.json, "
                             "tables/<table>.jsonl)")
        if info.file_size > MAX_EXPANSION * max(info.compress_size, 1) and info.file_size > 2**20:
            raise InputError(f"{where} expands {info.file_size} bytes from {info.compress_size} "
                             f"(more than {MAX_EXPANSION} times): a zip bomb? refused")


def _manifest_tables(manifest: dict, name: str) -> None:
    """Each table entry of the manifest has a row count and a checksum."""
    for table, entry in manifest["tables"].items():
        where = f"{name}: manifest.json: field tables.{table}"
        if not isinstance(entry, dict):
            raise InputError(f"{where} must be an object with rows and sha256, got {entry!r:.40}")
        problem = whole_problem(entry.get("rows"), 0)
        if problem:
            raise InputError(f"{where}.rows {problem}")
        if not isinstance(entry.get("sha256"), str):
            raise InputError(f"{where}.sha256 must be a checksum string, got {entry.get('sha256')!r:.40}")


def _manifest_json(zf: zipfile.ZipFile, name: str):
    """manifest.json of the archive, parsed."""
    try:
        raw = zf.read("manifest.json")
    except KeyError:
        raise InputError(f"{name}: not a studyapp backup (no manifest.json)") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name}: manifest.json is not UTF-8 text") from None
    return parse_json(text, f"{name}: manifest.json")


def read_manifest(zf: zipfile.ZipFile, name: str) -> dict:
    manifest = _manifest_json(zf, name)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{name}: not a studyapp backup (format is not {FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{name}: backup format version {manifest.get('format_version')!r} "
                         f"is not supported (expected {FORMAT_VERSION})")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or not 1 <= version <= migrations.LATEST:
        raise InputError(f"{name}: schema version {version!r} is not one this code can restore "
                         f"(1..{migrations.LATEST})")
    if not isinstance(manifest.get("tables"), dict):
        raise InputError(f"{name}: manifest.json has no table list")
    for key in ("dialect", "created_at"):
        if not isinstance(manifest.get(key), str):
            raise InputError(f"{name}: manifest.json: field {key} must be a string, got {manifest.get(key)!r:.40}")
    _manifest_tables(manifest, name)
    return manifest


def _rows(zf: zipfile.ZipFile, name: str, table: Table, expect: dict):
    """Decode one table's rows, checking the checksum and count as they stream by."""
    member = f"tables/{table.name}.jsonl"
    times = {c.name for c in table.columns if isinstance(c.type, DateTime)}
    columns = set(table.columns.keys())
    digest, n = hashlib.sha256(), 0
    try:
        fh = zf.open(member)
    except KeyError:
        raise InputError(f"{name}: {member} is missing") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            digest.update(raw)
            try:
                row = parse_json(raw.decode("utf-8"), f"{name}: {member}", lineno)
            except UnicodeDecodeError:
                raise InputError(f"{name}: {member} line {lineno}: not UTF-8 text") from None
            if not isinstance(row, dict) or set(row) - columns:
                unknown = sorted(set(row) - columns) if isinstance(row, dict) else row
                raise InputError(f"{name}: {member} line {lineno}: unknown columns {unknown}")
            for key in times & set(row):
                if row[key] is not None:
                    try:
                        row[key] = datetime.fromisoformat(row[key])
                    except (TypeError, ValueError):
                        raise InputError(f"{name}: {member} line {lineno}: {key} is not an "
                                         f"ISO time: {row[key]!r}") from None
            n += 1
            yield row
    if n != expect.get("rows") or digest.hexdigest() != expect.get("sha256"):
        raise InputError(f"{name}: {member} does not match the manifest (rows {n} vs "
                         f"{expect.get('rows')}, or checksum): the file is damaged")


def open_backup(path: Path, name: str) -> zipfile.ZipFile:
    """The backup file as an open zip, or a one-line refusal: missing, over the size limit, not
    a zip, or a zip of a kind zipfile does not read (e.g. a newer zip version)."""
    if not path.is_file():
        raise InputError(f"{name}: no such backup file")
    limit = max_backup_bytes()
    if path.stat().st_size > limit:
        raise InputError(f"{name}: {path.stat().st_size} bytes, more than the {limit // 2**20} MB a backup "
                         "may have (STUDYAPP_MAX_BACKUP_MB)")
    try:
        return zipfile.ZipFile(path)
    except NotImplementedError as exc:   # e.g. a zip version newer than zipfile reads
        raise InputError(f"{name}: a zip file of a kind a studyapp backup never is ({exc})") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        if isinstance(exc, OSError) and exc.filename is not None:
            raise
        raise InputError(f"{name}: not a zip file (a studyapp backup is one)") from None


def restore(path: str | Path, url: str | None = None) -> dict:
    """Load the backup at ``path`` into the empty database at ``url`` (default: the app's);
    returns the manifest. Refuses a database that holds any studyapp rows; a database that was
    only started (its schema and console password, nothing else) counts as empty, and keeps its
    console password unless the backup has one. All or nothing: one transaction."""
    path = Path(path)
    name = str(path)
    zf = open_backup(path, name)
    try:
        check_entries(zf, name)
    except InputError:
        zf.close()
        raise
    made = _new_sqlite_files(url or config.database_url())
    engine = _raw_engine(url)
    try:
        with zf, engine.connect().execution_options(sqlite_begin="IMMEDIATE") as conn, conn.begin():
            manifest = read_manifest(zf, name)
            _restore_rows(conn, zf, name, manifest, _describe(engine))
    except BaseException as exc:
        engine.dispose()
        for path in made:  # a database file (and folder) this restore made goes with it
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink(missing_ok=True)
        if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)):
            raise InputError(f"{name}: the zip file is damaged ({exc}); nothing was restored") from None
        raise
    engine.dispose()
    return manifest


def _new_sqlite_files(url: str) -> list[Path]:
    """The files (and missing folders, innermost first) a SQLite database that does not exist
    yet will make; none for an existing one or another kind of database."""
    path = config.sqlite_path(url)
    if path is None or path.exists():
        return []
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")]
    return files + [p for p in path.parents if not p.exists()]


def _empty_database(conn: Connection, have: int, version: int, where: str) -> list[dict]:
    """Refuse a database holding studyapp rows; one only started (its console password alone) is
    emptied for the restore. Returns the settings it kept (the console password, the answer
    keys' secret)."""
    kept_settings = []
    tables = _tables(conn)
    for table in tables:
        if table.name == "schema_version":
            continue
        rows = conn.execute(select(table)).mappings().all()
        if table.name == "setting" and all(r["key"] in STARTED_SETTINGS for r in rows):
            kept_settings = [dict(r) for r in rows]
        elif rows:
            raise InputError(f"{where}: table {table.name} is not empty; "
                             "restore only into an empty database")
    if have != version:  # only started: rebuild its schema at the backup's version
        tables[0].metadata.drop_all(conn)
    else:
        conn.execute(tables[0].metadata.tables["setting"].delete())
    return kept_settings


def _insert_table(conn: Connection, zf: zipfile.ZipFile, name: str, table: Table, expect: dict) -> None:
    """A table's rows from the backup, in batches; rows the database refuses mean a damaged backup."""
    rows = _rows(zf, name, table, expect)
    try:
        for batch in _batches(rows, 1000):
            conn.execute(table.insert(), batch)
    except (IntegrityError, DataError) as exc:
        first = str(exc.orig).strip().splitlines()[0]
        raise InputError(f"{name}: tables/{table.name}.jsonl: rows break the database's rules "
                         f"({first}); the backup is damaged, nothing was restored") from None


def _restore_rows(conn: Connection, zf: zipfile.ZipFile, name: str, manifest: dict, where: str) -> None:
    version = manifest["schema_version"]
    have = migrations.current_version(conn)
    kept_settings = _empty_database(conn, have, version, where) if have else []
    migrations.upgrade(conn, target=version)
    tables = _tables(conn)
    missing = set(manifest["tables"]) ^ {t.name for t in tables}
    if missing:
        raise InputError(f"{name}: tables {sorted(missing)} differ from schema version {version}")
    conn.execute(tables[0].metadata.tables["schema_version"].delete())
    for table in tables:
        _insert_table(conn, zf, name, table, manifest["tables"][table.name])
    setting = tables[0].metadata.tables["setting"]
    restored = {key for (key,) in conn.execute(select(setting.c.key))}
    for row in kept_settings:
        if row["key"] not in restored:
            conn.execute(setting.insert(), row)
    if conn.dialect.name == "postgresql":
        _advance_sequences(conn, tables)
    migrations.upgrade(conn)


def _batches(rows, size: int):
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _advance_sequences(conn: Connection, tables: list[Table]) -> None:
    """Move each serial id sequence past the restored ids (explicit ids do not advance them)."""
    for table in tables:
        for column in table.primary_key.columns:
            seq = conn.execute(text("SELECT pg_get_serial_sequence(:t, :c)"),
                               {"t": table.name, "c": column.name}).scalar()
            if seq:
                conn.execute(text(f"SELECT setval(:s, COALESCE((SELECT MAX({column.name}) FROM "
                                  f"{table.name}), 1), (SELECT COUNT(*) > 0 FROM {table.name}))"),
                             {"s": seq})


def health(url: str | None = None) -> str:
    """One line about the database (reachable, schema version); raises when it is not usable."""
    engine = _raw_engine(url, must_exist=True)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            version = migrations.current_version(conn)
            n_studies = (conn.execute(text("SELECT COUNT(*) FROM study")).scalar()
                         if inspect(conn).has_table("study") else 0)
    except InputError:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"database {_describe(engine)} is not reachable: {first}") from None
    finally:
        engine.dispose()
    if version != migrations.LATEST:
        raise InputError(f"database {_describe(engine)} is at schema version {version}, this code "
                         f"expects {migrations.LATEST} (start the app once to upgrade it)")
    return (f"ok: {engine.dialect.name} database {_describe(engine)}, schema version {version}, "
            f"{n_studies} studies")


"""The database commands of ``python -m studyapp``: ``health``, ``backup``, ``restore``.

They act on the app's database (``DATABASE_URL``, else the SQLite file ``STUDYAPP_DB``) unless
``--url`` names another. Bad input or an unusable database ends as one line on stderr.
"""

from __future__ import annotations

import argparse

from metrics import InputError
from metrics.core import input_file, output_file


def add_parsers(sub) -> None:
    health = sub.add_parser("health", help="check that the database is reachable and at the "
                                           "schema version of this code (exit 0 when healthy)")
    health.add_argument("--url", help="SQLAlchemy URL (default: DATABASE_URL / STUDYAPP_DB)")

    backup = sub.add_parser("backup", help="write a portable backup of every table (zip of "
                                           "JSON Lines + manifest) while the app runs")
    backup.add_argument("file", type=output_file, help="backup file to write (e.g. backups/studyapp.zip)")
    backup.add_argument("--url", help="SQLAlchemy URL (default: DATABASE_URL / STUDYAPP_DB)")

    restore = sub.add_parser("restore", help="load a backup into an empty database "
                                             "(SQLite or PostgreSQL)")
    restore.add_argument("file", type=input_file, help="backup file written by `backup`")
    restore.add_argument("--url", help="SQLAlchemy URL (default: DATABASE_URL / STUDYAPP_DB)")


def _summary(manifest: dict) -> str:
    tables = manifest["tables"]
    main = ", ".join(f"{tables[t]['rows']} {t}s" for t in ("study", "annotator", "rating") if t in tables)
    return f"schema version {manifest['schema_version']}; {main}"


def cmd_health(args: argparse.Namespace) -> int:
    from ..operations.backup import health

    try:
        print(health(args.url))
    except InputError as exc:
        print(f"unhealthy: {exc}")
        return 1
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from ..operations.backup import backup

    manifest = backup(args.file, args.url)
    print(f"wrote {args.file} ({_summary(manifest)})")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from ..operations.backup import restore

    manifest = restore(args.file, args.url)
    print(f"restored {args.file} ({_summary(manifest)}, made on {manifest['dialect']} "
          f"at {manifest['created_at']})")
    return 0


COMMANDS = {"health": cmd_health, "backup": cmd_backup, "restore": cmd_restore}

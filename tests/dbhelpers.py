"""Databases for the storage tests: a fresh SQLite file, or a fresh schema on the PostgreSQL
server named by ``STUDYAPP_TEST_POSTGRES_URL`` (``scripts/ci_postgres.sh`` starts one).

Each PostgreSQL test gets its own schema (``search_path`` set through the URL), so tests stay
independent and cheap; the schema is dropped afterwards.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_URL_ENV = "STUDYAPP_TEST_POSTGRES_URL"
BACKENDS = ("sqlite", "postgresql")


def postgres_url_or_skip() -> str:
    """The test server's URL; skips without one, except in CI (``CI=true``), where it fails."""
    url = os.environ.get(POSTGRES_URL_ENV)
    if url:
        return url
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {POSTGRES_URL_ENV} is not set: the PostgreSQL tests must run "
                    "in CI (source scripts/ci_postgres.sh first)", pytrace=False)
    pytest.skip(f"no PostgreSQL server configured ({POSTGRES_URL_ENV}; see scripts/ci_postgres.sh)")


def with_schema(url: str, schema: str) -> str:
    """``url`` with every connection's ``search_path`` set to ``schema``."""
    return make_url(url).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False)


@contextmanager
def postgres_schema(base_url: str) -> Iterator[str]:
    """A new empty schema on the server; yields a URL that uses it, drops it afterwards."""
    schema = f"t_{secrets.token_hex(6)}"
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        yield with_schema(base_url, schema)
    finally:
        from studyapp.core import storage
        storage.dispose_all()  # close the pooled connections before dropping
        with admin.connect() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


class FreshDatabases:
    """Hands out further empty databases of one backend (upgrade, backup / restore tests)."""

    def __init__(self, backend: str, folder: Path, stack):
        self.backend, self.folder, self._stack, self._n = backend, folder, stack, 0

    def __call__(self) -> str:
        self._n += 1
        if self.backend == "sqlite":
            return f"sqlite:///{self.folder / f'fresh{self._n}.sqlite'}"
        return self._stack.enter_context(postgres_schema(postgres_url_or_skip()))

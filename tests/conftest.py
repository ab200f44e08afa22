"""Fixtures for every test folder: ``tests/metrics/`` (the metric package, no database),
``tests/studyapp/`` (the platform) and ``tests/e2e/`` (real processes and a real browser). The
latter two put each test on its own database through their conftest's autouse fixture."""

from pathlib import Path

import pytest
from projectpaths import SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only real data beside the project; tests using it skip when it is absent."""
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def isolated_database(tmp_path, monkeypatch):
    """The test gets its own SQLite file and export folder (never the developer's .data/)."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("STUDYAPP_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("STUDYAPP_DB", str(tmp_path / "studyapp.sqlite"))
    monkeypatch.setenv("STUDYAPP_EXPORTS", str(tmp_path / "exports"))
    monkeypatch.setenv("STUDYAPP_UPLOADS", str(tmp_path / "uploads"))
    monkeypatch.setenv("STUDYAPP_REPORT_WARMUP", "0")   # no background report processes in tests
    yield
    from studyapp.core import storage
    storage.dispose_all()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_backend(request, monkeypatch):
    """Runs a test on SQLite and on PostgreSQL (a fresh schema on the server named by
    STUDYAPP_TEST_POSTGRES_URL; skipped without one, except with CI=true, where it fails).
    The app's default database (DATABASE_URL) points at it for the test's duration."""
    if request.param == "sqlite":
        yield "sqlite"
        return
    from dbhelpers import postgres_schema, postgres_url_or_skip
    with postgres_schema(postgres_url_or_skip()) as url:
        monkeypatch.setenv("DATABASE_URL", url)
        yield "postgresql"


@pytest.fixture
def fresh_db(db_backend, tmp_path):
    """``fresh_db()`` -> the URL of another empty database of the test's backend."""
    from contextlib import ExitStack

    from dbhelpers import FreshDatabases
    with ExitStack() as stack:
        yield FreshDatabases(db_backend, tmp_path, stack)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Files in the order the workers take them (``./test.sh``: one file per worker, in collection
    order). Files whose every test is marked slow come first (real servers, browsers, installs:
    the longest single pieces of work), then files with some slow test, each of these two groups
    taking its folders in turn (a browser file beside a computing one); then the rest, most tests
    first. A long file taken last would keep one worker busy after the others have finished;
    taken first, the short files fill in around it. Each file's tests keep their own order."""
    from itertools import zip_longest

    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(str(item.path), []).append(item)
    groups: tuple[list, list, list] = ([], [], [])
    for tests in by_file.values():
        slow = sum(1 for item in tests if item.get_closest_marker("slow"))
        groups[0 if slow == len(tests) else 1 if slow else 2].append(tests)

    def folders_in_turn(files: list[list[pytest.Item]]) -> list[list[pytest.Item]]:
        by_folder: dict[Path, list] = {}
        for tests in files:
            by_folder.setdefault(tests[0].path.parent, []).append(tests)
        return [tests for turn in zip_longest(*by_folder.values()) for tests in turn if tests]

    ordered = folders_in_turn(groups[0]) + folders_in_turn(groups[1]) + sorted(groups[2], key=lambda t: -len(t))
    items[:] = [item for tests in ordered for item in tests]

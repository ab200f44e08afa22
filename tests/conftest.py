import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only real data beside the project; tests using it skip when it is absent."""
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def isolated_database(tmp_path, monkeypatch):
    """Every test gets its own SQLite file and export folder (never the developer's .data/)."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("STUDYAPP_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("STUDYAPP_DB", str(tmp_path / "studyapp.sqlite"))
    monkeypatch.setenv("STUDYAPP_EXPORTS", str(tmp_path / "exports"))
    yield
    from studyapp import storage
    storage.dispose_all()

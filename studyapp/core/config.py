"""Where the platform keeps its data, and how it is reached (environment variables).

- ``DATABASE_URL``: any SQLAlchemy URL (``postgresql+psycopg://...``); wins over ``STUDYAPP_DB``.
- ``STUDYAPP_DB``: path of the SQLite file (default ``.data/studyapp.sqlite``).
- ``STUDYAPP_EXPORTS``: export folder (default ``exports/``).
- ``STUDYAPP_UPLOADS``: where the images of studies launched from console uploads are kept
  (default ``.data/uploads``).
- ``STUDYAPP_BASE_URL``: the public address used in invite links (default
  ``http://localhost:<port>``).
- ``STUDYAPP_ADMIN_PASSWORD``: the researcher console password (else generated once).
- ``STUDYAPP_DB_POOL_SIZE``: connections each app instance keeps open to a server database
  (PostgreSQL; default 10, plus up to 10 more under bursts).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = ROOT / ".data" / "studyapp.sqlite"
STUDIES_DIR = Path(os.environ.get("STUDYAPP_STUDIES", ROOT / "studies"))   # the demo specs
UPLOAD_LIMITS_MB = {"spec": 1, "items": 50, "detections": 200}   # console uploads: the browser and the page check them


def database_url() -> str:
    """The SQLAlchemy URL of the platform database."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return f"sqlite:///{Path(os.environ.get('STUDYAPP_DB', DEFAULT_DB)).resolve()}"


def database_source() -> str:
    """Which setting names the database (for messages)."""
    return "DATABASE_URL" if os.environ.get("DATABASE_URL") else "STUDYAPP_DB"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    if not url.startswith("sqlite"):
        return None
    path = url.split(":///", 1)[1] if ":///" in url else ""
    path = path.split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def exports_dir() -> Path:
    return Path(os.environ.get("STUDYAPP_EXPORTS", ROOT / "exports"))


def uploads_dir() -> Path:
    return Path(os.environ.get("STUDYAPP_UPLOADS", ROOT / ".data" / "uploads"))


def default_port() -> int:
    return int(os.environ.get("STUDYAPP_PORT", 8501))


def base_url(port: int | None = None) -> str:
    """Public base URL for invite links, without a trailing slash."""
    url = os.environ.get("STUDYAPP_BASE_URL")
    if url:
        return url.rstrip("/")
    return f"http://localhost:{port or default_port()}"


def pool_size() -> int:
    """Connections per app instance to a server database (``STUDYAPP_DB_POOL_SIZE``)."""
    return max(1, int(os.environ.get("STUDYAPP_DB_POOL_SIZE", 10)))

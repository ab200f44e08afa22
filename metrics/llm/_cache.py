"""The answer cache: every answer is written to SQLite as it arrives.

One row per (model, prompt version, unordered pair): the reply text, the parsed score (NULL when
missing), status ``ok`` / ``missing``, the last error, attempts, seconds, token usage and the UTC
time. A run that is interrupted — killed, Ctrl-C, a crash — resumes by skipping every pair that
already has a row, so no finished request is ever sent twice. Pairs recorded as ``missing``
(retries used up) are skipped too, unless ``--retry-missing`` asks for them again.

The database uses WAL mode and commits each answer, so a killed run loses at most the requests
that were in flight: up to twice an endpoint's ``concurrency`` (the runner's queue of submitted
requests, some answered but not yet written). Only the main thread writes.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    score INTEGER,
    status TEXT NOT NULL,
    reply TEXT,
    error TEXT,
    attempts INTEGER NOT NULL,
    seconds REAL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at TEXT NOT NULL,
    PRIMARY KEY (model, prompt_version, a, b)
);
"""


def key(a: str, b: str) -> tuple[str, str]:
    """The unordered pair as stored: ``(min, max)``."""
    return (a, b) if a <= b else (b, a)


class AnswerCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=10000")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def put(self, model: str, version: str, a: str, b: str, score: int | None, *, reply: str | None,
            error: str | None, attempts: int, seconds: float, prompt_tokens: int | None = None,
            completion_tokens: int | None = None) -> None:
        ka, kb = key(a, b)
        self.db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (model, version, ka, kb, score, "ok" if score is not None else "missing", reply, error,
             attempts, seconds, prompt_tokens, completion_tokens,
             datetime.now(UTC).isoformat(timespec="milliseconds")))

    def answers(self, model: str, version: str) -> dict[tuple[str, str], int | None]:
        """Every cached (pair → score or None for missing) of a model and prompt version."""
        rows = self.db.execute("SELECT a, b, score FROM answers WHERE model=? AND prompt_version=?",
                               (model, version))
        return {(a, b): score for a, b, score in rows}

    def stats(self, model: str, version: str) -> dict:
        row = self.db.execute(
            "SELECT COUNT(*), SUM(status='missing'), AVG(seconds), AVG(prompt_tokens), "
            "AVG(completion_tokens) FROM answers WHERE model=? AND prompt_version=?",
            (model, version)).fetchone()
        return {"n": row[0] or 0, "missing": row[1] or 0, "mean_seconds": row[2],
                "mean_prompt_tokens": row[3], "mean_completion_tokens": row[4]}

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

"""Researcher accounts, their roles and the audit log of what they did.

Roles:

- ``owner``: the platform's owner — every study, the accounts and the audit log. The console
  password of ``STUDYAPP_ADMIN_PASSWORD`` (or the one printed at the first start) signs in as
  the first owner, named ``owner``; the command line acts as the owner too (``cli``), since
  whoever runs commands on the server holds the database anyway.
- ``researcher``: creates studies, which they then own; sees and changes only their own
  studies (invite, status, revoke, export, recalibrate from them); scores models.
- ``viewer``: sees every study (dashboard, progress, preview) and scores models; changes
  nothing and downloads no ratings.

Passwords are stored as salted scrypt hashes (``auth.slow_hash``), compared in constant time.
The audit log is the event log's console actions: each is written with its actor in the same
transaction as the action (``storage.log_event(..., actor=...)``), so an action that fails
leaves no entry and an entry never lacks its action.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

import pandas as pd
from sqlmodel import Session, select

from metrics import InputError

from . import auth
from .models import Event, Researcher, Setting, Study
from .storage import log_event, read_session, write_session

ROLES = ("owner", "researcher", "viewer")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MIN_PASSWORD = 12    # OWASP ASVS 4.0.3 2.1.1
MAX_PASSWORD = 128   # ASVS 2.1.2: 64 or more allowed, longer refused
AUDITED = {"study_created": "created", "invites_created": "invited", "annotator_revoked": "revoked",
           "status_changed": "status changed", "exported": "exported",
           "matrix_version_saved": "recalibrated", "models_scored": "scored",
           "account_created": "account created", "account_password_set": "password changed",
           "admin_login": "signed in", "owner_changed": "owner changed", "downloaded": "downloaded",
           "data_viewed": "viewed data", "prolific_statuses": "Prolific statuses"}


@dataclass(frozen=True)
class Actor:
    """Who acts: an account name and its role."""

    name: str
    role: str


CLI = Actor("cli", "owner")
FIRST_OWNER = Actor("owner", "owner")

# what each role may do; "own" = only on studies the actor owns
RIGHTS = {"owner": {"view": "all", "change": "all", "create": True, "score": True, "accounts": True},
          "researcher": {"view": "own", "change": "own", "create": True, "score": True, "accounts": False},
          "viewer": {"view": "all", "change": None, "create": False, "score": True, "accounts": False}}


def may(actor: Actor, action: str, study: Study | None = None) -> bool:
    """Whether ``actor`` may ``view`` / ``change`` ``study``, or ``create`` studies, ``score``
    models, manage ``accounts`` (and read the audit log)."""
    right = RIGHTS[actor.role][action]
    if right in ("all", True):
        return True
    if right == "own":
        return study is not None and study.owner == actor.name
    return False


def require(actor: Actor, action: str, study: Study | None = None) -> None:
    """InputError naming the actor, role and action when ``may`` says no."""
    if not may(actor, action, study):
        what = {"view": "see", "change": "change", "create": "create studies", "score": "score models",
                "accounts": "manage accounts"}[action]
        target = f" study {study.slug!r}" if study is not None else ""
        raise InputError(f"{actor.name} ({actor.role}) may not {what}{target}")


def require_studies(actor: Actor, action: str, slugs: list[str], engine=None) -> list[Study]:
    """The studies named ``slugs``, in order, once ``actor`` may ``action`` each of them."""
    with read_session(engine) as session:
        found = {s.slug: s for s in session.exec(select(Study).where(Study.slug.in_(list(slugs))))}
    for slug in slugs:
        if slug not in found:
            raise InputError(f"no study named {slug!r}")
        require(actor, action, found[slug])
    return [found[slug] for slug in slugs]


@lru_cache(maxsize=1)
def unknown_account_hash() -> str:
    """A hash no password matches, checked for names without an account (made on first use:
    scrypt costs ~0.1 s, which importing this module should not pay)."""
    return auth.slow_hash("no account has this password")


def visible(actor: Actor, studies: list[Study]) -> list[Study]:
    return [s for s in studies if may(actor, "view", s)]


def no_studies_text(actor: Actor, n_studies: int) -> str:
    """What the console says to an account that sees no study, when the server has ``n_studies``."""
    if n_studies == 0:
        return "No studies yet." if may(actor, "create") else "No studies to show."
    return (f"None of the {n_studies} studies on this server is yours: researchers see the studies they "
            "own; the platform owner can reassign one to you.")


def check_password(password: str) -> None:
    """The password rules (OWASP ASVS level 1): 12 to 128 characters, any characters (spaces too,
    so passphrases work), not one character repeated."""
    password = password or ""
    if len(password) < MIN_PASSWORD:
        raise InputError(f"password: at least {MIN_PASSWORD} characters, got {len(password)}")
    if len(password) > MAX_PASSWORD:
        raise InputError(f"password: at most {MAX_PASSWORD} characters, got {len(password)}")
    if len(set(password)) == 1:
        raise InputError("password: one character repeated; choose a passphrase")


def add_account(name: str, role: str, password: str, *, actor: Actor = CLI) -> None:
    """Create an account (owner only); names are unique and never reused."""
    if not NAME.fullmatch(name or "") or name in (CLI.name, FIRST_OWNER.name):
        raise InputError(f"account name {name!r}: 1-64 letters, digits, '.', '_' or '-' "
                         f"(not {CLI.name!r} or {FIRST_OWNER.name!r})")
    if role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    check_password(password)
    require(actor, "accounts")
    with write_session() as session:
        if session.exec(select(Researcher.id).where(Researcher.name == name)).first() is not None:
            raise InputError(f"an account named {name!r} exists already")
        session.add(Researcher(name=name, role=role, password_hash=auth.slow_hash(password)))
        log_event(session, "account_created", actor=actor.name, account=name, role=role)


def set_password(name: str, password: str, *, actor: Actor = CLI) -> None:
    """A new password for account ``name`` (its owner, or the platform owner)."""
    check_password(password)
    if actor.name != name:
        require(actor, "accounts")
    with write_session() as session:
        account = session.exec(select(Researcher).where(Researcher.name == name)).first()
        if account is None:
            raise InputError(f"no account named {name!r}")
        account.password_hash = auth.slow_hash(password)
        session.add(account)
        log_event(session, "account_password_set", actor=actor.name, account=name)


def list_accounts() -> pd.DataFrame:
    with read_session() as session:
        rows = [{"name": r.name, "role": r.role, "created_at": r.created_at}
                for r in session.exec(select(Researcher).order_by(Researcher.id))]
    return pd.DataFrame(rows, columns=["name", "role", "created_at"])


def sign_in(session: Session, name: str, password: str, source: str | None) -> tuple[auth.LoginResult, Actor | None]:
    """Check a console sign-in (with the sign-in backoff of ``auth.admin_login``): an empty
    name or ``owner`` with the console password is the first owner; else the named account."""
    name = (name or "").strip()
    if name in ("", FIRST_OWNER.name):
        result = auth.admin_login(session, password, source)
        return result, FIRST_OWNER if result.ok else None
    account = session.exec(select(Researcher).where(Researcher.name == name)).first()
    # an unknown name costs the same scrypt as a known one, so timing does not tell names apart
    stored = account.password_hash if account is not None else unknown_account_hash()
    result = auth.admin_login(session, password, source, account=name,
                              check=lambda: auth.check_slow_hash(password, stored) and account is not None)
    return result, Actor(account.name, account.role) if result.ok else None


def record_access(actor: Actor, kind: str, study_id: int | None = None, **detail) -> None:
    """Write a download (``kind="downloaded"``, with the ``file``) or a view of a study's data
    (``"data_viewed"``, with ``what``) to the audit log."""
    if kind not in ("downloaded", "data_viewed"):
        raise ValueError(f"not an access kind: {kind!r}")
    with write_session() as session:
        log_event(session, kind, study_id, actor=actor.name, **detail)


def audit_log(actor: Actor, limit: int = 500) -> pd.DataFrame:
    """The latest console and command-line actions, newest first (owner only)."""
    require(actor, "accounts")
    with read_session() as session:
        slugs = dict(session.exec(select(Study.id, Study.slug)).all())
        events = session.exec(select(Event).where(Event.kind.in_(list(AUDITED)))
                              .order_by(Event.id.desc()).limit(limit)).all()
    rows = [{"when": e.created_at, "who": e.actor or "", "action": AUDITED[e.kind],
             "study": slugs.get(e.study_id, ""), "detail": json.dumps(json.loads(e.detail), sort_keys=True)}
            for e in events]
    return pd.DataFrame(rows, columns=["when", "who", "action", "study", "detail"])


# ------------------------------------------------------------------ console sessions
SESSION_PREFIX = "console_session:"


def session_limits() -> tuple[timedelta, timedelta]:
    """(idle, absolute) lifetime of a console session: ``STUDYAPP_SESSION_IDLE_S`` (default one
    hour without a page run) and ``STUDYAPP_SESSION_MAX_S`` (default 8 hours after sign-in)."""
    idle = float(os.environ.get("STUDYAPP_SESSION_IDLE_S", 3600))
    longest = float(os.environ.get("STUDYAPP_SESSION_MAX_S", 8 * 3600))
    return timedelta(seconds=idle), timedelta(seconds=longest)


def _session_key(token: str) -> str:
    return SESSION_PREFIX + auth.token_hash(token)[:48]


def open_session(actor: Actor) -> str:
    """A new console session of ``actor``: a random token (192 bits) for the browser to keep; the
    database keeps only its SHA-256 with the account and the times that end it."""
    token = auth.new_token()
    now = auth.clock()
    idle, longest = session_limits()
    value = {"account": actor.name, "started": now.isoformat(), "seen": now.isoformat(),
             "ends": (now + longest).isoformat()}
    with write_session() as session:
        session.add(Setting(key=_session_key(token), value=json.dumps(value)))
    return token


def session_actor(token: str | None, *, touch: bool = True) -> Actor | None:
    """The account of a live console session, or None (unknown, expired, or the account gone).
    An expired session is deleted; with ``touch`` (a person acted, not a timed refresh) its idle
    clock restarts (written at most once a minute, so a page run costs one read)."""
    if not token or len(token) > 64:
        return None
    now = auth.clock()
    idle, _longest = session_limits()
    with read_session() as session:
        row = session.get(Setting, _session_key(token))
        if row is None:
            return None
        data = json.loads(row.value)
        actor = FIRST_OWNER if data["account"] == FIRST_OWNER.name else None
        if actor is None:
            account = session.exec(select(Researcher).where(Researcher.name == data["account"])).first()
            actor = Actor(account.name, account.role) if account is not None else None
    seen = datetime.fromisoformat(data["seen"])
    if actor is None or now >= datetime.fromisoformat(data["ends"]) or now >= seen + idle:
        close_session(token, reason="expired" if actor is not None else "account gone")
        return None
    if touch and now - seen >= timedelta(seconds=60):
        with write_session() as session:
            row = session.get(Setting, _session_key(token))
            if row is not None:
                row.value = json.dumps({**data, "seen": now.isoformat()})
                session.add(row)
    return actor


def close_session(token: str | None, *, reason: str = "signed out") -> None:
    """End a console session (sign-out or expiry): its token no longer signs anyone in."""
    if not token:
        return
    with write_session() as session:
        row = session.get(Setting, _session_key(token))
        if row is not None:
            account = json.loads(row.value)["account"]
            session.delete(row)
            log_event(session, "console_session_closed", actor=account, reason=reason)

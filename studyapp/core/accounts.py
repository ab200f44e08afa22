"""Researcher accounts, their roles, the one access rule and the audit log.

Every object belongs to a study or an account: a study to its ``owner``; a matrix version to
the account that saved it; scores to the account that scored them; reports, exports and
downloads to their study; an audit entry to the study it names (else to the account that
acted). :func:`may` is the one rule that decides, for every kind of object:

- ``owner``: the platform's owner — sees, downloads and changes everything; the accounts and
  the whole audit log. The console password of ``STUDYAPP_ADMIN_PASSWORD`` (or the one printed
  at the first start) signs in as the first owner, named ``owner``; the command line acts as
  the owner too (``cli``), since whoever runs commands on the server holds the database anyway.
- ``researcher``: creates studies and saves matrix versions, which they then own; sees and
  downloads only their own objects and those explicitly shared with them (:func:`share`);
  changes only their own; reads the audit entries of their own actions and studies.
- ``viewer``: sees every study (dashboard, progress, preview, report) and every matrix
  version's listing and comparison; downloads only what is shared with them and their own
  scores; changes nothing; reads the audit entries of their own actions.

An object without an owner (studies and versions made before owners existed) is the platform
owner's.

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
from .models import Event, MatrixVersion, Researcher, Setting, Study
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
           "data_viewed": "viewed data", "prolific_statuses": "Prolific statuses", "shared": "shared"}


@dataclass(frozen=True)
class Actor:
    """Who acts: an account name and its role."""

    name: str
    role: str


CLI = Actor("cli", "owner")
FIRST_OWNER = Actor("owner", "owner")

# what each role may do with an object; "own": objects it owns, or (except "change") that are
# shared with it; "all": every object
RIGHTS = {"owner": {"view": "all", "download": "all", "change": "all", "audit": "all", "create": True,
                    "score": True, "accounts": True},
          "researcher": {"view": "own", "download": "own", "change": "own", "audit": "own", "create": True,
                         "score": True, "accounts": False},
          "viewer": {"view": "all", "download": "own", "change": None, "audit": "own", "create": False,
                     "score": True, "accounts": False}}
OBJECT_ACTIONS = ("view", "download", "change", "audit")


@dataclass(frozen=True)
class Owned:
    """An object as the access rule sees it (scores, an audit entry); studies and matrix
    versions are passed as they are: each has an ``owner`` and ``shared_with``."""

    kind: str
    name: str
    owner: str | None
    shared_with: str | None = None   # JSON list of account names


def shared_accounts(obj) -> set[str]:
    """The accounts an object (a study, a matrix version) is explicitly shared with."""
    return set(json.loads(getattr(obj, "shared_with", None) or "[]"))


def may(actor: Actor, action: str, obj=None) -> bool:
    """The one access rule: whether ``actor`` may ``view`` / ``download`` / ``change`` an object
    or read its ``audit`` entries (a study, a matrix version, or an :class:`Owned` such as
    scores or an audit entry), or ``create`` studies, ``score`` models, manage ``accounts``.
    An object without an owner (rows made before owners existed) is the platform owner's."""
    right = RIGHTS[actor.role][action]
    if right in ("all", True):
        return True
    if right != "own" or obj is None:
        return False
    if obj.owner is not None and obj.owner == actor.name:
        return True
    return action != "change" and actor.name in shared_accounts(obj)


def describe(obj) -> str:
    """``study 't'``, ``matrix version 'v1'``: how refusals name an object."""
    if isinstance(obj, Study):
        return f"study {obj.slug!r}"
    if isinstance(obj, Owned):
        return f"{obj.kind} {obj.name!r}"
    return f"matrix version {obj.name!r}"


def require(actor: Actor, action: str, obj=None) -> None:
    """InputError naming the actor, role and action when ``may`` says no."""
    if not may(actor, action, obj):
        what = {"view": "see", "download": "download", "change": "change", "audit": "read the audit log of",
                "create": "create studies", "score": "score models", "accounts": "manage accounts"}[action]
        target = f" {describe(obj)}" if obj is not None else ""
        raise InputError(f"{actor.name} ({actor.role}) may not {what}{target}")


def require_studies(actor: Actor, action: str, slugs: list[str], engine=None) -> list[Study]:
    """The studies named ``slugs``, in order, once ``actor`` may ``action`` each of them (a study
    the actor may not see is refused as if it did not exist)."""
    with read_session(engine) as session:
        found = {s.slug: s for s in session.exec(select(Study).where(Study.slug.in_(list(slugs))))}
    for slug in slugs:
        if slug not in found or not may(actor, "view", found[slug]):
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
    return ("None of the studies on this server is yours: researchers see the studies they "
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


SHAREABLE = {"study": (Study, Study.slug), "version": (MatrixVersion, MatrixVersion.name)}


def share(kind: str, name: str, account: str, *, actor: Actor = CLI) -> None:
    """Share a study or a matrix version (``kind``) with another account: it may then see and
    download it, not change it. Only who may change the object shares it."""
    if kind not in SHAREABLE:
        raise InputError(f"share a study or a version, not {kind!r}")
    table, key = SHAREABLE[kind]
    with write_session() as session:
        obj = session.exec(select(table).where(key == name)).first()
        if obj is None or not may(actor, "view", obj):
            raise InputError(f"no {'study' if kind == 'study' else 'matrix version'} named {name!r}")
        require(actor, "change", obj)
        if session.exec(select(Researcher.id).where(Researcher.name == account)).first() is None:
            raise InputError(f"no account named {account!r} (see `python -m studyapp account list`)")
        obj.shared_with = json.dumps(sorted(shared_accounts(obj) | {account}))
        session.add(obj)
        log_event(session, "shared", obj.id if kind == "study" else None, actor=actor.name,
                  **{kind: name, "account": account})


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


def record_access(actor: Actor, kind: str, studies: list[str] | tuple[str, ...] = (), **detail) -> None:
    """Write a download (``kind="downloaded"``, with the ``file``) or a view of a study's data
    (``"data_viewed"``, with ``what``) to the audit log, with the studies (slugs) its data
    comes from: the entry's study is the first; several are listed in its detail."""
    if kind not in ("downloaded", "data_viewed"):
        raise ValueError(f"not an access kind: {kind!r}")
    with write_session() as session:
        ids = dict(session.exec(select(Study.slug, Study.id).where(Study.slug.in_(list(studies)))).all())
        if len(studies) > 1:
            detail["studies"] = list(studies)
        log_event(session, kind, ids.get(studies[0]) if studies else None, actor=actor.name, **detail)


def record_view_once(actor: Actor, study: str, session_token: str | None, what: str) -> bool:
    """Audit a view of ``study``'s data once per signed-in session (the console's session
    token, of which the entry keeps a hash prefix): True when this call wrote the entry. The
    check reads the log, so a reload, a new browser tab or another server instance of the same
    session writes nothing new."""
    key = auth.token_hash(session_token or "")[:16]
    with write_session() as session:
        study_id = session.exec(select(Study.id).where(Study.slug == study)).first()
        marker = f'"login": "{key}"'
        if session.exec(select(Event.id).where(Event.kind == "data_viewed", Event.study_id == study_id,
                                               Event.actor == actor.name, Event.detail.contains(marker))).first():
            return False
        log_event(session, "data_viewed", study_id, actor=actor.name, what=what, login=key)
    return True


def audit_entry(event: Event, study: Study | None) -> Owned:
    """An audit entry for the access rule: it belongs to the study it names (to the account
    that acted when it names none), and the account that acted may always read it."""
    return Owned("audit entry", str(event.id), study.owner if study is not None else event.actor,
                 json.dumps([event.actor]) if event.actor else None)


def audit_log(actor: Actor, limit: int = 500) -> pd.DataFrame:
    """The latest console and command-line actions ``actor`` may read (``may(actor, "audit",
    entry)``: the platform owner every entry; others their own actions and, for researchers,
    those on their studies), newest first."""
    with read_session() as session:
        by_id = {s.id: s for s in session.exec(select(Study))}
        events = session.exec(select(Event).where(Event.kind.in_(list(AUDITED)))
                              .order_by(Event.id.desc()).limit(20 * limit)).all()
    rows = []
    for e in events:
        if len(rows) == limit:
            break
        study = by_id.get(e.study_id)
        if not may(actor, "audit", audit_entry(e, study)):
            continue
        detail = json.loads(e.detail)
        named = ", ".join(detail.get("studies", [])) or (study.slug if study is not None else "")
        rows.append({"when": e.created_at, "who": e.actor or "", "action": AUDITED[e.kind], "study": named,
                     "detail": json.dumps(detail, sort_keys=True)})
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

"""Secrets: invite tokens (stored as SHA-256), access codes and the admin password (scrypt).

Invite tokens are 192-bit random strings, so a fast hash is enough to store them; access
codes and the admin password may be short and human-chosen, so they get a slow, salted hash.

A revoked annotator's token hash is replaced by ``revoked:<random>``, which no token hashes to.
The item screen's answer route takes, instead of the invite token (stored only as its hash),
an answer key: HMAC-SHA256 of the annotator's id under a random secret that the first instance
to need it stores (``Setting`` row ``answer_key_secret``), the same for every instance.
Failed console sign-ins are counted per source address and globally (``Setting`` rows
``login_backoff:...``, every attempt in the event log); after ``LOGIN_FREE_ATTEMPTS`` failures
(``LOGIN_FREE_ATTEMPTS_GLOBAL`` from all sources) each further attempt must wait
``2 ** (failures - free)`` seconds (at most ``LOGIN_MAX_DELAY_S``) after the last failure, and
is refused without checking the password until then (a lockout of up to 15 minutes; the
global counter covers guesses spread over many addresses and accounts). A successful sign-in
clears both counters. :func:`throttle_message` tells the person how long.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from .models import Setting, utcnow

SCRYPT = {"n": 2**14, "r": 8, "p": 1}
ADMIN_KEY = "admin_password_hash"
REVOKED_PREFIX = "revoked:"
LOGIN_FREE_ATTEMPTS = 3
LOGIN_FREE_ATTEMPTS_GLOBAL = 20
LOGIN_MAX_DELAY_S = 900
ANSWER_SECRET_KEY = "answer_key_secret"
_answer_secrets: dict[str, bytes] = {}   # database URL -> the secret, read once per process


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def slow_hash(secret: str) -> str:
    """``scrypt$<salt>$<hash>`` (base64) of a human-chosen secret."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, dklen=32, **SCRYPT)
    return "scrypt$" + base64.b64encode(salt).decode() + "$" + base64.b64encode(digest).decode()


def check_slow_hash(secret: str, stored: str) -> bool:
    try:
        scheme, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    got = hashlib.scrypt(secret.encode(), salt=base64.b64decode(salt), dklen=32, **SCRYPT)
    return hmac.compare_digest(got, base64.b64decode(digest))


def ensure_admin_password(session: Session) -> str | None:
    """Make sure the console has a password. Returns a newly generated one (to print once),
    or None when ``STUDYAPP_ADMIN_PASSWORD`` is set or a hash is already stored."""
    if os.environ.get("STUDYAPP_ADMIN_PASSWORD"):
        return None
    if session.get(Setting, ADMIN_KEY) is not None:
        return None
    password = secrets.token_urlsafe(12)
    session.add(Setting(key=ADMIN_KEY, value=slow_hash(password)))
    return password


def check_admin_password(session: Session, password: str) -> bool:
    """True for the configured password (environment first, else the stored hash)."""
    if not password:
        return False
    configured = os.environ.get("STUDYAPP_ADMIN_PASSWORD")
    if configured:
        return hmac.compare_digest(password.encode(), configured.encode())
    stored = session.get(Setting, ADMIN_KEY)
    return stored is not None and check_slow_hash(password, stored.value)


def revoked_marker() -> str:
    """A token-hash value that no token hashes to (64 characters, unique)."""
    return REVOKED_PREFIX + secrets.token_hex(28)


def is_revoked(stored_token_hash: str) -> bool:
    return stored_token_hash.startswith(REVOKED_PREFIX)


def answer_key(annotator_id: int, engine=None) -> str:
    """The answer route's key of ``annotator_id`` (hex HMAC-SHA256 of the id, see the module)."""
    return hmac.new(_answer_secret(engine), str(int(annotator_id)).encode(), hashlib.sha256).hexdigest()


def answer_key_matches(annotator_id: int, key: str, engine=None) -> bool:
    """Whether ``key`` is ``annotator_id``'s answer key (compared in constant time)."""
    return hmac.compare_digest(answer_key(annotator_id, engine).encode(), str(key).encode())


def _answer_secret(engine=None) -> bytes:
    from sqlalchemy.exc import IntegrityError

    from .storage import get_engine, read_session, write_session

    url = str((engine or get_engine()).url)
    if (known := _answer_secrets.get(url)) is not None:
        return known
    with read_session(engine) as session:
        row = session.get(Setting, ANSWER_SECRET_KEY)
    if row is None:
        try:
            with write_session(engine) as session:
                if session.get(Setting, ANSWER_SECRET_KEY) is None:
                    session.add(Setting(key=ANSWER_SECRET_KEY, value=secrets.token_hex(32)))
        except IntegrityError:
            pass   # another instance stored it first: that one is read below
        with read_session(engine) as session:
            row = session.get(Setting, ANSWER_SECRET_KEY)
    _answer_secrets[url] = bytes.fromhex(row.value)
    return _answer_secrets[url]


# ------------------------------------------------------------------ console sign-in backoff
def clock() -> datetime:
    """The time the sign-in backoff uses (tests replace it)."""
    return utcnow()


@dataclass(frozen=True)
class LoginResult:
    ok: bool
    throttled: bool = False     # refused without checking the password
    wait_seconds: float = 0.0   # until the next attempt is checked


def backoff_delay(failures: int, free: int = LOGIN_FREE_ATTEMPTS) -> float:
    """Seconds a source must wait after its last failure, given its consecutive failures."""
    if failures < free:
        return 0.0
    return float(min(2 ** (failures - free), LOGIN_MAX_DELAY_S))


def throttle_message(wait_seconds: float) -> str:
    """What the sign-in form says while sign-in is refused (seconds, or minutes and the time)."""
    if wait_seconds < 60:
        return f"Too many failed sign-ins: wait {wait_seconds:.0f} s, then try again."
    until = (clock() + timedelta(seconds=wait_seconds)).strftime("%H:%M")
    return (f"Too many failed sign-ins: sign-in is locked for {wait_seconds / 60:.0f} min "
            f"(until {until} UTC). Ask the platform owner if this was not you.")


def _backoff_key(source: str | None) -> str:
    return "login_backoff:" + ("*" if source is None else token_hash(source)[:32])


def _read_backoff(session: Session, key: str) -> tuple[Setting | None, int, datetime | None]:
    row = session.get(Setting, key, with_for_update=True)
    if row is None:
        return None, 0, None
    data = json.loads(row.value)
    return row, int(data["failures"]), datetime.fromisoformat(data["last"])


def admin_login(session: Session, password: str, source: str | None, *, account: str = "owner",
                check=None) -> LoginResult:
    """Check a console sign-in from ``source`` (an address) with backoff; every attempt is
    recorded in the event log (in the caller's transaction, which must be a write session).
    ``check()`` tells whether the password is right (default: the console password, which
    signs in as the first owner account, ``owner``)."""
    from .storage import log_event

    now = clock()
    origin = source or "unknown"
    keys = (_backoff_key(origin), _backoff_key(None))
    frees = (LOGIN_FREE_ATTEMPTS, LOGIN_FREE_ATTEMPTS_GLOBAL)
    states = [_read_backoff(session, key) for key in keys]
    wait = 0.0
    for (_row, failures, last), free in zip(states, frees):
        if last is not None:
            until = last + timedelta(seconds=backoff_delay(failures, free))
            wait = max(wait, (until - now).total_seconds())
    if wait > 0:
        log_event(session, "admin_login_throttled", source=origin, account=account, wait_seconds=round(wait, 3),
                  failures=states[0][1])
        return LoginResult(False, True, wait)
    if not password:  # an empty form is not a guess
        return LoginResult(False)
    if (check() if check else check_admin_password(session, password)):
        for row, _failures, _last in states:
            if row is not None:
                session.delete(row)
        log_event(session, "admin_login", actor=account, source=origin)
        return LoginResult(True)
    after = []
    for key, (row, failures, _last), free in zip(keys, states, frees):
        value = json.dumps({"failures": failures + 1, "last": now.isoformat()})
        if row is None:
            session.add(Setting(key=key, value=value))
        else:
            row.value = value
            session.add(row)
        after.append(backoff_delay(failures + 1, free))
    log_event(session, "admin_login_failed", source=origin, account=account, failures=states[0][1] + 1,
              global_failures=states[1][1] + 1)
    return LoginResult(False, False, max(after))

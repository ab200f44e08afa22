"""Secrets: invite tokens (stored as SHA-256), access codes and the admin password (scrypt).

Invite tokens are 192-bit random strings, so a fast hash is enough to store them; access
codes and the admin password may be short and human-chosen, so they get a slow, salted hash.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

from sqlmodel import Session

from .models import Setting

SCRYPT = {"n": 2**14, "r": 8, "p": 1}
ADMIN_KEY = "admin_password_hash"


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

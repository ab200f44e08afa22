"""The account commands of ``python -m studyapp``: ``account`` (list, add, password) and
``reset-admin-password``."""

from __future__ import annotations

import os
import sys

from metrics import InputError

from .study_commands import text_table


def cmd_reset_admin_password(_args) -> int:
    from ...core import auth, storage
    from ...core.models import Setting

    if os.environ.get("STUDYAPP_ADMIN_PASSWORD"):
        raise InputError("STUDYAPP_ADMIN_PASSWORD is set; it is the console password")
    with storage.write_session() as session:
        old = session.get(Setting, auth.ADMIN_KEY)
        if old is not None:
            session.delete(old)
            session.flush()
        password = auth.ensure_admin_password(session)
    print(f"new researcher console password (shown once, stored hashed): {password}")
    return 0


def read_password() -> str:
    """A password from the terminal (asked twice) or the first line of standard input."""
    if sys.stdin.isatty():
        import getpass
        first, second = getpass.getpass("password: "), getpass.getpass("again: ")
        if first != second:
            raise InputError("the two passwords differ")
        return first
    try:
        return sys.stdin.readline().rstrip("\r\n")
    except OSError:
        raise InputError("the password could not be read from standard input (pipe it in, or run "
                         "the command on a terminal)") from None


def cmd_account(args) -> int:
    from ...core import accounts

    if args.account_command == "list":
        table = accounts.list_accounts()
        print(text_table(table) if len(table) else "no accounts yet (the console password "
              "signs in as the platform owner)")
    elif args.account_command == "add":
        accounts.add_account(args.name, args.role, read_password())
        print(f"created the {args.role} account {args.name!r}")
    else:
        accounts.set_password(args.name, read_password())
        print(f"new password set for {args.name!r}")
    return 0

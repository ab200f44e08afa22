"""What every console area uses: the signed-in account, the session check of parts that rerun
alone, upload limits, audit entries and tabs of which only the open one runs."""

from collections.abc import Callable

import streamlit as st

from metrics import InputError
from studyapp.core import accounts, config, safe_markdown


def actor() -> accounts.Actor:
    return st.session_state["actor"]


def session_alive(*, touch: bool = True) -> None:
    """Parts of the page that rerun alone (fragments) check the session first: an expired or
    signed-out session reruns the whole page, which shows the sign-in form. The dashboard's
    timed refresh does not ``touch`` it (an open, unattended tab still goes idle)."""
    if accounts.session_actor(st.session_state.get("session_token"), touch=touch) is None:
        st.rerun(scope="app")


def uploads_fit(*uploads) -> bool:
    """False, after one error line naming the file, when an upload is over its kind's limit
    (``config.UPLOAD_LIMITS_MB``; the browser enforces it too, the server checks it again here)."""
    for upload, kind in uploads:
        if upload is not None and upload.size > config.UPLOAD_LIMITS_MB[kind] * 1024 * 1024:
            st.error(f"{safe_markdown.text(upload.name)}: {upload.size / 2**20:.1f} MB, over the "
                     f"{config.UPLOAD_LIMITS_MB[kind]} MB limit for {kind} files; nothing was created or changed.")
            return False
    return True


def log_view(study, what: str) -> None:
    """One audit entry per signed-in session and study for looking at its data (kept across
    reloads: ``accounts.record_view_once`` reads the log; this page's set saves the query)."""
    seen = st.session_state.setdefault("viewed-studies", set())
    if study.id not in seen:
        accounts.record_view_once(actor(), study.slug, st.session_state.get("session_token"), what)
        seen.add(study.id)


def download_button(where, label: str, make: Callable[[], bytes | str], file_name: str,
                    mime: str | None = None, *,
                    studies: list[str] | tuple[str, ...], key: str) -> None:
    """A download whose data is made when the button is pressed and goes to the audit log with
    the studies (slugs) it comes from. The page does not rerun on the press: a rerun while a
    second download is being prepared would drop that one."""
    who = actor()

    def made() -> bytes | str:
        data = make()
        accounts.record_access(who, "downloaded", list(studies), file=file_name)
        return data

    where.download_button(label, made, file_name, mime, key=key, on_click="ignore")


def linked(param: str, names: list[str], what: str) -> str | None:
    """The name in the console's address (``?study=`` / ``?version=``) when it is one of
    ``names`` (what this account may see); any other is refused with the same line whether it
    exists or not, and dropped from the address."""
    name = st.query_params.get(param)
    if name is None or name in names:
        return name
    st.warning(f"No {what} of yours has that name: the address names one you may not see, or none.")
    del st.query_params[param]
    return None


def share_form(kind: str, name: str) -> None:
    """Share a study or a matrix version (``kind``) with another account (it may then see and
    download it; ``studyapp share`` on the CLI)."""
    with st.form(f"share-{kind}-{name}"):
        account = st.text_input(f"Share this {'study' if kind == 'study' else 'version'} with the account",
                                key=f"share-{kind}-{name}-account")
        if st.form_submit_button("Share"):
            try:
                accounts.share(kind, name, account.strip(), actor=actor())
            except InputError as exc:
                st.error(safe_markdown.text(exc))
            else:
                st.success(f"Shared with {safe_markdown.text(account.strip())}: they may see and download it.")


def open_tab(views, key: str, *args) -> None:
    """Tabs of which only the open one runs (switching tabs is a rerun of that tab alone): a page
    draws, and the browser renders, one area at a time."""
    tabs = st.tabs([name for name, _ in views], key=key, on_change="rerun")
    for tab, (_, show) in zip(tabs, views):
        if tab.open:
            with tab:
                show(*args)

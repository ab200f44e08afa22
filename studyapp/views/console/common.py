"""What every console area uses: the signed-in account, the session check of parts that rerun
alone, upload limits, audit entries and tabs of which only the open one runs."""

import streamlit as st

from studyapp import accounts, config, inert, storage, studies


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
            st.error(f"{inert.text(upload.name)}: {upload.size / 2**20:.1f} MB, over the "
                     f"{config.UPLOAD_LIMITS_MB[kind]} MB limit for {kind} files; nothing was created or changed.")
            return False
    return True


def log_view(study, what: str) -> None:
    """One audit entry per signed-in session and study for looking at its data."""
    seen = st.session_state.setdefault("viewed-studies", set())
    if study.id not in seen:
        accounts.record_access(actor(), "data_viewed", study.id, what=what)
        seen.add(study.id)


def log_download(file: str, study_id: int | None = None, slug: str | None = None) -> None:
    """The ``on_click`` of every download button: the download goes to the audit log."""
    if slug is not None:
        with storage.read_session() as session:
            study_id = studies.study_by_slug(session, slug).id
    accounts.record_access(actor(), "downloaded", study_id, file=file)


def open_tab(views, key: str, *args) -> None:
    """Tabs of which only the open one runs (switching tabs is a rerun of that tab alone): a page
    draws, and the browser renders, one area at a time."""
    tabs = st.tabs([name for name, _ in views], key=key, on_change="rerun")
    for tab, (_, show) in zip(tabs, views):
        if tab.open:
            with tab:
                show(*args)

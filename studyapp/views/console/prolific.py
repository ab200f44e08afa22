"""A study's Prolific participants by status, the upload of Prolific's submissions export, and
the study URL to give Prolific."""

import tempfile
from pathlib import Path

import streamlit as st

from metrics import InputError
from studyapp.core import accounts, safe_markdown
from studyapp.platform.assignment import prolific
from studyapp.platform.specs.spec_model import spec_of
from studyapp.views.console.common import actor
from studyapp.views.ui import base_url


def prolific_section(study) -> None:
    """Prolific participants by status (returned, timed out, screened out, ...), and Prolific's
    submissions export to pass their statuses in (``studyapp prolific-status``)."""
    if (line := prolific.summary_line(study.id)) is None:
        return
    st.markdown(f"**Prolific** — {line}")   # fixed state names and counts
    if not accounts.may(actor(), "change", study):
        return
    key = f"prolific-export-{study.id}"
    export = st.file_uploader("Prolific's submissions export (CSV): returned and timed-out submissions give "
                              "their unanswered items to the next participants", type=["csv"], key=key)
    if export is not None:
        st.button("Apply the statuses", key=f"prolific-apply-{study.id}", on_click=apply_prolific_statuses,
                  args=(study.id, key))
    if (outcome := st.session_state.pop(f"prolific-outcome-{study.id}", None)) is not None:
        error, lines = outcome
        if error:
            st.error(safe_markdown.text(lines[0]))
        else:
            st.success(safe_markdown.text(lines[-1]))
            for line in lines[:-1]:
                st.caption(safe_markdown.text(line))


def apply_prolific_statuses(study_id: int, upload_key: str) -> None:
    """The ``on_click`` of "Apply the statuses": applied before the page runs, so the counts and
    tables that run draws include them; the outcome is shown under the button."""
    export = st.session_state.get(upload_key)
    if export is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / export.name   # under its own name, so errors name the file
        path.write_bytes(export.getvalue())
        try:
            rows = prolific.read_statuses(path)
            report = prolific.apply_statuses(study_id, [(pid, status) for _l, pid, status in rows],
                                             actor=actor(), source=export.name)
        except InputError as exc:
            outcome = (True, [str(exc).replace(str(path), export.name)])
        else:
            outcome = (False, report.lines())
    st.session_state[f"prolific-outcome-{study_id}"] = outcome


def prolific_hint(study) -> None:
    """Prolific's study URL for this study, only when its spec has a ``[prolific]`` section."""
    spec = spec_of(study)
    if not prolific.takes_prolific(spec):
        return
    prolific_url = (f"{base_url()}/?study={study.slug}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                    "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    codes = "; ".join(f"{kind} code {safe_markdown.text(code)}" for kind, code in prolific.outcome_codes(spec))
    st.caption(f"Prolific: use {safe_markdown.code(prolific_url)} as the study URL" + (f"; {codes}." if codes else "."))

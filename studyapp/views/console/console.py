"""The researcher console page (``/console``): create studies, preview, invite, watch progress,
pause, export. One module per area: :mod:`.signin`, :mod:`.create`, :mod:`.studies`,
:mod:`.dashboard`, :mod:`.prolific`, :mod:`.matrices`, :mod:`.scoring`, :mod:`.accounts`."""

import streamlit as st

from studyapp.core import accounts, config, safe_markdown, storage
from studyapp.platform.records import studies
from studyapp.views.console.accounts import accounts_section, audit_section
from studyapp.views.console.common import actor, open_tab
from studyapp.views.console.create import create_area
from studyapp.views.console.matrices import matrices_section
from studyapp.views.console.scoring import scoring_section
from studyapp.views.console.signin import login, sign_out
from studyapp.views.console.studies import study_area


def console_areas(all_studies) -> list[tuple[str, object]]:
    """The console's top-level areas this account may use, as (tab label, draw function)."""
    areas = [("Studies", lambda: study_area(all_studies))]
    if accounts.may(actor(), "create"):
        areas.append(("Create", create_area))
    areas += [("Matrices", lambda: matrices_section(all_studies)), ("Scoring", scoring_section)]
    areas.append(("Accounts", accounts_section) if accounts.may(actor(), "accounts") else ("Audit log", audit_section))
    return areas


def main() -> None:
    if login() is None:
        return
    st.title("Researcher console")
    all_studies = accounts.visible(actor(), studies.list_studies())
    with st.sidebar:
        st.markdown(f"Signed in as **{safe_markdown.text(actor().name)}** ({actor().role})")
        st.markdown(f"Database: `{storage.describe(config.database_url())}`")   # never the password
        st.button("Sign out", on_click=sign_out)
    if (created := st.session_state.pop("show-study", None)) is not None:   # the study just created
        st.session_state["console-area"], st.session_state["chosen-study"] = "Studies", created
        st.session_state.pop("study-pick", None)
    open_tab(console_areas(all_studies), "console-area")


main()

"""The Accounts area (platform owner): the accounts, a form to add one, the audit log; the
Audit log area of other accounts (the entries they may read)."""

import streamlit as st

from metrics import InputError
from studyapp.core import accounts, safe_markdown
from studyapp.views.console.common import actor


def accounts_section() -> None:
    """The platform owner's accounts and audit log."""
    st.subheader("Accounts")
    st.dataframe(accounts.list_accounts(), hide_index=True)
    with st.form("new-account"):
        left, middle, right = st.columns(3)
        left.text_input("Name", key="new-account-name")
        middle.selectbox("Role", accounts.ROLES, index=1, key="new-account-role")
        right.text_input("Password", type="password", key="new-account-password")
        st.form_submit_button("Create account", on_click=create_account)
    if (outcome := st.session_state.pop("account-outcome", None)) is not None:
        (st.success if outcome[0] == "ok" else st.error)(safe_markdown.text(outcome[1]))
    audit_section()


def audit_section() -> None:
    """The audit entries this account may read (``accounts.audit_log``)."""
    st.subheader("Audit log")
    if not accounts.may(actor(), "accounts"):
        st.caption("Your own actions, and those on studies you own.")
    st.dataframe(accounts.audit_log(actor()), hide_index=True)


def create_account() -> None:
    """The account form's submit: on success the name and password fields are emptied (they kept
    them, so a second click tried the same account again); on a refusal they stay to be fixed."""
    state = st.session_state
    name, role = state["new-account-name"], state["new-account-role"]
    try:
        accounts.add_account(name, role, state["new-account-password"], actor=actor())
    except InputError as exc:
        state["account-outcome"] = ("error", str(exc))
    else:
        state["account-outcome"] = ("ok", f"Created the {role} account {name}.")
        state["new-account-name"] = state["new-account-password"] = ""

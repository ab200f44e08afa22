"""Sign-in and sign-out: the console's session token kept in the address (``?session=``)."""

import streamlit as st

from studyapp.core import accounts, auth, storage


def source_address() -> str:
    """The browser's address for the sign-in backoff ("local" on loopback or when unknown)."""
    try:
        address = st.context.ip_address
    except Exception:  # no browser context
        address = None
    return address if isinstance(address, str) and address else "local"


SESSION_PARAM = "session"


def login() -> accounts.Actor | None:
    """The signed-in account, or None after drawing the sign-in form. A sign-in opens a console
    session whose token stays in the address (``?session=``), so a reload keeps the researcher
    signed in until the session expires or is signed out (``accounts.session_actor``)."""
    token = st.query_params.get(SESSION_PARAM) or st.session_state.get("session_token")
    if token and (actor := accounts.session_actor(token)) is not None:
        st.session_state["actor"], st.session_state["session_token"] = actor, token
        if st.query_params.get(SESSION_PARAM) != token:
            st.query_params[SESSION_PARAM] = token
        return actor
    st.session_state.pop("session_token", None)
    if st.session_state.pop("actor", None) is not None:
        st.session_state["signed_out_reason"] = "Your session has ended: sign in again."
    if token:
        del st.query_params[SESSION_PARAM]
    form = st.empty()   # emptied on a sign-in, so the console is drawn in the same run
    with form.container():
        actor = sign_in_form()
    if actor is not None:
        form.empty()
    return actor


def sign_in_form() -> accounts.Actor | None:
    """The sign-in form; on a right password the new session's account (the session token goes
    in the address), else None after the form and any refusal are drawn."""
    st.title("Researcher console")
    if reason := st.session_state.pop("signed_out_reason", None):
        st.info(reason)
    with st.form("login"):
        name = st.text_input("Account (empty: the platform owner)", key="signin-account")
        password = st.text_input("Password", type="password", key="signin-password",
                                 max_chars=accounts.MAX_PASSWORD)
        submitted = st.form_submit_button("Sign in")
    if submitted:
        with storage.write_session() as session:
            result, actor = accounts.sign_in(session, name, password, source_address())
        if result.ok:
            token = accounts.open_session(actor)
            st.session_state["actor"], st.session_state["session_token"] = actor, token
            st.query_params[SESSION_PARAM] = token
            return actor
        if result.throttled:
            st.error(auth.throttle_message(result.wait_seconds))
        else:
            st.error("Wrong account or password." if password else "Enter your password.")
    st.caption("Accounts: `python -m studyapp account add NAME --role researcher`. The platform owner's "
               "password is STUDYAPP_ADMIN_PASSWORD, or the one printed when the server first started "
               "(`python -m studyapp reset-admin-password` makes a new one).")
    return None


def sign_out() -> None:
    accounts.close_session(st.session_state.pop("session_token", None))
    st.query_params.pop(SESSION_PARAM, None)
    st.session_state.pop("actor", None)

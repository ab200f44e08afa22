"""The Studies area: the chosen study's progress, preview, invites and export (the dashboard's
tabs are in :mod:`studyapp.views.console.dashboard`)."""

import pandas as pd
import streamlit as st

from metrics import InputError
from studyapp.core import accounts, safe_markdown
from studyapp.core.accounts import no_studies_text
from studyapp.platform.records import exports, studies
from studyapp.platform.specs.spec_model import spec_of
from studyapp.studytypes import get_type
from studyapp.views.components import answer_bar, answer_bar_data
from studyapp.views.console.common import actor, download_button, linked, log_view, open_tab, session_alive, share_form
from studyapp.views.console.create import created_message
from studyapp.views.console.dashboard import dashboard_tab, details_tab
from studyapp.views.console.prolific import prolific_hint, prolific_section
from studyapp.views.studytypes import view_of
from studyapp.views.ui import base_url


def study_area(all_studies) -> None:
    """The chosen study's dashboard, progress and preview (and for its researchers, invites and
    export), one tab at a time: only the open tab runs."""
    created_message()
    if not all_studies:
        st.info(safe_markdown.text(no_studies_text(actor(), len(studies.list_studies()))))
        return
    by_slug = {s.slug: s for s in all_studies}
    if (named := linked("study", list(by_slug), "study")) is not None and "study-pick" not in st.session_state:
        st.session_state["study-pick"] = named   # the address names one: /console?study=SLUG
    if "study-pick" not in st.session_state and st.session_state.get("chosen-study") in by_slug:
        st.session_state["study-pick"] = st.session_state["chosen-study"]   # back from another area
    slug = st.selectbox("Study", list(by_slug), key="study-pick",
                        format_func=lambda s: f"{s} — {by_slug[s].title} ({by_slug[s].status})")
    st.session_state["chosen-study"] = slug
    study = by_slug[slug]
    log_view(study, "dashboard, progress, preview")   # whichever tab is open
    views = [("Dashboard", dashboard_tab), ("Details", details_tab), ("Progress", progress_tab),
             ("Preview", preview_tab)]
    if accounts.may(actor(), "change", study):
        views.append(("Invite", invite_tab))
    if accounts.may(actor(), "download", study):
        views.append(("Export", export_tab))
    open_tab(views, "study-view", study)


def progress_tab(study) -> None:
    p = studies.progress(study.id)
    cols = st.columns(3)
    if "items_done" in p:  # adaptive: items retire at the target SE, ratings_needed is a ceiling
        cols[0].metric("Items done", f"{p['items_done']} / {p['items']}",
                       help=f"{p['ratings_done']} ratings so far, at most {p['ratings_needed']}")
        st.progress(p["items_done"] / p["items"] if p["items"] else 0.0)
    else:
        cols[0].metric("Ratings", f"{p['ratings_done']} / {p['ratings_needed']}")
        st.progress(p["ratings_done"] / p["ratings_needed"] if p["ratings_needed"] else 0.0)
    cols[1].metric("Rated at least once", p["rated_at_least_once"], help="annotators who answered a main item")
    cols[2].metric("Status", p["status"])
    st.caption(safe_markdown.text(studies.counts_line(p)))
    st.markdown("**Per annotator**")
    st.dataframe(pd.DataFrame(p["annotators"]), hide_index=True)
    prolific_section(study)
    st.markdown("**Per item**")
    st.dataframe(pd.DataFrame(p["per_item"]), hide_index=True)
    if accounts.may(actor(), "change", study):
        st.markdown("**Study status**")
        st.segmented_control("Status", studies.STATUSES, default=study.status, key=f"status-{study.id}",
                             label_visibility="collapsed", on_change=on_status_change, args=(study.id,))
        owner_section(study)


def on_status_change(study_id: int) -> None:
    """A click on a status applies it at once (clicking the current one again changes nothing)."""
    choice = st.session_state[f"status-{study_id}"]
    if choice:
        studies.set_status(study_id, choice, actor=actor())
    else:
        del st.session_state[f"status-{study_id}"]  # a second click deselects: show the status again


def owner_section(study) -> None:
    """Give the study to another owner or researcher account (``studyapp owner`` on the CLI)."""
    shared = ", ".join(sorted(accounts.shared_accounts(study)))
    st.markdown(f"**Owner**: {safe_markdown.text(study.owner or 'nobody')}"
                + (f"; shared with {safe_markdown.text(shared)}" if shared else ""))
    share_form("study", study.slug)
    with st.form(f"owner-{study.id}"):
        new = st.text_input("Give this study to the account", key=f"owner-name-{study.id}")
        if st.form_submit_button("Change owner"):
            try:
                studies.set_owner(study.id, new.strip(), actor=actor())
            except InputError as exc:
                st.error(safe_markdown.text(exc))
            else:
                st.success(f"Study {safe_markdown.text(study.slug)} now belongs to {safe_markdown.text(new.strip())}.")


@st.fragment
def preview_tab(study) -> None:
    """Each item as annotators see it, with the study type's own answer controls; answers given
    here are not stored."""
    session_alive()
    items = studies.study_items(study.id)
    keys = [f"{key} ({role})" if role != "main" else key for key, role, _ in items]
    index = st.selectbox("Item", range(len(items)), format_func=keys.__getitem__,
                         key=f"preview-item-{study.id}")
    study_type = get_type(study.study_type)
    view = view_of(study_type)
    fields = items[index][2]
    view.render_item(fields, **shown_as_annotators_see(view.render_item, spec_of(study)))
    shown = {"item_id": -1 - index, "can_go_back": False, "revising": False, "seen_nonce": None}
    mount = {"on_action": lambda: None, "key": f"preview-{study.id}-{index}"}
    if study_type.custom_response:
        view.response_form(fields, None, **shown, **mount)
    else:
        scale = spec_of(study).scale
        answer_bar(data=answer_bar_data(values=scale.values, labels=scale.labels, current=None, **shown),
                   **mount)
    st.caption("Preview: answers given here are not stored.")


def shown_as_annotators_see(render, spec) -> dict:
    """The spec's ``[display]`` options for a view that takes them (synset codes shown or not),
    so the preview shows what the study's annotators see."""
    import inspect
    return {"synset_codes": spec.synset_codes} if "synset_codes" in inspect.signature(render).parameters else {}


def invite_tab(study) -> None:
    count = st.number_input("Links", min_value=1, max_value=500, value=1, key="invite-count")
    labels = st.text_area("Or pseudonyms, one per line (one link each)", key="invite-labels")
    if st.button("Create invite links", key="invite"):
        names = [line.strip() for line in labels.splitlines() if line.strip()]
        try:
            if names:
                created, duplicates = studies.invite_names(study.id, names, actor=actor())
            else:
                created, duplicates = studies.invite(study.id, int(count), actor=actor()), []
        except InputError as exc:
            st.error(safe_markdown.text(exc))
        else:
            for name in duplicates:
                st.warning(f"Not created: the pseudonym {safe_markdown.text(name)} is already used in this study.")
            st.session_state["invites"] = [(i.pseudonym, i.link(base_url())) for i in created]
    annotators_of_section(study)
    if st.session_state.get("invites"):
        st.warning("Copy these links now: tokens are stored only as hashes and cannot be shown again.")
        st.dataframe(pd.DataFrame(st.session_state["invites"], columns=["pseudonym", "link"]),
                     hide_index=True)
    prolific_hint(study)
    if study.access_code_hash:
        st.caption(f"Access-code entry: {base_url()}/?study={study.slug}")
    revoke_section(study)


def annotators_of_section(study) -> None:
    """One link per annotator of an earlier study, same pseudonyms (a with-image pass;
    ``studyapp invite --annotators-of`` on the CLI); pseudonyms already invited are skipped."""
    earlier = [s.slug for s in accounts.visible(actor(), studies.list_studies()) if s.id != study.id]
    if not earlier:
        return
    source = st.selectbox("Or invite the annotators of an earlier study (same pseudonyms)", earlier,
                          index=None, key=f"annotators-of-{study.id}", placeholder="an earlier study")
    if source and st.button("Invite its annotators", key=f"invite-annotators-of-{study.id}"):
        try:
            created, existing = studies.invite_names(study.id, studies.raters_of(source), actor=actor())
        except InputError as exc:
            st.error(safe_markdown.text(exc))
            return
        for name in existing:
            st.warning(f"Not created: the pseudonym {safe_markdown.text(name)} is already used in this study.")
        st.session_state["invites"] = [(i.pseudonym, i.link(base_url())) for i in created]


def revoke_section(study) -> None:
    """Withdraw an annotator's link (their answers are kept)."""
    active = [a["annotator"] for a in studies.progress(study.id)["annotators"] if a["status"] != "revoked"]
    if not active:
        return
    st.markdown("**Revoke access**")
    who = st.selectbox("Annotator", active, key=f"revoke-who-{study.id}")
    if st.button("Revoke this annotator's link", key=f"revoke-{study.id}"):
        try:
            studies.revoke(study.id, who, actor=actor())
        except InputError as exc:
            st.error(safe_markdown.text(exc))
        else:
            st.success(f"Revoked {safe_markdown.text(who)}: their link is refused from now on.")


def export_tab(study) -> None:
    if accounts.may(actor(), "change", study) and st.button("Write export folder", key="export"):
        folder = exports.export_study(study.slug, actor=actor())
        st.success(f"Wrote the export folder {folder.parent.name}/{folder.name} in the server's exports folder "
                   "(the files are also downloadable below).")
    tables = exports.study_tables(study.slug)
    model_names = [] if get_type(study.study_type).custom_response else ["items_model.csv", "raters_model.csv"]
    cols = st.columns(len(tables) + len(model_names))
    for column, name in zip(cols, tables):   # each file made when it is downloaded, fresh
        download_button(column, name, lambda name=name: exports.csv_bytes(exports.study_tables(study.slug)[name]),
                        name, "text/csv", studies=[study.slug], key=f"dl-{name}")
    for column, name in zip(cols[len(tables):], model_names):   # fitted only when asked for
        download_button(column, name, lambda name=name: exports.csv_bytes(
            exports.study_model_tables(study, exports.study_tables(study.slug))[name]),
            name, "text/csv", studies=[study.slug], key=f"dl-{name}")
    st.dataframe(tables["ratings.csv"], hide_index=True)

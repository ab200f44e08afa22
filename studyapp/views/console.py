"""The researcher console: create studies, preview, invite, watch progress, pause, export."""

import json
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from metrics import InputError
from studyapp.accounts import no_studies_text
from studyapp import accounts, auth, charts, config, dashboard, exports, inert, report_cache, storage, studies
from studyapp import prolific
from metrics.study import compare_lines
from studyapp import matrix_versions, scoring
from metrics.study import reliability_frame
from studyapp.specs import load_spec
from studyapp.study_spec import spec_of
from studyapp.studytypes import REGISTRY, get_type
from studyapp.components import answer_bar
from studyapp.ui import base_url, type_view


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


def create_section() -> None:
    st.subheader("Create a study")
    specs = sorted(config.STUDIES_DIR.glob("*.toml"))
    from_file, upload = st.tabs(["From studies/", "Upload"])
    with from_file:
        if specs:
            choice = st.selectbox("Spec file", specs, format_func=lambda p: p.name)
            if st.button("Create from file", key="create-file"):
                create(choice)
        else:
            st.caption("No spec files in studies/.")
    with upload:
        spec_file = st.file_uploader(f"Spec (TOML, at most {config.UPLOAD_LIMITS_MB['spec']} MB)", type=["toml"],
                                     key="spec-upload", max_upload_size=config.UPLOAD_LIMITS_MB["spec"])
        items_file = st.file_uploader(f"Items CSV (if the spec names one; at most {config.UPLOAD_LIMITS_MB['items']} MB)",
                                      type=["csv"], key="items-upload", max_upload_size=config.UPLOAD_LIMITS_MB["items"])
        if spec_file and st.button("Create from upload", key="create-upload") and uploads_fit(
                (spec_file, "spec"), (items_file, "items")):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / spec_file.name
                path.write_bytes(spec_file.getvalue())
                if items_file:
                    (Path(tmp) / items_file.name).write_bytes(items_file.getvalue())
                create(path)


def uploads_fit(*uploads) -> bool:
    """False, after one error line naming the file, when an upload is over its kind's limit
    (``config.UPLOAD_LIMITS_MB``; the browser enforces it too, the server checks it again here)."""
    for upload, kind in uploads:
        if upload is not None and upload.size > config.UPLOAD_LIMITS_MB[kind] * 1024 * 1024:
            st.error(f"{inert.text(upload.name)}: {upload.size / 2**20:.1f} MB, over the "
                     f"{config.UPLOAD_LIMITS_MB[kind]} MB limit for {kind} files; nothing was created or changed.")
            return False
    return True


def session_alive(*, touch: bool = True) -> None:
    """Parts of the page that rerun alone (fragments) check the session first: an expired or
    signed-out session reruns the whole page, which shows the sign-in form. The dashboard's
    timed refresh does not ``touch`` it (an open, unattended tab still goes idle)."""
    if accounts.session_actor(st.session_state.get("session_token"), touch=touch) is None:
        st.rerun(scope="app")


def create(path: Path) -> None:
    try:
        with st.spinner("Validating the spec and preparing the items..."):
            spec = load_spec(path)
            studies.create_study(spec, actor=actor())
    except InputError as exc:
        st.error(inert.text(exc))
        return
    st.session_state["created"] = (f"Created study {spec.slug!r} with {len(spec.items)} items.", spec.source_report)
    st.session_state["show-study"] = spec.slug
    st.rerun()   # to the new study, under Studies


def created_message() -> None:
    """The confirmation of the study created by the previous run, shown once."""
    if (created := st.session_state.pop("created", None)) is not None:
        message, source_report = created
        st.success(inert.text(message))
        if source_report:
            st.code(source_report, language=None)


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
    cols[1].metric("Annotators", len(p["annotators"]))
    cols[2].metric("Status", p["status"])
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


def prolific_section(study) -> None:
    """Prolific participants by status (returned, timed out, screened out, ...), and Prolific's
    submissions export to pass their statuses in (``studyapp prolific-status``)."""
    if not prolific.takes_prolific(spec_of(study)):
        return
    counts = prolific.summary(study.id)
    st.markdown("**Prolific** — " + (", ".join(f"{status}: {n}" for status, n in sorted(counts.items()))
                                     if counts else "no participant yet"))
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
            st.error(inert.text(lines[0]))
        else:
            st.success(inert.text(lines[-1]))
            for line in lines[:-1]:
                st.caption(inert.text(line))


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


def owner_section(study) -> None:
    """Give the study to another owner or researcher account (``studyapp owner`` on the CLI)."""
    st.markdown(f"**Owner**: {inert.text(study.owner or 'nobody')}")
    with st.form(f"owner-{study.id}"):
        new = st.text_input("Give this study to the account", key=f"owner-name-{study.id}")
        if st.form_submit_button("Change owner"):
            try:
                studies.set_owner(study.id, new.strip(), actor=actor())
            except InputError as exc:
                st.error(inert.text(exc))
            else:
                st.success(f"Study {inert.text(study.slug)} now belongs to {inert.text(new.strip())}.")


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


def on_status_change(study_id: int) -> None:
    """A click on a status applies it at once (clicking the current one again changes nothing)."""
    choice = st.session_state[f"status-{study_id}"]
    if choice:
        studies.set_status(study_id, choice, actor=actor())
    else:
        del st.session_state[f"status-{study_id}"]  # a second click deselects: show the status again


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
    view = type_view(study_type)
    fields = items[index][2]
    view.render_item(fields)
    mount = {"item_id": -1 - index, "can_go_back": False, "revising": False, "seen_nonce": None,
             "on_action": lambda: None, "key": f"preview-{study.id}-{index}"}
    if study_type.custom_response:
        view.response_form(fields, None, **mount)
    else:
        scale = spec_of(study).scale
        answer_bar(values=scale.values, labels=scale.labels, current=None, **mount)
    st.caption("Preview: answers given here are not stored.")


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
            st.error(inert.text(exc))
        else:
            for name in duplicates:
                st.warning(f"Not created: the pseudonym {inert.text(name)} is already used in this study.")
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
            st.error(inert.text(exc))
            return
        for name in existing:
            st.warning(f"Not created: the pseudonym {inert.text(name)} is already used in this study.")
        st.session_state["invites"] = [(i.pseudonym, i.link(base_url())) for i in created]


def prolific_hint(study) -> None:
    """Prolific's study URL for this study, only when its spec has a ``[prolific]`` section."""
    spec = spec_of(study)
    if not prolific.takes_prolific(spec):
        return
    prolific_url = (f"{base_url()}/?study={study.slug}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                    "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    st.caption(f"Prolific: use {inert.code(prolific_url)} as the study URL"
               + (f"; completion code {inert.text(spec.completion_code)}." if spec.completion_code else "."))


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
            st.error(inert.text(exc))
        else:
            st.success(f"Revoked {inert.text(who)}: their link is refused from now on.")


def export_tab(study) -> None:
    if st.button("Write export folder", key="export"):
        folder = exports.export_study(study.slug, actor=actor())
        st.success(f"Wrote {folder}")
    tables = exports.study_tables(study.slug)
    model_names = [] if get_type(study.study_type).custom_response else ["items_model.csv", "raters_model.csv"]
    cols = st.columns(len(tables) + len(model_names))
    for column, name in zip(cols, tables):   # each file made when it is downloaded, fresh
        column.download_button(name, lambda name=name: exports.csv_bytes(exports.study_tables(study.slug)[name]),
                               name, "text/csv", key=f"dl-{name}", on_click=log_download, args=(name, study.id))
    for column, name in zip(cols[len(tables):], model_names):   # fitted only when asked for
        column.download_button(name, lambda name=name: exports.csv_bytes(
            exports.study_model_tables(study, exports.study_tables(study.slug))[name]),
            name, "text/csv", key=f"dl-{name}", on_click=log_download, args=(name, study.id))
    st.dataframe(tables["ratings.csv"], hide_index=True)


def dashboard_tab(study) -> None:
    st.caption(f"Live: refreshed every {DASHBOARD_REFRESH_S} s and recomputed when ratings arrive "
               f"(intervals from {dashboard.LIVE_RESAMPLES} bootstrap resamples; the downloadable "
               "report uses 1,000). Tables and charts: the **Details** tab.")
    dashboard_view(study.slug, study.study_type)


def details_tab(study) -> None:
    st.caption(f"Live: refreshed every {DASHBOARD_REFRESH_S} s, as the dashboard.")
    details_view(study.slug)


DASHBOARD_REFRESH_S = 10


def live_board(slug: str) -> dashboard.Dashboard | None:
    """The study's dashboard for a timed refresh (which does not keep the session alive), or
    None after its one-line error."""
    session_alive(touch=False)
    try:
        return dashboard.study_dashboard(slug)
    except InputError as exc:
        st.error(inert.text(exc))
        return None


@st.fragment(run_every=DASHBOARD_REFRESH_S)
def dashboard_view(slug: str, study_type: str) -> None:
    """The headline figures, what is not shown yet and why, and each analysis' summary: what a
    sign-in or reload lands on, so it stays a few elements (the tables and charts, most of the
    browser's drawing time, are under Details)."""
    if (board := live_board(slug)) is None:
        return
    p = board.progress
    cols = st.columns(4)
    cols[0].metric("Ratings", f"{p['ratings_done']} / {p['ratings_needed']}")
    cols[1].metric("Annotators", len(p["annotators"]))
    if board.agreement:
        for column, key, label in ((cols[2], "alpha", f"Krippendorff's α ({board.agreement['level']})"),
                                   (cols[3], "eq13", "Mean agreement (Eq. 13)")):
            value, ci = board.agreement[key]
            column.metric(label, f"{value:.3f}", help=f"95% interval {ci[0]:.3f}–{ci[1]:.3f}" if ci else None)
            column.caption(f"95% interval {ci[0]:.3f}–{ci[1]:.3f}" if ci else "")
        st.caption(f"Mean quadratic weighted κ {board.agreement['qwk'][0]:.3f} (no interval); "
                   f"{board.agreement['n_ratings']} ratings of {board.agreement['n_items']} items by "
                   f"{board.agreement['n_annotators']} annotators.")
    for name, reason in board.unavailable.items():
        st.info(f"{name.replace('_', ' ').capitalize()}: not shown yet — {inert.text(reason)}.")
    if board.adaptive:
        a = board.adaptive
        st.markdown("**Adaptive collection** — " + ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in a.items()
                                                               if not isinstance(v, (dict, list))))
    for section in board.sections:
        st.markdown(f"**{inert.text(section.title)}**")
        if section.text:
            st.caption(inert.text(section.text))
    if not get_type(study_type).custom_response and board.agreement:
        report_cache.warm_in_background(slug, board.fingerprint)
        st.download_button("Download report.html (full resamples; a few seconds when ratings are new)",
                           lambda: report_bytes(slug), "report.html", "text/html", key=f"report-download-{slug}",
                           on_click=log_download, args=("report.html",), kwargs={"slug": slug})


@st.fragment(run_every=DASHBOARD_REFRESH_S)
def details_view(slug: str) -> None:
    """The dashboard's tables and charts in three groups, one drawn at a time: agreement
    (annotators, agreement over time, pairwise heatmaps, score distributions), raters
    (reliability, the rater model) and the study type's own analyses."""
    if (board := live_board(slug)) is None:
        return
    groups = [("Agreement", agreement_details), ("Raters", rater_details)]
    if any(section.tables or section.charts for section in board.sections):
        groups.append(("Analyses", analysis_details))
    open_tab(groups, "details-view", board)


def agreement_details(board: dashboard.Dashboard) -> None:
    st.markdown("**Annotators** (median seconds per item, attention checks passed)")
    st.dataframe(board.annotators, hide_index=True)
    if board.over_time is not None and len(board.over_time):
        st.vega_lite_chart(board_chart(board, "over_time", lambda: charts.agreement_over_time(board.over_time)), width="stretch")
    if board.agreement:
        report = board.agreement["report"]
        st.vega_lite_chart(board_chart(board, "spearman", lambda: charts.heatmap(report.spearman, "Pairwise Spearman ρ")))
        st.vega_lite_chart(board_chart(board, "qwk", lambda: charts.heatmap(report.qwk, "Pairwise quadratic weighted κ")))
        st.vega_lite_chart(board_chart(board, "distributions", lambda: charts.score_distributions(report.distributions)),
                           width="stretch")


def rater_details(board: dashboard.Dashboard) -> None:
    if board.reliability:
        st.markdown("**Reliability** (bootstrap intervals over items)")
        st.dataframe(reliability_frame(board.reliability), hide_index=True)
    if board.rater_model is not None:
        model = board.rater_model
        st.vega_lite_chart(board_chart(board, "model_scores", lambda: charts.model_scores(model.items, model.scale)),
                           width="stretch")
        st.vega_lite_chart(board_chart(board, "raters", lambda: charts.rater_chart(model.raters)), width="stretch")
    if not board.reliability and board.rater_model is None:
        st.caption("No reliability table or rater model yet: see the Dashboard tab for why.")


def analysis_details(board: dashboard.Dashboard) -> None:
    for section in board.sections:
        if not section.tables and not section.charts:
            continue
        st.markdown(f"**{inert.text(section.title)}**")
        for name, table in section.tables.items():
            st.caption(inert.text(name))
            st.dataframe(table, hide_index=True)
        for k, chart in enumerate(section.charts):
            st.vega_lite_chart(board_chart(board, f"{section.title}-{k}", lambda: chart), width="stretch")


def board_chart(board: dashboard.Dashboard, name: str, build) -> dict:
    """The Vega-Lite spec of one of the dashboard's charts, built once per state of the ratings
    (the dashboard is kept per state; building and validating the Altair charts was a third of
    a console rerun)."""
    specs = board.__dict__.setdefault("vega_specs", {})
    if name not in specs:
        specs[name] = build().to_dict()
    return specs[name]


def report_bytes(slug: str) -> bytes:
    """The report for the download: once the study's warm-up (if any) has finished, from the
    cache when it holds the current ratings' report, else computed now."""
    report_cache.wait_for_warm_up(slug)
    return report_cache.report_html(slug)


@st.fragment
def matrices_section(all_studies) -> None:
    """Recalibrate from finished HOI-pair studies, inspect, save as a named version; list,
    download and compare the saved versions."""
    session_alive()
    st.subheader("Similarity matrices")
    if accounts.may(actor(), "create"):
        recalibrate_section(all_studies)
    else:
        st.caption("Saved versions can be inspected, downloaded and compared here; recalibrating needs a "
                   "researcher account.")
    versions_section()


def recalibrate_section(all_studies) -> None:
    pair_studies = [s.slug for s in all_studies if get_type(s.study_type).recalibrates_matrices
                    and accounts.may(actor(), "change", s)]
    chosen = st.multiselect("Studies whose ratings recalibrate the matrices", pair_studies,
                            key="recal-studies")
    left, middle, right = st.columns(3)
    w = left.number_input("w (verb weight)", min_value=0.05, max_value=0.95, value=0.5, step=0.05)
    prior = middle.number_input("Prior strength (ratings)", min_value=0.1, value=5.0, step=1.0)
    folds = right.number_input("Cross-validation folds", min_value=2, max_value=20, value=5)
    if chosen and st.button("Recalibrate", key="recalibrate"):
        try:
            with st.spinner("Cross-validating and fitting..."):
                st.session_state["recalibration"] = matrix_versions.recalibrate_studies(
                    chosen, w=float(w), prior_strength=float(prior), folds=int(folds), actor=actor())
        except InputError as exc:
            st.error(inert.text(exc))
    run = st.session_state.get("recalibration")
    if run is not None:
        r = run.result
        st.markdown(f"**Held-out agreement (Eq. 13)** from {r['n_ratings']} ratings of "
                    f"{r['n_items']} items in {inert.text(', '.join(run.studies))}")
        st.dataframe(pd.DataFrame([{"items": label, "n": n, "before": f["before"]["agreement"],
                                    "after": f["after"]["agreement"]}
                                   for label, n, f in [("all", r["n_items"], r)] + [
                                       (f"category {c}", v["n_items"], v) for c, v in r["by_category"].items()]]),
                     hide_index=True)
        if (note := run.before_note()) is not None:
            st.caption(inert.text(f"Note: {note}"))
        st.markdown("**Pairs that changed most**")
        st.dataframe(run.changed.head(20), hide_index=True)
        name = st.text_input("Version name", key="version-name")
        if st.button("Save version", key="save-version"):
            try:
                matrix_versions.save_version(name, run, actor=actor())
            except InputError as exc:
                st.error(inert.text(exc))
            else:   # the whole page again: the scoring section lists the new version
                st.session_state["version-saved"] = f"Saved matrix version {inert.text(name)}."
                st.rerun(scope="app")
    if saved := st.session_state.pop("version-saved", None):
        st.success(saved)


def versions_section() -> None:
    versions = matrix_versions.list_versions()
    if versions.empty:
        st.caption("No saved matrix versions yet.")
        return
    st.dataframe(versions, hide_index=True)
    pick = st.selectbox("Version", list(versions["name"]), key="version-pick")
    cols = st.columns(5)
    for column, (role, suffix) in zip(cols, [(r, x) for r in ("verb", "object") for x in (".csv", ".npz")]):
        column.download_button(f"{role}{suffix}", lambda role=role, suffix=suffix: matrix_file(pick, role, suffix),
                               f"{pick}-{role}{suffix}", key=f"dl-{role}{suffix}",
                               on_click=log_download, args=(f"{pick}-{role}{suffix}",))
    cols[4].download_button("provenance.json", lambda: json.dumps(saved_version(pick)[2], indent=2),
                            f"{pick}-provenance.json", on_click=log_download, args=(f"{pick}-provenance.json",))
    other = st.selectbox("Compare with", [v for v in versions["name"] if v != pick], key="version-other",
                         index=None, placeholder="another version")
    if other:
        for role, line in version_comparison(pick, other):
            st.code(f"{role}: {pick} vs {other}\n" + line, language=None)


@st.cache_resource(max_entries=8, show_spinner=False)
def _saved_version(url: str, name: str):
    return matrix_versions.load_version(name)


def saved_version(name: str):
    """A saved matrix version, read once per process (a name is never reused for other matrices)."""
    return _saved_version(config.database_url(), name)


def matrix_file(name: str, role: str, suffix: str) -> bytes:
    verb, obj, _ = saved_version(name)
    with tempfile.TemporaryDirectory() as tmp:
        return (verb if role == "verb" else obj).save(Path(tmp) / f"{role}{suffix}").read_bytes()


@st.cache_data(max_entries=32, show_spinner=False)
def _comparison(url: str, a: str, b: str) -> list[tuple[str, str]]:
    (verb, obj, _), (verb_b, obj_b, _) = saved_version(a), saved_version(b)
    return [(role, compare_lines(x, y)[1]) for role, x, y in (("verb", verb, verb_b), ("object", obj, obj_b))]


def version_comparison(a: str, b: str) -> list[tuple[str, str]]:
    """``compare_lines`` of two saved versions' verb and object matrices (kept per pair)."""
    return _comparison(config.database_url(), a, b)


@st.fragment
def scoring_section() -> None:
    """Upload a ground truth and predictions, choose matrix versions, score (``metrics score``)."""
    session_alive()
    st.subheader("Score models")
    st.caption("JSON Lines or QPIC/CDN files, exactly as `python -m metrics score` reads them; the "
               "baseline WordNet matrices and each chosen version side by side.")
    limit = config.UPLOAD_LIMITS_MB["detections"]
    gt_file = st.file_uploader("Ground truth", type=["jsonl", "json"], key="score-gt", max_upload_size=limit)
    pred_files = st.file_uploader("Predictions (one file per model)", type=["jsonl", "json"],
                                  accept_multiple_files=True, key="score-pred", max_upload_size=limit)
    chosen = st.multiselect("Recalibrated matrix versions", list(matrix_versions.list_versions()["name"]),
                            key="score-versions")
    if gt_file and pred_files and st.button("Score", key="score") and uploads_fit(
            (gt_file, "detections"), *[(f, "detections") for f in pred_files]):
        bar = st.progress(0.0, text="reading the files...")
        with tempfile.TemporaryDirectory() as tmp:
            gt_path = Path(tmp) / gt_file.name   # under its own name, so errors name the file
            gt_path.write_bytes(gt_file.getvalue())
            models = {}
            for k, upload in enumerate(pred_files):   # a model per file, named by the file
                name = Path(upload.name).stem
                name = f"{name} ({k + 1})" if name in models else name
                folder = Path(tmp) / f"model{k}"
                folder.mkdir()
                models[name] = folder / upload.name
                models[name].write_bytes(upload.getvalue())
            try:
                st.session_state["scores"] = scoring.score_models(
                    gt_path, models, chosen, progress=lambda f, text: bar.progress(f, text=text), actor=actor())
            except InputError as exc:
                bar.empty()
                st.session_state.pop("scores", None)   # the error replaces the previous results
                message = str(exc)
                for path in (gt_path, *models.values()):   # the uploaded name, not the temporary folder
                    message = message.replace(str(path), path.name)
                st.error(inert.text(message))
    scores = st.session_state.get("scores")
    if scores is not None:
        st.dataframe(scores.table, hide_index=True)
        st.download_button("Download scores.json", scores.to_json(), "scores.json", "application/json",
                           key="scores-download", on_click=log_download, args=("scores.json",))


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
        (st.success if outcome[0] == "ok" else st.error)(inert.text(outcome[1]))
    st.subheader("Audit log")
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


def actor() -> accounts.Actor:
    return st.session_state["actor"]


def study_area(all_studies) -> None:
    """The chosen study's dashboard, progress and preview (and for its researchers, invites and
    export), one tab at a time: only the open tab runs."""
    created_message()
    if not all_studies:
        st.info(inert.text(no_studies_text(actor(), len(studies.list_studies()))))
        return
    by_slug = {s.slug: s for s in all_studies}
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
        views += [("Invite", invite_tab), ("Export", export_tab)]
    open_tab(views, "study-view", study)


def create_area() -> None:
    """Create a study, and the study types' own console tools (e.g. sampling HOI pairs)."""
    create_section()
    for study_type in REGISTRY.values():
        if (section := getattr(type_view(study_type), "console_section", None)) is not None:
            st.divider()
            section()


def console_areas(all_studies) -> list[tuple[str, object]]:
    """The console's top-level areas this account may use, as (tab label, draw function)."""
    areas = [("Studies", lambda: study_area(all_studies))]
    if accounts.may(actor(), "create"):
        areas.append(("Create", create_area))
    areas += [("Matrices", lambda: matrices_section(all_studies)), ("Scoring", scoring_section)]
    if accounts.may(actor(), "accounts"):
        areas.append(("Accounts", accounts_section))
    return areas


def open_tab(views, key: str, *args) -> None:
    """Tabs of which only the open one runs (switching tabs is a rerun of that tab alone): a page
    draws, and the browser renders, one area at a time."""
    tabs = st.tabs([name for name, _ in views], key=key, on_change="rerun")
    for tab, (_, show) in zip(tabs, views):
        if tab.open:
            with tab:
                show(*args)


def main() -> None:
    if login() is None:
        return
    st.title("Researcher console")
    all_studies = accounts.visible(actor(), studies.list_studies())
    with st.sidebar:
        st.markdown(f"Signed in as **{inert.text(actor().name)}** ({actor().role})")
        st.markdown(f"Database: `{storage.describe(config.database_url())}`")   # never the password
        st.button("Sign out", on_click=sign_out)
    if (created := st.session_state.pop("show-study", None)) is not None:   # the study just created
        st.session_state["console-area"], st.session_state["chosen-study"] = "Studies", created
        st.session_state.pop("study-pick", None)
    open_tab(console_areas(all_studies), "console-area")

main()

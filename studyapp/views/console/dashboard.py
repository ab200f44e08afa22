"""A study's live dashboard and its Details (tables and charts), refreshed on a timer, and the
report download."""

import streamlit as st

from metrics import InputError
from metrics.study import ITEMS_BOOTSTRAP, reliability_frame
from studyapp.core import charts, safe_markdown
from studyapp.platform.records import studies
from studyapp.platform.reporting import dashboard, report_cache
from studyapp.studytypes import get_type
from studyapp.views.console.common import download_button, open_tab, session_alive

DASHBOARD_REFRESH_S = 10


def dashboard_tab(study) -> None:
    st.caption(f"Live: refreshed every {DASHBOARD_REFRESH_S} s and recomputed when ratings arrive "
               f"(intervals from {dashboard.LIVE_RESAMPLES} bootstrap resamples; the downloadable "
               "report uses 1,000). Tables and charts: the **Details** tab.")
    st.toggle("Include simulated raters", key=simulated_key(study.slug),
              help="Raters added by `studyapp simulate` are left out of α, PPI and the rater table unless included.")
    dashboard_view(study.slug, study.study_type)


def details_tab(study) -> None:
    st.caption(f"Live: refreshed every {DASHBOARD_REFRESH_S} s, as the dashboard.")
    details_view(study.slug)


def simulated_key(slug: str) -> str:
    return f"include-simulated-{slug}"


def live_board(slug: str) -> dashboard.Dashboard | None:
    """The study's dashboard for a timed refresh (which does not keep the session alive), or
    None after its one-line error."""
    session_alive(touch=False)
    try:
        return dashboard.study_dashboard(slug, include_simulated=bool(st.session_state.get(simulated_key(slug))))
    except InputError as exc:
        st.error(safe_markdown.text(exc))
        return None


@st.fragment(run_every=DASHBOARD_REFRESH_S)
def dashboard_view(slug: str, study_type: str) -> None:
    """The headline figures, what is not shown yet and why, and each analysis' summary: what a
    sign-in or reload lands on, so it stays a few elements (the tables and charts, most of the
    browser's drawing time, are under Details)."""
    if (board := live_board(slug)) is None:
        return
    for section in board.sections:     # the answer first: the PPI headline, its table a click away
        if section.headline:
            headline(section)
    headline_figures(board)
    for name, reason in board.unavailable.items():
        st.info(f"{name.replace('_', ' ').capitalize()}: not shown yet — {safe_markdown.text(reason)}.")
    if board.adaptive:
        a = board.adaptive
        st.markdown("**Adaptive collection** — " + ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in a.items()
                                                               if not isinstance(v, (dict, list))))
    more = [section.title for section in board.sections if not section.headline and (section.tables or section.charts)]
    if more:    # sections whose numbers are tables and charts: named here, shown under Details
        st.caption("Tables and charts under **Details**: " + safe_markdown.text(", ".join(more)) + ".")
    if not get_type(study_type).custom_response and board.agreement:
        report_cache.warm_in_background(slug, board.fingerprint)
        download_button(st, "Download report.html (full resamples; a few seconds when ratings are new)",
                        lambda: report_bytes(slug, board.include_simulated), "report.html", "text/html",
                        studies=[slug],
                        key=f"report-download-{slug}")


def headline_figures(board: dashboard.Dashboard) -> None:
    """Ratings, annotators, α and Eq. 13 with their intervals (each saying how it is computed)."""
    p = board.progress
    cols = st.columns(4)
    cols[0].metric("Ratings", f"{p['ratings_done']} / {p['ratings_needed']}")
    cols[1].metric("Rated at least once", p["rated_at_least_once"], help=studies.counts_line(p))
    if board.agreement:
        for column, key, label in ((cols[2], "alpha", f"Krippendorff's α ({board.agreement['level']})"),
                                   (cols[3], "eq13", "Mean agreement (Eq. 13)")):
            value, ci = board.agreement[key]
            interval = (f"95% interval {ci[0]:.3f}–{ci[1]:.3f}, {ITEMS_BOOTSTRAP} ({board.resamples} resamples)"
                        if ci else "")
            column.metric(label, f"{value:.3f}", help=interval or None)
            column.caption(interval)
        st.caption(qwk_sentence(board.agreement))
    if board.simulated:
        st.caption(simulated_sentence(board))


def qwk_sentence(agreement: dict) -> str:
    """The mean pairwise κ with how it is weighted and why it has no interval."""
    return (f"Mean quadratic weighted κ over {agreement['qwk_pairs']} rater pairs: "
            f"{agreement['qwk_by_shared_items']:.3f} with each pair weighted by the items it shares, "
            f"{agreement['qwk'][0]:.3f} with every pair counted once (no interval: a κ per pair and "
            f"resample is too slow for a live figure; α's interval stands for the agreement); "
            f"{agreement['n_ratings']} ratings of {agreement['n_items']} items by {agreement['n_annotators']} "
            "annotators.")


def simulated_sentence(board: dashboard.Dashboard) -> str:
    """Whether the simulated raters are in the figures."""
    names = ", ".join(board.simulated)
    if set(board.annotators["annotator"].astype(str)) <= set(board.simulated):
        return f"Every rater is simulated ({names}): these are a pilot's figures, not people's."
    if board.include_simulated:
        return f"Simulated raters included in every figure ({len(board.simulated)}: {names})."
    return (f"{len(board.simulated)} simulated raters ({names}) left out of α, PPI and the rater table; "
            "the switch above includes them.")


def headline(section) -> None:
    """A section's one-line answer, its tables one click away, then what it means."""
    st.markdown(f"**{safe_markdown.text(section.title)}**")
    st.markdown(safe_markdown.text(section.headline))
    with st.expander("Table: every category and design cell"):
        for name, table in section.tables.items():
            st.caption(safe_markdown.text(name))
            st.dataframe(table, hide_index=True)
    if section.text:
        st.caption(safe_markdown.text(section.text))


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
        st.markdown("**Reliability** (each interval's method in its row; α's is Hayes & Krippendorff's, "
                    "unlike the dashboard's percentile bootstrap over items)")
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
        st.markdown(f"**{safe_markdown.text(section.title)}**")
        for name, table in section.tables.items():
            st.caption(safe_markdown.text(name))
            st.dataframe(table, hide_index=True)
        for k, chart in enumerate(section.charts):
            st.vega_lite_chart(board_chart(board, f"{section.title}-{k}", lambda chart=chart: chart), width="stretch")


def board_chart(board: dashboard.Dashboard, name: str, build) -> dict:
    """The Vega-Lite spec of one of the dashboard's charts, built once per state of the ratings
    (the dashboard is kept per state; building and validating the Altair charts was a third of
    a console rerun)."""
    specs = board.__dict__.setdefault("vega_specs", {})
    if name not in specs:
        specs[name] = build().to_dict()
    return specs[name]


def report_bytes(slug: str, include_simulated: bool = False) -> bytes:
    """The report for the download: once the study's warm-up (if any) has finished, from the
    cache when it holds the current ratings' report, else computed now (simulated raters as the
    dashboard's switch says)."""
    report_cache.wait_for_warm_up(slug)
    return report_cache.report_html(slug, include_simulated=include_simulated)

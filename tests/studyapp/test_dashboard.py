"""The console's live dashboard: its figures equal the metric package's on the same
ratings, it is recomputed when (and only when) ratings change, says in words why a statistic
cannot be shown yet, and the console shows it for every study type."""

import pandas as pd
import pytest
from studyhelpers import console_page, copy_into, database_in, make_annotators, make_study, open_tab, rate_all

from metrics import InputError
from metrics.study._agreement import (
    alpha_of_matrix,
    bootstrap_intervals,
    mean_offdiagonal,
    pairwise_agreement_matrix,
    pairwise_qwk,
    rating_matrix,
    validate_ratings,
)
from studyapp.core import auth, storage
from studyapp.platform.records import exports, studies
from studyapp.platform.records.simulate import simulate_study
from studyapp.platform.reporting import dashboard, report_cache


def main_ratings(slug):
    ratings = exports.study_tables(slug)["ratings.csv"]
    return validate_ratings(ratings[ratings["phase"] == "main"], source="ratings")


@pytest.fixture(scope="module")
def simulated_template(tmp_path_factory):
    """Study ``t``: 12 items rated by a neutral, a strict and a lenient simulated annotator, built once."""
    folder = tmp_path_factory.mktemp("simulated")
    with database_in(folder):
        study_id = make_study(folder, n_items=12, raters=3, slug="t")
        simulate_study("t", k=3, noise=0.6, profiles=["neutral", "strict", "lenient"], seed=1)
    return folder, study_id


@pytest.fixture
def simulated(simulated_template, tmp_path):
    """The test's own copy of :func:`simulated_template`'s study; its id."""
    folder, study_id = simulated_template
    copy_into(folder, tmp_path)
    return study_id


def test_figures_equal_the_metric_package_on_the_same_ratings(simulated):
    board = dashboard.study_dashboard("t")
    matrix = rating_matrix(main_ratings("t"))
    assert board.agreement["alpha"][0] == pytest.approx(alpha_of_matrix(matrix))
    assert board.agreement["eq13"][0] == pytest.approx(mean_offdiagonal(pairwise_agreement_matrix(matrix)))
    assert board.agreement["qwk"][0] == pytest.approx(mean_offdiagonal(pairwise_qwk(matrix)))
    low, high = board.agreement["alpha"][1]
    assert low <= board.agreement["alpha"][0] <= high
    assert board.progress["ratings_done"] == 36 and board.agreement["n_ratings"] == 36
    assert sorted(board.rater_model.raters.index) == sorted(matrix.columns)
    assert board.reliability["krippendorff_alpha"]["ordinal"]["value"] == pytest.approx(alpha_of_matrix(matrix))
    assert [s.title for s in board.sections] == ["Metric–human alignment", "w per category (Eq. 14)"]
    assert board.unavailable == {}


def test_agreement_over_time_is_alpha_of_the_ratings_given_so_far(simulated):
    board = dashboard.study_dashboard("t")
    ordered = main_ratings("t").sort_values("created_at", kind="stable")
    for row in board.over_time.itertuples():
        head = ordered.iloc[:row.ratings]
        assert row.alpha == pytest.approx(alpha_of_matrix(rating_matrix(head)))
        assert row.annotators == head["annotator"].nunique()
        ci = bootstrap_intervals(rating_matrix(head), n_resamples=dashboard.LIVE_RESAMPLES)
        assert [row.alpha_low, row.alpha_high] == ci["krippendorff_alpha"]
        assert [row.agreement_low, row.agreement_high] == ci["mean_pairwise_agreement"]
    assert board.over_time["ratings"].iloc[-1] == 36
    last = board.over_time.iloc[-1]
    assert last["alpha"] == pytest.approx(board.agreement["alpha"][0])
    assert [last["alpha_low"], last["alpha_high"]] == pytest.approx(board.agreement["alpha"][1])


def test_recomputed_when_ratings_arrive_and_equal_to_a_fresh_computation(tmp_path):
    study_id = make_study(tmp_path, n_items=6, raters=3, slug="t")
    first, second, third = make_annotators(study_id, 3)
    rate_all(first, 1)
    rate_all(second, 3)
    board = dashboard.study_dashboard("t")
    assert dashboard.study_dashboard("t") is board            # nothing new: the same object
    assert board.agreement["n_annotators"] == 2
    rate_all(third, 2)
    updated = dashboard.study_dashboard("t")
    assert updated is not board and updated.agreement["n_annotators"] == 3
    with storage.read_session() as session:
        study = studies.study_by_slug(session, "t")
    fresh = dashboard.compute_dashboard(study, dashboard.ratings_fingerprint(study_id))
    assert updated.fingerprint == fresh.fingerprint == (18, updated.fingerprint[1])
    assert updated.agreement["alpha"] == fresh.agreement["alpha"]
    assert updated.over_time.equals(fresh.over_time)


def test_says_why_when_one_annotator_has_rated(tmp_path):
    study_id = make_study(tmp_path, n_items=4, raters=2, slug="t")
    (only,) = make_annotators(study_id, 1)
    rate_all(only, 2)
    board = dashboard.study_dashboard("t")
    assert board.agreement is None
    assert "only one annotator" in board.unavailable["agreement"]
    assert set(board.unavailable) == {"agreement", "over_time", "rater_model", "reliability"}


def test_says_why_when_two_annotators_share_no_item(tmp_path):
    study_id = make_study(tmp_path, n_items=4, raters=1, per_annotator=2, extra='order = "fixed"\n', slug="t")
    a, b = make_annotators(study_id, 2)
    assert rate_all(a, 1) != rate_all(b, 3)
    board = dashboard.study_dashboard("t")
    assert "no item has been rated by two of them yet" in board.unavailable["agreement"]
    assert board.annotators["n_ratings"].tolist() == [2, 2]


def test_says_why_when_every_rating_is_equal_and_the_report_refuses_in_one_line(tmp_path):
    study_id = make_study(tmp_path, n_items=4, raters=2, slug="t")
    for annotator in make_annotators(study_id, 2):
        rate_all(annotator, 2)
    board = dashboard.study_dashboard("t")
    assert board.agreement is None
    assert board.unavailable["agreement"] == "every rating so far has the same value, so agreement beyond chance is undefined"
    with pytest.raises(InputError, match="^study 't' has no report yet: every rating so far has the same value"):
        report_cache.study_report("t")


def test_says_why_before_any_rating(tmp_path):
    make_study(tmp_path, n_items=4, raters=2, slug="t")
    board = dashboard.study_dashboard("t")
    assert board.unavailable["agreement"] == "no main ratings yet"
    assert board.unavailable["analyses"].startswith("no main ratings yet")


def test_form_types_show_their_own_analyses(tmp_path):
    from studyhelpers import curation_spec, invite_same

    from studyapp.studytypes.crosshoi_curation import crosshoi

    spec = curation_spec(tmp_path)
    study_id = studies.create_study(spec)
    board = dashboard.study_dashboard(spec.slug)
    assert "marks, not ratings" in board.unavailable["agreement"]
    assert board.unavailable["analyses"] == "no question has been curated yet"
    from studyapp.platform import assignment
    for annotator, _token in invite_same(study_id, ["a", "b"]).values():
        task = assignment.next_item(annotator)
        assignment.submit(annotator, task.assignment_id,
                          crosshoi.encode_response(["correct", "incorrect", "ambiguous"]), 1.0)
    board = dashboard.study_dashboard(spec.slug)
    (section,) = board.sections
    changes = section.tables["changes"]
    # two annotators, one question each: every non-negative mark is a change they agree on
    assert set(changes["change"]) == {"marked_correct", "marked_ambiguous"}
    assert section.tables["per annotator"]["annotator"].tolist() == ["a", "b"]


def test_console_dashboard_tab_for_a_rating_study(simulated):
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    assert not at.exception and not at.error
    labels = {m.label: m.value for m in at.metric}
    alpha = alpha_of_matrix(rating_matrix(main_ratings("t")))
    assert labels["Krippendorff's α (ordinal)"] == f"{alpha:.3f}"
    assert labels["Ratings"] == "36 / 36"
    assert [b for b in at.get("download_button") if b.label.startswith("Download report.html")]
    # the tables and charts are under Details, so a sign-in or reload draws a few elements only
    assert not at.dataframe and not at.get("vega_lite_chart")
    open_tab(at, "Details")                                                   # its Agreement group
    assert not at.exception and not at.error
    assert "annotator" in at.dataframe[0].value.columns                     # the annotators table
    assert len(at.get("vega_lite_chart")) == 4       # over time, both heatmaps, distributions
    at.session_state["details-view"] = "Raters"
    at.run()
    assert len(at.dataframe) == 1 and len(at.get("vega_lite_chart")) == 2  # reliability; the rater model


def test_console_runs_over_the_same_ratings_start_one_report_warm_up(simulated, monkeypatch):
    """The dashboard starts the report's warm-up process once per state of the ratings. The
    bookkeeping lives in report_cache: a page script's globals are new on every run, and when it
    lived in the console page every run (a click, a reload, the 10-s refresh) started a Python
    process computing the report's fingerprint again."""
    monkeypatch.setenv("STUDYAPP_REPORT_WARMUP", "1")
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    first = report_cache.warm_up_of("t")
    assert not at.exception and first is not None     # started by the dashboard's first run
    at.run()
    at.run()
    assert report_cache.warm_up_of("t") is first
    assert report_cache.warm_in_background("t", dashboard.study_dashboard("t").fingerprint) is first
    assert first.wait(timeout=120) == 0
    assert not report_cache.warm("t")                 # the warm-up filled the cache: nothing left to do


def test_console_dashboard_says_why_in_words(tmp_path):
    study_id = make_study(tmp_path, n_items=4, raters=2, slug="t")
    rate_all(make_annotators(study_id, 1)[0], 2)
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    assert not at.exception and not at.error
    assert any("only one annotator" in i.value for i in at.info)


def test_the_report_shows_the_dashboards_numbers(simulated, tmp_path):
    """The downloadable report's analysis and the dashboard are one computation: equal point
    values, and equal intervals when run with the dashboard's resample count."""
    from studyapp.platform.reporting import analysis

    board = dashboard.study_dashboard("t")
    full = analysis.analyse_study("t")
    assert full.agreement.krippendorff_alpha == pytest.approx(board.agreement["alpha"][0])
    assert full.agreement.mean_pairwise_agreement == pytest.approx(board.agreement["eq13"][0])
    assert full.agreement.mean_qwk == pytest.approx(board.agreement["qwk"][0])
    pd.testing.assert_frame_equal(full.rater_model.items, board.rater_model.items)
    live = analysis.analyse_study("t", n_resamples=dashboard.LIVE_RESAMPLES, permutations=dashboard.LIVE_RESAMPLES)
    assert live.agreement.intervals["krippendorff_alpha"] == board.agreement["alpha"][1]
    assert live.agreement.intervals["mean_pairwise_agreement"] == board.agreement["eq13"][1]
    assert live.reliability == board.reliability
    pd.testing.assert_frame_equal(live.over_time, board.over_time)
    assert full.over_time["alpha"].tolist() == board.over_time["alpha"].tolist()
    html = analysis.write_study_report("t", full, tmp_path / "report")
    assert "Agreement as ratings arrived" in html.read_text()
    written = pd.read_csv(html.parent / "agreement_over_time.csv")
    assert written["ratings"].tolist() == board.over_time["ratings"].tolist()
    assert written["alpha"].to_numpy() == pytest.approx(board.over_time["alpha"].to_numpy())


def with_image_study(tmp_path):
    """The with-image pass after the no-image study: alice 2 -> 2, 4, 2 and bob 3 -> 3, 3, 1."""
    from studyhelpers import earlier_study, image_spec, invite_same

    from studyapp.platform import assignment
    from studyapp.platform.launch.spec_files import load_spec

    earlier_study(tmp_path)
    spec = load_spec(image_spec(tmp_path))
    people = invite_same(studies.create_study(spec), ["alice", "bob"])
    for name, values in (("alice", [2, 4, 2]), ("bob", [3, 3, 1])):
        for value in values:
            task = assignment.next_item(people[name][0])
            assignment.submit(people[name][0], task.assignment_id, value, 1.0)
    return spec.slug


def test_with_image_study_shows_the_update_rate(tmp_path):
    slug = with_image_study(tmp_path)
    board = dashboard.study_dashboard(slug)
    titles = [s.title for s in board.sections]
    assert titles == ["Metric–human alignment", "w per category (Eq. 14)", "Ratings changed with the image"]
    # 6 ratings with an earlier answer, alice's 2 -> 4 and bob's 3 -> 1 changed: 2 of 6
    assert board.sections[2].text.startswith("2 of 6 ratings with an earlier answer were updated (33.3%")
    # alpha of the image pass itself: alice 2, 4, 2 and bob 3, 3, 1 on three pairs
    assert board.agreement["alpha"][0] == pytest.approx(alpha_of_matrix(rating_matrix(main_ratings(slug))))


def test_imsitu_study_says_why_before_any_mark(tmp_path):
    from studyhelpers import write_imsitu_study as write_study

    from studyapp.platform.launch.spec_files import load_spec

    studies.create_study(load_spec(write_study(tmp_path)))
    board = dashboard.study_dashboard("verbs")
    assert "marks, not ratings" in board.unavailable["agreement"]
    assert board.unavailable["analyses"] == "study 'verbs' has no main ratings yet"
    assert board.sections == []


@pytest.mark.slow
def test_console_dashboard_for_the_image_types(tmp_path):
    """The with-image pass and a CrossHOI curation study, both on the console without error."""
    from studyhelpers import curation_spec

    with_image_study(tmp_path)
    studies.create_study(curation_spec(tmp_path))
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    assert not at.exception and not at.error
    for slug, expect in (("second", "Ratings changed with the image"), ("cur", "no question has been curated yet")):
        next(s for s in at.selectbox if s.label == "Study").select(slug).run()
        assert not at.exception and not at.error
        shown = [m.value for m in at.markdown] + [i.value for i in at.info] + [c.value for c in at.caption]
        assert any(expect in text for text in shown), (slug, shown)


def test_adaptive_study_shows_items_retired_and_ratings_saved(tmp_path):
    from sqlmodel import select
    from studyhelpers import rate_until_done, write_adaptive_spec

    from studyapp.core.models import Item
    from studyapp.platform.launch.spec_files import load_spec

    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))   # target SE 0.4, max 4 raters
    for index, annotator_id in enumerate(make_annotators(study_id, 6)):
        rate_until_done(annotator_id, index)
    board = dashboard.study_dashboard("a")
    counts = main_ratings("a")["item_id"].value_counts()
    with storage.read_session() as session:
        se = dict(session.exec(select(Item.item_key, Item.model_se)).all())
    retired = [key for key in se if se[key] <= 0.4]
    assert board.adaptive["retired"] == len(retired) >= 6
    assert board.adaptive["ratings"] == counts.sum() < 48
    assert board.adaptive["ratings_saved"] == sum(4 - counts[key] for key in retired) > 0

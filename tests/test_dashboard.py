"""The console's live dashboard (issue 19): its figures equal the metric package's on the same
ratings, it is recomputed when (and only when) ratings change, says in words why a statistic
cannot be shown yet, and the console shows it for every study type."""

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from metrics.agreement import (krippendorff_alpha, mean_offdiagonal, pairwise_agreement, pairwise_qwk,
                               rating_matrix, validate_ratings)
from studyapp import auth, dashboard, exports, storage, studies
from studyapp.simulate import simulate_study
from studyhelpers import make_annotators, make_study, rate_all


def main_ratings(slug):
    ratings = exports.study_tables(slug)["ratings.csv"]
    return validate_ratings(ratings[ratings["phase"] == "main"], "ratings")


@pytest.fixture
def simulated(tmp_path):
    study_id = make_study(tmp_path, n_items=12, raters=3, slug="t")
    simulate_study("t", k=3, noise=0.6, profiles=["neutral", "strict", "lenient"], seed=1)
    return study_id


def test_figures_equal_the_metric_package_on_the_same_ratings(simulated):
    board = dashboard.study_dashboard("t")
    matrix = rating_matrix(main_ratings("t"))
    assert board.agreement["alpha"][0] == pytest.approx(krippendorff_alpha(matrix))
    assert board.agreement["eq13"][0] == pytest.approx(mean_offdiagonal(pairwise_agreement(matrix)))
    assert board.agreement["qwk"][0] == pytest.approx(mean_offdiagonal(pairwise_qwk(matrix)))
    low, high = board.agreement["alpha"][1]
    assert low <= board.agreement["alpha"][0] <= high
    assert board.progress["ratings_done"] == 36 and board.agreement["n_ratings"] == 36
    assert sorted(board.rater_model.raters.index) == sorted(matrix.columns)
    assert board.reliability["krippendorff_alpha"]["ordinal"]["value"] == pytest.approx(krippendorff_alpha(matrix))
    assert [s.title for s in board.sections] == ["Metric–human alignment", "w per category (Eq. 14)"]
    assert board.unavailable == {}


def test_agreement_over_time_is_alpha_of_the_ratings_given_so_far(simulated):
    board = dashboard.study_dashboard("t")
    ordered = main_ratings("t").sort_values("created_at", kind="stable")
    for row in board.over_time.itertuples():
        head = ordered.iloc[:row.ratings]
        assert row.alpha == pytest.approx(krippendorff_alpha(rating_matrix(head)))
        assert row.annotators == head["annotator"].nunique()
    assert board.over_time["ratings"].iloc[-1] == 36
    assert board.over_time["alpha"].iloc[-1] == pytest.approx(board.agreement["alpha"][0])


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


def test_says_why_before_any_rating(tmp_path):
    make_study(tmp_path, n_items=4, raters=2, slug="t")
    board = dashboard.study_dashboard("t")
    assert board.unavailable["agreement"] == "no main ratings yet"
    assert board.unavailable["analyses"].startswith("no main ratings yet")


def test_form_types_show_their_own_analyses(tmp_path):
    from test_image_studies import curation_spec, invite_same

    from studyapp import crosshoi

    spec = curation_spec(tmp_path)
    study_id = studies.create_study(spec)
    board = dashboard.study_dashboard(spec.slug)
    assert "marks, not ratings" in board.unavailable["agreement"]
    assert board.unavailable["analyses"] == "no question has been curated yet"
    from studyapp import assignment
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


def console(password):
    at = AppTest.from_file(str(ROOT / "studyapp" / "app.py"), default_timeout=120)
    at.switch_page("views/console.py").run()
    at.text_input(key="signin-password").input(password)
    at.button[0].click().run()
    return at


def test_console_dashboard_tab_for_a_rating_study(simulated):
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console(password)
    assert not at.exception and not at.error
    labels = {m.label: m.value for m in at.metric}
    alpha = krippendorff_alpha(rating_matrix(main_ratings("t")))
    assert labels["Krippendorff's α (ordinal)"] == f"{alpha:.3f}"
    assert labels["Ratings"] == "36 / 36"
    assert [b for b in at.get("download_button") if b.label.startswith("Download report.html")]


def test_console_dashboard_says_why_in_words(tmp_path):
    study_id = make_study(tmp_path, n_items=4, raters=2, slug="t")
    rate_all(make_annotators(study_id, 1)[0], 2)
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console(password)
    assert not at.exception and not at.error
    assert any("only one annotator" in i.value for i in at.info)

"""Simulated raters and the study report; the console shows it on the dashboard (test_dashboard)."""

import pytest
from studyhelpers import make_study

from metrics.study._agreement import alpha_of_matrix, rating_matrix
from studyapp.platform.records import exports
from studyapp.platform.records.simulate import simulate_study
from studyapp.platform.reporting import analysis


@pytest.fixture
def simulated(tmp_path):
    study_id = make_study(tmp_path, n_items=12, raters=3, slug="t")
    result = simulate_study("t", k=3, noise=0.0, profiles=["neutral", "strict", "lenient"], seed=0)
    return study_id, result


def test_simulation_respects_raters_per_item_and_the_bias_model(simulated):
    _, result = simulated
    assert result.ratings == 36
    ratings = exports.study_tables("t")["ratings.csv"]
    assert ratings.groupby("item_id")["annotator"].nunique().eq(3).all()
    m = rating_matrix(ratings.assign(rating=ratings["rating"].astype(float)))
    strict = [c for c in m.columns if "strict" in c][0]
    lenient = [c for c in m.columns if "lenient" in c][0]
    neutral = [c for c in m.columns if "neutral" in c][0]
    # noise 0: strict = round(latent − 0.5), lenient = round(latent + 0.5), clipped to 0–4
    assert (m[strict] <= m[neutral]).all() and (m[lenient] >= m[neutral]).all()


def test_study_analysis_matches_the_metric_package(simulated):
    result = analysis.analyse_study("t", n_resamples=50, permutations=100)
    ratings = exports.study_tables("t")["ratings.csv"]
    m = rating_matrix(ratings.assign(rating=ratings["rating"].astype(float)))
    assert result.agreement.krippendorff_alpha == pytest.approx(alpha_of_matrix(m))
    assert set(result.tuning["w_by_category"]) == {"2"}        # the helper items are category 2
    assert "shoe_arithmetic" in result.alignment["metrics"]
    assert sorted(result.rater_model.raters.index) == sorted(m.columns)
    assert sorted(result.rater_model.items.index) == sorted(m.index)
    assert result.reliability["krippendorff_alpha"]["ordinal"]["value"] == pytest.approx(alpha_of_matrix(m))
    path = analysis.write_study_report("t", result)
    page = path.read_text()
    assert path.name == "report.html" and "Pairwise agreement" in page
    assert "Rater model: item scores" in page and "AC2 (ordinal weights)" in page
    assert (path.parent / "items_model.csv").exists() and (path.parent / "reliability.csv").exists()

import numpy as np
import pandas as pd
import pytest

from metrics.core._errors import InputError
from metrics.study._agreement import (
    agreement_report,
    alpha_from_counts,
    alpha_of_matrix,
    bootstrap_intervals,
    eq13_agreement,
    majority_scores,
    pairwise_agreement_matrix,
    pairwise_qwk,
    rating_matrix,
    rating_precision,
    validate_ratings,
)

# 3 items; item 1 rated 1,1; item 2 rated 1,2,2; item 3 rated 3,3 (NaN = not rated).
# Coincidences: o11 = 2, o12 = o21 = 1, o22 = 1, o33 = 2; n1 = 3, n2 = 2, n3 = 2, n = 7.
HAND = pd.DataFrame([[1, 1, np.nan], [1, 2, 2], [3, np.nan, 3]], columns=["a", "b", "c"], dtype=float)


def test_alpha_interval_by_hand():
    # 1 − (n − 1)·Σ o δ² / Σ n_c n_k δ² = 1 − 6·2 / 68
    assert alpha_of_matrix(HAND, level="interval") == pytest.approx(1 - 12 / 68)


def test_alpha_ordinal_by_hand():
    # δ²12 = (5 − 2.5)² = 6.25, δ²13 = (7 − 2.5)² = 20.25, δ²23 = (4 − 2)² = 4
    # Σ o δ² = 2·6.25 = 12.5; Σ n n δ² = 2·(6·6.25 + 6·20.25 + 4·4) = 350
    assert alpha_of_matrix(HAND, level="ordinal") == pytest.approx(1 - 6 * 12.5 / 350)


def test_alpha_nominal_by_hand():
    # δ = 1 off the diagonal: Σ o δ = 2; Σ n n δ = 2·(6 + 6 + 4) = 32
    assert alpha_of_matrix(HAND, level="nominal") == pytest.approx(1 - 6 * 2 / 32)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_vectorized_bootstrap_alpha_equals_package_on_the_full_sample(level):
    rng = np.random.default_rng(1)
    latent = rng.integers(0, 5, 200)
    m = np.clip(latent[:, None] + rng.integers(-1, 2, (200, 4)), 0, 4).astype(float)
    m[rng.random(m.shape) < 0.25] = np.nan
    frame = pd.DataFrame(m)
    counts = np.stack([(m == v).sum(axis=1) for v in range(5)], axis=1).astype(float)
    assert alpha_from_counts(counts, np.ones((1, 200)), level)[0] == pytest.approx(alpha_of_matrix(frame, level=level))


def test_eq13_and_pairwise_agreement_by_hand():
    assert eq13_agreement([0, 4, 2], [1, 4, 4]).tolist() == [0.75, 1.0, 0.5]
    table = pairwise_agreement_matrix(HAND)
    assert table.loc["a", "b"] == pytest.approx((1 + 0.75) / 2)   # items 1 and 2
    assert table.loc["a", "c"] == pytest.approx((0.75 + 1) / 2)   # items 2 and 3
    assert table.loc["b", "c"] == pytest.approx(1.0)              # item 2 only


def test_qwk_against_the_formula():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, 80)
    y = np.clip(x + rng.integers(-1, 2, 80), 0, 4)
    observed = np.zeros((5, 5))
    np.add.at(observed, (x, y), 1)
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    w = (np.subtract.outer(np.arange(5), np.arange(5)) ** 2) / 16
    by_formula = 1 - (w * observed).sum() / (w * expected).sum()
    table = pairwise_qwk(pd.DataFrame({"x": x, "y": y}, dtype=float))
    assert table.loc["x", "y"] == pytest.approx(by_formula)


def test_latest_rating_counts_and_validation():
    r = pd.DataFrame({"item_id": ["1", "1", "2"], "annotator": ["a", "a", "a"], "rating": [1, 3, 2],
                      "created_at": ["2026-01-01T10:00", "2026-01-01T10:05", "2026-01-01T10:01"]})
    assert rating_matrix(r).loc["1", "a"] == 3
    with pytest.raises(InputError, match="line 3: rating '7'"):
        validate_ratings(pd.DataFrame({"item_id": ["1", "2"], "annotator": ["a", "a"], "rating": ["1", "7"]}))
    with pytest.raises(InputError, match="missing column"):
        validate_ratings(pd.DataFrame({"item_id": ["1"], "rating": [1]}))


def test_majority_and_precision():
    m = pd.DataFrame([[0, 0, 1], [2, 3, 3], [1, 2, np.nan]], dtype=float)
    assert majority_scores(m).tolist() == [0.0, 3.0, 1.0]  # tie 1/2 with median 1.5: lower
    p = rating_precision(m, raters=5)
    pooled = np.sqrt((np.var([0, 0, 1], ddof=1) * 2 + np.var([2, 3, 3], ddof=1) * 2 + np.var([1, 2], ddof=1)) / 5)
    assert p["within_item_sd"] == pytest.approx(pooled)
    assert p["se_mean_rating"] == pytest.approx(pooled / np.sqrt(5))


def test_bootstrap_intervals_cover_the_estimate_and_shrink_with_more_items():
    rng = np.random.default_rng(0)

    def ratings(n):
        latent = rng.integers(0, 5, n)
        m = np.clip(latent[:, None] + rng.integers(-1, 2, (n, 3)), 0, 4).astype(float)
        return pd.DataFrame(m)

    small, large = ratings(60), ratings(600)
    ci_small = bootstrap_intervals(small, n_resamples=300)
    ci_large = bootstrap_intervals(large, n_resamples=300)
    lo, hi = ci_large["krippendorff_alpha"]
    assert lo < alpha_of_matrix(large) < hi
    width = lambda ci: ci["krippendorff_alpha"][1] - ci["krippendorff_alpha"][0]
    assert width(ci_large) < width(ci_small)


def test_report_summary_values():
    long = HAND.stack().reset_index()
    long.columns = ["item_id", "annotator", "rating"]
    long["item_id"] = long["item_id"].astype(str)
    report = agreement_report(long, n_resamples=50)
    assert (report.n_items, report.n_annotators, report.n_ratings) == (3, 3, 7)
    assert report.mean_pairwise_agreement == pytest.approx((0.875 + 0.875 + 1.0) / 3)
    assert report.krippendorff_alpha == pytest.approx(1 - 6 * 12.5 / 350)


def test_read_ratings_leaves_simulated_raters_out_unless_asked(tmp_path):
    from metrics.study._agreement import read_ratings
    path = tmp_path / "ratings.csv"
    path.write_text("item_id,annotator,rating,rater_kind\ni1,a,1,human\ni1,b,2,human\ni1,s,4,simulated\n"
                    "i2,a,3,human\ni2,s,0,simulated\n")
    assert sorted(read_ratings(path)["annotator"].unique()) == ["a", "b"]
    assert sorted(read_ratings(path, include_simulated=True)["annotator"].unique()) == ["a", "b", "s"]
    pilot = tmp_path / "pilot.csv"    # every rater simulated: nothing is mixed, all are kept
    pilot.write_text("item_id,annotator,rating,rater_kind\ni1,s,1,simulated\ni1,t,2,simulated\n")
    assert len(read_ratings(pilot)) == 2
    from metrics.cli import main
    assert main(["agreement", "--ratings", str(path), "--bootstrap", "0", "--json", str(tmp_path / "a.json")]) == 0
    import json
    assert json.loads((tmp_path / "a.json").read_text())["n_annotators"] == 2
    assert main(["agreement", "--ratings", str(path), "--bootstrap", "0", "--include-simulated",
                 "--json", str(tmp_path / "b.json")]) == 0
    assert json.loads((tmp_path / "b.json").read_text())["n_annotators"] == 3

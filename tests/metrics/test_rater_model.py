"""The ordinal rater model on simulated studies with known truth, and its command."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT
from scipy import integrate, optimize, stats
from scipy.special import expit

from benchmarks.rater_model_baselines import rater_tests_study
from metrics.study._agreement import rating_matrix
from metrics.study._rater_model import PRIOR_SD, _long, _objective, careless_raters, fit_rater_model
from metrics.study._simulation import simulate_ratings


@pytest.fixture(scope="module")
def study():
    """250 items with a uniform true similarity, 9 raters (two strict, two lenient, one random,
    one constant), 3 raters per item."""
    truth, ratings = rater_tests_study(0)
    return truth, ratings, fit_rater_model(ratings)


def test_model_scores_track_the_truth_better_than_plain_means(study):
    truth, ratings, model = study
    means = ratings.groupby("item_id")["rating"].mean().reindex(truth.index)
    scores = model.items["score"].reindex(truth.index)
    r_model, r_mean = np.corrcoef(scores, truth)[0, 1], np.corrcoef(means, truth)[0, 1]
    rmse_model = np.sqrt(np.mean((scores - truth) ** 2))
    rmse_mean = np.sqrt(np.mean((means - truth) ** 2))
    assert r_model > r_mean + 0.03, (r_model, r_mean)
    assert rmse_model < 0.85 * rmse_mean, (rmse_model, rmse_mean)
    # the error bars mean something: |score − truth| / se is roughly standard normal
    z = (scores - truth) / model.items["se"].reindex(truth.index)
    assert 0.5 < np.mean(np.abs(z) < 1) < 0.9


def test_random_and_constant_raters_are_flagged_and_no_one_else(study):
    _, _, model = study
    flags = model.raters["flag"]
    assert flags["sim8"] == "random" and flags["sim9"] == "constant"
    assert flags.drop(["sim8", "sim9"]).isna().all()
    assert (model.raters.loc[["sim8", "sim9"], "consistency"] == 0).all()


def test_severities_are_recovered_in_scale_points(study):
    _, _, model = study
    severity = model.raters["severity"]
    truth = {"sim2": 1.0, "sim3": -1.0, "sim4": 0.5, "sim5": -0.5, "sim1": 0.0, "sim6": 0.0, "sim7": 0.0}
    centre = np.mean([severity[name] for name in truth])
    for name, shift in truth.items():
        # clipping at 0 and 4 shortens a shift of the latent value a little
        assert abs(severity[name] - centre - 0.85 * shift) < 0.2, (name, severity[name])


def test_noisier_raters_get_lower_consistency():
    rng = np.random.default_rng(3)
    latent = rng.uniform(0, 4, 200)
    noise = [0.3, 0.6, 1.0, 1.5]
    ratings = simulate_ratings(np.arange(200).astype(str), latent, k=4, profiles=["neutral"] * 4,
                               noise=noise, seed=4)
    consistency = fit_rater_model(ratings).raters["consistency"].to_numpy()
    assert (np.diff(consistency) < 0).all(), consistency


def test_careless_raters_need_enough_shared_items():
    m = pd.DataFrame({"x": [0, 1, 2, 3.0], "y": [0, 1, 3, 3.0], "z": [2.0] * 4})
    assert careless_raters(m).isna().all()  # 4 shared items: too few to call z constant


def test_scores_of_items_with_the_fitted_raters_match_the_fit(study):
    _, ratings, model = study
    again = model.item_posterior(ratings)  # the flagged raters' ratings count for nothing
    assert model.excluded == ("sim8", "sim9")
    assert np.allclose(again["score"], model.items.loc[again.index, "score"])
    assert np.allclose(again["se"], model.items.loc[again.index, "se"])
    # one more rating of an item makes its error smaller
    item = again.index[0]
    extra = pd.concat([ratings, pd.DataFrame({"item_id": [item], "annotator": ["sim1x"], "rating": [2]})])
    assert model.item_posterior(extra).loc[item, "se"] < again.loc[item, "se"]
    stored = type(model).from_parameters(json.loads(json.dumps(model.parameters())))
    assert np.allclose(stored.item_posterior(ratings)["se"], again["se"])


def test_marginal_likelihood_matches_numerical_integration():
    """The objective at given parameters equals −Σ_i log ∫ φ(θ) Π_j P(y_ij | θ) dθ (quad) plus the
    priors' penalty: the model as written in the module docstring."""
    ratings = pd.DataFrame({"item_id": list("aabbccd"), "annotator": list("xyxyxyx"),
                            "rating": [0, 1, 2, 4, 3, 3, 4]})
    matrix = rating_matrix(ratings)
    data = _long(matrix, (0, 1, 2, 3, 4))
    t0, gaps, log_a, raw_b = -1.0, np.log([0.8, 1.1, 0.9]), np.array([0.3, -0.2]), np.array([0.4, -0.1])
    params = np.concatenate([[t0], gaps, log_a, raw_b])
    tau = t0 + np.concatenate([[0.0], np.cumsum(np.exp(gaps))])
    b = raw_b - raw_b.mean()

    def prob(y, j, theta):
        cum = np.concatenate([[0.0], expit(np.exp(log_a[j]) * (tau - theta + b[j])), [1.0]])
        return cum[y + 1] - cum[y]

    total = 0.0
    for _item, rows in ratings.groupby("item_id"):
        raters = [list(matrix.columns).index(a) for a in rows["annotator"]]
        integrand = lambda t, rows=rows, raters=raters: stats.norm.pdf(t) * np.prod([prob(int(y), j, t)
                                                          for y, j in zip(rows["rating"], raters)])
        total += np.log(integrate.quad(integrand, -6, 6)[0] / (stats.norm.cdf(6) - stats.norm.cdf(-6)))
    penalty = (0.5 * np.sum(log_a ** 2) / PRIOR_SD["log_discrimination"] ** 2
               + 0.5 * np.sum(b ** 2) / PRIOR_SD["severity"] ** 2
               + 0.5 * np.sum(gaps ** 2) / PRIOR_SD["log_gap"] ** 2)
    value, gradient = _objective(params, data, 2, 4)
    assert value == pytest.approx(-(total - penalty), abs=2e-3)
    numeric = optimize.approx_fprime(params, lambda p: _objective(p, data, 2, 4)[0], 1e-6)
    assert np.allclose(gradient, numeric, atol=1e-4)


def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_command_writes_items_and_raters(tmp_path):
    rng = np.random.default_rng(5)
    ratings = simulate_ratings([f"p{k}" for k in range(40)], rng.uniform(0, 4, 40), k=4, seed=6,
                               profiles=["neutral", "strict", "lenient", "neutral"], shift=1.0)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    res = run("rater-model", "--ratings", str(tmp_path / "ratings.csv"), "--json", str(tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr
    result = json.loads((tmp_path / "m.json").read_text())
    assert set(result) == {"items", "raters"}
    assert len(result["items"]) == 40 and set(result["items"]["p0"]) == {"score", "se", "n"}
    assert result["items"]["p0"]["n"] == 4
    assert set(result["raters"]["sim1"]) == {"severity", "consistency", "flag"}
    assert result["raters"]["sim2"]["severity"] > 0.5 > -0.5 > result["raters"]["sim3"]["severity"]
    assert "sim2" in res.stdout and "more items" in res.stdout


def test_command_bad_rating_is_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "ratings.csv").write_text("item_id,annotator,rating\na,x,1\na,y,7\n")
    res = run("rater-model", "--ratings", str(tmp_path / "ratings.csv"), "--json", str(tmp_path / "m.json"))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith(f"metrics rater-model: error: {tmp_path / 'ratings.csv'}: line 3: rating")
    assert not (tmp_path / "m.json").exists()


def test_nobody_is_called_random_when_no_rater_agrees_with_the_others():
    rng = np.random.default_rng(7)
    noise_only = pd.DataFrame(rng.integers(0, 5, (40, 4)).astype(float), columns=list("wxyz"))
    assert careless_raters(noise_only).isna().all()
    signal = np.repeat(rng.uniform(0, 4, (40, 1)), 4, axis=1) + rng.normal(0, 0.4, (40, 4))
    signal[:, 3] = rng.integers(0, 5, 40)  # one rater answers at random among three who agree
    assert careless_raters(pd.DataFrame(np.clip(np.rint(signal), 0, 4), columns=list("wxyz"))).tolist() == [
        None, None, None, "random"]

"""Reliability statistics against their references: irrCAC's published AC1/AC2 values, a plain
transcription of Hayes's KALPHA bootstrap, pingouin's ICC(2,1) / ICC(3,1), brute-force pair
enumeration and statsmodels' REML mixed model for the incomplete-design ICC."""

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from metrics.core._intervals import kalpha_interval
from metrics.study._agreement import alpha_of_matrix, rating_matrix
from metrics.study._reliability import (
    gwet_ac2,
    hayes_krippendorff_bootstrap,
    human_ceiling,
    icc,
    paired_metric_test,
    reliability,
    reliability_by_stratum,
    variance_components,
)
from metrics.study._simulation import simulate_ratings

NAN = np.nan
# irrCAC.datasets.raw_4raters (Gwet 2014, Table 2.16): 12 units × 4 raters on 1–5
RAW_4RATERS = pd.DataFrame({
    "Rater1": [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    "Rater2": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, NAN],
    "Rater3": [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    "Rater4": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN]}, dtype=float)


@pytest.mark.parametrize("weights,expected", [("identity", 0.775), ("ordinal", 0.899),
                                              ("quadratic", 0.914)])
def test_gwet_matches_irrcac_on_gwets_four_rater_example(weights, expected):
    """afergadis/irrCAC test/unit/irrCAC/raw/test_gwet.py: test_gwet_raw4raters (AC1 0.775),
    ..._ordinal_weights (0.899), ..._quadratic_weights (0.914), rounded to 3 digits."""
    assert round(gwet_ac2(RAW_4RATERS, weights=weights, scale=(1, 2, 3, 4, 5)), 3) == expected


def test_gwet_bootstrap_with_unit_weights_is_the_point_estimate():
    ones = np.ones((3, len(RAW_4RATERS)))
    values = gwet_ac2(RAW_4RATERS, weights="ordinal", scale=(1, 2, 3, 4, 5), item_weights=ones)
    assert np.allclose(values, gwet_ac2(RAW_4RATERS, weights="ordinal", scale=(1, 2, 3, 4, 5)))


def kalpha_transcription(data: np.ndarray, level: int, uniforms: np.ndarray) -> np.ndarray:
    """Plain transcription of kalpha.sps (A. F. Hayes, KALPHA macro v3.0, 2011; e.g.
    timcavazzotto/Stat-Learn kalpha/kalpha.sps): units × judges with NaN missing, level 1..4."""
    dat = data[(~np.isnan(data)).sum(axis=1) > 1]
    nobj, nj = dat.shape
    values = np.sort(np.unique(dat[~np.isnan(dat)]))          # "map"
    uniq = len(values)
    coinc = np.zeros((uniq, uniq))
    mu = (~np.isnan(dat)).sum(axis=1)
    nprs = float(np.sum(mu * (mu - 1)) * 0.5)
    for k in range(nobj):
        for i in range(nj):
            for j in range(nj):
                if not np.isnan(dat[k, i]) and not np.isnan(dat[k, j]) and i != j:
                    a = int(np.searchsorted(values, dat[k, i]))
                    b = int(np.searchsorted(values, dat[k, j]))
                    coinc[a, b] += 1 / (mu[k] - 1)
    q = int(np.sum(coinc > 0))
    nc = coinc.sum(axis=1)
    n = nc.sum()
    dmat = np.diag(coinc)
    nzero = int(np.sum(dmat > 0))
    btn = len(uniforms)
    nx = round(btn * np.sum((dmat / n) ** nprs))
    expect = np.array([[nc[i] * (nc[j] - (i == j)) / (n - 1) for j in range(uniq)] for i in range(uniq)])
    delta = np.zeros((uniq, uniq))
    for i in range(uniq):
        for j in range(i, uniq):
            if i != j:
                if level == 2:
                    d = (nc[i:j + 1].sum() - nc[i] / 2 - nc[j] / 2) ** 2
                elif level == 1:
                    d = 1.0
                else:
                    d = (values[i] - values[j]) ** 2
                delta[i, j] = delta[j, i] = d
    expdis = np.sum(expect * delta) / n
    pcoinc = 2 * (coinc / n) - np.diag(np.diag(coinc)) / n
    pmat = [(0.0, 0.0)]
    psum = 0.0
    for i in range(uniq):
        for j in range(i, uniq):
            psum += pcoinc[j, i]
            pmat.append((psum, delta[j, i]))
    bootm2 = int(min(25 * q, ((nj - 1) * n) / 2))
    assert uniforms.shape[1] == bootm2
    alphas, numone = [], 0
    for z in range(btn):
        numsum = 0.0
        for r in uniforms[z]:
            for j in range(1, len(pmat)):
                if pmat[j - 1][0] <= r <= pmat[j][0]:
                    numsum += pmat[j][1]
        alpha = 1 - numsum * (1 / (expdis * bootm2))
        alpha = max(alpha, -1.0)
        if alpha == 1 and nzero == 1:
            alpha = 0.0
        if alpha == 1 and nzero > 1:
            numone += 1
        alphas.append(alpha)
    if nx > 0 and nzero > 1:
        changed = 0
        for i in range(btn):
            if alphas[i] == 1 and changed < min(nx, numone):
                alphas[i] = 0.0
                changed += 1
    return np.array(alphas)


@pytest.mark.parametrize("level,code", [("nominal", 1), ("ordinal", 2), ("interval", 3)])
def test_hayes_krippendorff_bootstrap_matches_the_kalpha_macro(level, code):
    data = RAW_4RATERS.to_numpy() - 1  # on 0–4
    matrix = pd.DataFrame(data)
    counts = (~np.isnan(data)).sum(axis=1)
    n = counts[counts > 1].sum()
    draws = int(min(25 * 14, 3 * n / 2))  # 14 non-zero cells of the coincidence matrix
    uniforms = np.random.default_rng(7).random((200, draws))
    ours = hayes_krippendorff_bootstrap(matrix, level=level, uniforms=uniforms)
    assert np.allclose(ours, kalpha_transcription(data, code, uniforms))
    assert ours.mean() == pytest.approx(alpha_of_matrix(matrix, level=level), abs=0.05)


def test_kalpha_correction_of_perfect_resamples_matches_the_macro():
    """3 pairs of values, so round(B · Σ (o_cc / n)^3) = round(300 · 2/27) = 22 of the resamples
    with α* = 1 become 0."""
    data = np.array([[0, 0], [4, 4], [0, 1]], float)
    uniforms = np.random.default_rng(1).random((300, 3))  # M = min(25 · 4 cells, (2 − 1) · 6 / 2)
    ours = hayes_krippendorff_bootstrap(pd.DataFrame(data), level="interval", uniforms=uniforms)
    theirs = kalpha_transcription(data, 3, uniforms)
    assert np.allclose(ours, theirs)
    assert (theirs == 0).sum() == 22


def test_kalpha_interval_ranks():
    alphas = np.arange(1000) / 1000
    assert kalpha_interval(alphas) == (0.024, 0.975)  # ranks 25 and 976 (1-based)


def test_icc_equals_pingouin_icc2_and_icc3_on_a_complete_design():
    import pingouin
    rng = np.random.default_rng(2)
    latent = rng.uniform(0, 4, 30)
    ratings = simulate_ratings(np.arange(30).astype(str), latent, k=4, seed=3)
    matrix = rating_matrix(ratings)
    table = pingouin.intraclass_corr(ratings, targets="item_id", raters="annotator",
                                     ratings="rating").set_index("Type")["ICC"]
    ours = icc(matrix)
    assert ours["agreement"] == pytest.approx(table["ICC(A,1)"], abs=1e-12)  # Shrout–Fleiss ICC(2,1)
    assert ours["consistency"] == pytest.approx(table["ICC(C,1)"], abs=1e-12)  # ICC(3,1)


def brute_force_components(matrix: pd.DataFrame) -> dict:
    """Mean squared differences over explicitly enumerated rating pairs."""
    cells = [(i, j, v) for i, row in enumerate(matrix.to_numpy()) for j, v in enumerate(row) if not np.isnan(v)]
    groups = {"item": [], "rater": [], "none": []}
    for (i1, j1, v1), (i2, j2, v2) in combinations(cells, 2):
        key = "item" if i1 == i2 else "rater" if j1 == j2 else "none"
        groups[key].append((v1 - v2) ** 2)
    d = {k: np.mean(v) for k, v in groups.items()}
    return {"item": (d["none"] - d["item"]) / 2, "rater": (d["none"] - d["rater"]) / 2,
            "residual": (d["item"] + d["rater"] - d["none"]) / 2}


def test_variance_components_of_an_incomplete_design_match_pair_enumeration():
    matrix = pd.DataFrame({"x": [1, 2, 3, 4.0, NAN], "y": [2, 3, 4, 4.0, 0], "z": [1, 3, 3, NAN, 1]})
    ours, brute = variance_components(matrix), brute_force_components(matrix)
    for key in brute:
        assert ours[key] == pytest.approx(brute[key])


def test_icc_of_a_simulated_incomplete_design_is_near_the_truth():
    """σ²_item = 1, σ²_rater = 0.25, σ²_e = 0.36 (continuous ratings, 3 of 10 raters per item)."""
    rng = np.random.default_rng(4)
    n, k = 3000, 10
    y = rng.normal(0, 1, (n, 1)) + rng.normal(0, 0.5, (1, k)) + rng.normal(0, 0.6, (n, k))
    keep = np.argsort(rng.random((n, k)), axis=1) < 3
    matrix = pd.DataFrame(np.where(keep, y, np.nan))
    truth_rater = np.var(y.mean(axis=0) - y.mean(), ddof=1)  # this draw's rater spread
    ours = icc(matrix)
    assert ours["agreement"] == pytest.approx(1 / (1 + truth_rater + 0.36), abs=0.05)
    assert ours["consistency"] == pytest.approx(1 / 1.36, abs=0.03)


@pytest.mark.slow
def test_icc_of_an_incomplete_design_is_near_statsmodels_reml():
    """Crossed random item and rater effects fitted by statsmodels' MixedLM (REML; one group,
    item and rater as variance components) estimate the same components another way, so the two
    ICCs agree up to sampling error, not exactly. On 150 items with 3 of 10 raters each, over
    12 simulated studies: mean |ours − REML| 0.017 (agreement) and 0.033 (consistency), at most
    0.054 / 0.088; against the truth the consistency ICC's RMSE was 0.055 here, 0.041 with REML
    (16 studies). A formula that left out or double-counted a component misses by 0.1 or more."""
    import statsmodels.formula.api as smf

    differences = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        n, k = 150, 10
        y = rng.normal(0, 1, (n, 1)) + rng.normal(0, 0.5, (1, k)) + rng.normal(0, 0.7, (n, k))
        keep = np.argsort(rng.random((n, k)), axis=1) < 3
        item, rater = np.nonzero(keep)
        long = pd.DataFrame({"item": item.astype(str), "rater": rater.astype(str),
                             "y": y[item, rater], "group": 1})
        model = smf.mixedlm("y ~ 1", long, groups="group", re_formula="0",
                            vc_formula={"item": "0 + C(item)", "rater": "0 + C(rater)"})
        fit = model.fit(reml=True)
        vc = dict(zip(model.exog_vc.names, fit.vcomp))
        ours = icc(pd.DataFrame(np.where(keep, y, np.nan)))
        differences.append((ours["agreement"] - vc["item"] / (vc["item"] + vc["rater"] + fit.scale),
                            ours["consistency"] - vc["item"] / (vc["item"] + fit.scale)))
    mean_abs = np.abs(np.array(differences)).mean(axis=0)
    assert mean_abs[0] < 0.04 and mean_abs[1] < 0.07, mean_abs


def test_human_ceiling_by_hand():
    matrix = pd.DataFrame({"x": [0, 1, 2, 3.0], "y": [0, 2, 2, 4.0], "z": [1, 1, 3, 4.0]})
    out = human_ceiling(matrix, n_resamples=0)
    # x against the mean of y and z: [0.5, 1.5, 2.5, 4]: ranks agree → ρ = 1; Eq. 13 = 1 − mean|d|/4
    assert out["per_rater"]["x"]["spearman"] == pytest.approx(1.0)
    assert out["per_rater"]["x"]["agreement"] == pytest.approx(1 - (0.5 + 0.5 + 0.5 + 1) / 4 / 4)
    assert out["spearman"] == pytest.approx(np.mean([r["spearman"] for r in out["per_rater"].values()]))


def test_paired_test_tells_a_better_metric_from_a_worse_one():
    rng = np.random.default_rng(5)
    human = rng.uniform(0, 4, 200)
    good = np.clip(human + rng.normal(0, 0.4, 200), 0, 4)
    bad = np.clip(human + rng.normal(0, 1.5, 200), 0, 4)
    out = paired_metric_test(good, bad, human, n_resamples=2000)
    assert out["spearman"]["difference"] > 0 and out["spearman"]["p_value"] < 0.01
    assert out["spearman"]["ci"][0] > 0
    same = paired_metric_test(good, good, human, n_resamples=500)
    assert same["agreement"]["difference"] == 0 and same["agreement"]["p_value"] == 1.0


def test_reliability_report_and_strata():
    rng = np.random.default_rng(6)
    latent = rng.uniform(0, 4, 60)
    ratings = simulate_ratings([f"i{k}" for k in range(60)], latent, k=5, raters_per_item=3, seed=7)
    matrix = rating_matrix(ratings)
    out = reliability(matrix, n_resamples=200)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        entry = out["krippendorff_alpha"][level]
        assert entry["ci"][0] <= entry["value"] <= entry["ci"][1] or math.isclose(entry["ci"][0], entry["value"])
    assert out["krippendorff_alpha"]["ordinal"]["value"] == pytest.approx(alpha_of_matrix(matrix, level="ordinal"))
    for kind in ("ordinal", "quadratic"):
        assert out["gwet_ac2"][kind]["ci"][0] < out["gwet_ac2"][kind]["value"] < out["gwet_ac2"][kind]["ci"][1]
    assert 0.5 < out["icc"]["agreement"]["value"] < out["icc"]["consistency"]["value"] < 1
    strata = pd.Series([k % 2 for k in range(60)], index=[f"i{k}" for k in range(60)])
    by = reliability_by_stratum(matrix, strata, n_resamples=50)
    assert set(by) == {"0", "1"} and by["0"]["n_items"] == 30


def test_command_per_stratum_and_paired_test(tmp_path):
    import json
    import subprocess
    import sys

    from projectpaths import ROOT

    rng = np.random.default_rng(8)
    latent = rng.uniform(0, 4, 90)
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(90)], "category": [k % 3 + 1 for k in range(90)],
                          "good": np.clip(latent + rng.normal(0, 0.3, 90), 0, 4),
                          "bad": np.clip(latent + rng.normal(0, 1.5, 90), 0, 4)})
    simulate_ratings(items["item_id"], latent, k=4, raters_per_item=3, seed=9).to_csv(tmp_path / "r.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    res = subprocess.run([sys.executable, "-m", "metrics", "reliability", "--ratings", str(tmp_path / "r.csv"),
                          "--items", str(tmp_path / "items.csv"), "--compare", "good", "bad",
                          "--bootstrap", "200", "--json", str(tmp_path / "out.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert set(out["by_stratum"]["category"]) == {"1", "2", "3"}
    assert out["by_stratum"]["category"]["2"]["n_items"] == 30
    assert out["paired_test"]["spearman"]["difference"] > 0 and out["paired_test"]["spearman"]["p_value"] < 0.05
    assert "Gwet's AC2 (ordinal" in res.stdout and "good − bad (spearman)" in res.stdout
    bad = subprocess.run([sys.executable, "-m", "metrics", "reliability", "--ratings", str(tmp_path / "r.csv"),
                          "--items", str(tmp_path / "items.csv"), "--compare", "good", "nope"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == (
        f"metrics reliability: error: {tmp_path / 'items.csv'}: no metric column 'nope'")


@pytest.mark.parametrize("levels", [5, 40, None])
def test_resampled_ranks_equal_scipy_rankdata_on_each_resample(levels, monkeypatch):
    """The counting fast path (and its fallback beyond the table limit) rank every bootstrap
    resample exactly as ``scipy.stats.rankdata(x[idx], axis=-1)``, ties averaged."""
    from scipy import stats

    from metrics.study import _reliability as rel

    rng = np.random.default_rng(7)
    x = rng.integers(0, levels, size=300).astype(float) if levels else rng.normal(size=300)
    idx = rng.integers(0, len(x), size=(200, len(x)))
    expected = stats.rankdata(x[idx], axis=-1)
    assert np.array_equal(rel.resampled_ranks(x, idx), expected)
    monkeypatch.setattr(rel, "RANK_TABLE_LIMIT", 0)
    assert np.array_equal(rel.resampled_ranks(x, idx), expected)


def test_icc_without_any_variance_is_undefined_not_an_error():
    """Two raters who each give one constant rating: no item variance, no residual; ICC is
    0 / 0 (NaN), not a ZeroDivisionError."""
    m = pd.DataFrame({"a": [1.0] * 5, "b": [3.0] * 5})
    out = icc(m)
    assert math.isnan(out["consistency"]) and out["agreement"] == 0.0


def test_icc_stays_within_minus_one_and_one():
    """Two items, three raters who disagree: the moment estimates give σ²_item < 0 and, unclipped,
    ICC(A,1) = σ²_a / (σ²_a + σ²_b + σ²_e) = -1.273 (found by search). A correlation cannot go
    below -1: the estimate and its bootstrap interval are kept to [-1, 1]."""
    m = pd.DataFrame([[2.0, 4.0, 0.0], [4.0, 0.0, 3.0]], columns=["x", "y", "z"])
    vc = variance_components(m)
    assert vc["item"] / (vc["item"] + vc["rater"] + vc["residual"]) == pytest.approx(-1.2727, abs=1e-4)
    assert icc(m)["agreement"] == -1.0
    weights = np.random.default_rng(0).multinomial(2, [0.5, 0.5], size=200).astype(float)
    assert np.nanmin(icc(m, weights)["agreement"]) >= -1.0

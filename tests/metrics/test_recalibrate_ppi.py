"""``metrics recalibrate --estimator ppi`` as a process on real files: matrices built
from prediction-powered estimates, each entry's interval in a CSV beside the matrix."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics.study._simulation import simulate_ratings
from metrics.vocab._baseline import load_default
from metrics.vocab._similarity import SimilarityMatrix

pytestmark = pytest.mark.slow

def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The baseline matrices are the truth; the 'LLM' rated every pair as 4·(t/4)^1.5 plus noise
    (too low, monotone); five raters rate 600 items built from stored pairs of the truth."""
    folder = tmp_path_factory.mktemp("ppi_study")
    rng = np.random.default_rng(4)
    truth = {"v": load_default("v"), "n": load_default("n")}
    llm = {}
    for key, matrix in truth.items():
        i, j, s = matrix.entries()
        noisy = np.clip(4 * (s / 4) ** 1.5 + rng.normal(0, 0.25, len(s)), 0.05, 4)
        llm[key] = SimilarityMatrix(matrix.labels, row=i, col=j, val=noisy, meta={"source": "simulated LLM"})
        llm[key].save(folder / f"{key}.npz")
    vi, vj, _ = truth["v"].entries()
    oi, oj, _ = truth["n"].entries()
    rows = []
    for k in range(600):
        cat = k % 3 + 1
        a, b = rng.integers(len(vi)), rng.integers(len(oi))
        gv, pv = truth["v"].labels[vi[a]], truth["v"].labels[vj[a]]
        go, po = truth["n"].labels[oi[b]], truth["n"].labels[oj[b]]
        rows.append((f"i{k}", cat, gv, go, gv if cat == 1 else pv, go if cat == 2 else po))
    items = pd.DataFrame(rows, columns=["item_id", "category", "gt_verb", "gt_object", "pred_verb", "pred_object"])
    latent = 4 * (0.5 * truth["v"].sims(items["pred_verb"], items["gt_verb"])
                  + 0.5 * truth["n"].sims(items["pred_object"], items["gt_object"]))
    ratings = simulate_ratings(items["item_id"], latent, k=5, noise=0.5, profiles=["neutral"] * 5, seed=5)
    ratings["study"] = "ppi-sim"
    items.to_csv(folder / "items.csv", index=False)
    ratings.to_csv(folder / "ratings.csv", index=False)
    return folder, truth, llm, items, ratings


@pytest.fixture(scope="module")
def recalibrated(study, tmp_path_factory):
    folder = study[0]
    out = tmp_path_factory.mktemp("recal")
    done = run("recalibrate", "--ratings", folder / "ratings.csv", "--items", folder / "items.csv",
               "--verb-sim", folder / "v.npz", "--object-sim", folder / "n.npz", "--estimator", "ppi",
               "--out", out / "matrices", "--json", out / "r.json")
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_ppi_matrices_and_interval_sidecars(study, recalibrated):
    folder, truth, llm, items, ratings = study
    where, stdout = recalibrated
    out = where / "matrices"
    assert "humans only" in stdout and "not a range for one pair's own ratings" in stdout
    summary = json.loads((where / "r.json").read_text())
    assert summary["n_items"] == 600 and summary["n_ratings"] == 3000
    for role, key in (("verb", "v"), ("object", "n")):
        table = pd.read_csv(out / f"{role}_recalibrated_intervals.csv")
        matrix = SimilarityMatrix.load(out / f"{role}_recalibrated.npz")
        assert matrix.meta["study"] == "ppi-sim" and "prediction-powered" in matrix.meta["method"]
        # one row per stored pair of the LLM matrix (no pair rated outside it here)
        assert len(table) == llm[key].n_pairs
        assert (table["lower"] <= table["estimate"] + 1e-9).all() and (table["estimate"] <= table["upper"] + 1e-9).all()
        # the matrix holds the table's estimates
        sample = table.sample(50, random_state=0)
        assert np.allclose(matrix.scores(sample["a"], sample["b"]), sample["estimate"], atol=1e-5)
        # each level's fit, recomputed from the table: λ = Cov(Y, ŷ)/Var(ŷ) over its rated pairs
        # (clipped to [0, 1]), estimate λ·ŷ + mean(Y − λ·ŷ), half-width z·√((1 − n/M)·S²(Y − λ·ŷ)/n)
        for _level, g in table.groupby("stratum"):
            rated = g[g["human"].notna()]
            if len(rated) < 2:
                assert (g["fit"] == "pooled").all()
                continue
            y, f = rated["human"].to_numpy(), rated["llm"].to_numpy()
            lam = float(np.clip(np.mean((y - y.mean()) * (f - f.mean())) / np.var(f), 0, 1)) if np.var(f) > 0 else 0.0
            assert g["lam"].iloc[0] == pytest.approx(lam, abs=1e-5)
            expected = np.clip(lam * g["llm"] + np.mean(y - lam * f), 0, 4)
            assert np.allclose(g["estimate"], expected, atol=1e-4)
            half = 1.959964 * np.sqrt((1 - len(rated) / len(g)) * np.var(y - lam * f, ddof=1) / len(rated))
            inside = (g["estimate"] - half > 0) & (g["estimate"] + half < 4)
            assert np.allclose((g["upper"] - g["estimate"])[inside], half, atol=1e-4)
            assert g["classical"].iloc[0] == pytest.approx(y.mean(), abs=1e-5)
        # the LLM reads every pair too low; the PPI matrix is closer to the truth than the LLM's
        i, j, t = truth[key].entries()
        a, b = truth[key].labels[i], truth[key].labels[j]
        assert np.abs(matrix.scores(a, b) - t).mean() < 0.7 * np.abs(llm[key].scores(a, b) - t).mean()


def test_human_evidence_of_a_pair_is_its_implied_similarity(study, recalibrated):
    folder, truth, llm, items, ratings = study
    table = pd.read_csv(recalibrated[0] / "matrices" / "object_recalibrated_intervals.csv")
    # a category-1 item (same verb, v = 1) whose object pair no other item rates: implied
    # o* = (h − w·1)/(1 − w), h = mean rating / 4, w = ½ → o*·4 = 2·mean − 4, clipped to [0, 4]
    pairs = items.apply(lambda r: tuple(sorted((r["gt_object"], r["pred_object"]))), axis=1)
    counts = pairs[items["category"] != 2].value_counts()
    once = items[(items["category"] == 1) & pairs.map(counts).eq(1)].iloc[0]
    a, b = sorted((once["gt_object"], once["pred_object"]))
    row = table[(table["a"] == a) & (table["b"] == b)].iloc[0]
    mean = ratings.loc[ratings["item_id"] == once["item_id"], "rating"].mean()
    assert row["human"] == pytest.approx(np.clip(2 * mean - 4, 0, 4), abs=1e-5)
    assert row["n_ratings"] == 5


def test_bad_confidence_is_one_line_and_writes_nothing(study, tmp_path):
    folder, *_ = study
    out = tmp_path / "never"
    done = run("recalibrate", "--ratings", folder / "ratings.csv", "--items", folder / "items.csv",
               "--verb-sim", folder / "v.npz", "--object-sim", folder / "n.npz", "--estimator", "ppi",
               "--confidence", "1.5", "--out", out)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--confidence" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()

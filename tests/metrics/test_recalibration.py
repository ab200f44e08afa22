"""Recalibration on simulated data whose matrices are a known monotone distortion of the truth."""

import numpy as np
import pandas as pd
import pytest

from metrics.study._recalibration import recalibrate_matrices
from metrics.study._simulation import simulate_ratings
from metrics.study._study_items import join_ratings
from metrics.vocab._baseline import load_default
from metrics.vocab._similarity import SimilarityMatrix


def squared(matrix: SimilarityMatrix) -> SimilarityMatrix:
    """The truth is t; the matrix we are given holds t² (a monotone distortion)."""
    i, j, s = matrix.entries()
    return SimilarityMatrix(matrix.labels, row=i, col=j, val=4 * (s / 4) ** 2, meta={"source": "t^2"})


@pytest.fixture(scope="module")
def study():
    rng = np.random.default_rng(0)
    truth_v, truth_o = load_default("v"), load_default("n")
    vi, vj, _ = truth_v.entries()
    oi, oj, _ = truth_o.entries()
    rows = []
    for k in range(450):
        cat = k % 3 + 1
        a, b = rng.integers(len(vi)), rng.integers(len(oi))
        gv, pv = truth_v.labels[vi[a]], truth_v.labels[vj[a]]
        go, po = truth_o.labels[oi[b]], truth_o.labels[oj[b]]
        rows.append((str(k), cat, gv, go, gv if cat == 1 else pv, go if cat == 2 else po))
    items = pd.DataFrame(rows, columns=["item_id", "category", "gt_verb", "gt_object", "pred_verb", "pred_object"])
    latent = 4 * (0.5 * truth_v.sims(items["pred_verb"], items["gt_verb"])
                  + 0.5 * truth_o.sims(items["pred_object"], items["gt_object"]))
    ratings = simulate_ratings(items["item_id"], latent, k=5, noise=0.5, profiles=["neutral"] * 5, seed=1)
    return items, ratings, squared(truth_v), squared(truth_o), truth_v


def test_held_out_agreement_improves_and_map_recovers_the_square_root(study):
    items, ratings, verb, obj, _ = study
    result = recalibrate_matrices(join_ratings(items, ratings), verb, obj, folds=5, seed=0, study="sim")
    assert result["after"]["agreement"] > result["before"]["agreement"] + 0.03
    x = np.asarray(result["calibration_curves"]["x"])
    for role in ("verb", "object"):
        curve = np.asarray(result["calibration_curves"][role])
        assert np.all(np.diff(curve) >= -1e-12)                      # monotone
        inside = (x >= 0.1) & (x <= 0.6)                             # where the evidence lies
        assert np.abs(curve[inside] - np.sqrt(x[inside])).max() < 0.15
    assert len(result["folds"]) == 5 and sum(f["n_test"] for f in result["folds"]) == len(items)


def test_new_matrices_keep_labels_self_similarity_and_provenance(study, tmp_path):
    items, ratings, verb, obj, truth_v = study
    result = recalibrate_matrices(join_ratings(items, ratings), verb, obj, folds=3, study="sim")
    new = result["verb"]
    assert set(verb.labels) <= set(new.labels)
    assert new.sim("ride.v.02", "ride.v.02") == 1.0
    assert new.meta["study"] == "sim" and new.meta["n_ratings"] == len(ratings)
    assert new.meta["cross_validation"]["after"]["agreement"] == result["after"]["agreement"]
    # an entry no one rated moves through the calibration map only: t² -> about t
    i, j, s = verb.entries()
    rated = set(zip(result["evidence"]["verb"].a, result["evidence"]["verb"].b))
    k = next(k for k in range(len(i)) if 0.3 < s[k] / 4 < 0.5 and
             tuple(sorted((verb.labels[i[k]], verb.labels[j[k]]))) not in rated)
    a, b = verb.labels[i[k]], verb.labels[j[k]]
    assert abs(new.sim(a, b) - truth_v.sim(a, b)) < abs(verb.sim(a, b) - truth_v.sim(a, b))
    back = SimilarityMatrix.load(new.save(tmp_path / "v.npz"))
    assert back.meta["method"] == new.meta["method"]


def test_score_names_a_recalibrated_matrix_version_and_its_study(study, tmp_path):
    # score --json's params.verb_sim: "recalibrated" alone did not say which matrices were used
    from metrics.detection._scoring import _provenance
    items, ratings, verb, obj, _ = study
    new = recalibrate_matrices(join_ratings(items, ratings), verb, obj, folds=3, study="sim")["verb"]
    assert _provenance(new) == "recalibrated from study sim"
    new.meta["version"] = "v2"                # what a saved matrix version carries (studyapp matrices)
    back = SimilarityMatrix.load(new.save(tmp_path / "v.npz"))
    assert _provenance(back) == "recalibrated version 'v2' from study sim"
    assert _provenance(None) == "WordNet baseline (default)" and _provenance(verb) == verb.meta["source"]

"""The analysis commands end to end on files: agreement report, alignment, tune-w, recalibrate."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics.study._simulation import simulate_ratings


def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("study")
    rng = np.random.default_rng(0)
    verbs = ["ride", "push", "hold", "walk", "straddle", "kick", "carry", "sit_on"]
    objects = ["bicycle", "motorcycle", "horse", "dog", "car", "skateboard", "bench", "cup"]
    rows = []
    for k in range(120):
        cat = k % 3 + 1
        gv, go = rng.choice(verbs), rng.choice(objects)
        pv = gv if cat == 1 else rng.choice([v for v in verbs if v != gv])
        po = go if cat == 2 else rng.choice([o for o in objects if o != go])
        rows.append((f"i{k}", cat, gv, go, pv, po, rng.random(), rng.random()))
    items = pd.DataFrame(rows, columns=["item_id", "category", "gt_verb", "gt_object", "pred_verb", "pred_object",
                                        "verb_sim", "object_sim"])
    items.loc[items["category"] == 1, "verb_sim"] = 1.0
    items.loc[items["category"] == 2, "object_sim"] = 1.0
    latent = 4 * (0.7 * items["verb_sim"] + 0.3 * items["object_sim"])
    items["noisy_metric"] = np.clip(latent / 4 + rng.normal(0, 0.3, len(items)), 0, 1)
    ratings = simulate_ratings(items["item_id"], latent, k=5, noise=0.4, seed=2)
    ratings["study"] = "sim"
    items.to_csv(out / "items.csv", index=False)
    ratings.to_csv(out / "ratings.csv", index=False)
    return out


def test_agreement_report(study, tmp_path):
    res = run("agreement", "--ratings", str(study / "ratings.csv"), "--items", str(study / "items.csv"),
              "--bootstrap", "200", "--out", str(tmp_path / "rep"), "--json", str(tmp_path / "a.json"))
    assert res.returncode == 0, res.stderr
    result = json.loads((tmp_path / "a.json").read_text())
    for key in ("krippendorff_alpha", "mean_pairwise_agreement", "mean_qwk", "mean_spearman"):
        assert isinstance(result[key], float) and 0 < result[key] <= 1
    assert (result["n_items"], result["n_annotators"]) == (120, 5)
    assert "noisy_metric" in result["alignment"]["metrics"]
    rep = tmp_path / "rep"
    assert (rep / "report.html").stat().st_size > 10_000 and "data:image/png;base64" in (rep / "report.html").read_text()
    for name in ("agreement.json", "pairwise_qwk.csv", "spearman_heatmap.png", "votes_by_majority.png", "alignment.csv"):
        assert (rep / name).exists(), name


def test_tune_w_recovers_the_simulated_weight(study, tmp_path):
    res = run("tune-w", "--ratings", str(study / "ratings.csv"), "--items", str(study / "items.csv"),
              "--json", str(tmp_path / "w.json"), "--out", str(tmp_path / "w"))
    assert res.returncode == 0, res.stderr
    result = json.loads((tmp_path / "w.json").read_text())
    assert abs(result["w_by_category"]["3"] - 0.7) < 0.1
    assert set(result["w_by_category"]) == {"1", "2", "3"}
    assert (tmp_path / "w" / "mae_vs_w.png").exists()


def test_alignment_and_recalibrate(study, tmp_path):
    res = run("alignment", "--ratings", str(study / "ratings.csv"), "--items", str(study / "items.csv"),
              "--metric", "noisy_metric", "--permutations", "500", "--json", str(tmp_path / "al.json"))
    assert res.returncode == 0, res.stderr
    m = json.loads((tmp_path / "al.json").read_text())["metrics"]["noisy_metric"]
    assert set(m) >= {"agreement", "spearman", "spearman_ci", "p_permutation"}
    res = run("recalibrate", "--ratings", str(study / "ratings.csv"), "--items", str(study / "items.csv"),
              "--verb-sim", str(ROOT / "metrics/datasets/hico_det/data/baseline_verb.npz"),
              "--object-sim", str(ROOT / "metrics/datasets/hico_det/data/baseline_object.npz"),
              "--out", str(tmp_path / "recal"), "--json", str(tmp_path / "r.json"))
    assert res.returncode == 0, res.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert set(result) >= {"before", "after", "method"}
    for name in ("verb_recalibrated.npz", "verb_recalibrated.csv", "object_recalibrated.npz", "report.html"):
        assert (tmp_path / "recal" / name).exists()
    info = run("matrix", "info", str(tmp_path / "recal" / "verb_recalibrated.npz"))
    assert "recalibrated" in info.stdout and '"study": "sim"' in info.stdout


def test_bad_ratings_file_is_one_line(tmp_path):
    bad = tmp_path / "r.csv"
    bad.write_text("item_id,annotator,rating\n1,a,2\n1,b,9\n")
    res = run("agreement", "--ratings", str(bad))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "line 3" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["agreement", "reliability"])
def test_a_study_where_no_item_is_shared_yet_is_one_line(tmp_path, command):
    """The normal start of a study: two annotators, four items, no item rated by both. Agreement
    is not defined yet: one line and exit 2 (it was krippendorff's traceback)."""
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item_id,annotator,rating\np1,a,2\np2,a,3\np3,b,1\np4,b,4\n")
    items = tmp_path / "items.csv"
    items.write_text("item_id,gt_verb,gt_object,pred_verb,pred_object\n"
                     + "".join(f"p{k},ride,horse,feed,horse\n" for k in range(1, 5)))
    args = ["--ratings", str(ratings)] + (["--items", str(items)] if command == "reliability" else [])
    done = run(command, *args, "--json", str(tmp_path / "out.json"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"metrics {command}: error: {ratings}: {command} needs an item rated by at least two "
                                   "annotators; no item has been yet (2 annotators, 4 items)")
    assert not (tmp_path / "out.json").exists()

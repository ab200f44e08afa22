"""A study analysed end to end, through the command lines: simulate a study → export → agreement report →
tune w → recalibrate → score a prediction file with the recalibrated matrices."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from projectpaths import ROOT


def cli(module, *args):
    res = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env=os.environ.copy())
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.slow
def test_simulated_study_to_model_scores(tmp_path):
    spec = tmp_path / "sim.toml"
    spec.write_text('''title = "Simulated SHOE study"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = 5
items_per_annotator = "all"
[items]
source = "sampler"
n = 90
seed = 3
''')
    cli("studyapp", "create", str(spec))
    out = cli("studyapp", "simulate", "sim", "--k", "5", "--seed", "1")
    assert "450 ratings" in out                         # 90 items × 5 raters, nobody over-assigned
    export = tmp_path / "exports"
    folder = cli("studyapp", "export", "sim", "--out", str(export)).split("wrote ")[-1].strip()
    ratings, items = f"{folder}/ratings.csv", f"{folder}/items.csv"
    table = pd.read_csv(ratings)
    assert len(table) == 450 and table.groupby("item_id")["annotator"].nunique().eq(5).all()

    cli("metrics", "agreement", "--ratings", ratings, "--items", items, "--bootstrap", "200",
        "--out", str(tmp_path / "report"), "--json", str(tmp_path / "agreement.json"))
    agreement = json.loads((tmp_path / "agreement.json").read_text())
    assert agreement["n_annotators"] == 5 and 0.3 < agreement["krippendorff_alpha"] < 1.0
    assert (tmp_path / "report" / "report.html").exists()

    base = ["--ratings", ratings, "--items", items,
            "--verb-sim", str(ROOT / "metrics/datasets/hico_det/data/baseline_verb.npz"),
            "--object-sim", str(ROOT / "metrics/datasets/hico_det/data/baseline_object.npz")]
    cli("metrics", "tune-w", *base, "--json", str(tmp_path / "w.json"))
    w = json.loads((tmp_path / "w.json").read_text())
    assert abs(w["w_overall"] - 0.5) < 0.2               # the simulated raters use w = 0.5

    recal = tmp_path / "recal"
    cli("metrics", "recalibrate", *base, "--out", str(recal), "--json", str(tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    # the simulation's truth is the baseline itself, so recalibration must not make things worse
    assert r["after"]["agreement"] >= r["before"]["agreement"] - 0.02

    gt = tmp_path / "gt.jsonl"
    pred = tmp_path / "pred.jsonl"
    box_h, box_o = [0, 0, 50, 100], [40, 40, 120, 120]
    gt.write_text(json.dumps({"image": "a.jpg", "hois": [
        {"human_box": box_h, "object_box": box_o, "verb": "ride", "object": "bicycle"}]}) + "\n")
    pred.write_text(json.dumps({"image": "a.jpg", "hois": [
        {"human_box": box_h, "object_box": box_o, "verb": "ride", "object": "bicycle", "score": 0.9}]}) + "\n")
    cli("metrics", "score", "--gt", str(gt), "--pred", str(pred),
        "--verb-sim", str(recal / "verb_recalibrated.npz"), "--object-sim", str(recal / "object_recalibrated.npz"),
        "--json", str(tmp_path / "score.json"))
    score = json.loads((tmp_path / "score.json").read_text())
    # one perfect detection: AP 1 for its class; the official mAP averages over 600 classes
    assert score["shoe_map"] == pytest.approx(1.0) and score["map"] == pytest.approx(1 / 600)
    assert score["per_class"][0]["ap"] == pytest.approx(1.0)

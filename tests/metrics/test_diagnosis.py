"""Diag-HOI (metrics.diagnosis._core): a Fig. 6-like scene with one prediction of every error type,
every category, oracle ΔmAP, grouped oracle and progressive fix worked out by hand."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics.core._errors import InputError
from metrics.detection._ap import class_ap
from metrics.detection._detections import Detections, write_jsonl
from metrics.diagnosis import ERROR_REGISTRY, build_diagnosis
from metrics.diagnosis._subtasks import interaction_classification, pair_localization
from tests.reference import pairs as reference

# boxes: ground-truth humans H*, objects O*; X* / Y* overlap nothing
H1, O1 = [0, 0, 10, 10], [20, 0, 30, 10]          # pair P1 (horse): ride, feed
H2, O2 = [0, 20, 10, 30], [20, 20, 30, 30]        # pair P2 (bicycle): ride, hold
H4 = [40, 20, 50, 30]                              # second human with O2: hold bicycle
H3, O3 = [40, 0, 50, 10], [60, 0, 70, 10]         # wash cup (rare class), never predicted
H5, O5 = [0, 0, 20, 20], [30, 30, 50, 50]          # image b
H6, O6 = [5, 5, 25, 25], [40, 40, 60, 60]          # image c
HX, OX = [100, 100, 110, 110], [120, 100, 130, 110]
HY, OY = [200, 200, 210, 210], [220, 200, 230, 210]

GT = [  # image, human, object, verb, object label
    ("a", H1, O1, "ride", "horse"),     # g0  class A ride horse
    ("a", H1, O1, "feed", "horse"),     # g1  class B feed horse
    ("a", H2, O2, "ride", "bicycle"),   # g2  class C ride bicycle
    ("a", H2, O2, "hold", "bicycle"),   # g3  class D hold bicycle
    ("a", H3, O3, "wash", "cup"),       # g4  class E wash cup (rare)
    ("a", H4, O2, "hold", "bicycle"),   # g5  class D
    ("b", H5, O5, "ride", "horse"),     # g6  class A
    ("c", H6, O6, "ride", "horse"),     # g7  class A (image c has no prediction)
]
PRED = [  # image, human, object, verb, object, score
    ("a", H1, O1, "ride", "horse", 0.9),     # p0 TP (g0)
    ("a", H1, O1, "ride", "horse", 0.8),     # p1 duplicate of g0
    ("a", H1, O1, "hold", "horse", 0.7),     # p2 interaction (P1 has ride, feed) -> fixed to g1
    ("a", HX, O2, "ride", "bicycle", 0.6),   # p3 human box -> fixed to g2 (same verb), displaces p7
    ("a", H2, OX, "hold", "bicycle", 0.5),   # p4 object box -> fixed to g3 (same verb)
    ("a", H1, O2, "hold", "bicycle", 0.4),   # p5 association -> g0 held, g1-g3 taken: fixed to g5
    ("a", HY, OY, "ride", "horse", 0.3),     # p6 both boxes
    ("a", H2, O2, "ride", "bicycle", 0.2),   # p7 TP (g2)
    ("b", H5, O5, "ride", "horse", 0.1),     # p8 TP (g6)
]
KINDS = ["true_positive", "duplicate", "interaction", "human_box", "object_box", "association",
         "both_boxes", "true_positive", "true_positive"]


def _det(rows, scored):
    cols = list(zip(*rows))
    return Detections.from_arrays(cols[0], cols[1], cols[2], cols[3], cols[4], cols[5] if scored else None)


def scene():
    return _det(GT, False), _det(PRED, True)


@pytest.fixture(scope="module")
def d():
    # the hand-worked values below use the all-point reading (all-point AP, continuous IoU,
    # best unmatched ground truth, mean over the classes with ground truth)
    return build_diagnosis(*scene(), map_protocol="all-point")


def test_every_category_of_the_scene(d):
    assert d.kind_names().tolist() == KINDS
    assert d.tp_gt.tolist() == [0, -1, -1, -1, -1, -1, -1, 2, 6]
    # joint oracle assignment: p2 -> g1, p3 -> g2, p4 -> g3, p5 -> g5
    assert d.fix_gt.tolist() == [-1, -1, 1, 2, 3, 5, -1, -1, -1]
    assert np.flatnonzero(d.missed).tolist() == [4, 7]        # g4 (wash cup), g7 (image c)
    counts = d.error_counts()
    assert counts["full"] == {"human_box": 1, "object_box": 1, "both_boxes": 1, "association": 1,
                              "duplicate": 1, "interaction": 1, "missed_gt": 2, "false_positive": 6,
                              "false_negative": 5, "true_positive": 3}
    # rare = wash cup only: no prediction, g4 missed
    assert counts["rare"] == dict.fromkeys(counts["full"], 0) | {"missed_gt": 1, "false_negative": 1}
    assert counts["non_rare"]["missed_gt"] == 1 and counts["non_rare"]["false_negative"] == 4
    # exhaustive and exclusive
    assert sum(counts["full"][k] for k in ERROR_REGISTRY.prediction_kinds) == len(PRED)


def test_every_single_oracle_by_hand(d):
    # classes A ride horse (n=3), B feed horse (1), C ride bicycle (1), D hold bicycle (2), E wash cup (1, rare)
    # A: p0 TP .9, p1 FP .8, p6 FP .3, p8 TP .1 -> 1/3·1 + 1/3·2/4 = 1/2;  C: p3 FP, p7 TP -> 1/2
    ap = {"A": 1 / 2, "B": 0, "C": 1 / 2, "D": 0, "E": 0}
    assert d.map["full"] == pytest.approx(sum(ap.values()) / 5)            # 0.2
    assert d.map["rare"] == 0 and d.map["non_rare"] == pytest.approx(1 / 4)
    after = {  # the class APs each oracle changes
        "human_box": {"C": 1},                  # p3 -> TP of g2, p7 suppressed
        "object_box": {"D": 1 / 2},             # p4 TP .5, p5 FP .4, n = 2
        "both_boxes": {"A": 5 / 9},             # p6 removed: 1/3 + 1/3·2/3
        "association": {"D": 1 / 4},            # p4 FP .5, p5 TP .4: 1/2 · 1/2
        "duplicate": {"A": 5 / 9},              # p1 removed
        "interaction": {"B": 1},                # p2 -> feed horse TP
        "missed_gt": {"A": 3 / 4, "E": 1},      # A n = 2; E n = 0 and no prediction -> 1
        "false_positive": {"A": 2 / 3, "C": 1},  # only p0, p7, p8 kept
        "false_negative": {"A": 3 / 4, "B": 1, "D": 0, "E": 1},  # n = TPs: A 2, B 0, C 1, D 0, E 0
    }
    expected_full = {"human_box": 0.1, "object_box": 0.1, "both_boxes": 1 / 90, "association": 0.05,
                     "duplicate": 1 / 90, "interaction": 0.2, "missed_gt": 0.25, "false_positive": 2 / 15,
                     "false_negative": 0.45}
    delta = d.delta_map
    assert set(delta) == set(ERROR_REGISTRY.oracles)
    for oracle, changes in after.items():
        new = ap | changes
        full = sum(new.values()) / 5
        non_rare = (new["A"] + new["B"] + new["C"] + new["D"]) / 4
        assert delta[oracle]["full"] == pytest.approx(full - 0.2), oracle
        assert delta[oracle]["full"] == pytest.approx(expected_full[oracle]), oracle
        assert delta[oracle]["non_rare"] == pytest.approx(non_rare - 0.25), oracle
        assert delta[oracle]["rare"] == pytest.approx(new["E"]), oracle


def test_progressive_fixes_reach_one_and_single_deltas_do_not_sum(d):
    prog = d.progressive()
    assert [p["oracle"] for p in prog] == list(ERROR_REGISTRY.names)
    # human box: C 1 | + object box: D 1/2 | + both boxes: A 5/9 | + association: D 1 |
    # + duplicate: A 2/3 | + interaction: B 1 | + missed GT: A 1, E 1
    expected = [1.5 / 5, 2 / 5, 37 / 90, 23 / 45, 8 / 15, 11 / 15, 1.0]
    assert [p["map"]["full"] for p in prog] == pytest.approx(expected)
    assert prog[2]["delta_map"]["full"] == pytest.approx(37 / 90 - 2 / 5)
    r = d.to_dict()
    assert r["sum_delta_map"] == pytest.approx(0.1 + 0.1 + 1 / 90 + 0.05 + 1 / 90 + 0.2 + 0.25)
    assert r["sum_delta_map"] < 1 - r["map"]                   # Eq. 3: 0.722 ≠ 0.8


def test_result_dict_has_the_design_keys(d):
    r = d.to_dict()
    assert r["map"] == pytest.approx(0.2)
    assert set(r["delta_map"]) == set(ERROR_REGISTRY.oracles) == set(r["error_counts"])
    assert r["delta_map"]["interaction"] == pytest.approx(0.2)
    assert r["error_counts"]["missed_gt"] == 2
    assert r["splits"]["non_rare"]["map_after"]["false_negative"] == pytest.approx(0.5625)
    json.dumps(r)  # JSON-able


def test_errors_frame_lists_every_prediction_and_missed_gt(d):
    f = d.errors_frame()
    preds = f[f.side == "prediction"]
    assert preds["score"].tolist() == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    assert preds["category"].tolist() == KINDS
    row = preds[preds.category == "interaction"].iloc[0]
    assert (row.verb, row.gt_verb, row.gt_row) == ("hold", "feed", 1)
    missed = f[f.side == "ground_truth"]
    assert missed["row"].tolist() == [4, 7] and set(missed.category) == {"missed_gt"}


def test_class_ap_matches_hand_values():
    # class 0: TP, FP, TP with 2 GT -> 1/2 + 2/3·1/2; class 1: no GT, no prediction -> 1; class 2: FP, no GT -> 0
    ap = class_ap(np.array([0, 2, 0, 0]), np.array([1, 0, 0, 1]), np.array([0, 1, 2, 3]), np.array([2, 0, 0]))
    assert ap.tolist() == pytest.approx([1 / 2 + 1 / 3, 1.0, 0.0])


def test_no_interaction_is_removed_by_default_and_other_classes_keep_their_ap():
    gt, pred = scene()
    extra_gt = [("a", HX, OX, "no_interaction", "horse"), ("b", H5, O5, "no_interaction", "horse")]
    extra_pred = [("a", HX, OX, "no_interaction", "horse", 0.95), ("a", H1, O1, "no_interaction", "horse", 0.85),
                  ("b", H5, O5, "no_interaction", "horse", 0.05)]
    gt2, pred2 = _det(GT + extra_gt, False), _det(PRED + extra_pred, True)
    removed = build_diagnosis(gt2, pred2, map_protocol="all-point")
    base = build_diagnosis(gt, pred, map_protocol="all-point")
    assert removed.map == pytest.approx(base.map)
    assert removed.kind_names().tolist() == KINDS
    for oracle, value in base.delta_map.items():
        assert removed.delta_map[oracle] == pytest.approx(value), oracle
    kept = build_diagnosis(gt2, pred2, keep_no_interaction=True, map_protocol="all-point")
    per_kept = {(r["verb"], r["object"]): r["ap"] for r in kept.to_dict()["per_class"]}
    per_base = {(r["verb"], r["object"]): r["ap"] for r in base.to_dict()["per_class"]}
    # no_interaction horse: n = 2; .95 TP, .85 FP, .05 TP -> 1/2 + 1/2·2/3
    assert per_kept.pop(("no_interaction", "horse")) == pytest.approx(1 / 2 + 1 / 2 * 2 / 3)
    assert per_kept == pytest.approx(per_base)
    # kept: the no_interaction prediction on P1 is an interaction error (§6.6), not association
    assert kept.kind_names()[len(PRED) + 1] == "interaction"


def test_pair_localization_by_hand(d):
    loc = pair_localization(d.scene)
    # GT pairs: P1, P2, (H4, O2), (H3, O3), b, c = 6; detected distinct pairs: (H1,O1) [p0-p2],
    # p3, p4, p5, p6, (H2,O2) p7, (H5,O5) p8 = 7; matched: P1, P2, b
    assert (loc["n_pairs"], loc["n_gt_pairs"]) == (7, 6)
    assert loc["pairs_per_image"] == pytest.approx(7 / 3)
    assert loc["recall"] == pytest.approx(3 / 6) and loc["precision"] == pytest.approx(3 / 7)
    assert loc["splits"]["rare"]["recall"] == 0.0                 # the wash-cup pair
    assert loc["splits"]["non_rare"]["recall"] == pytest.approx(3 / 5)
    # first-stage pairs given separately (no verbs used, no scores)
    pairs = Detections.from_arrays(["a", "a", "c"], [H1, H3, HX], [O1, O3, OX], ["x", "x", "x"],
                                   ["horse", "cup", "cup"])
    loc2 = pair_localization(d.scene, pairs)
    assert loc2["recall"] == pytest.approx(2 / 6) and loc2["precision"] == pytest.approx(2 / 3)


def test_interaction_classification_by_hand(d):
    ic = interaction_classification(d.scene, d)
    # negative scores 1 − max: pair1 .1, p3 .4, p4 .5, p5 .6, p6 .7, p7 .8, p8 .9; negatives p3–p6:
    # ranked p8 F, p7 F, p6 T, p5 T, p4 T, p3 T, pair1 F -> envelope 4/6 at each TP -> AP 2/3
    assert ic["negative_ap"] == pytest.approx(2 / 3) and ic["n_negative_pairs"] == 4
    # ride: n = 3 (g0, g2, g6); p0 TP, p1 FP (second ride on the pair), p7 TP, p8 TP; precisions
    #   1, 1/2, 2/3, 3/4, interpolated envelope at p7 is 3/4 -> 1/3 + 1/3·3/4 + 1/3·3/4 = 5/6;
    #   feed: 0; hold: p2 FP -> 0
    assert ic["per_verb"] == pytest.approx({"ride": 5 / 6, "feed": 0.0, "hold": 0.0})
    assert ic["interaction_map"] == pytest.approx(5 / 18)
    # per HOI class: ride horse 1/2 + 2/3·1/2, feed horse 0, ride bicycle 1, hold bicycle 0
    assert ic["splits"]["full"]["interaction_map"] == pytest.approx((5 / 6 + 1) / 4)
    assert ic["splits"]["rare"]["interaction_map"] is None


def test_bad_input_raises_input_error():
    gt, pred = scene()
    with pytest.raises(InputError, match="oracles must be one of .*, got .nope."):
        build_diagnosis(gt, pred, oracles=("nope",))
    with pytest.raises(InputError, match="iou"):
        build_diagnosis(gt, pred, iou=0)
    with pytest.raises(InputError, match="no 'score'"):
        build_diagnosis(gt, _det([r[:5] + (None,) for r in PRED], False))
    only_ni = _det([("a", H1, O1, "no_interaction", "horse")], False)
    with pytest.raises(InputError, match="no_interaction"):
        build_diagnosis(only_ni, pred)


def _small_workload(seed=3):
    from benchmarks.score_hico_scale import workload
    return workload(150, 500, 40, seed=seed)


@pytest.mark.parametrize("protocol", ["official", "all-point"])
def test_exhaustive_exclusive_and_same_map_as_score_on_a_random_workload(protocol):
    from metrics.detection._scoring import score_dict
    gt, pred = _small_workload()
    dk = build_diagnosis(gt, pred, keep_no_interaction=True, map_protocol=protocol)
    r = score_dict(gt, pred, map_protocol=protocol)
    for sub in ("full", "rare", "non_rare"):
        assert dk.map[sub] == pytest.approx(r["hico"]["default"][sub], abs=1e-12), sub
    for diag, n_classes in ((dk, 600), (build_diagnosis(gt, pred, map_protocol=protocol), 520)):
        c = diag.error_counts()["full"]
        assert sum(c[k] for k in ERROR_REGISTRY.prediction_kinds) == len(diag.kind)
        assert c["false_positive"] == len(diag.kind) - c["true_positive"]
        # fixing everything gives AP 1 to every class with ground truth; officially the mean
        # runs over the whole HICO-DET class set (600, or 520 without no_interaction)
        share = 1.0 if protocol == "all-point" else (diag.scene.n_gt > 0).sum() / n_classes
        assert diag.progressive()[-1]["map"]["full"] == pytest.approx(share)
        # every oracle helps (or is neutral)
        assert min(v["full"] for v in diag.delta_map.values()) >= -1e-12


def test_official_protocol_on_the_scene():
    # 11-point APs of the scene: A ride horse (n = 3) p0 TP .9, p1 FP .8, p6 FP .3, p8 TP .1:
    #   P = 1 for t ≤ 1/3 (4 thresholds: 0, .1, .2, .3), P = 2/4 for 1/3 < t ≤ 2/3 (.4, .5, .6)
    #   -> (4 + 3/2)/11 = 1/2; C ride bicycle (n = 1) p3 FP, p7 TP -> P 1/2 at every t -> 1/2
    # the mean runs over HICO-DET's 520 interaction classes (no_interaction left out)
    d = build_diagnosis(*scene())
    assert d.map["full"] == pytest.approx((1 / 2 + 1 / 2) / 520)
    assert d.scene.class_totals == {"full": 520, "rare": 138 - 0 - _rare_no_interaction(),
                                    "non_rare": 520 - 138 + _rare_no_interaction()}


def _rare_no_interaction():
    from metrics.datasets.hico_det._vocabulary import hico
    c = hico().classes
    return int(((c["verb"] == "no_interaction") & (c["rare"] == 1)).sum())


def test_no_interaction_only_images_are_left_out():
    gt, pred = scene()
    # image z: only no_interaction ground truth; its ride-horse prediction would be an FP
    gt2 = _det(GT + [("z", H1, O1, "no_interaction", "horse")], False)
    pred2 = _det(PRED + [("z", H1, O1, "ride", "horse", 0.99)], True)
    removed = build_diagnosis(gt2, pred2, map_protocol="all-point")
    assert removed.scene.images_left_out == 1 and removed.map["full"] == pytest.approx(0.2)
    kept_img = build_diagnosis(gt2, pred2, keep_no_interaction=True, map_protocol="all-point")
    assert kept_img.scene.images_left_out == 0 and kept_img.map["full"] < 0.2


# ---------------------------------------------------------------------------- command line
def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", "diagnose", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_cli_json_report_and_several_models(tmp_path):
    gt, pred = scene()
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "m1.jsonl")
    worse = _det([r[:5] + (1 - r[5],) for r in PRED], True)   # reversed ranking
    write_jsonl(worse, tmp_path / "m2.jsonl")
    out = run("--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "m1.jsonl"), str(tmp_path / "m2.jsonl"),
              "--json", str(tmp_path / "r.json"), "--out", str(tmp_path / "rep"), "--map-protocol", "all-point")
    assert out.returncode == 0, out.stderr
    assert "Δ interaction" in out.stdout and "20.00" in out.stdout
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["map"] == pytest.approx(0.2) and r["delta_map"]["missed_gt"] == pytest.approx(0.25)
    assert r["error_counts"]["association"] == 1 and r["model"] == "m1"
    assert set(r["models"]) == {"m1", "m2"}
    # m2 reverses the ranking: A p8 TP .9, p6 FP .7, p1 TP .2 (now above p0), p0 duplicate .1
    #   -> 1/3 + 1/3·2/3 = 5/9; C p7 TP .8, p3 FP .4 -> 1; B, D, E 0 -> mAP (5/9 + 1) / 5
    assert r["models"]["m2"]["map"] == pytest.approx(14 / 45)
    assert r["models"]["m2"]["error_counts"]["duplicate"] == 1
    for name in ("report.html", "delta_map.png", "delta_map.csv", "error_counts.csv", "progressive.csv",
                 "pair_localization.csv", "interaction_classification.csv", "errors_m1.csv", "errors_m2.csv"):
        assert (tmp_path / "rep" / name).stat().st_size > 0, name
    assert "data:image/png;base64" in (tmp_path / "rep" / "report.html").read_text()


@pytest.mark.parametrize("extra,message", [
    (["--name", "one", "two"], "--name gives 2 names for 1 prediction files"),
    (["--iou", "1.5"], "--iou: must be a number in (0, 1]"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path, extra, message):
    gt, pred = scene()
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "p.jsonl")
    out = run("--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "p.jsonl"), *extra)
    assert out.returncode == 2 and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_cli_missing_file_and_unscored_predictions(tmp_path):
    gt, pred = scene()
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    out = run("--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "nope.jsonl"))
    assert out.returncode == 2 and "no such file" in out.stderr
    write_jsonl(pred, tmp_path / "p.jsonl", with_scores=False)
    out = run("--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "p.jsonl"))
    assert out.returncode == 2 and "no 'score'" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_prediction_pair_candidates_read_off_the_edges_equal_the_direct_computation():
    """The §4.1 candidates of the distinct prediction pairs, taken from the scene's edges, are
    those :func:`_pair_candidates` computes from the boxes (same rows, order and IoUs)."""
    from metrics.diagnosis._scene import prepare
    from metrics.diagnosis._subtasks import _pair_candidates, _prediction_pair_candidates, _prediction_pairs
    rng = np.random.default_rng(16)
    images = [f"i{k}" for k in range(30)]
    n_gt, n_pred = 120, 900
    gt_rows = rng.integers(0, 30, n_gt)
    base = rng.uniform(0, 50, (n_gt, 4)).round()
    gt_h = np.c_[base[:, :2], base[:, :2] + 20 + base[:, 2:]]
    gt_o = gt_h + rng.integers(-5, 30, (n_gt, 1))
    gt_h[1::3], gt_o[1::3] = gt_h[0::3][:len(gt_h[1::3])], gt_o[0::3][:len(gt_o[1::3])]   # shared pairs
    gt_rows[1::3] = gt_rows[0::3][:len(gt_rows[1::3])]
    verbs = np.array(["ride", "hold", "feed", "pet"])
    objects = np.array(["horse", "dog"])
    gt = Detections.from_arrays(np.array(images)[gt_rows], gt_h, gt_o, verbs[rng.integers(0, 4, n_gt)],
                                objects[rng.integers(0, 2, n_gt)])
    src = rng.integers(0, n_gt, n_pred)
    jitter = lambda b: b + rng.integers(-6, 7, b.shape) * (rng.random((len(b), 1)) < 0.7)
    pred = Detections.from_arrays(np.array(images)[gt_rows[src]], jitter(gt_h[src]), jitter(gt_o[src]),
                                  verbs[rng.integers(0, 4, n_pred)], objects[rng.integers(0, 2, n_pred)],
                                  rng.random(n_pred).round(2))
    s = prepare(gt, pred, map_protocol="all-point")
    first = _prediction_pairs(s)[1]
    direct = _pair_candidates(s, s.pred_image[first], s.pred_human[first], s.pred_object_box[first],
                              s.pred_obj[first])
    fast = _prediction_pair_candidates(s)
    assert len(direct[2]) > 50
    for a, b in zip(direct, fast):
        assert np.array_equal(a, b)


def test_unique_pairs_equal_pandas_grouping_of_the_ten_columns():
    from metrics.diagnosis._subtasks import unique_pairs
    rng = np.random.default_rng(17)
    n = 3000
    image = rng.integers(0, 20, n)
    human, obj_box = rng.integers(0, 3, (n, 4)).astype(float), rng.integers(0, 3, (n, 4)).astype(float)
    human[rng.random(n) < 0.2, 0] = -0.0                  # -0.0 and 0.0 are one value
    obj = rng.integers(0, 2, n)
    pid, first = unique_pairs(image, human, obj_box, obj)
    rows = pd.DataFrame(np.column_stack([image, human, obj_box, obj]).astype(np.float64))
    expected = rows.groupby(list(rows.columns), sort=False).ngroup().to_numpy()
    assert len(first) < n and np.array_equal(pid, expected)
    assert np.array_equal(first, [np.flatnonzero(expected == k)[0] for k in range(len(first))])
    assert (pid.tolist(), first.tolist()) == reference.unique_pairs(image, human, obj_box, obj)


def test_unique_pairs_tell_apart_two_rows_sharing_a_hash_key():
    """Two rows built to share the 64-bit key (the last two values offset against each other)
    stay two pairs: the check finds them and pandas groups the columns."""
    from metrics.diagnosis._subtasks import unique_pairs
    m = np.uint64(0x9E3779B97F4A7C15)
    x = np.array([7.0]).view(np.uint64)[0]
    y = np.array([1.0]).view(np.uint64)[0]
    with np.errstate(over="ignore"):
        x2, y2 = x + np.uint64(1), y - m                  # (x + 1)·m + (y − m) = x·m + y
    other = np.array([x2, y2], dtype=np.uint64).view(np.float64)
    image = np.array([0, 0, 0])
    human = np.zeros((3, 4))
    obj_box = np.array([[1.0, 2, 3, 7.0], [1.0, 2, 3, other[0]], [1.0, 2, 3, 7.0]])
    obj = np.array([1.0, other[1], 1.0])
    pid, first = unique_pairs(image, human, obj_box, obj)
    assert pid.tolist() == [0, 1, 0] and first.tolist() == [0, 1]

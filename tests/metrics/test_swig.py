"""Conformance: SWIG-HOI's vectorized evaluation (metrics.datasets.swig_hoi) equals a plain
transcription of the released evaluator (tests/reference/swig_eval.py) on generated files in the
released formats; a hand-worked workload; the ``swig`` command as a process; bad inputs."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from metrics.core._errors import InputError
from metrics.datasets.swig_hoi import _readers as readers
from metrics.datasets.swig_hoi._evaluation import CAP, evaluate, swig_ap
from tests.projectpaths import ROOT
from tests.reference import swig_eval as ref

# a small vocabulary: 4 actions, 5 object categories (0 = person); every (action, object) pair is
# an interaction; frequency and evaluation flags vary (interaction 7 is known but not evaluated)
N_ACTIONS, N_OBJECTS = 4, 5
PAIRS = [(a, o) for a in range(N_ACTIONS) for o in range(N_OBJECTS)]
FREQUENCY = [2, 1, 0, 2, 1, 2, 0, 1, 2, 2, 1, 0, 2, 1, 2, 1, 0, 2, 2, 1]
EVALUATED = [1] * 7 + [0] + [1] * 12
INTERACTIONS = [{"id": k, "name": f"a{a} o{o}", "action_id": a, "object_id": o, "frequency": f,
                 "evaluation": e} for k, ((a, o), f, e) in enumerate(zip(PAIRS, FREQUENCY, EVALUATED))]
ACTION_ID = [a for a, _ in PAIRS]
NEVER_PREDICTED = (18, 19)      # in the ground truth, never in the predictions
OBJECT_ID = [o for _, o in PAIRS]


def _box(rng, integer):
    x, y = rng.integers(0, 80, 2)
    w, h = rng.integers(1, 40, 2)
    box = [x, y, x + w, y + h]
    if integer:
        return [int(v) for v in box]
    return [float(v + rng.random()) for v in box]     # many decimals: float32 and rounding matter


def _workload(seed, *, n_images=30, many=0):
    """Annotation JSON and the write_hoi_results list with every edge case the evaluator meets:
    integer and float boxes, repeated (pair, action) annotations, a person as the object,
    images without HOIs, duplicates, confidence ties, NaN scores, NaN / inverted boxes,
    detections on images without ground truth, interactions never predicted or not evaluated;
    ``many`` extra detections of one interaction pass the cap of 19,999."""
    rng = np.random.default_rng(seed)
    gt_json = []
    for i in range(n_images):
        integer = rng.random() < 0.4
        n_boxes = int(rng.integers(1, 6))
        boxes = [{"bbox": _box(rng, integer), "category_id": 0 if b == 0 or rng.random() < 0.3
                  else int(rng.integers(1, N_OBJECTS)), "aux_category_id": []} for b in range(n_boxes)]
        persons = [b for b, box in enumerate(boxes) if box["category_id"] == 0]
        hois = []
        if rng.random() > 0.1:                                           # some images: no HOI at all
            for _ in range(int(rng.integers(1, 6))):
                hois.append({"subject_id": int(rng.choice(persons)), "object_id": int(rng.integers(n_boxes)),
                             "action_id": int(rng.integers(N_ACTIONS))})
                if rng.random() < 0.2:
                    hois.append(dict(hois[-1]))                          # repeated annotation
        img_id = 2 * i if i == 0 or rng.random() > 0.1 else gt_json[-1]["img_id"]   # an image listed twice
        gt_json.append({"img_id": img_id, "box_annotations": boxes, "hoi_annotations": hois})
    ref_gt = ref.convert_to_hico_dict(ref.load_swig_json(gt_json, N_ACTIONS), ref.swig_meta(INTERACTIONS))
    per_image = {}
    for hoi_id, by_image in ref_gt.items():
        for img, rows in by_image.items():
            per_image.setdefault(img, []).extend((hoi_id, row) for row in rows.tolist())
    images, results = [], []
    for img in range(2 * n_images + 6):                                   # odd ids and the tail: no GT
        dets = []
        mine = per_image.get(img, [])
        for _ in range(int(rng.integers(0, 12))):
            if mine and rng.random() < 0.7:
                hoi_id, row = mine[int(rng.integers(len(mine)))]
                if hoi_id in NEVER_PREDICTED:
                    continue
                box = [v + float(rng.integers(-3, 4)) * (rng.random() < 0.7) for v in row]
            else:
                hoi_id = int(rng.integers(len(PAIRS) - len(NEVER_PREDICTED)))
                box = _box(rng, False) + _box(rng, False)
            score = float(np.round(rng.random(), 1))                      # confidence ties
            u = rng.random()
            if u < 0.03:
                score = float("nan")
            elif u < 0.05:
                box[int(rng.integers(8))] = float("nan")
            elif u < 0.07:
                box[0], box[2] = box[2], box[0]                           # inverted person box
            dets.append([hoi_id, *box, score, int(rng.integers(100))])
            if rng.random() < 0.15:
                dets.append(list(dets[-1]))                               # duplicate detection
        images.append(img)
        results.append(dets)
    if many:      # false positives ranked first, then the true ones past the cap
        img = min(per_image)
        hoi_id, row = per_image[img][0]
        far = (np.array(row) + 500.0).tolist()
        results = [[d for d in ds if d[0] != hoi_id] for ds in results]
        for j in range(many):
            hit = j >= CAP
            results[img].append([hoi_id, *(row if hit else far), 0.5 * rng.random() + (0 if hit else 0.5), 0])
    return gt_json, ref.write_hoi_results(images, results)


def _fast(tmp_path, gt_json, dets, suffix=".pkl"):
    (tmp_path / "gt.json").write_text(json.dumps(gt_json))
    pred = tmp_path / f"pred{suffix}"
    if suffix == ".pkl":
        pred.write_bytes(pickle.dumps(dets))
    else:
        pred.write_text(json.dumps(dets))
    gt = readers.read_ground_truth(tmp_path / "gt.json", action_id=ACTION_ID, object_id=OBJECT_ID,
                                   n_actions=N_ACTIONS, n_objects=N_OBJECTS)
    pred = readers.read_swig_detections(pred, n_interactions=len(PAIRS))
    return evaluate(gt, pred, frequency=FREQUENCY, evaluated=np.array(EVALUATED, bool))


def _assert_equal(result, reference):
    swig_ap_, swig_rec, means = reference
    ids = np.flatnonzero(EVALUATED)
    np.testing.assert_allclose(result.ap[ids], swig_ap_[ids], rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.recall[ids], swig_rec[ids], rtol=0, atol=1e-9)   # NaN == NaN
    for subset, value in means.items():
        assert result.mean(subset) == pytest.approx(value / 100, abs=1e-9, nan_ok=True), subset


@pytest.mark.parametrize("seed", range(8))
def test_fast_equals_released_evaluator(tmp_path, seed):
    gt_json, dets = _workload(seed)
    reference = ref.evaluate(gt_json, dets, INTERACTIONS, N_ACTIONS)
    result = _fast(tmp_path, gt_json, dets)
    _assert_equal(result, reference)
    ap = result.ap[np.flatnonzero(EVALUATED)]
    assert (ap > 0).sum() >= 3 and (ap < 1).sum() >= 3          # the workload is not degenerate


def test_the_workloads_meet_every_edge_case():
    """What the conformance seeds exercise, checked on the generated files themselves."""
    seen = {k: 0 for k in ("nan_score", "nan_box", "tie", "no_gt_image", "never_predicted",
                           "duplicate_gt", "int_image", "float_image", "image_listed_twice")}
    for seed in range(8):
        gt_json, dets = _workload(seed)
        rows = [(img, d) for img, ds in enumerate(dets) for d in ds]
        scores = [d[-2] for _, d in rows]
        seen["nan_score"] += sum(s != s for s in scores)
        seen["nan_box"] += sum(any(v != v for v in d[1:9]) for _, d in rows)
        seen["tie"] += len(scores) - len(set(s for s in scores if s == s))
        gt_images = {g["img_id"] for g in gt_json if g["hoi_annotations"]}
        seen["image_listed_twice"] += len(gt_json) - len({g["img_id"] for g in gt_json})
        seen["no_gt_image"] += sum(img not in gt_images for img, _ in rows)
        seen["never_predicted"] += len(set(range(len(PAIRS))) - {d[0] for _, d in rows})
        for g in gt_json:
            keys = [tuple(h.values()) for h in g["hoi_annotations"]]
            seen["duplicate_gt"] += len(keys) - len(set(keys))
            ints = all(isinstance(v, int) for b in g["box_annotations"] for v in b["bbox"])
            seen["int_image" if ints else "float_image"] += 1
    assert all(count > 0 for count in seen.values()), seen


def test_cap_of_19999_detections_per_interaction(tmp_path):
    gt_json, dets = _workload(11, n_images=4, many=CAP + 500)
    reference = ref.evaluate(gt_json, dets, INTERACTIONS, N_ACTIONS)
    result = _fast(tmp_path, gt_json, dets)
    _assert_equal(result, reference)
    # the cap changes the answer: past it are the only true positives
    gt = readers.read_ground_truth(tmp_path / "gt.json", action_id=ACTION_ID, object_id=OBJECT_ID)
    pred = readers.read_swig_detections(tmp_path / "pred.pkl")
    uncapped = evaluate(gt, pred, frequency=FREQUENCY, evaluated=np.array(EVALUATED, bool), cap=10**9)
    changed = np.flatnonzero(~np.isclose(uncapped.recall, result.recall, equal_nan=True))
    assert len(changed) == 1 and result.recall[changed[0]] == 0 and uncapped.recall[changed[0]] > 0


def test_pickle_of_numpy_arrays_and_scalars(tmp_path):
    """A pickle whose images are float32 arrays and whose scores are NumPy scalars is plain data."""
    gt_json, dets = _workload(5)
    mixed = [np.array(ds, dtype=np.float32) if k % 2 and ds else
             [[*d[:-2], np.float32(d[-2]), d[-1]] for d in ds] for k, ds in enumerate(dets)]
    assert any(isinstance(e, np.ndarray) for e in mixed)
    _assert_equal(_fast(tmp_path, gt_json, mixed), ref.evaluate(gt_json, mixed, INTERACTIONS, N_ACTIONS))


def test_json_and_npz_predictions_give_the_pickle_numbers(tmp_path):
    gt_json, dets = _workload(3)
    dets = [[d for d in ds if d[-2] == d[-2] and all(v == v for v in d)] for ds in dets]   # JSON: no NaN
    from_pickle = _fast(tmp_path, gt_json, dets)
    from_json = _fast(tmp_path, gt_json, dets, ".json")
    detections = readers.read_swig_detections(tmp_path / "pred.pkl")
    readers.write_detections_npz(tmp_path / "pred.npz", detections)
    again = readers.read_swig_detections(tmp_path / "pred.npz")
    for name in ("image", "interaction", "boxes", "score"):
        np.testing.assert_array_equal(getattr(again, name), getattr(detections, name))
    np.testing.assert_array_equal(from_json.ap, from_pickle.ap)
    _assert_equal(from_pickle, ref.evaluate(gt_json, dets, INTERACTIONS, N_ACTIONS))


def test_ground_truth_boxes_go_through_float32_as_the_released_code():
    # xyxy -> xywh (float64) -> x1 + w in float32 -> round(, 3): 1514.3645 becomes 1514.365
    # (float32 857.4043 + 656.9602 = 1514.364502), where round(1514.3645, 3) alone gives 1514.364
    assert readers.released_gt_boxes([[857.4043, 16.7928, 1514.3645, 87.8794]]).tolist() == \
        [[857.404, 16.793, 1514.365, 87.879]]
    assert round(1514.3645, 3) == 1514.364
    # an image whose coordinates are all integers keeps them exactly
    assert readers.released_gt_boxes([[16777217, 0, 16777219, 1]]).tolist() == [[16777217.0, 0, 16777219.0, 1]]


# ---------------------------------------------------------------- worked by hand, real vocabulary
# interaction 0 = injecting syringe (action 169, object 31), 1 = surfing surfboard (349, 55), both
# common and evaluated; SWIG-HOI evaluates 5,539 interactions: 1,391 novel, 2,841 rare, 1,307 common
P, S, Q, B = [0, 0, 10, 10], [10, 0, 20, 10], [30, 0, 40, 10], [50, 0, 60, 10]
HAND_GT = [
    {"img_id": 5, "box_annotations": [{"bbox": P, "category_id": 0}, {"bbox": S, "category_id": 31},
                                      {"bbox": Q, "category_id": 0}, {"bbox": B, "category_id": 55}],
     "hoi_annotations": [{"subject_id": 0, "object_id": 1, "action_id": 169},
                         {"subject_id": 2, "object_id": 3, "action_id": 349}]},
    {"img_id": 7, "box_annotations": [{"bbox": P, "category_id": 0}, {"bbox": S, "category_id": 31}],
     "hoi_annotations": [{"subject_id": 0, "object_id": 1, "action_id": 169}]},
]
HAND_PRED = [[] for _ in range(20000)]
HAND_PRED[5] = [[0, *P, *S, 0.9, 0],                  # d1: true positive of image 5's injecting
                [0, *P, *S, 0.8, 0],                  # d2: its duplicate, a false positive
                [1, *Q, 50, 0, 60, 5, 0.7, 0]]        # d3: surfboard IoU 50 / 100 = 0.5 exactly: a hit
HAND_PRED[7] = [[0, *P, 10, 0, 20, 4.9, 0.95, 0]]     # d4: syringe IoU 49 / 100 < 0.5: false positive
HAND_PRED[9] = [[0, *P, *S, 0.6, 0],                  # d5: an image without ground truth
                [1, *Q, *B, float("nan"), 0]]         # d6: NaN score, ranked first, a false positive
# injecting syringe: d4 FP, d1 TP, d2 FP, d5 FP of 2 GT -> recall 0, .5, .5, .5, precision 0, .5, .33, .25;
#   the levels 0, .1, ..., .5 reach precision .5, the levels .6 ... 1 nothing: AP = 6 × .5 / 11 = 3/11
# surfing surfboard: d6 FP, d3 TP of 1 GT -> recall 0, 1, precision 0, .5: AP = 11 × .5 / 11 = .5
HAND_AP = {0: 3 / 11, 1: 0.5}


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "metrics", "swig", *map(str, argv)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_hand_worked_workload_through_the_command(tmp_path):
    (tmp_path / "swig_test_1000.json").write_text(json.dumps(HAND_GT))
    (tmp_path / "swig_interaction_results.pkl").write_bytes(pickle.dumps(HAND_PRED))
    done = _run("--gt", tmp_path / "swig_test_1000.json", "--pred", tmp_path / "swig_interaction_results.pkl",
                "--json", tmp_path / "out.json", "--per-class", 2)
    assert done.returncode == 0, done.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert set(out) == {"full", "rare", "non_rare", "novel", "ap"}
    assert len(out["ap"]) == 5539
    assert out["ap"]["0"] == pytest.approx(3 / 11, abs=1e-12) and out["ap"]["1"] == pytest.approx(0.5, abs=1e-12)
    assert sum(out["ap"].values()) == pytest.approx(3 / 11 + 0.5, abs=1e-12)
    assert out["full"] == pytest.approx((3 / 11 + 0.5) / (2841 + 1307), abs=1e-12)
    assert out["non_rare"] == pytest.approx((3 / 11 + 0.5) / 1307, abs=1e-12)
    assert out["rare"] == 0 and out["novel"] == 0
    assert "Non-rare" in done.stdout and f"{100 * (3 / 11 + 0.5) / 1307:6.2f}" in done.stdout
    # the same answer from the transcription of the released code
    from metrics.datasets.swig_hoi._vocabulary import swig
    classes = swig().classes
    interactions = [{"id": int(k), "action_id": int(a), "object_id": int(o), "frequency": int(f), "evaluation": int(e)}
                    for k, a, o, f, e in classes[["hoi_id", "action_id", "object_id", "frequency", "evaluated"]]
                    .itertuples(index=False)]
    swig_ap_, _, means = ref.evaluate(HAND_GT, HAND_PRED, interactions, 407)
    assert swig_ap_[0] == pytest.approx(3 / 11) and swig_ap_[1] == pytest.approx(0.5)
    assert means["full"] / 100 == pytest.approx(out["full"], abs=1e-12)


def test_a_code_running_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "gt.json").write_text(json.dumps(HAND_GT))
    (tmp_path / "pred.pkl").write_bytes(pickle.dumps([[], [Evil()]]))
    done = _run("--gt", tmp_path / "gt.json", "--pred", tmp_path / "pred.pkl", "--json", tmp_path / "out.json")
    assert done.returncode == 2 and not marker.exists() and not (tmp_path / "out.json").exists()
    assert done.stderr.count("\n") == 1 and "pred.pkl: refused: the pickle would import" in done.stderr
    assert "io.open" in done.stderr and "nothing in it was run" in done.stderr


def _write(tmp_path, gt=HAND_GT, pred=HAND_PRED, name="pred.pkl"):
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    path = tmp_path / name
    if name.endswith(".pkl"):
        path.write_bytes(pickle.dumps(pred))
    elif name.endswith(".json"):
        path.write_text(json.dumps(pred))
    else:
        np.savez(path, **pred)
    return tmp_path / "gt.json", path


def _image(**change):
    image = json.loads(json.dumps(HAND_GT[0]))
    for key, value in change.items():
        target, field = key.split("__")
        index, _, name = field.partition("_")
        image[target][int(index)][name] = value
    return [image]


BAD = [
    # (ground truth, predictions, file name, expected words)
    (_image(hoi_annotations__0_subject_id=1), HAND_PRED, "pred.pkl",
     "gt.json: image [0] field hoi_annotations[0].subject_id: box 1 is category 31, not a person (0)"),
    (_image(hoi_annotations__0_action_id=1), HAND_PRED, "pred.pkl",
     "gt.json: image [0] field hoi_annotations[0]: action 1 with object category 31 is not a SWIG-HOI interaction"),
    (_image(hoi_annotations__1_object_id=9), HAND_PRED, "pred.pkl",
     "gt.json: image [0] field hoi_annotations[1].object_id must be in 0..3, got 9"),
    (_image(box_annotations__1_bbox=[1, 2, 3]), HAND_PRED, "pred.pkl",
     "gt.json: image [0] field box_annotations[1].bbox must be four numbers"),
    (HAND_GT, [[], [[0, 1, 2, 3]]], "pred.pkl", "pred.pkl: image 1 detection [0] must be 11 numbers"),
    (HAND_GT, [[], [[14130, *P, *S, 0.5, 0]]], "pred.pkl",
     "pred.pkl: image 1 detection [0]: interaction id must be a whole number in 0..14129, got 14130.0"),
    (HAND_GT, [[[2.5, *P, *S, 0.5, 0]]], "pred.json", "pred.json: image 0 detection [0]: interaction id"),
    (HAND_GT, [[[0, *P, 0, 0, float("inf"), 1, 0.5, 0]]], "pred.pkl",
     "pred.pkl: image 0 detection [0]: box coordinates must be finite"),
    (HAND_GT, {"0": []}, "pred.json", "pred.json: must be a list indexed by image id"),
    (HAND_GT, {"image_id": np.array([-1]), "detections": np.zeros((1, 11))}, "pred.npz",
     "pred.npz: array image_id[0] is negative"),
    (HAND_GT, {"detections": np.zeros((1, 11))}, "pred.npz", "pred.npz: no array 'image_id'"),
]


@pytest.mark.parametrize("gt, pred, name, words", BAD, ids=[b[3][:40] for b in BAD])
def test_bad_input_is_one_line_naming_the_file_and_field(tmp_path, capsys, gt, pred, name, words):
    from metrics.cli import main
    gt_path, pred_path = _write(tmp_path, gt, pred, name)
    assert main(["swig", "--gt", str(gt_path), "--pred", str(pred_path), "--json", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "o.json").exists()


def test_function_refuses_mismatched_arrays():
    with pytest.raises(InputError, match="pred_boxes must have shape"):
        swig_ap([0], [0], [[0] * 8], [0], [0], [[0] * 4], [1.0], frequency=[2], evaluated=[True])
    with pytest.raises(InputError, match="pred_interaction must hold interaction ids in 0..0"):
        swig_ap([0], [0], [[0] * 8], [0], [3], [[0] * 8], [1.0], frequency=[2], evaluated=[True])


# ---------------------------------------------------------------- the vocabulary
def test_vocabulary_synsets_resolve_and_flags_agree():
    from metrics.datasets.swig_hoi._vocabulary import interaction_table, swig
    from metrics.vocab import _wordnet as wordnet
    v = swig()
    assert (len(v.verbs), len(v.objects), len(v.classes)) == (407, 1000, 14130)
    for table, pos in ((v.verbs, "v"), (v.objects, "n")):
        assert table["label"].is_unique
        for synset in table["synset"]:
            assert wordnet.pos_of(synset) == pos and wordnet.gloss(synset)
    assert v.object_synset("person") == "person.n.01" and v.object_synset("car") == "car.n.01"
    # two categories named "ball" keep their own nouns
    assert {v.object_synset("ball_(ball.n.01)"), v.object_synset("ball_(ball.n.03)")} == {"ball.n.01", "ball.n.03"}
    t = interaction_table()
    c = v.classes
    assert np.array_equal(c["rare"] == 1, t["frequency"] == 1) and np.array_equal(c["novel"] == 1, t["frequency"] == 0)
    counts = {f: int(np.sum(t["evaluated"] & (t["frequency"] == f))) for f in (0, 1, 2)}
    assert counts == {0: 1391, 1: 2841, 2: 1307}
    assert list(c.loc[0, ["verb", "object"]]) == ["injecting", "syringe"]
    assert v.verbs["label"][t["action_id"][0]] == "injecting" and v.objects["label"][t["object_id"][0]] == "syringe"


def test_not_a_pickle_is_one_line_and_empty_files_score_zero(tmp_path, capsys):
    from metrics.cli import main
    (tmp_path / "gt.json").write_text("[]")
    (tmp_path / "pred.pkl").write_bytes(b"garbage")
    assert main(["swig", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "pred.pkl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pred.pkl: not a readable pickle" in err
    (tmp_path / "pred.pkl").write_bytes(pickle.dumps([]))
    assert main(["swig", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "pred.pkl"),
                 "--json", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    assert (out["full"], out["rare"], out["non_rare"], out["novel"]) == (0, 0, 0, 0)
    assert set(out["ap"].values()) == {0}      # no detections: AP 0 (calc_ap l.743-744)


def _hois_out(tmp_path, pred):
    """``metrics swig --hois-out`` on the hand-worked ground truth and ``pred``: (process, hois key)."""
    (tmp_path / "gt.json").write_text(json.dumps(HAND_GT))
    (tmp_path / "pred.pkl").write_bytes(pickle.dumps(pred))
    done = _run("--gt", tmp_path / "gt.json", "--pred", tmp_path / "pred.pkl", "--hois-out", tmp_path / "hois",
                "--json", tmp_path / "out.json")
    assert done.returncode == 0, done.stderr
    return done, json.loads((tmp_path / "out.json").read_text())["hois"]


def test_an_inverted_predicted_box_is_skipped_and_counted_not_refused(tmp_path):
    """The released evaluator accepts a box with x2 < x1 (IoU 0); the HOI format does not: the
    detection is left out of pred.jsonl and counted, as a NaN score is."""
    pred = [list(rows) for rows in HAND_PRED]
    pred[9] = pred[9] + [[0, *P, 30, 30, 20, 40, 0.5, 0]]     # object box x2 = 20 < x1 = 30
    done, written = _hois_out(tmp_path, pred)
    assert written["pred"]["hois"] == 5
    assert written["pred"]["dropped_without_score"] == written["pred"]["dropped_invalid_box"] == 1
    assert "1 with an invalid box" in done.stdout


def test_official_files_become_hois_that_score_with_the_swig_vocabulary(tmp_path):
    """--hois-out writes the hand-worked files as HOIs (the NaN-scored d6 left out); scored the
    SHOE way on SWIG-HOI's vocabulary with all-point AP and continuous IoU:
    injecting syringe: d4 FP (object IoU 0.49), d1 TP, d2 FP, d5 FP of 2 GT -> AP = 1/2 · 1/2 = 0.25;
    surfing surfboard: d3 TP (IoU exactly 0.5) of 1 GT -> AP 1; mAP (0.25 + 1) / 2 = 0.625."""
    _, written = _hois_out(tmp_path, HAND_PRED)
    assert written["gt"]["hois"] == 3 and written["pred"]["hois"] == 5
    assert written["pred"]["dropped_without_score"] == 1
    first = json.loads((tmp_path / "hois" / "gt.jsonl").read_text().splitlines()[0])
    assert first["image"] == "5" and first["hois"][0]["verb"] == "injecting" and first["hois"][0]["object"] == "syringe"
    scored = subprocess.run([sys.executable, "-m", "metrics", "score", "--dataset", "swig-hoi", "--gt",
                             tmp_path / "hois" / "gt.jsonl", "--pred", tmp_path / "hois" / "pred.jsonl",
                             "--map-protocol", "all-point", "--json", tmp_path / "score.json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert scored.returncode == 0, scored.stderr
    out = json.loads((tmp_path / "score.json").read_text())
    per = {(c["verb"], c["object"]): c["ap"] for c in out["per_class"]}
    assert per == {("injecting", "syringe"): pytest.approx(0.25), ("surfing", "surfboard"): pytest.approx(1.0)}
    assert out["map"] == pytest.approx(0.625) and out["params"]["dataset"] == "swig-hoi"
    # both classes are common (frequency 2) and evaluated: Non-rare holds them, Rare and Novel none
    assert list(out["splits"]) == ["full", "rare", "non_rare", "novel"]
    assert out["splits"]["non_rare"]["n_classes"] == 2 and out["splits"]["non_rare"]["map"] == pytest.approx(0.625)
    assert out["splits"]["rare"]["n_classes"] == out["splits"]["novel"]["n_classes"] == 0
    assert out["resolution"]["verb"]["pred"]["by_kind"]["label"]["labels"] == 2

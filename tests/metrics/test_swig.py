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

from metrics.core.errors import InputError
from metrics.datasets.swig_hoi import readers
from metrics.datasets.swig_hoi.evaluation import CAP, evaluate, swig_ap
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
        gt_json.append({"img_id": 2 * i, "box_annotations": boxes, "hoi_annotations": hois})
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
    pred = readers.read_detections(pred, n_interactions=len(PAIRS))
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
                           "duplicate_gt", "int_image", "float_image")}
    for seed in range(8):
        gt_json, dets = _workload(seed)
        rows = [(img, d) for img, ds in enumerate(dets) for d in ds]
        scores = [d[-2] for _, d in rows]
        seen["nan_score"] += sum(s != s for s in scores)
        seen["nan_box"] += sum(any(v != v for v in d[1:9]) for _, d in rows)
        seen["tie"] += len(scores) - len(set(s for s in scores if s == s))
        gt_images = {g["img_id"] for g in gt_json if g["hoi_annotations"]}
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
    pred = readers.read_detections(tmp_path / "pred.pkl")
    uncapped = evaluate(gt, pred, frequency=FREQUENCY, evaluated=np.array(EVALUATED, bool), cap=10**9)
    changed = np.flatnonzero(~np.isclose(uncapped.recall, result.recall, equal_nan=True))
    assert len(changed) == 1 and result.recall[changed[0]] == 0 and uncapped.recall[changed[0]] > 0


def test_json_and_npz_predictions_give_the_pickle_numbers(tmp_path):
    gt_json, dets = _workload(3)
    dets = [[d for d in ds if d[-2] == d[-2] and all(v == v for v in d)] for ds in dets]   # JSON: no NaN
    from_pickle = _fast(tmp_path, gt_json, dets)
    from_json = _fast(tmp_path, gt_json, dets, ".json")
    detections = readers.read_detections(tmp_path / "pred.pkl")
    readers.write_detections_npz(tmp_path / "pred.npz", detections)
    again = readers.read_detections(tmp_path / "pred.npz")
    for name in ("image", "interaction", "boxes", "score"):
        np.testing.assert_array_equal(getattr(again, name), getattr(detections, name))
    np.testing.assert_array_equal(from_json.ap, from_pickle.ap)
    _assert_equal(from_pickle, ref.evaluate(gt_json, dets, INTERACTIONS, N_ACTIONS))

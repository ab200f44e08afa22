"""Property-based tests (hypothesis) of the scorers' invariants, through metrics.detection._scoring.

- every score lies in [0, 1];
- the order of images, and the order of predictions within an image, does not matter
  (scores are drawn distinct, so no tie-breaking by file order is involved);
- adding an exact duplicate of a prediction never raises mAP or SHOE mAP. Ground-truth boxes
  sit in separate cells of a grid (IoU 0 between any two), so a prediction can match at most one
  ground truth and the duplicate can only be a false positive — with overlapping ground truths
  of one class, a duplicate may legitimately match the second one.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.detection._detections import Detections
from metrics.detection._scoring import score_dict

VERBS = ["ride", "hold", "push", "sit_on", "walk"]
OBJECTS = ["horse", "bicycle", "cup", "bench", "dog"]
CELL = 100.0
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
KEYS = ("map", "shoe_map", "shoe_mf1", "gt_miss_rate", "pred_miss_rate")


def cell_box(cell: int, jitter=(0.0, 0.0, 0.0, 0.0)) -> list[float]:
    x, y = (cell % 4) * CELL, (cell // 4) * CELL
    return [x + 10 + jitter[0], y + 10 + jitter[1], x + 60 + jitter[2], y + 60 + jitter[3]]


jitter = st.tuples(*[st.floats(-8, 8, allow_nan=False)] * 4)


@st.composite
def scenes(draw):
    """(gt rows, pred rows); a row is (image, human_box, object_box, verb, object, score)."""
    n_images = draw(st.integers(1, 4))
    gt, pred = [], []
    for i in range(n_images):
        name = f"img{i}.jpg"
        cells = draw(st.lists(st.integers(0, 15), min_size=1, max_size=3, unique=True))
        for c in cells:
            gt.append((name, cell_box(c), cell_box(c, (1, 1, 1, 1)), draw(st.sampled_from(VERBS)),
                       draw(st.sampled_from(OBJECTS)), None))
        for _ in range(draw(st.integers(0, 4))):
            c = draw(st.sampled_from(cells)) if draw(st.booleans()) else draw(st.integers(0, 15))
            pred.append((name, cell_box(c, draw(jitter)), cell_box(c, draw(jitter)),
                         draw(st.sampled_from(VERBS)), draw(st.sampled_from(OBJECTS)), None))
    scores = draw(st.lists(st.integers(1, 10**6), min_size=len(pred), max_size=len(pred), unique=True))
    pred = [row[:5] + (s / 10**6,) for row, s in zip(pred, scores)]
    return gt, pred


def detections(rows, with_scores: bool) -> Detections:
    if not rows:
        return Detections.from_arrays([], np.zeros((0, 4)), np.zeros((0, 4)), [], [],
                                      np.zeros(0) if with_scores else None)
    image, hb, ob, verb, obj, score = zip(*rows)
    return Detections.from_arrays(list(image), np.array(hb), np.array(ob), list(verb), list(obj),
                                  np.array(score, dtype=float) if with_scores else None)


def scores(gt_rows, pred_rows) -> dict:
    result = score_dict(detections(gt_rows, False), detections(pred_rows, True), delta=0.0)
    return {k: result[k] for k in KEYS}


def by_image_order(rows, order):
    rank = {name: k for k, name in enumerate(order)}
    return sorted(rows, key=lambda r: rank[r[0]])  # stable: keeps the order within an image


@SETTINGS
@given(scenes())
def test_scores_lie_in_the_unit_interval(scene):
    gt, pred = scene
    for key, value in scores(gt, pred).items():
        if value is None:
            continue
        # the official 11-point AP adds p / 11 eleven times (detection.ap.eleven_point_ap, as the
        # MATLAB loop does), so a perfect class sums to 1.0000000000000002, not 1.0
        assert 0.0 <= value <= 1.0 + 1e-12 and not math.isnan(value), (key, value)


@SETTINGS
@given(scenes(), st.randoms(use_true_random=False))
def test_permuting_images_and_predictions_leaves_scores_unchanged(scene, rnd):
    gt, pred = scene
    before = scores(gt, pred)
    images = sorted({r[0] for r in gt})
    rnd.shuffle(images)
    shuffled_pred = list(pred)
    rnd.shuffle(shuffled_pred)  # any order of predictions, across and within images
    after = scores(by_image_order(gt, images), by_image_order(shuffled_pred, images))
    for key in KEYS:
        if before[key] is None:
            assert after[key] is None
        else:
            assert math.isclose(before[key], after[key], abs_tol=1e-12), (key, before[key], after[key])


@SETTINGS
@given(scenes(), st.integers(0, 10**6))
def test_an_exact_duplicate_prediction_never_raises_map(scene, pick):
    gt, pred = scene
    if not pred:
        return
    before = scores(gt, pred)
    dup = pred[pick % len(pred)]
    after = scores(gt, pred + [dup])
    for key in ("map", "shoe_map"):
        assert after[key] <= before[key] + 1e-12, (key, before[key], after[key])

"""Conformance: the vectorized official HICO-DET mAP equals a plain transcription of
ywchao/ho-rcnn's VOCevaldet_bboxpair.m / eval_one.m (tests/reference/hico_official.py)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.datasets.hico_det._vocabulary import hico
from metrics.detection import _scoring as S
from metrics.detection._ap import RECALL_THRESHOLDS, eleven_point_ap
from metrics.detection._detections import Detections
from tests.reference.hico_official import eval_one, matlab_colon_0_01_1

# a few HICO-DET classes, two sharing an object (Known-Object keeps both in horse images)
CLASSES = [("ride", "horse"), ("feed", "horse"), ("hold", "cup"), ("sit_on", "chair"),
           ("ride", "bicycle"), ("throw", "frisbee")]


def _box(rng, small=False):
    x, y = rng.integers(0, 60, 2)
    w, h = (rng.integers(1, 4, 2) if small else rng.integers(4, 40, 2))
    return [float(x), float(y), float(x + w), float(y + h)]


def _workload(seed):
    rng = np.random.default_rng(seed)
    n_img = 25
    gt_rows, pred_rows = [], []
    for i in range(n_img - 5):            # the last 5 images have predictions only
        for _ in range(rng.integers(1, 5)):
            v, o = CLASSES[rng.integers(0, len(CLASSES) - 1)]   # throw frisbee never in the GT
            h, ob = _box(rng, small=rng.random() < .15), _box(rng, small=rng.random() < .15)
            gt_rows.append((f"im{i}", h, ob, v, o))
            if rng.random() < .3:       # a second, overlapping ground truth of the same class
                gt_rows.append((f"im{i}", [c + rng.integers(0, 3) for c in h], ob, v, o))
    for i in range(n_img):
        img = f"im{i}"
        mine = [r for r in gt_rows if r[0] == img]
        for _ in range(rng.integers(0, 8)):
            if mine and rng.random() < .7:
                _, h, ob, v, o = mine[rng.integers(len(mine))]
                h = [c + rng.integers(-4, 5) for c in h]
                ob = [c + rng.integers(-4, 5) for c in ob]
                h[2], h[3] = max(h[2], h[0]), max(h[3], h[1])
                ob[2], ob[3] = max(ob[2], ob[0]), max(ob[3], ob[1])
            else:
                h, ob = _box(rng), _box(rng)
                v, o = CLASSES[rng.integers(len(CLASSES))]
            score = float(np.round(rng.random(), 1))          # many confidence ties
            pred_rows.append((img, [float(c) for c in h], [float(c) for c in ob], v, o, score))
    gt = Detections.from_arrays(*map(list, zip(*gt_rows)))
    pred = Detections.from_arrays(*map(list, zip(*pred_rows)))
    return gt, pred


def _reference(gt, pred, images):
    """Feed the transcription exactly as eval_one.m builds its inputs."""
    vocab = hico()
    hoi = {(v, o): int(i) for i, v, o in zip(vocab.classes["hoi_id"], vocab.classes["verb"], vocab.classes["object"])}
    index = {name: k for k, name in enumerate(images)}
    gt_by_class = [dict() for _ in range(600)]
    objects_in = {}
    for i, h, o, v, ob in zip(gt.images[gt.image], gt.human_box, gt.object_box, gt.verb, gt.object):
        gt_by_class[hoi[(v, ob)]].setdefault(index[i], []).append(list(h) + list(o))
        objects_in.setdefault(ob, set()).add(index[i])
    det_by_class = [[] for _ in range(600)]
    rows = sorted(range(len(pred)), key=lambda r: index[pred.images[pred.image[r]]])   # image by image
    for r in rows:
        c = hoi[(pred.verb[r], pred.object[r])]
        det_by_class[c].append((index[pred.images[pred.image[r]]],
                                list(pred.human_box[r]) + list(pred.object_box[r]), pred.score[r]))
    ko = [objects_in.get(o, set()) for o in vocab.classes["object"]]
    return (eval_one(gt_by_class, det_by_class, len(images)),
            eval_one(gt_by_class, det_by_class, len(images), known_object_images=ko))


def test_thresholds_are_matlabs_colon():
    assert RECALL_THRESHOLDS.tolist() == matlab_colon_0_01_1()
    # MATLAB's 0.6 and 0.7 are the doubles nearest 0.6 and 0.7; numpy's arange is off by one ulp
    assert RECALL_THRESHOLDS[6] == 0.6 and RECALL_THRESHOLDS[7] == 0.7
    assert np.arange(0, 1.1, 0.1)[6] != 0.6


def test_recall_exactly_at_a_tenth():
    # 10 GT, 3 TPs first: recall 3/10 = 0.3 < MATLAB's 0.30000000000000004, so P(t=.3) comes
    # from later ranks: ranks 1-3 TP, 4 FP, 5 TP -> prec at rec .4 is 4/5.
    # t = 0, .1, .2: P = 1; t = .3(+1 ulp), .4: P = .8; t ≥ .5: 0 -> AP = (3 + 2·.8)/11
    # (with an exact 0.3 threshold it would be (4 + .8)/11)
    tp = np.array([1, 1, 1, 0, 1], dtype=bool)
    ap, rec = eleven_point_ap(np.zeros(5, dtype=np.int64), tp, np.array([10]))
    assert ap[0] == pytest.approx((3 + 2 * 0.8) / 11, abs=1e-12) and rec[0] == pytest.approx(0.4)


@pytest.mark.parametrize("seed", range(12))
def test_official_map_equals_the_transcription(seed):
    gt, pred = _workload(seed)
    ev = S.evaluate(gt, pred)
    images = list(dict.fromkeys(list(gt.images) + list(pred.images)))
    (ap_def, rec_def), (ap_ko, rec_ko) = _reference(gt, pred, images)
    ids = ev.hico.classes["hoi_id"].astype(int).to_numpy()
    assert sorted(ids.tolist()) == list(range(600))
    for mine, ref in ((ev.hico.default_ap, ap_def), (ev.hico.ko_ap, ap_ko),
                      (ev.hico.default_rec, rec_def), (ev.hico.ko_rec, rec_ko)):
        np.testing.assert_allclose(mine, np.asarray(ref)[ids], rtol=0, atol=1e-9, equal_nan=True)
    r = S.score_dict(gt, pred)
    assert r["hico"]["default"]["full"] == pytest.approx(np.mean(ap_def), abs=1e-9)
    assert r["hico"]["known_object"]["full"] == pytest.approx(np.mean(ap_ko), abs=1e-9)
    rare = hico().classes["rare"].to_numpy() == 1
    assert r["hico"]["default"]["rare"] == pytest.approx(np.mean(np.asarray(ap_def)[rare]), abs=1e-9)
    assert r["hico"]["default"]["non_rare"] == pytest.approx(np.mean(np.asarray(ap_def)[~rare]), abs=1e-9)
    # throw frisbee is predicted but never in the ground truth: recall NaN, so is the official mRec
    if any(v == "throw" for v in pred.verb):
        assert r["mrec"] is None


def test_best_overlap_not_best_unmatched():
    # two GTs of one class; the top detection takes GT 1 (IoU 1); the second detection overlaps
    # GT 1 best (IoU 1 on both boxes) and GT 2 enough (≥ .5): officially a false positive
    # (its best GT is taken), in the all-point reading a true positive on GT 2.
    g1, g2 = [0., 0, 9, 9], [2., 0, 11, 9]      # +1-pixel IoU of g1, g2: 80/120 = .667
    gt = Detections.from_arrays(["a", "a"], [g1, g2], [g1, g2], ["ride", "ride"], ["horse", "horse"])
    pred = Detections.from_arrays(["a", "a"], [g1, g1], [g1, g1], ["ride", "ride"], ["horse", "horse"], [.9, .8])
    ev = S.evaluate(gt, pred)
    assert ev.ap[0] == pytest.approx(6 / 11)          # P = 1 up to R = .5, then no recall
    ev = S.evaluate(gt, pred, map_protocol="all-point")
    assert ev.ap[0] == pytest.approx(1.0)

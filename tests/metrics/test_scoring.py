"""SHOE mAP (Algorithm 1), SHOE mF1 (Algorithm 2), miss rates and standard mAP.

Expected values are worked out by hand in the comments, or come from the plain-Python
reference transcription in tests/reference/shoe_algorithms.py (a second implementation).
"""


import numpy as np
import pytest

from metrics.detection import _ap as AP
from metrics.detection import _pairs as PAIRS
from metrics.detection import _scoring as S
from metrics.detection import _shoe as SHOE
from metrics.detection._boxes import box_iou
from metrics.detection._detections import Detections
from metrics.vocab._similarity import SimilarityMatrix
from tests.reference import shoe_algorithms as ref

EPS = 1e-8
A, B, C = [0, 0, 10, 10], [20, 20, 30, 30], [50, 50, 60, 60]


# ---------------------------------------------------------------- the hand-computed case
# image 0: g0 class 0 (A, A), g1 class 1 (A, B)
#          p0 (A, A) .9, p1 (A, A) .8, p2 (A, B) .7, p3 (C, C) .6
# image 1: g2 class 0 (A, A); p4 (A, A) .8, p5 (A, A) .8 — a duplicate of p4
# image 2: no ground truth; p6 (A, A) .95
GT_IMAGE = np.array([0, 0, 1])
GT_H = np.array([A, A, A], float)
GT_O = np.array([A, B, A], float)
GT_CLASS = np.array([0, 1, 0])
P_IMAGE = np.array([0, 0, 0, 0, 1, 1, 2])
P_H = np.array([A, A, A, C, A, A, A], float)
P_O = np.array([A, A, B, C, A, A, A], float)
P_SCORE = np.array([.9, .8, .7, .6, .8, .8, .95])
P_CLASS = np.array([0, 0, 1, 0, 0, 0, 0])
SIGMA = np.array([  # prediction x ground truth (only same-image entries are used)
    [.5, .25, 0], [1., 0, 0], [0, .75, 0], [.5, .5, 0],   # p3: tie between g0 and g1 -> g0
    [0, 0, 1.], [0, 0, 1.], [0, 0, 0]])


def _pairs():
    return PAIRS.PairTable.build(GT_IMAGE, GT_H, GT_O, P_IMAGE, P_H, P_O, lambda p, g: SIGMA[p, g])


def _shoe_ap(**kw):
    pairs = _pairs()
    m = SHOE.shoe_match(pairs, P_SCORE)
    ap, n_gt = SHOE.shoe_ap(pairs, GT_CLASS, P_SCORE, m, n_classes=2, **kw)
    return m, ap, n_gt


def test_box_iou_by_hand():
    a = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 0, 0]], float)
    b = np.array([[5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 0, 0]], float)
    assert box_iou(a, b).tolist() == [50 / 150, 0.0, 0.0]


def test_algorithm1_matching_by_hand():
    m, _, _ = _shoe_ap()
    # g0 takes p1 (σ 1 beats p0's .5); g1 takes p2; g2 takes p4 (tie with p5: same σ and
    # confidence, the earlier prediction wins)
    assert m.gt_pred.tolist() == [1, 2, 4]
    assert m.gt_sigma.tolist() == [1.0, .75, 1.0]
    # most similar ground truth of each prediction (p3: tie -> first; p6: image without GT)
    assert m.pred_best_gt.tolist() == [0, 0, 1, 0, 2, 2, -1]


def test_shoe_map_by_hand():
    _, ap, n_gt = _shoe_ap()
    assert n_gt.tolist() == [2, 1]
    # class 0, sorted: (.9,0) p0, (.8,1) g0, (.8,1) g2, (.8,0) p5, (.6,0) p3; N_GT = 2
    # R: 0, .5, 1, 1, 1;  P: 0, 1/2, 2/3, ...  -> AP = .5*.5 + .5*(2/3)
    ap0 = (1 / (2 + EPS)) * (1 / (2 + EPS)) + (1 / (2 + EPS)) * (2 / (3 + EPS))
    # class 1: one entry (.7, .75): AP = .75/(1+ε) * .75/(1+ε)
    ap1 = (.75 / (1 + EPS)) ** 2
    assert ap[0] == pytest.approx(ap0, abs=1e-12) and ap0 == pytest.approx(7 / 12, abs=1e-7)
    assert ap[1] == pytest.approx(ap1, abs=1e-12)
    assert np.mean(ap) == pytest.approx((7 / 12 + .5625) / 2, abs=1e-7)


def test_shoe_map_all_point_interpolation_by_hand():
    _, ap, _ = _shoe_ap(interpolation="all-point")
    # class 0 precision 0, .5, 2/3, .5, .4 -> envelope 2/3 at both recall steps
    assert ap[0] == pytest.approx(2 / 3, abs=1e-7)
    assert ap[1] == pytest.approx(.5625, abs=1e-7)


def test_delta_drops_dissimilar_false_positives():
    _, ap, _ = _shoe_ap(delta=0.6)
    # p0 (best σ .5) and p3 (.5) are dropped; p5 (σ 1) stays: (.8,1) g0, (.8,1) g2, (.8,0) p5
    assert ap[0] == pytest.approx(1.0, abs=1e-7)
    assert ap[1] == pytest.approx(.5625, abs=1e-7)


def test_shoe_mf1_and_miss_rates_by_hand():
    m = SHOE.shoe_match(_pairs(), P_SCORE, active=P_SCORE >= 0.5)
    f = SHOE.shoe_soft_counts(GT_CLASS, m, n_classes=2)
    # class 0: TP 1 + 1, FP 0 + 3 unmatched (p0, p3, p5), FN 0 -> P 2/5, R 1, F1 4/7
    # class 1: TP .75, FP .25, FN 0 -> P .75, R 1, F1 6/7
    assert f.tp.tolist() == [2.0, .75] and f.fp.tolist() == [3.0, .25] and f.fn.tolist() == [0, 0]
    assert f.f1 == pytest.approx([4 / 7, 6 / 7], abs=1e-7)
    assert SHOE.match_miss_rates(m) == pytest.approx((0.0, 4 / 7))  # p0, p3, p5, p6 unmatched of 7
    eq5 = SHOE.shoe_soft_counts(GT_CLASS, m, n_classes=2, fn_mode="eq5")
    assert eq5.fn.tolist() == [0.0, .25]                   # FN += 1 − σ for g1
    assert eq5.f1 == pytest.approx([4 / 7, .75], abs=1e-7)
    d = SHOE.shoe_soft_counts(GT_CLASS, m, n_classes=2, delta=0.6)     # p0, p3 no longer false positives
    assert d.fp.tolist() == [1.0, .25]


def test_shoe_mf1_tau_filters_predictions():
    m = SHOE.shoe_match(_pairs(), P_SCORE, active=P_SCORE >= 0.85)
    # active: p0 (.9) and p6 (.95). g0 takes p0 (σ .5); g1 and g2 are missed; p6 has no GT
    f = SHOE.shoe_soft_counts(GT_CLASS, m, n_classes=2)
    assert f.tp.tolist() == [.5, 0] and f.fp.tolist() == [.5, 0] and f.fn.tolist() == [1, 1]
    assert f.f1 == pytest.approx([0.4, 0.0], abs=1e-7)     # P .5, R 1/3
    assert SHOE.match_miss_rates(m) == pytest.approx((2 / 3, 1 / 2))


def test_standard_map_by_hand():
    ap, tp = AP.standard_ap(_pairs(), GT_CLASS, P_CLASS, P_SCORE, n_classes=2)
    # class 0 by score: p6 FP (no GT), p0 TP, p1 FP (g0 taken), p4 TP, p5 FP (dup), p3 FP
    assert tp.tolist() == [True, False, True, False, True, False, False]
    # P .5 at R .5 and P .5 at R 1 (envelope) -> .5; class 1: p2 TP -> 1
    assert ap.tolist() == [0.5, 1.0]


def test_standard_map_prefers_largest_min_iou():
    g_h = np.array([[0, 0, 10, 10], [2, 0, 12, 10]], float)
    p_h = np.array([[2, 0, 12, 10], [4, 0, 14, 10]], float)
    pairs = PAIRS.PairTable.build([0, 0], g_h, g_h, [0, 0], p_h, p_h, lambda p, g: np.ones(len(p)))
    ap, tp = AP.standard_ap(pairs, [0, 0], [0, 0], np.array([.9, .8]), n_classes=1)
    # p0 overlaps both GTs (2/3 and 1): it takes the second (IoU 1); p1 overlaps only the
    # second (IoU 2/3 with it, 3/7 with the first) and is a duplicate: P 1, 1/2 at R 1/2
    assert tp.tolist() == [True, False]
    assert ap.tolist() == [0.5]


def test_sequential_greedy_respects_turns():
    # agent 0 (turn 0) and agent 1 (turn 1) in one group both want resource 5 first
    agent, res = np.array([0, 0, 1, 1]), np.array([5, 6, 5, 7])
    assert AP.sequential_greedy(agent, res, np.array([0, 1]), 2, 8).tolist() == [0, 3]
    assert AP.sequential_greedy(agent, res, np.array([1, 0]), 2, 8).tolist() == [1, 2]
    # with a preference key the larger value wins before edge order
    key = np.array([.1, .9, .5, .5])
    assert AP.sequential_greedy(agent, res, np.array([0, 1]), 2, 8, keys=(key,)).tolist() == [1, 2]


# ---------------------------------------------------------------- second implementation
def _random_case(seed, n_img=6, K=4):
    rng = np.random.default_rng(seed)
    base = np.array([[0, 0, 10, 10], [0, 0, 10, 12], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 9, 10]], float)
    images = []
    for _ in range(n_img):
        gts = [(base[rng.integers(5)].tolist(), base[rng.integers(5)].tolist(), int(rng.integers(K)))
               for _ in range(rng.integers(0, 4))]
        preds = [(base[rng.integers(5)].tolist(), base[rng.integers(5)].tolist(),
                  float(rng.integers(-2, 4)) / 4, int(rng.integers(-1, K))) for _ in range(rng.integers(0, 7))]
        images.append((gts, preds))
    flat_g = [(i, x) for i, (g, _) in enumerate(images) for x in g]
    flat_p = [(i, x) for i, (_, p) in enumerate(images) for x in p]
    arrays = dict(
        gt_image=np.array([i for i, _ in flat_g], int), gt_h=np.array([x[0] for _, x in flat_g]).reshape(-1, 4),
        gt_o=np.array([x[1] for _, x in flat_g]).reshape(-1, 4), gt_class=np.array([x[2] for _, x in flat_g], int),
        p_image=np.array([i for i, _ in flat_p], int), p_h=np.array([x[0] for _, x in flat_p]).reshape(-1, 4),
        p_o=np.array([x[1] for _, x in flat_p]).reshape(-1, 4), p_score=np.array([x[2] for _, x in flat_p]),
        p_class=np.array([x[3] for _, x in flat_p], int))
    sig = rng.integers(0, 3, size=(len(flat_p), len(flat_g))) / 2  # many ties
    goff = np.cumsum([0] + [len(g) for g, _ in images])
    poff = np.cumsum([0] + [len(p) for _, p in images])
    ref_sigma = lambda ii, pj, gj: float(sig[poff[ii] + pj, goff[ii] + gj])
    return images, ref_sigma, K, arrays, sig


def _same(vectorized, reference):
    for a, b in zip(vectorized, reference):
        if b is None:
            assert np.isnan(a)
        else:
            assert a == pytest.approx(b, abs=1e-12)


def _interleave(rng, image):
    """A row order that mixes images but keeps each image's rows in their relative order."""
    order = rng.permutation(len(image))
    out = np.empty(len(image), dtype=np.int64)
    for i in np.unique(image):
        slots = np.sort(np.flatnonzero(image[order] == i))
        out[slots] = np.flatnonzero(image == i)
    return out


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("SCORING_SEEDS", 60))))
def test_agrees_with_reference_transcription(seed):
    images, ref_sigma, K, x, sig = _random_case(seed)
    if not len(x["gt_class"]):
        return
    if seed % 2:  # rows of different images interleaved (not image-contiguous input)
        rng = np.random.default_rng(seed + 1000)
        go, po = _interleave(rng, x["gt_image"]), _interleave(rng, x["p_image"])
        for k in ("gt_image", "gt_h", "gt_o", "gt_class"):
            x[k] = x[k][go]
        for k in ("p_image", "p_h", "p_o", "p_score", "p_class"):
            x[k] = x[k][po]
        sig = sig[po][:, go]
    pairs = PAIRS.PairTable.build(x["gt_image"], x["gt_h"], x["gt_o"], x["p_image"], x["p_h"], x["p_o"],
                              lambda p, g: sig[p, g])
    for delta in (0.0, 0.5):
        m = SHOE.shoe_match(pairs, x["p_score"])
        for interp in ("none", "all-point"):
            ap, _ = SHOE.shoe_ap(pairs, x["gt_class"], x["p_score"], m, n_classes=K,
                              delta=delta, interpolation=interp)
            _same(ap, ref.shoe_map(images, ref_sigma, K, delta=delta, interpolation=interp))
        m = SHOE.shoe_match(pairs, x["p_score"], active=x["p_score"] >= 0.5)
        for fn_mode in ("algorithm2", "eq5"):
            f = SHOE.shoe_soft_counts(x["gt_class"], m, n_classes=K, delta=delta, fn_mode=fn_mode)
            r_f1, r_gmr, r_pmr = ref.shoe_mf1(images, ref_sigma, K, delta=delta, tau=0.5, fn_mode=fn_mode)
            _same(f.f1, r_f1)
            assert SHOE.match_miss_rates(m) == pytest.approx((r_gmr, r_pmr), abs=1e-12)
    ap, _ = AP.standard_ap(pairs, x["gt_class"], x["p_class"], x["p_score"], n_classes=K)
    _same(ap, ref.standard_map(images, K))


# ---------------------------------------------------------------- detections level
def _identity(pos):
    from metrics.datasets.hico_det._vocabulary import hico
    v = hico()
    table = v.verbs if pos == "v" else v.objects
    return SimilarityMatrix.identity(dict.fromkeys(s for s in table["synset"] if s))


def _gt():
    return Detections.from_arrays(
        ["a", "a", "b", "c"], [A, A, A, B], [A, B, A, B],
        ["ride", "hold", "ride", "feed"], ["horse", "cup", "bicycle", "horse"])


def test_prediction_equal_to_ground_truth_scores_one():
    gt = _gt()
    pred = Detections.from_arrays(gt.images[gt.image], gt.human_box, gt.object_box, gt.verb, gt.object,
                                  np.ones(len(gt)))
    r = S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"))
    # official: every ground-truth class has AP 1 (11 × 1/11), the other 596 HICO classes AP 0
    assert [c["ap"] for c in r["per_class"]] == pytest.approx([1.0] * 4)
    assert r["map"] == pytest.approx(4 / 600)
    assert r["hico"]["known_object"]["full"] == pytest.approx(4 / 600)
    assert r["mrec"] == pytest.approx(4 / 600)
    ap = S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"), map_protocol="all-point")
    assert ap["map"] == pytest.approx(1.0) and ap["protocol"]["name"] == "all-point"
    assert r["shoe_map"] == pytest.approx(1.0, abs=1e-6)
    assert r["shoe_mf1"] == pytest.approx(1.0, abs=1e-6)
    assert r["gt_miss_rate"] == 0.0 and r["pred_miss_rate"] == 0.0


@pytest.mark.parametrize("verb,obj,arith,minimum", [
    ("ride", "horse", 1.0, 1.0), ("ride", "bicycle", 0.5, 0.0), ("feed", "horse", 0.5, 0.0),
    ("hold", "cup", 0.0, 0.0)])
def test_identity_matrices_give_exact_match_similarity(verb, obj, arith, minimum):
    gt = Detections.from_arrays(["a"], [A], [A], ["ride"], ["horse"])
    pred = Detections.from_arrays(["a"], [A], [A], [verb], [obj], [1.0])
    for method, expected in (("arithmetic", arith), ("min", minimum)):
        ev = S.evaluate(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"), combine=method)
        assert ev.match_all.gt_sigma.tolist() == [expected]
        assert ev.ap[0] == pytest.approx(1.0 if expected == 1.0 else 0.0)


def test_classes_outside_hico_count_in_full_only_and_unknown_labels_listed():
    gt = Detections.from_arrays(["a", "a"], [A, A], [A, B], ["ride", "ride"], ["horse", "zzqxv"])
    pred = Detections.from_arrays(["a", "a"], [A, A], [A, B], ["ride", "ride"], ["horse", "qqzzx"], [.9, .8])
    r = S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"), split="rf_uc")
    assert r["counts"]["classes"] == 2
    assert r["splits"]["full"]["n_classes"] == 2 and r["splits"]["non_rare"]["n_classes"] == 1
    assert r["splits"]["rare"]["n_classes"] == 0
    # a class outside HICO-DET: the class set is the ground truth's own (2 classes), no rare class
    assert r["splits"]["full"]["n_classes_map"] == 2 and r["splits"]["rare"]["map"] is None
    assert r["resolution"]["object"]["pred"]["unknown"] == ["qqzzx"]
    assert r["resolution"]["object"]["pred"]["by_kind"]["unknown"] == {"labels": 1, "detections": 1}
    # the unknown prediction scores 0 against the unknown ground truth: half similarity (verb only)
    per = {(c["verb"], c["object"]): c for c in r["per_class"]}
    assert per[("ride", "horse")]["ap"] == pytest.approx(1.0)
    assert per[("ride", "text:zzqxv")]["ap"] == 0.0
    assert per[("ride", "text:zzqxv")]["shoe_tp"] == pytest.approx(0.5)


def test_no_scores_is_confidence_free_mode():
    gt = _gt()
    pred = Detections.from_arrays(gt.images[gt.image], gt.human_box, gt.object_box, gt.verb, gt.object)
    r = S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"))
    assert r["map"] is None and r["shoe_map"] is None
    assert r["shoe_mf1"] == pytest.approx(1.0, abs=1e-6)


def test_mixed_scores_name_the_line():
    gt = _gt()
    pred = Detections.from_arrays(["a", "a"], [A, A], [A, A], ["ride", "ride"], ["horse", "horse"], [.5, np.nan])
    with pytest.raises(Exception, match="line 2: score is missing"):
        S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"))


def test_free_text_prediction_resolves_against_ground_truth():
    gt = Detections.from_arrays(["a"], [A], [A], ["ride"], ["horse"])
    pred = Detections.from_arrays(["a"], [A], [A], ["riding"], ["horse"], [0.9])
    r = S.score_dict(gt, pred, verb_sim=_identity("v"), object_sim=_identity("n"))
    # HICO's ride is ride.v.01 (SHOE's synset), which 'riding' resolves to, so both match
    assert r["map"] == pytest.approx(1 / 600) and r["shoe_map"] == pytest.approx(1.0, abs=1e-6)
    assert r["resolution"]["verb"]["pred"]["free_text"] == {"riding": "ride.v.01"}


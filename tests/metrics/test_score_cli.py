"""Reading HOI detections (JSON Lines, QPIC/CDN HICO-DET) and the ``score`` command end to end."""

import json
import subprocess
import sys

import numpy as np
import pytest
from projectpaths import ROOT

from metrics.core._errors import InputError
from metrics.detection._detections import COCO_OBJECT_IDS, write_jsonl
from metrics.detection._detections_fast import read_detections

A, B = [0, 0, 10, 10], [20, 20, 30, 30]


def _hoi(verb="ride", obj="horse", h=A, o=A, score=None):
    d = {"human_box": h, "object_box": o, "verb": verb, "object": obj}
    if score is not None:
        d["score"] = score
    return d


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_jsonl_round_trip(tmp_path):
    p = _write(tmp_path / "d.jsonl", [{"image": "x.jpg", "hois": [_hoi(score=0.5), _hoi("hold", "cup", score=1)]},
                                      {"image": "y.jpg", "hois": []},
                                      {"image": "z.jpg", "hois": [_hoi(h=B)]}])
    with pytest.raises(InputError, match="line 3: score is missing"):
        _ = read_detections(p).has_scores
    d = read_detections(p)
    assert d.images.tolist() == ["x.jpg", "y.jpg", "z.jpg"] and d.image.tolist() == [0, 0, 2]
    assert d.verb.tolist() == ["ride", "hold", "ride"] and d.line.tolist() == [1, 1, 3]
    write_jsonl(d, tmp_path / "again.jsonl")
    again = read_detections(tmp_path / "again.jsonl")
    assert np.array_equal(again.human_box, d.human_box) and again.images.tolist() == d.images.tolist()


@pytest.mark.parametrize("line,message", [
    ("{not json", "line 2 column 2: invalid JSON"),
    (json.dumps({"hois": []}), "line 2: image: missing"),
    (json.dumps({"image": "a.jpg", "hois": []}), "line 2: image: 'a.jpg' already given on line 1"),
    (json.dumps({"image": "b.jpg", "hois": [_hoi(), {"human_box": A, "verb": "ride", "object": "horse"}]}),
     r"line 2: hois\[1\].object_box: missing"),
    (json.dumps({"image": "b.jpg", "hois": [_hoi(h=[0, 0, 10])]}), r"line 2: hois\[0\].human_box: expected 4 numbers"),
    (json.dumps({"image": "b.jpg", "hois": [_hoi(h=[10, 0, 0, 10])]}), "line 2: human_box .* x2 < x1"),
    (json.dumps({"image": "b.jpg", "hois": [_hoi(verb="")]}), r"line 2: hois\[0\].verb: expected a non-empty string"),
    (json.dumps({"image": "b.jpg", "hois": [_hoi(score="high")]}), r"line 2: hois\[0\].score: expected a number"),
])
def test_jsonl_errors_name_line_and_field(tmp_path, line, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"image": "a.jpg", "hois": [_hoi()]}) + "\n" + line + "\n")
    with pytest.raises(InputError, match=message):
        read_detections(p)


def test_qpic_adapter(tmp_path):
    records = [{"file_name": "HICO_test2015_00000001.jpg",
                "annotations": [{"bbox": A, "category_id": 1}, {"bbox": B, "category_id": 19},
                                {"bbox": B, "category_id": 90}],
                "hoi_annotation": [{"subject_id": 0, "object_id": 1, "category_id": 77},
                                   {"subject_id": 0, "object_id": 2, "category_id": 1}]}]
    (tmp_path / "gt.json").write_text(json.dumps(records))
    d = read_detections(tmp_path / "gt.json")
    # verb 77 = ride, COCO 19 = horse, COCO 90 = toothbrush (the 80th object), verb 1 = adjust
    assert d.verb.tolist() == ["ride", "adjust"] and d.object.tolist() == ["horse", "toothbrush"]
    assert d.human_box.tolist() == [A, A] and d.object_box.tolist() == [B, B]
    assert np.isnan(d.score).all() and d.format == "qpic"
    (tmp_path / "wrapped.json").write_text(json.dumps({"annotations": records}))
    assert read_detections(tmp_path / "wrapped.json").verb.tolist() == ["ride", "adjust"]
    preds = [{"file_name": "HICO_test2015_00000001.jpg", "predictions": [{"bbox": A, "category_id": 1},
                                                                          {"bbox": B, "category_id": 19}],
              "hoi_prediction": [{"subject_id": 0, "object_id": 1, "category_id": 77, "score": 0.7}]}]
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    assert read_detections(tmp_path / "pred.json").score.tolist() == [0.7]
    records[0]["hoi_annotation"][1]["object_id"] = 5
    (tmp_path / "bad.json").write_text(json.dumps(records))
    with pytest.raises(InputError, match=r"record 1: hoi_annotation\[1\].object_id: 5 is not an index"):
        read_detections(tmp_path / "bad.json")


def test_qpic_ids_match_the_hico_lists(shared_data):
    from metrics.datasets.hico_det._vocabulary import hico
    verbs = (shared_data / "hico" / "verbs.txt").read_text().split()
    objects = (shared_data / "hico" / "objects.txt").read_text().split()
    assert hico().verb_labels == verbs and hico().object_labels == objects
    assert len(COCO_OBJECT_IDS) == len(objects) == 80


@pytest.mark.slow
def test_score_cli_end_to_end(tmp_path):
    gt = _write(tmp_path / "gt.jsonl", [
        {"image": "a.jpg", "hois": [_hoi("ride", "horse"), _hoi("hold", "cup", o=B)]},
        {"image": "b.jpg", "hois": [_hoi("sit_on", "chair")]}])
    pred = _write(tmp_path / "pred.jsonl", [
        {"image": "a.jpg", "hois": [_hoi("ride", "horse", score=0.9), _hoi("hold", "cup", o=B, score=0.8),
                                    _hoi("zzblorp", "cup", o=B, score=0.3)]},
        {"image": "b.jpg", "hois": [_hoi("sit_on", "chair", score=0.7)]},
        {"image": "c.jpg", "hois": [_hoi("ride", "horse", score=0.95)]}])
    out = tmp_path / "r.json"
    res = run("score", "--gt", str(gt), "--pred", str(pred), "--split", "uv", "--json", str(out),
              "--per-class", "3")
    assert res.returncode == 0, res.stderr
    r = json.loads(out.read_text())
    for key in ("map", "shoe_map", "shoe_mf1", "gt_miss_rate", "pred_miss_rate", "per_class"):
        assert key in r
    for key in ("map", "shoe_map", "shoe_mf1", "gt_miss_rate", "pred_miss_rate"):
        assert isinstance(r[key], float) and 0.0 <= r[key] <= 1.0
    assert set(r["splits"]) == {"full", "rare", "non_rare", "uv_seen", "uv_unseen"}
    # every class has its exact prediction first: AP 1; c.jpg's prediction is an FP for
    # standard mAP (ride horse ranked first there: P 0 at R 0, P 1/2 at R 1 -> 11-point AP .5);
    # official mAP averages over the 600 HICO-DET classes (the other 597 have AP 0)
    per = {(c["verb"], c["object"]): c for c in r["per_class"]}
    assert per[("ride", "horse")]["ap"] == pytest.approx(0.5) and per[("hold", "cup")]["ap"] == pytest.approx(1.0)
    assert r["map"] == pytest.approx((0.5 + 1 + 1) / 600)
    # Known-Object: c.jpg's ground truth has no horse, so its detection is not evaluated
    assert r["hico"]["known_object"]["full"] == pytest.approx(3 / 600)
    assert r["hico"]["default"]["full"] == r["map"] and r["mrec"] == pytest.approx(3 / 600)
    assert r["protocol"]["name"] == "official" and "eval_one.m" in r["protocol"]["source"]
    assert "Known-Object" in res.stdout and "VOCevaldet_bboxpair.m" in res.stdout
    assert r["gt_miss_rate"] == 0.0
    assert r["pred_miss_rate"] == pytest.approx(1 / 4)   # τ = .5 keeps 4; c.jpg's is unmatched
    assert r["resolution"]["verb"]["pred"]["unknown"] == ["zzblorp"]
    assert "SHOE mAP" in res.stdout and "zzblorp" in res.stdout


@pytest.mark.parametrize("content,message", [
    ('{"image": "a.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": "x", "verb": "ride", '
     '"object": "horse", "score": 1}]}\n', r"pred.jsonl: line 1: hois\[0\].object_box"),
    ('{"image": "a.jpg", "hois": []}\n{"image": 3}\n', "pred.jsonl: line 2: image"),
    ('{"image": "a.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], '
     '"verb": "ride.n.01", "object": "horse", "score": 1}]}\n', "pred.jsonl: line 1: verb"),  # loads WordNet
])
def test_score_cli_bad_input_is_one_line(tmp_path, content, message):
    gt = _write(tmp_path / "gt.jsonl", [{"image": "a.jpg", "hois": [_hoi()]}])
    pred = tmp_path / "pred.jsonl"
    pred.write_text(content)
    res = run("score", "--gt", str(gt), "--pred", str(pred))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert __import__("re").search(message, res.stderr), res.stderr


def test_score_cli_missing_file_and_bad_option(tmp_path):
    gt = _write(tmp_path / "gt.jsonl", [{"image": "a.jpg", "hois": [_hoi()]}])
    res = run("score", "--gt", str(gt), "--pred", str(tmp_path / "nope.jsonl"))
    assert res.returncode == 2 and "nope.jsonl: no such file" in res.stderr
    res = run("score", "--gt", str(gt), "--pred", str(gt), "--tau", "2")
    assert res.returncode == 2 and "--tau: must be a number in [0, 1], got 2" in res.stderr


def test_mrec_na_says_why(tmp_path):
    """Ground truth of one class (ride horse); predictions of it and of two classes without ground
    truth (hold cup, feed horse): their recall is 0/0 in the official evaluation (rec = tp / npos),
    so its mean recall is NaN. The output says so in a line; all-point counts that recall as 0."""
    gt = _write(tmp_path / "gt.jsonl", [{"image": "x.jpg", "hois": [_hoi()]}])
    pred = _write(tmp_path / "pred.jsonl", [{"image": "x.jpg", "hois": [
        _hoi(score=0.9), _hoi("hold", "cup", o=B, score=0.5), _hoi("feed", "horse", score=0.4)]}])
    done = run("score", "--gt", str(gt), "--pred", str(pred))
    assert done.returncode == 0, done.stderr
    assert f"mRec n/a: 2 predicted classes have no ground truth in {gt}, so their recall is 0/0" in done.stdout
    done = run("score", "--gt", str(gt), "--pred", str(pred), "--map-protocol", "all-point")
    assert "mRec n/a" not in done.stdout
    gt_only_predicted = _write(tmp_path / "p2.jsonl", [{"image": "x.jpg", "hois": [_hoi(score=0.9)]}])
    assert "mRec n/a" not in run("score", "--gt", str(gt), "--pred", str(gt_only_predicted)).stdout


def test_the_documented_example_files_score(tmp_path):
    """docs/metrics.md: scripts/example_detections.py, then `metrics score` on its files."""
    made = subprocess.run([sys.executable, "scripts/example_detections.py", "--out", str(tmp_path / "ex")],
                          cwd=ROOT, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    for model in ("model_a", "model_b"):   # as the script's docstring says: both predict the same truth
        done = run("score", "--gt", str(tmp_path / "ex" / "gt.jsonl"), "--pred", str(tmp_path / "ex" / f"{model}.jsonl"),
                   "--json", str(tmp_path / f"{model}.json"))
        assert done.returncode == 0, done.stderr
        result = json.loads((tmp_path / f"{model}.json").read_text())
        assert result["counts"]["images"] == 50 and result["counts"]["predictions"] == 50 * 20
        assert 0.10 < result["shoe_map"] < 0.60 and result["gt_miss_rate"] < 0.5, (model, result["shoe_map"])
        assert result["hico"]["default"]["full"] > 0


@pytest.mark.parametrize("command", ["score", "diagnose"])
def test_json_nested_past_pythons_parser_is_one_line(tmp_path, command):
    """A record nested 200,000 arrays deep, past Python's parser: the fast reader's format
    check does not raise RecursionError; the validating reader refuses it in one line naming
    the file and line."""
    gt = _write(tmp_path / "gt.jsonl", [{"image": "x.jpg", "hois": [_hoi()]}])
    deep = tmp_path / "deep.jsonl"
    deep.write_text(json.dumps({"image": "x.jpg", "hois": [_hoi(score=0.5)]}) + "\n"
                    + '{"image": "y.jpg", "hois": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    done = run(command, "--gt", str(gt), "--pred", str(deep))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert done.stderr.strip() == f"metrics {command}: error: {deep}: line 2: invalid JSON (nested too deeply)"

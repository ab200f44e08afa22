"""The fast (pyarrow) reader of HOI detections gives exactly the validating reader's result.

``read_detections`` parses well-formed files with pyarrow straight into columns and hands
everything else to the validating reader (Python's ``json``, every field checked). These tests
compare the two on valid files of every format (field by field, numbers bit for bit) and
check, for malformed or unusual files, that the fast path declines and the outcome — result or
one-line error — is the validating reader's.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

from metrics.detections import (COCO_OBJECT_IDS, _read_fast, _read_validating,
                                read_detections)
from metrics.errors import InputError

FIELDS = ("images", "image", "line", "human_box", "object_box", "verb", "object", "score")


def outcome(reader, path):
    """``("ok", {field: list})`` or ``("error", message)`` of one reader on one file."""
    try:
        det = reader(path)
    except InputError as exc:
        return "error", str(exc)
    values = {name: np.asarray(getattr(det, name)) for name in FIELDS}
    # NaN-aware, bit-exact comparison of floats: compare their bytes
    return "ok", {name: (v.tobytes() if v.dtype.kind == "f" else v.tolist()) for name, v in values.items()} | {
        "format": det.format, "unit": det.unit, "source": det.source}


def random_number(rng: random.Random):
    kind = rng.random()
    if kind < 0.3:
        return rng.randint(-5, 2000)
    if kind < 0.6:
        return round(rng.uniform(0, 1000), rng.randint(0, 3))
    return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 12)   # full 17-digit repr


def random_box(rng):
    x, y = sorted(random_number(rng) for _ in range(2)), sorted(random_number(rng) for _ in range(2))
    return [x[0], y[0], x[1], y[1]]


LABELS = ["ride", "hold", "sit_on", "dining table", "ride.v.01", "café", "straße \"quoted\"", "tab\there",
          "日本", " padded "]


def random_jsonl(rng, n_images=40, with_scores=True):
    lines = []
    for i in range(n_images):
        hois = []
        for _ in range(rng.choice([0, 1, 3, 7])):
            h = {"human_box": random_box(rng), "object_box": random_box(rng),
                 "verb": rng.choice(LABELS), "object": rng.choice(LABELS)}
            if with_scores:
                h["score"] = rng.choice([rng.random(), 1, 0, round(rng.random(), 3)])
            if rng.random() < 0.2:
                h["extra"] = {"ignored": [1, "x"]}
            keys = list(h)
            rng.shuffle(keys)
            hois.append({k: h[k] for k in keys})
        lines.append(json.dumps({"image": f"img_{i:05d}.jpg", "hois": hois}, ensure_ascii=rng.random() < 0.5))
    return lines


def write(path, text: str | bytes):
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def assert_same(path, *, fast: bool):
    """Both readers agree on ``path``; ``fast``: whether the fast path must take the file."""
    taken = _read_fast(path.read_bytes(), path) is not None
    assert taken == fast, f"fast path {'declined' if fast else 'took'} {path.read_bytes()[:200]!r}"
    expected = outcome(_read_validating, path)
    assert outcome(read_detections, path) == expected
    return expected


@pytest.mark.parametrize("seed", range(4))
def test_random_json_lines_give_identical_columns(tmp_path, seed):
    rng = random.Random(seed)
    lines = random_jsonl(rng, with_scores=seed % 2 == 0)
    status, cols = assert_same(write(tmp_path / "d.jsonl", "\n".join(lines) + "\n"), fast=True)
    assert status == "ok" and len(cols["images"]) == 40
    assert_same(write(tmp_path / "noeol.jsonl", "\n".join(lines)), fast=True)
    assert_same(write(tmp_path / "crlf.jsonl", "\r\n".join(lines) + "\r\n"), fast=True)


def test_numbers_are_parsed_to_the_same_doubles(tmp_path):
    """Every decimal form Python writes, and long hand-written ones, give the same bits."""
    rng = np.random.default_rng(0)
    values = np.r_[rng.uniform(0, 1, 2000), rng.uniform(0, 1e4, 2000),
                   np.exp(rng.uniform(-700, 700, 2000)), [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]]
    texts = [repr(float(v)) for v in values] + ["0.1000000000000000055511151231257827", "9007199254740993",
                                                "4.9406564584124654e-324", "0.0", "1E+2", "2.5e-3", "7"]
    lines = []
    for i in range(0, len(texts) - 3, 4):
        a, b, c, d = texts[i:i + 4]   # a valid box: [x1, y1, x2, y2] with x1 <= x2, y1 <= y2
        (a, c), (b, d) = sorted((a, c), key=float), sorted((b, d), key=float)
        box = ", ".join((a, b, c, d))
        lines.append(f'{{"image": "i{i}", "hois": [{{"human_box": [{box}], "object_box": [{box}], '
                     f'"verb": "v", "object": "o", "score": {texts[i]}}}]}}')
    path = write(tmp_path / "numbers.jsonl", "\n".join(lines) + "\n")
    assert _read_fast(path.read_bytes(), path) is not None
    fast = read_detections(path).human_box.ravel()
    exact = np.array([json.loads(t) for line in lines
                      for t in line.split("[", 2)[2].split("]")[0].split(", ")], dtype=np.float64)
    assert fast.tobytes() == exact.tobytes()
    # below the doubles; integers numpy would not take as numbers and "-0" (the integer 0 to
    # Python, -0.0 to pyarrow): the validating reader
    for text in ("1e-400", "123456789012345678901234567890", "-9223372036854775809", "-0", "-0.0"):
        line = re.sub(r'"human_box": \[[^,]*,', f'"human_box": [{text},', lines[0], count=1)
        odd = write(tmp_path / "odd.jsonl", line + "\n")
        # 1e-400 is 0.0 and -0.0 is -0.0 to both parsers: taken
        assert (_read_fast(odd.read_bytes(), odd) is None) == (text not in ("1e-400", "-0.0"))
        assert outcome(read_detections, odd) == outcome(_read_validating, odd)


def hoi(**kw):
    d = {"human_box": [0, 0, 10, 10], "object_box": [5, 5, 20, 20], "verb": "ride", "object": "horse", "score": 0.5}
    d.update(kw)
    return d


GOOD = json.dumps({"image": "a.jpg", "hois": [hoi()]})

# files the fast path must decline; the validating reader then gives today's result or error
DECLINED = {
    "duplicate key, last wins": GOOD + "\n" + '{"image": "b.jpg", "image": "c.jpg", "hois": []}\n',
    "duplicate key in a hoi": '{"image": "a.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], '
                              '"verb": "ride", "verb": "hold", "object": "horse"}]}\n',
    "blank line": GOOD + "\n\n" + json.dumps({"image": "b.jpg", "hois": [hoi()]}) + "\n",
    "blank line with spaces": GOOD + "\n   \n" + json.dumps({"image": "b.jpg", "hois": []}) + "\n",
    "two objects on a line": GOOD + " " + json.dumps({"image": "b.jpg", "hois": []}) + "\n",
    "object over two lines": '{"image": "a.jpg",\n "hois": []}\n',
    "two on a line and one over two": GOOD + json.dumps({"image": "b.jpg", "hois": []}) + '\n{"image": "c.jpg",\n"hois": []}\n',
    "trailing blank lines": GOOD + "\n\n\n",
    "leading spaces": "  " + GOOD + "\n",
    "lone carriage return": GOOD + "\r" + json.dumps({"image": "b.jpg", "hois": []}) + "\n",
    "byte order mark": "\ufeff" + GOOD + "\n",
    "duplicate image": GOOD + "\n" + GOOD + "\n",
    "empty image": json.dumps({"image": "", "hois": []}) + "\n",
    "null image": json.dumps({"image": None, "hois": []}) + "\n",
    "number image": json.dumps({"image": 7, "hois": []}) + "\n",
    "missing hois": GOOD + "\n" + json.dumps({"image": "b.jpg"}) + "\n",
    "hois an object": json.dumps({"image": "a.jpg", "hois": {}}) + "\n",
    "null hoi": json.dumps({"image": "a.jpg", "hois": [None]}) + "\n",
    "three numbers": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[0, 0, 1])]}) + "\n",
    "null in a box": json.dumps({"image": "a.jpg", "hois": [hoi(object_box=[0, None, 1, 1])]}) + "\n",
    "boolean in a box": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[True, 0, 1, 1])]}) + "\n",
    "huge integer in a box": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[0, 0, 1, 2 ** 64])]}) + "\n",
    "huge integer with floats": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[0.5, 0, 1, 2 ** 64])]}) + "\n",
    "empty verb": json.dumps({"image": "a.jpg", "hois": [hoi(verb="")]}) + "\n",
    "missing object": json.dumps({"image": "a.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1],
                                                              "verb": "ride"}]}) + "\n",
    "number verb": json.dumps({"image": "a.jpg", "hois": [hoi(verb=3)]}) + "\n",
    "string score": json.dumps({"image": "a.jpg", "hois": [hoi(score="high")]}) + "\n",
    "boolean score": json.dumps({"image": "a.jpg", "hois": [hoi(score=True)]}) + "\n",
    "score beyond doubles": '{"image": "a.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], '
                            '"verb": "v", "object": "o", "score": 1e400}]}\n',
    "lone surrogate": '{"image": "a\\ud800.jpg", "hois": []}\n',
    "not JSON": GOOD + "\n{not json\n",
    "a list per line": "[1, 2]\n",
    "first line is not an object": "3\n" + GOOD + "\n",
    "a null line": GOOD + "\nnull\n",                 # pyarrow 26 crashes on some null lines
    "first line null": "null\n" + GOOD + "\n",
    "null then an object": "null, " + GOOD + "\n",
}

# files the fast path takes although they are odd: its result must still be the reference's
TAKEN = {
    "whitespace verb is a label": json.dumps({"image": "a.jpg", "hois": [hoi(verb="  ")]}) + "\n",
    "escaped key": '{"imag\\u0065": "a.jpg", "hois": []}\n',
    "empty hois everywhere": '{"image": "a.jpg", "hois": []}\n{"image": "b.jpg", "hois": []}\n',
    "extra fields": json.dumps({"image": "a.jpg", "note": {"x": [1, 2]}, "hois": [hoi(extra=None)]}) + "\n",
}

# refused (NaN and infinities by the validating reader, the rest by the Detections checks):
# the same message whichever reader starts
CHECKED = {
    "NaN score": GOOD.replace("0.5", "NaN") + "\n",
    "infinite score": GOOD.replace("0.5", "Infinity") + "\n",
    "NaN in a box": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[0, 0, float("nan"), 1])]}) + "\n",
    "x2 < x1": json.dumps({"image": "a.jpg", "hois": [hoi(human_box=[10, 0, 0, 1])]}) + "\n",
}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_malformed_or_unusual_files_take_the_validating_reader(tmp_path, name):
    assert_same(write(tmp_path / "d.jsonl", DECLINED[name]), fast=False)


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_odd_but_valid_files_read_the_same(tmp_path, name):
    assert assert_same(write(tmp_path / "d.jsonl", TAKEN[name]), fast=True)[0] == "ok"


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_values_rejected_after_reading_give_the_same_message(tmp_path, name):
    path = write(tmp_path / "d.jsonl", CHECKED[name])
    with pytest.raises(InputError) as fast:
        read_detections(path)
    with pytest.raises(InputError) as reference:
        _read_validating(path)
    assert str(fast.value) == str(reference.value) and "line 1" in str(fast.value)


def test_invalid_utf8_is_reported_as_before(tmp_path):
    path = write(tmp_path / "d.jsonl", b'{"image": "a\xff.jpg", "hois": []}\n')
    assert_same(path, fast=False)
    with pytest.raises(InputError, match="not UTF-8"):
        read_detections(path)


# ---------------------------------------------------------------------------- QPIC / CDN
def qpic_records(rng, n=30, predictions=False):
    records = []
    for i in range(n):
        boxes = [{"bbox": random_box(rng), "category_id": rng.choice(COCO_OBJECT_IDS)} for _ in range(rng.randint(0, 6))]
        hois = []
        for _ in range(rng.randint(0, 5) if boxes else 0):
            h = {"subject_id": rng.randrange(len(boxes)), "object_id": rng.randrange(len(boxes)),
                 "category_id": rng.randint(1, 117)}
            if predictions:
                h["score"] = rng.random()
            hois.append(h)
        box_key, hoi_key = ("predictions", "hoi_prediction") if predictions else ("annotations", "hoi_annotation")
        records.append({"file_name": f"HICO_test2015_{i:08d}.jpg", "img_id": i, box_key: boxes, hoi_key: hois})
    return records


@pytest.mark.parametrize("predictions", [False, True])
def test_random_qpic_files_give_identical_columns(tmp_path, predictions):
    records = qpic_records(random.Random(int(predictions)), predictions=predictions)
    status, cols = assert_same(write(tmp_path / "list.json", json.dumps(records)), fast=True)
    assert status == "ok" and cols["format"] == "qpic" and len(cols["images"]) == 30
    assert_same(write(tmp_path / "pretty.json", json.dumps(records, indent=2)), fast=True)
    assert_same(write(tmp_path / "compact.json", json.dumps(records, separators=(",", ":"))), fast=True)
    assert_same(write(tmp_path / "lines.json", "".join(json.dumps(r) + "\n" for r in records)), fast=True)
    assert_same(write(tmp_path / "empty.json", "[]"), fast=True)


def test_qpic_files_with_defects_take_the_validating_reader(tmp_path):
    base = qpic_records(random.Random(5), n=4)
    base[0]["annotations"] = [{"bbox": [0, 0, 10, 10], "category_id": 1}, {"bbox": [5, 5, 9, 9], "category_id": 19}]
    base[0]["hoi_annotation"] = [{"subject_id": 0, "object_id": 1, "category_id": 77}]

    def variant(change):
        records = json.loads(json.dumps(base))
        change(records[0])
        return json.dumps(records)

    cases = {
        "object_id out of range": variant(lambda r: r["hoi_annotation"][0].update(object_id=5)),
        "negative subject_id": variant(lambda r: r["hoi_annotation"][0].update(subject_id=-1)),
        "verb id 0": variant(lambda r: r["hoi_annotation"][0].update(category_id=0)),
        "verb id 118": variant(lambda r: r["hoi_annotation"][0].update(category_id=118)),
        "not a COCO object id": variant(lambda r: r["annotations"][1].update(category_id=12)),
        "null object category": variant(lambda r: r["annotations"][1].update(category_id=None)),
        "float index": variant(lambda r: r["hoi_annotation"][0].update(subject_id=0.0)),
        "boolean verb id": variant(lambda r: r["hoi_annotation"][0].update(category_id=True)),
        "string score": variant(lambda r: r["hoi_annotation"][0].update(score="x")),
        "short bbox": variant(lambda r: r["annotations"][0].update(bbox=[0, 0, 1])),
        "missing file_name": variant(lambda r: r.pop("file_name")),
        "duplicate file_name": variant(lambda r: r.update(file_name=base[1]["file_name"])),
        "hoi_prediction null": variant(lambda r: r.update(hoi_prediction=None)),
        "escaped hoi_prediction null": variant(lambda r: r.update(x=1)).replace('"x": 1', '"hoi_predicti\\u006fn": null'),
        "mixed styles": variant(lambda r: r.update(hoi_prediction=[], predictions=[])),
        "trailing garbage": json.dumps(base) + " x",
        "null record": json.dumps([None] + base),
        "null record last": json.dumps(base + [None]),
        "records without a comma": json.dumps(base).replace('}, {"file_name"', '} {"file_name"', 1),
        "two lists": json.dumps(base) + json.dumps(base),
    }
    for name, text in cases.items():
        path = write(tmp_path / f"{len(name)}.json", text)
        assert _read_fast(path.read_bytes(), path) is None, name
        assert outcome(read_detections, path) == outcome(_read_validating, path), name
    # the unreferenced box's category id is never looked at by either reader
    ok = write(tmp_path / "ok.json", variant(lambda r: r["annotations"].append({"bbox": [0, 0, 1, 1], "category_id": 12})))
    assert assert_same(ok, fast=True)[0] == "ok"


def test_labels_share_one_object_per_text(tmp_path):
    """Equal labels come back as one Python object, which label factorization relies on."""
    lines = random_jsonl(random.Random(9))
    det = read_detections(write(tmp_path / "d.jsonl", "\n".join(lines) + "\n"))
    assert len({id(v) for v in det.verb}) == len(set(det.verb.tolist()))


def test_columns_are_writable_arrays(tmp_path):
    """As the validating reader's: callers may edit a copy of the columns in place."""
    path = write(tmp_path / "d.jsonl", GOOD + "\n")
    assert _read_fast(path.read_bytes(), path) is not None
    det = read_detections(path)
    assert all(np.asarray(getattr(det, name)).flags.writeable for name in FIELDS)

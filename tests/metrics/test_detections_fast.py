"""The fast (pyarrow) reader of HOI detections gives exactly the validating reader's result.

``read_detections`` parses well-formed files with pyarrow straight into columns and hands
everything else to the validating reader (Python's ``json``, every field checked). These tests
compare the two on valid files of every format (field by field, numbers bit for bit) and
check, for malformed or unusual files, that the fast path declines and the outcome — result or
one-line error — is the validating reader's; hypothesis writes further files token by token,
valid or with defects, on which the two readers must agree.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.core._errors import InputError
from metrics.detection._detections import COCO_OBJECT_IDS, _read_validating
from metrics.detection._detections_fast import _read_fast, read_detections

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
                h["extra"] = {"ignored": [1, 2.5], "note": "x"}
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

# files the fast path must decline; the validating reader then gives its result or error
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
    # the validating reader's policy covers fields it does not use: pyarrow parses them too
    "unknown field of mixed types": json.dumps({"image": "a.jpg", "hois": [hoi(extra=[1, "x"])]}) + "\n",
    "NaN in an unknown field": GOOD[:-1] + ', "note": NaN}\n',
    "Infinity in an unknown field": json.dumps({"image": "a.jpg", "hois": [hoi()]})[:-3] + ', "x": -Infinity}]}\n',
    "Inf (pyarrow's) in an unknown field": GOOD[:-1] + ', "note": [Inf]}\n',
    "number beyond the doubles in an unknown field": GOOD[:-1] + ', "note": {"x": 2e308}}\n',
    "301-digit integer in an unknown field": GOOD[:-1] + ', "note": ' + "1" * 301 + "}\n",
    "301-digit integer as a score": GOOD.replace("0.5", "1" * 301) + "\n",
    "repeated unknown key": GOOD[:-1] + ', "note": 1, "note": 2}\n',
    "repeated key inside an unknown field": GOOD[:-1] + ', "note": {"k": 1, "k": 1}}\n',
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


def test_a_missing_file_or_a_folder_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError, match="nope.jsonl: no such file"):
        read_detections(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a folder; give a file"):
        read_detections(tmp_path)


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
        "NaN in an unknown field": variant(lambda r: r.update(img_id=0)).replace('"img_id": 0', '"img_id": NaN'),
        "repeated unknown key": variant(lambda r: r.update(img_id=0)).replace('"img_id": 0', '"img_id": 0, "img_id": 0'),
        "301-digit integer as a box corner": variant(lambda r: r["annotations"][0].update(bbox=[0, 0, 1, 10 ** 300])),
        "301-digit integer as a score": variant(lambda r: r["hoi_annotation"][0].update(score=10 ** 300)),
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


# ---------------------------------------------------------------------------- generated files
# Files written token by token, so that they may hold what json.dumps never writes: odd number
# literals, escaped, repeated or missing keys, values of the wrong type, blank lines, CRLF. Half
# of them are valid (the fast path's ground), the other half have a defect here and there.
NUMBERS = st.one_of(
    st.integers(-10 ** 4, 10 ** 4).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["-0", "-0.0", "0.0", "1E+2", "2.5e-3", "-1e-7", "1e-400", "9007199254740993",
                     "0.1000000000000000055511151231257827", "4.9406564584124654e-324", "1e308"]))
ODD_NUMBERS = st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "9223372036854775807",
                               "9223372036854775808", "-9223372036854775809", "18446744073709551616",
                               "123456789012345678901234567890", "1" * 301, "1e300", "01", "+1", ".5",
                               "Inf", "true", "null", '"1"', "[1]", "{}"])
LABEL_TEXTS = st.one_of(
    st.sampled_from(LABELS + ["ride"]).flatmap(
        lambda s: st.sampled_from([json.dumps(s), json.dumps(s, ensure_ascii=False)])),
    st.text(min_size=1, max_size=6).map(json.dumps),
    st.just('"r\u0069de"'))
EXTRAS = ['{"score": "x"}', "[1, null]", '"verb"', "[[]]", "-0", "12345678901234567890", "1e300", "NaN",
          "-Infinity", '{"k": 1, "k": 2}', "[1, \"x\"]", "1" * 301]
ODD_LABELS = st.sampled_from(['""', "null", "3", '["ride"]', '{"a": 1}', '"\\ud800"'])


class Writer:
    """Draws the text of one file; ``odd`` files get a defect at about one site in ten."""

    def __init__(self, draw, odd: bool):
        self.draw, self.odd = draw, odd

    def defect(self) -> bool:
        return self.odd and not self.draw(st.integers(0, 9))

    def pick(self, good, bad):
        return self.draw(bad if self.defect() else good)

    def number(self) -> str:
        return self.pick(NUMBERS, ODD_NUMBERS)

    def label(self) -> str:
        return self.pick(LABEL_TEXTS, ODD_LABELS)

    def box(self) -> str:
        if self.defect():
            return self.draw(st.one_of(st.lists(self.draw(st.just(NUMBERS)), max_size=5).map(
                lambda v: "[" + ", ".join(v) + "]"), st.sampled_from(["null", '"[0, 0, 1, 1]"', "{}"])))
        values = sorted(self.draw(st.lists(NUMBERS, min_size=4, max_size=4)), key=float)
        return f"[{values[0]}, {values[2]}, {values[1]}, {values[3]}]"   # x1 <= x2, y1 <= y2

    def key(self, name: str) -> str:
        """Plain, or now and then with an escaped first letter."""
        return json.dumps(name) if self.draw(st.integers(0, 9)) else f'"\\u{ord(name[0]):04x}{name[1:]}"'

    def members(self, fields: dict) -> str:
        """``{...}`` of ``fields`` (name -> value text) in drawn order, with now and then an
        unknown field; a defect drops or repeats one."""
        items = [(self.key(k), v) for k, v in fields.items()]
        if items and self.defect():
            items.pop(self.draw(st.integers(0, len(items) - 1)))
        if items and self.defect():
            items.append(self.draw(st.sampled_from(items)))
        if not self.draw(st.integers(0, 4)):
            items.append(('"extra"', self.draw(st.sampled_from(EXTRAS))))
        items = self.draw(st.permutations(items))
        sep, colon = self.draw(st.sampled_from([", ", ",", " , "])), self.draw(st.sampled_from([": ", ":"]))
        return "{" + sep.join(f"{k}{colon}{v}" for k, v in items) + "}"

    def name(self, i: int) -> str:
        return self.pick(st.just(json.dumps(f"img_{i}.jpg")), st.one_of(ODD_LABELS, st.just('"img_0.jpg"')))

    def listing(self, items: list) -> str:
        return self.pick(st.just("[" + ", ".join(items) + "]"), st.sampled_from(["null", "{}"]))


@st.composite
def jsonl_files(draw) -> bytes:
    w = Writer(draw, draw(st.booleans()))
    lines = []
    for i in range(draw(st.integers(0, 4))):
        hois = []
        for _ in range(draw(st.integers(0, 3))):
            fields = {"human_box": w.box(), "object_box": w.box(), "verb": w.label(), "object": w.label()}
            if draw(st.booleans()):
                fields["score"] = w.number()
            hois.append(w.members(fields))
        lines.append(w.members({"image": w.name(i), "hois": w.listing(hois)}))
    if w.defect():
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "null", "3", "[]"])))
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    # a defect: a line break before or after the one drawn, or a value over two lines
    seps = [w.pick(st.just(sep), st.sampled_from(["\n", "\r\n", "\r", " ", "\n\n", "\n "])) for _ in lines]
    text = "".join(line + s for line, s in zip(lines, seps))
    if lines and draw(st.booleans()):   # no line break at the end
        text = text[:-len(seps[-1])]
    if w.defect():
        text = text.replace(", ", draw(st.sampled_from([",\n", ",\r\n"])), 1)
    return (w.pick(st.just(""), st.sampled_from(["\ufeff", " "])) + text).encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=jsonl_files())
def test_generated_json_lines_read_the_same(tmp_path, data):
    path = write(tmp_path / "d.jsonl", data)
    assert outcome(read_detections, path) == outcome(_read_validating, path)


@st.composite
def qpic_files(draw) -> bytes:
    w = Writer(draw, draw(st.booleans()))
    predictions = draw(st.booleans())
    box_key, hoi_key = ("predictions", "hoi_prediction") if predictions else ("annotations", "hoi_annotation")
    records = []
    for i in range(draw(st.integers(0, 4))):
        n_boxes = draw(st.integers(0, 3))
        boxes = [w.members({"bbox": w.box(), "category_id": w.pick(st.sampled_from(COCO_OBJECT_IDS).map(str),
                                                                   st.sampled_from(["12", "0", "91", "null"]))})
                 for _ in range(n_boxes)]
        hois = []
        for _ in range(draw(st.integers(0, 3)) if n_boxes else 0):
            index = st.integers(0, n_boxes - 1).map(str)
            fields = {"subject_id": w.pick(index, st.sampled_from(["-1", "3", "0.0", "true", "null", '"0"'])),
                      "object_id": w.pick(index, st.sampled_from(["-1", "3", "0.0", "null"])),
                      "category_id": w.pick(st.integers(1, 117).map(str), st.sampled_from(["0", "118", "1.0", "true"]))}
            if predictions or not draw(st.integers(0, 4)):
                fields["score"] = w.number()
            hois.append(w.members(fields))
        records.append(w.members({"file_name": w.name(i), box_key: w.listing(boxes), hoi_key: w.listing(hois)}))
    layout = draw(st.sampled_from([", ", ",", ",\n  ", "lines"]))
    text = "".join(r + "\n" for r in records) if layout == "lines" else "[" + layout.join(records) + "]"
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qpic_files())
def test_generated_qpic_files_read_the_same(tmp_path, data):
    path = write(tmp_path / "d.json", data)
    assert outcome(read_detections, path) == outcome(_read_validating, path)

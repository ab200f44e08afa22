"""Bad input, everywhere it enters: every command and importer gets malformed files.

Each case writes a complete, valid set of inputs, replaces one file with a malformed version
and runs the command in-process (``metrics.cli.main`` / ``studyapp.platform.commands.cli.main``). The contract:
exit status non-zero, exactly one line on stderr that names the file and the line or field
(``expect``), no traceback, and nothing written (``--json`` / ``--out`` paths absent, the
database without a study). A few cases run through the real entry points as subprocesses.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import faults
import numpy as np
import pytest
from projectpaths import ROOT

from metrics import cli as metrics_cli
from studyapp.platform.commands import cli as studyapp_cli

A, B = [0, 0, 10, 10], [20, 20, 30, 30]


def hoi(**kw):
    d = {"human_box": A, "object_box": B, "verb": "ride", "object": "horse", "score": 0.9}
    d.update(kw)
    return d


def jl(*records) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


GOOD_GT = jl({"image": "a.jpg", "hois": [{k: v for k, v in hoi().items() if k != "score"}]},
             {"image": "b.jpg", "hois": [{k: v for k, v in hoi(verb="hold", object="cup").items() if k != "score"}]})
GOOD_PRED = jl({"image": "a.jpg", "hois": [hoi(score=0.8)]}, {"image": "b.jpg", "hois": [hoi(verb="hold", object="cup", score=0.4)]})


GOOD_ITEMS, GOOD_RATINGS, GOOD_MATRIX = faults.ITEMS, faults.RATINGS, faults.MATRIX
GOOD_STUDY_ITEMS = (b"item_id,gt_verb,gt_object,pred_verb,pred_object\n"
                    b"i1,ride,bicycle,push,bicycle\ni2,hold,cup,carry,cup\n")
GOOD_SPEC = b'''title = "T"
study_type = "hoi_similarity"
instructions = "Rate."
[items]
source = "csv"
path = "items.csv"
'''
GOOD_WEIGHTS = b"hoi_id,weight\n1,1.0\n2,2.0\n"

GOOD_FILES = {"gt.jsonl": GOOD_GT, "pred.jsonl": GOOD_PRED, "items.csv": GOOD_ITEMS,
              "ratings.csv": GOOD_RATINGS, "verb.csv": GOOD_MATRIX, "object.csv": GOOD_MATRIX,
              "study.toml": GOOD_SPEC, "study_items.csv": GOOD_STUDY_ITEMS,
              "weights.csv": GOOD_WEIGHTS, "pairs.csv": b"a,b\nride.v.01,hold.v.01\n"}
GOOD_SPEC_USING = GOOD_SPEC.replace(b'"items.csv"', b'"study_items.csv"')
GOOD_FILES["study.toml"] = GOOD_SPEC_USING

# Commands: argv (with {name} placeholders for the files above) and the outputs they may write.
METRICS = {
    "score": (["score", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--json", "{out.json}"], ["out.json"]),
    "score-sim": (["score", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--verb-sim", "{verb.csv}",
                   "--object-sim", "{object.csv}", "--json", "{out.json}"], ["out.json"]),
    "diagnose": (["diagnose", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--out", "{outdir}",
                  "--json", "{out.json}"], ["outdir", "out.json"]),
    "agreement": (["agreement", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--bootstrap", "0",
                   "--out", "{outdir}", "--json", "{out.json}"], ["outdir", "out.json"]),
    "alignment": (["alignment", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--metric", "my_metric",
                   "--permutations", "10", "--json", "{out.json}"], ["out.json"]),
    "tune-w": (["tune-w", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--out", "{outdir}",
                "--json", "{out.json}"], ["outdir", "out.json"]),
    "recalibrate": (["recalibrate", "--ratings", "{ratings.csv}", "--items", "{items.csv}",
                     "--verb-sim", "{verb.csv}", "--object-sim", "{object.csv}", "--folds", "2",
                     "--out", "{outdir}", "--json", "{out.json}"], ["outdir", "out.json"]),
    "match": (["match", "--verb", "riding", "--gt-verb", "ride.v.01", "--verb-sim", "{verb.csv}",
               "--json", "{out.json}"], ["out.json"]),
    "matrix-info": (["matrix", "info", "{verb.csv}", "--pairs", "{pairs.csv}", "--json", "{out.json}"], ["out.json"]),
}
STUDYAPP = {
    "create": (["create", "{study.toml}"], []),
    "sample": (["sample", "--n", "12", "--class-weights", "{weights.csv}", "--out", "{outdir}/items.csv"], ["outdir"]),
    "sample-sim": (["sample", "--n", "12", "--verb-sim", "{verb.csv}", "--out", "{outdir}/items.csv"], ["outdir"]),
    "check-images": (["check-images", "{study.toml}"], []),
}


@dataclass
class Case:
    id: str
    commands: list[str]
    file: str
    content: bytes
    expect: str              # text the message must contain besides the file name (line / field / key)
    name_in_message: str | None = None  # default: the file's name
    extra_files: dict = field(default_factory=dict)


CASES: list[Case] = []


def add(id, commands, file, content, expect, **kw):
    CASES.append(Case(id, commands, file, content, expect, **kw))


# --------------------------------------------------------------- detections (JSON Lines)
DET_CMDS_GT = ["score", "diagnose"]
DET_CMDS_PRED = ["score"]
good_line = json.dumps({"image": "a.jpg", "hois": [hoi()]})
bad_lines = {
    "invalid-json": ("{not json", "line 2"),
    "truncated-json": ('{"image": "z.jpg", "hois": [{"human_box": [0, 0', "line 2"),
    "list-not-object": ("[1, 2, 3]", "line 2"),
    "number-line": ("42", "line 2"),
    "null-line": ("null", "line 2"),
    "string-line": ('"a.jpg"', "line 2"),
    "image-missing": (json.dumps({"hois": []}), "line 2"),
    "image-number": (json.dumps({"image": 5, "hois": []}), "line 2"),
    "hois-not-list": (json.dumps({"image": "z.jpg", "hois": "ride"}), "line 2"),
    "hoi-not-object": (json.dumps({"image": "z.jpg", "hois": [7]}), "line 2"),
    "box-missing": (json.dumps({"image": "z.jpg", "hois": [{"human_box": A, "verb": "ride", "object": "horse", "score": 1}]}), "object_box"),
    "box-three-numbers": (json.dumps({"image": "z.jpg", "hois": [hoi(human_box=[0, 0, 1])]}), "human_box"),
    "box-strings": (json.dumps({"image": "z.jpg", "hois": [hoi(object_box=["a", "b", "c", "d"])]}), "object_box"),
    "box-nan": ('{"image": "z.jpg", "hois": [{"human_box": [NaN, 0, 10, 10], "object_box": [0, 0, 1, 1], "verb": "ride", "object": "horse", "score": 1}]}', "human_box"),
    "box-infinite": ('{"image": "z.jpg", "hois": [{"human_box": [0, 0, 1e400, 10], "object_box": [0, 0, 1, 1], "verb": "ride", "object": "horse", "score": 1}]}', "human_box"),
    # negative-size boxes (slightly negative corners are real detector output and accepted)
    "box-negative-width": (json.dumps({"image": "z.jpg", "hois": [hoi(human_box=[30, 5, -10, 10])]}), "human_box"),
    "box-x2-lt-x1": (json.dumps({"image": "z.jpg", "hois": [hoi(object_box=[10, 0, 0, 10])]}), "object_box"),
    "box-y2-lt-y1": (json.dumps({"image": "z.jpg", "hois": [hoi(human_box=[0, 10, 10, 0])]}), "human_box"),
    "verb-empty": (json.dumps({"image": "z.jpg", "hois": [hoi(verb="")]}), "verb"),
    "verb-number": (json.dumps({"image": "z.jpg", "hois": [hoi(verb=12)]}), "verb"),
    "object-null": (json.dumps({"image": "z.jpg", "hois": [hoi(object=None)]}), "object"),
    "score-text": (json.dumps({"image": "z.jpg", "hois": [hoi(score="high")]}), "score"),
    "score-nan": ('{"image": "z.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], "verb": "ride", "object": "horse", "score": NaN}]}', "score"),
    "score-huge": ('{"image": "z.jpg", "hois": [{"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], "verb": "ride", "object": "horse", "score": 1e400}]}', "score"),
    "duplicate-image": (json.dumps({"image": "a.jpg", "hois": [hoi()]}), "line 2"),
}
for key, (line, expect) in bad_lines.items():
    add(f"pred-{key}", DET_CMDS_PRED, "pred.jsonl", jl(good_line, line), expect)
    gt_line = line.replace(', "score": 1', "").replace(', "score": 0.9', "")
    if not key.startswith("score"):
        add(f"gt-{key}", DET_CMDS_GT, "gt.jsonl", jl(json.dumps({"image": "a.jpg", "hois": []}), gt_line), expect)
for target, cmds in (("gt.jsonl", DET_CMDS_GT), ("pred.jsonl", DET_CMDS_PRED)):
    if target == "gt.jsonl":  # an empty prediction file is a detector that found nothing
        add(f"{target}-empty-file", cmds, target, b"", "no ground-truth HOIs")
        add(f"{target}-blank-lines", cmds, target, b"\n\n  \n", "no ground-truth HOIs")
    add(f"{target}-latin1", cmds, target, '{"image": "caf\u00e9.jpg", "hois": []}\n'.encode("latin-1"), "UTF-8")
    add(f"{target}-utf16", cmds, target, '{"image": "a.jpg", "hois": []}\n'.encode("utf-16"), "UTF-8")
    add(f"{target}-binary", cmds, target, bytes(range(256)), "UTF-8")
    add(f"{target}-qpic-bad-record", cmds, target, b'[{"file_name": "a.jpg", "annotations": [{"bbox": [0, 0, 1], "category_id": 1}], "hoi_annotation": []}]', "bbox")
    add(f"{target}-qpic-bad-index", cmds, target, b'[{"file_name": "a.jpg", "annotations": [{"bbox": [0, 0, 1, 1], "category_id": 1}], "hoi_annotation": [{"subject_id": 0, "object_id": 5, "category_id": 1, "score": 1}]}]', "object_id")

# --------------------------------------------------------------- ratings.csv
RATING_CMDS = ["agreement", "alignment", "tune-w", "recalibrate"]
header = b"study,item_id,annotator,rating,created_at\n"
rows = GOOD_RATINGS.split(b"\n", 1)[1]
for key, content, expect in [
    ("empty-file", b"", "ratings.csv"),
    ("header-only", header, "no ratings"),
    ("missing-rating-column", b"study,item_id,annotator\ns,i0,a\n", "rating"),
    ("missing-annotator-column", b"item_id,rating\ni0,2\n", "annotator"),
    ("extra-field-in-row", header + rows + b"s,i0,ann9,2,2030-01-01,EXTRA\n", "line"),
    ("rating-out-of-range", header + rows + b"s,i0,ann9,9,2030-01-01\n", "line"),
    ("rating-negative", header + rows + b"s,i0,ann9,-1,2030-01-01\n", "line"),
    ("rating-text", header + rows + b"s,i0,ann9,high,2030-01-01\n", "line"),
    ("rating-nan", header + rows + b"s,i0,ann9,nan,2030-01-01\n", "line"),
    ("rating-huge", header + rows + b"s,i0,ann9,1e400,2030-01-01\n", "line"),
    ("rating-fraction", header + rows + b"s,i0,ann9,2.5,2030-01-01\n", "line"),
    ("annotator-empty", header + rows + b"s,i0,,2,2030-01-01\n", "line"),
    ("item-empty", header + rows + b"s,,ann9,2,2030-01-01\n", "line"),
    ("latin1", header + rows + "s,i0,ren\u00e9,2,2030-01-01\n".encode("latin-1"), "UTF-8"),
    ("utf16", GOOD_RATINGS.decode().encode("utf-16"), "UTF-8"),
    ("unclosed-quote", header + rows + b's,"i0,ann9,2,2030\n', "line"),
]:
    add(f"ratings-{key}", RATING_CMDS, "ratings.csv", content, expect)

# --------------------------------------------------------------- items.csv (analysis)
items_header, items_rows = GOOD_ITEMS.split(b"\n", 1)
ITEM_CMDS = ["agreement", "alignment", "tune-w", "recalibrate"]
for key, content, expect in [
    ("empty-file", b"", "items.csv"),
    ("missing-item-id", GOOD_ITEMS.replace(b"item_id,", b"id,", 1), "item_id"),
    ("duplicate-item", GOOD_ITEMS + b"i0,1,ride,horse,ride,dog,1.0,0.5,0.7\n", "line 26"),
    ("category-out-of-range", GOOD_ITEMS + b"i99,7,ride,horse,ride,dog,1.0,0.5,0.7\n", "line 26"),
    ("verb-sim-above-one", GOOD_ITEMS + b"i99,1,ride,horse,ride,dog,1.5,0.5,0.7\n", "line 26"),
    ("verb-sim-negative", GOOD_ITEMS + b"i99,1,ride,horse,ride,dog,-0.5,0.5,0.7\n", "line 26"),
    ("object-sim-text", GOOD_ITEMS + b"i99,1,ride,horse,ride,dog,1.0,high,0.7\n", "line 26"),
    ("extra-field-in-row", GOOD_ITEMS + b"i99,1,ride,horse,ride,dog,1.0,0.5,0.7,EXTRA\n", "line"),
    ("latin1", GOOD_ITEMS + "i99,1,ride,caf\u00e9,ride,dog,1.0,0.5,0.7\n".encode("latin-1"), "UTF-8"),
    ("utf16", GOOD_ITEMS.decode().encode("utf-16"), "UTF-8"),
]:
    add(f"items-{key}", ITEM_CMDS, "items.csv", content, expect)

# --------------------------------------------------------------- similarity matrices
MATRIX_CMDS = ["score-sim", "recalibrate", "match", "matrix-info"]
for key, content, expect in [
    ("empty-file", b"", "verb.csv"),
    ("wrong-header", b"x,y,z\nride.v.01,hold.v.01,2\n", "header"),
    ("missing-column", b"a,b\nride.v.01,hold.v.01\n", "header"),
    ("score-out-of-range", GOOD_MATRIX + b"ride.v.01,push.v.01,7\n", "line 4"),
    ("score-negative", GOOD_MATRIX + b"ride.v.01,push.v.01,-1\n", "line 4"),
    ("score-nan", GOOD_MATRIX + b"ride.v.01,push.v.01,nan\n", "line 4"),
    ("score-text", GOOD_MATRIX + b"ride.v.01,push.v.01,high\n", "line 4"),
    ("score-huge", GOOD_MATRIX + b"ride.v.01,push.v.01,1e400\n", "line 4"),
    ("self-not-4", GOOD_MATRIX + b"ride.v.01,ride.v.01,2\n", "line 4"),
    ("empty-label", GOOD_MATRIX + b",push.v.01,2\n", "line 4"),
    ("conflict", GOOD_MATRIX + b"hold.v.01,ride.v.01,3\n", "hold.v.01"),
    ("extra-field", GOOD_MATRIX + b"ride.v.01,push.v.01,2,9\n", "line"),
    ("latin1", GOOD_MATRIX + "ride.v.01,caf\u00e9,2\n".encode("latin-1"), "UTF-8"),
    ("utf16", GOOD_MATRIX.decode().encode("utf-16"), "UTF-8"),
]:
    add(f"matrix-{key}", MATRIX_CMDS, "verb.csv", content, expect)


def npz_bytes(**arrays) -> bytes:
    import io
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


labels = np.array(["ride.v.01", "hold.v.01"])
for key, content, expect in [
    ("not-square", npz_bytes(labels=labels, scores=np.zeros((2, 3))), "shape"),
    ("out-of-range", npz_bytes(labels=labels, scores=np.array([[4, 9], [9, 4]], float)), "score"),
    ("nan", npz_bytes(labels=labels, scores=np.array([[4, np.nan], [np.nan, 4]])), "score"),
    ("asymmetric", npz_bytes(labels=labels, scores=np.array([[4, 1], [2, 4]], float)), "symmetric"),
    ("no-labels", npz_bytes(scores=np.eye(2) * 4), "labels"),
    ("garbage", b"PK\x03\x04 not really a zip", "npz"),
    ("sparse-index", npz_bytes(labels=labels, row=np.array([0]), col=np.array([5]), val=np.array([2.0])), "index"),
    ("bad-meta", npz_bytes(labels=labels, scores=np.eye(2) * 4, meta=np.array("{not json")), "meta"),
]:
    add(f"npz-{key}", ["matrix-info-npz", "score-npz"], "verb.npz", content, expect)
METRICS["matrix-info-npz"] = (["matrix", "info", "{verb.npz}", "--json", "{out.json}"], ["out.json"])
METRICS["score-npz"] = (["score", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--verb-sim", "{verb.npz}",
                         "--json", "{out.json}"], ["out.json"])
add("pairs-missing-column", ["matrix-info"], "pairs.csv", b"x\nride.v.01\n", "pairs.csv")
add("pairs-latin1", ["matrix-info"], "pairs.csv", "a,b\nride.v.01,caf\u00e9\n".encode("latin-1"), "UTF-8")

# --------------------------------------------------------------- study specs and items (studyapp)
SPEC_CMDS = ["create"]
for key, content, expect in [
    ("empty-file", b"", "missing key"),
    ("invalid-toml", b'title = "T\n', "invalid TOML"),
    ("unknown-key", GOOD_SPEC_USING + b"colour = 'red'\n", "colour"),
    ("unknown-items-key", GOOD_SPEC_USING.replace(b'source = "csv"', b'source = "csv"\nfilter = 1'), "items.filter"),
    ("unknown-study-type", GOOD_SPEC_USING.replace(b"hoi_similarity", b"nope"), "nope"),
    ("title-number", GOOD_SPEC_USING.replace(b'title = "T"', b"title = 5"), "title"),
    ("missing-instructions", GOOD_SPEC_USING.replace(b'instructions = "Rate."\n', b""), "instructions"),
    ("raters-zero", GOOD_SPEC_USING + b"raters_per_item = 0\n", "raters_per_item"),
    ("raters-text", GOOD_SPEC_USING.replace(b"[items]", b'raters_per_item = "three"\n[items]'), "raters_per_item"),
    ("raters-huge", GOOD_SPEC_USING.replace(b"[items]", b"raters_per_item = 99999999999999999999\n[items]"), "raters_per_item"),
    ("bad-slug", GOOD_SPEC_USING.replace(b"[items]", b'slug = "Bad Slug!"\n[items]'), "slug"),
    ("scale-out-of-range", GOOD_SPEC_USING + b"[scale]\nvalues = [0, 10]\nlabels = ['a', 'b']\n", "scale.values"),
    ("scale-label-count", GOOD_SPEC_USING + b"[scale]\nvalues = [0, 1]\nlabels = ['a']\n", "scale.labels"),
    ("javascript-url", GOOD_SPEC_USING + b"[prolific]\ncompletion_url = 'javascript:alert(1)'\n", "completion_url"),
    ("order-unknown", GOOD_SPEC_USING.replace(b"[items]", b'order = "sideways"\n[items]'), "order"),
    ("latin1", GOOD_SPEC_USING.replace(b'"T"', '"caf\u00e9"'.encode("latin-1")), "UTF-8"),
    ("utf16", GOOD_SPEC_USING.decode().encode("utf-16"), "UTF-8"),
    ("items-path-missing", GOOD_SPEC_USING.replace(b"study_items.csv", b"nope.csv"), "items.path"),
]:
    add(f"spec-{key}", SPEC_CMDS, "study.toml", content, expect)
for key, content, expect in [
    ("empty-file", b"", "empty file"),
    ("header-only", b"item_id,gt_verb,gt_object,pred_verb,pred_object\n", "no items"),
    ("missing-column", b"item_id,gt_verb,gt_object,pred_verb\ni1,ride,bicycle,push\n", "pred_object"),
    ("extra-field-in-row", GOOD_STUDY_ITEMS + b"i3,ride,horse,walk,horse,EXTRA\n", "line 4"),
    ("unknown-label", GOOD_STUDY_ITEMS + b"i3,zzfrobnicate,horse,walk,horse\n", "line 4"),
    ("wrong-pos-synset", GOOD_STUDY_ITEMS + b"i3,horse.n.01,horse,walk,horse\n", "line 4"),
    ("duplicate-id", GOOD_STUDY_ITEMS + b"i1,ride,horse,walk,horse\n", "line 4"),
    ("empty-id", GOOD_STUDY_ITEMS + b",ride,horse,walk,horse\n", "line 4"),
    ("long-id", GOOD_STUDY_ITEMS + b"i" * 80 + b",ride,horse,walk,horse\n", "line 4"),
    ("bad-role", b"item_id,gt_verb,gt_object,pred_verb,pred_object,role\ni1,ride,bicycle,push,bicycle,boss\n", "line 2"),
    ("category-mismatch", b"item_id,gt_verb,gt_object,pred_verb,pred_object,category\ni1,ride,bicycle,push,bicycle,3\n", "line 2"),
    ("sim-nan", b"item_id,gt_verb,gt_object,pred_verb,pred_object,verb_sim\ni1,ride,bicycle,push,bicycle,nan\n", "line 2"),
    ("sim-huge", b"item_id,gt_verb,gt_object,pred_verb,pred_object,verb_sim\ni1,ride,bicycle,push,bicycle,1e400\n", "line 2"),
    ("latin1", GOOD_STUDY_ITEMS + "i3,ride,caf\u00e9,walk,horse\n".encode("latin-1"), "UTF-8"),
    ("utf16", GOOD_STUDY_ITEMS.decode().encode("utf-16"), "UTF-8"),
    ("nul-bytes", GOOD_STUDY_ITEMS + b"i3,ri\x00de,horse,walk,horse\n", "line 4"),
]:
    add(f"study-items-{key}", SPEC_CMDS + ["check-images"] * 0, "study_items.csv", content, expect)
for key, content, expect in [
    ("missing-column", b"hoi_id\n1\n", "weight"),
    ("negative", GOOD_WEIGHTS + b"3,-1\n", "line 4"),
    ("nan", GOOD_WEIGHTS + b"3,nan\n", "line 4"),
    ("text", GOOD_WEIGHTS + b"3,heavy\n", "line 4"),
    ("unknown-hoi", GOOD_WEIGHTS + b"9999,1\n", "line 4"),
    ("empty-file", b"", "weights.csv"),
    ("latin1", "verb,object,weight\nride,caf\u00e9,1\n".encode("latin-1"), "UTF-8"),
]:
    add(f"weights-{key}", ["sample"], "weights.csv", content, expect)
add("sample-bad-matrix", ["sample-sim"], "verb.csv", GOOD_MATRIX + b"ride.v.01,push.v.01,7\n", "line 4")


# --------------------------------------------------------------- the runner
def materialize(tmp_path: Path, case: Case) -> dict[str, str]:
    files = dict(GOOD_FILES)
    files["verb.npz"] = npz_bytes(labels=labels, scores=np.eye(2) * 4)
    files[case.file] = case.content
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    names = {name: str(tmp_path / name) for name in files}
    names["out.json"] = str(tmp_path / "out.json")
    names["outdir"] = str(tmp_path / "outdir")
    return names


def expand(argv: list[str], names: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in names.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def run_case(tmp_path, capsys, case: Case, command: str):
    names = materialize(tmp_path, case)
    db = tmp_path / "studyapp.sqlite"
    if command in STUDYAPP:
        argv, outputs = STUDYAPP[command]
        main = studyapp_cli.main
    else:
        argv, outputs = METRICS[command]
        main = metrics_cli.main
    try:
        status = main(expand(argv, names))
    except SystemExit as exc:  # argparse
        status = exc.code
    except Exception as exc:  # an escaped exception is a traceback for the user
        pytest.fail(f"{command} raised {type(exc).__name__}: {exc}")
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert status not in (0, None), f"{command} accepted {case.id}: {captured.out[-300:]}"
    assert "Traceback" not in captured.err
    lines = err.splitlines()
    assert len(lines) == 1, f"{command}: {err!r}"
    shown = case.name_in_message or case.file
    assert shown in lines[0], f"{command}: message does not name {shown}: {lines[0]!r}"
    assert case.expect.lower() in lines[0].lower(), f"{command}: message lacks {case.expect!r}: {lines[0]!r}"
    for output in outputs:
        assert not Path(names[output]).exists(), f"{command} wrote {output} despite the error"
    if db.exists():
        import sqlite3
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "study" in tables:
                assert conn.execute("SELECT COUNT(*) FROM study").fetchone()[0] == 0
    return lines[0]


PARAMS = [pytest.param(case, command, id=f"{case.id}-{command}") for case in CASES for command in case.commands]


def test_there_are_at_least_100_bad_inputs():
    assert len(CASES) >= 100 and len(PARAMS) >= 200


@pytest.mark.parametrize("case,command", PARAMS)
def test_bad_input_is_one_line_naming_the_place(tmp_path, capsys, case, command):
    run_case(tmp_path, capsys, case, command)


@pytest.mark.slow
def test_valid_inputs_pass(tmp_path, capsys):
    """The baseline files are accepted by every command (so each bad case tests one defect)."""
    names = materialize(tmp_path, Case("good", [], "gt.jsonl", GOOD_GT, ""))
    for command, (argv, outputs) in {**METRICS, **{k: v for k, v in STUDYAPP.items() if k != "check-images"}}.items():
        main = studyapp_cli.main if command in STUDYAPP else metrics_cli.main
        status = main(expand(argv, names))
        err = capsys.readouterr().err
        assert status == 0, f"{command}: {err}"
        for output in outputs:
            Path(names[output]).exists()
        if command == "create":
            from studyapp.core import storage
            storage.dispose_all()
            (tmp_path / "studyapp.sqlite").unlink()


@pytest.mark.parametrize("module,case_id,command", [
    ("metrics", "pred-box-x2-lt-x1", "score"),
    ("metrics", "ratings-utf16", "agreement"),
    ("metrics", "npz-not-square", "matrix-info-npz"),
    ("studyapp", "spec-unknown-key", "create"),
    ("studyapp", "study-items-latin1", "create"),
])
def test_real_entry_points(tmp_path, module, case_id, command):
    case = next(c for c in CASES if c.id == case_id)
    names = materialize(tmp_path, case)
    argv = expand((STUDYAPP if module == "studyapp" else METRICS)[command][0], names)
    env = {"PATH": "/usr/bin:/bin", "STUDYAPP_DB": str(tmp_path / "studyapp.sqlite"),
           "HOME": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=env)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert case.file in res.stderr and case.expect.lower() in res.stderr.lower()
    assert not (tmp_path / "out.json").exists()


def test_nan_is_not_silently_a_number():
    assert math.isnan(float("nan"))  # keeps the NaN cases above meaningful on this platform

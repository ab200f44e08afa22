"""Bad files, bad databases and faults, for every command.

Each case starts from the valid world of ``faults.py``, replaces one input (a file's bytes, an
environment variable naming the database) and runs the command in-process: exit status 2 (1
for ``health``, which reports on stdout), exactly one line naming the file or setting and the
line or field, no traceback, and nothing written or changed — every file under the test's
folder byte for byte and every database row. A few cases run as real processes. The encoding
policy is also checked the other way: a byte-order mark is accepted by every reader, and line
numbers are the CSV reader's own after blank lines and quoted line breaks.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

import numpy as np
import pytest
from faults import (  # noqa: F401 (fixtures)
    COMMANDS,
    FILES,
    Refusal,
    check_refused,
    expand,
    jl,
    npy_bytes,
    npz_bytes,
    option_name,
    parsers,
    run_in_process,
    run_process,
    state,
    value_actions,
    with_value,
    world,
    world_template,
)

LABELS = np.array(["ride.v.01", "hold.v.01"])
UTF16 = "utf-16"


@dataclass
class Case:
    id: str
    command: str
    files: dict = field(default_factory=dict)       # world file -> new bytes (or a callable of the old)
    argv: dict = field(default_factory=dict)        # option -> new value ("" removes it)
    env: dict = field(default_factory=dict)         # environment changes ({w} expands)
    expect: list = field(default_factory=list)
    status: int = 2
    stream: str = "err"


CASES: list[Case] = []


def add(id, command, expect, **kw):
    CASES.append(Case(id, command, expect=expect if isinstance(expect, list) else [expect], **kw))


def encodings(command, name, empty=True):
    """UTF-16, Latin-1, binary and (unless it is valid) empty versions of a world file."""
    text = FILES[name].decode()
    add(f"{command}-{name}-utf16", command, [name, "UTF-16", "not UTF-8"], files={name: text.encode(UTF16)})
    latin = text.replace("a", "\u00e9", 1) if "a" in text else "\u00e9" + text
    add(f"{command}-{name}-latin1", command, [name, "not UTF-8"], files={name: latin.encode("latin-1")})
    add(f"{command}-{name}-binary", command, [name, "not UTF-8"], files={name: bytes(range(128, 256)) * 4})
    if empty:
        add(f"{command}-{name}-empty", command, [name], files={name: b""})


def json_policy(command, name, value, field_path, argv=None):
    """Repeated keys, NaN, infinity and a 400-digit number inside ``value`` (a JSON-able dict
    whose ``field_path`` entry is replaced)."""
    text = json.dumps(value)
    target = json.dumps(field_path[1])
    assert target in text, (name, target)
    argv = argv or {}
    add(f"{command}-{name}-nan", command, [name, f"field {field_path[0]}", "NaN"],
        files={name: text.replace(target, "NaN", 1).encode()}, argv=argv)
    add(f"{command}-{name}-infinity", command, [name, f"field {field_path[0]}", "Infinity"],
        files={name: text.replace(target, "-Infinity", 1).encode()}, argv=argv)
    add(f"{command}-{name}-huge", command, [name, f"field {field_path[0]}", "too large"],
        files={name: text.replace(target, "9" * 400, 1).encode()}, argv=argv)
    first = next(iter(value))
    dup = text.replace("{", "{" + json.dumps(first) + ": 1, ", 1)
    add(f"{command}-{name}-duplicate-key", command, [name, "appears twice"], files={name: dup.encode()}, argv=argv)
    add(f"{command}-{name}-not-an-object", command, [name], files={name: b"[1, 2, 3]"}, argv=argv)
    add(f"{command}-{name}-invalid", command, [name, "line 1", "invalid JSON"], files={name: text[:-3].encode()},
        argv=argv)


# ------------------------------------------------------------------ swig
class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch ran-swig",))


SWIG_GT = json.loads(FILES["swig_gt.json"])
encodings("swig", "swig_gt.json")
json_policy("swig", "swig_gt.json", SWIG_GT[0], ("box_annotations[1].bbox", 20), argv={})
add("swig-pred-runs-code", "swig", ["swig_pred.pkl", "refused: the pickle would import posix.system"],
    files={"swig_pred.pkl": pickle.dumps([[], [_RunsCode()]])})
add("swig-pred-truncated", "swig", ["swig_pred.pkl", "not a readable pickle"],
    files={"swig_pred.pkl": FILES["swig_pred.pkl"][:-5]})
add("swig-pred-short-row", "swig", ["swig_pred.pkl", "image 1 detection [0]", "11 numbers"],
    files={"swig_pred.pkl": pickle.dumps([[], [[0, 0, 0, 10, 10]]])})
add("swig-gt-not-an-interaction", "swig", ["swig_gt.json", "hoi_annotations[0]", "not a SWIG-HOI interaction"],
    files={"swig_gt.json": FILES["swig_gt.json"].replace(b'"action_id": 169', b'"action_id": 1')})


# ------------------------------------------------------------------ vcoco
VCOCO = json.loads(FILES["vcoco.json"])
COCO = json.loads(FILES["coco.json"])
encodings("vcoco", "vcoco.json")
encodings("vcoco", "coco.json")
json_policy("vcoco", "coco.json", COCO, ("annotations[1].bbox", 20))
add("vcoco-pred-runs-code", "vcoco", ["vcoco_dets.pkl", "refused: the pickle would import posix.system"],
    files={"vcoco_dets.pkl": pickle.dumps([_RunsCode()])})
add("vcoco-pred-truncated", "vcoco", ["vcoco_dets.pkl", "not a readable pickle"],
    files={"vcoco_dets.pkl": FILES["vcoco_dets.pkl"][:-5]})
add("vcoco-ids-not-the-split", "vcoco", ["vcoco.ids", "must list the images"], files={"vcoco.ids": b"2\n"})
add("vcoco-role-object-missing", "vcoco", ["vcoco.json", "action hold, role obj", "not a kept box"],
    files={"vcoco.json": FILES["vcoco.json"].replace(b"[10, 11]", b"[10, 99]")})
add("vcoco-ground-truth-only-role-object-missing", "vcoco", ["vcoco.json", "action hold, role obj", "not a kept box"],
    files={"vcoco.json": FILES["vcoco.json"].replace(b"[10, 11]", b"[10, 99]")}, argv={"--pred": ""})
add("vcoco-neither-pred-nor-hois-out", "vcoco", ["argument --pred", "required without --hois-out"],
    argv={"--pred": "", "--hois-out": ""})


# ------------------------------------------------------------------ datasets and senses
VCOCO_LABELS_GT = (FILES["gt.jsonl"].replace(b'"ride"', b'"hit-instr"').replace(b'"horse"', b'"tennis_racket"')
                   .replace(b'"hold"', b'"kick-obj"').replace(b'"cup"', b'"sports_ball"'))
for command in ("score", "diagnose"):
    add(f"{command}-gt-of-another-dataset", command,
        ["argument --dataset", "gt.jsonl", "V-COCO's labels (--dataset vcoco)", "--any-labels"],
        files={"gt.jsonl": VCOCO_LABELS_GT})
add("score-pred-a-vcoco-pickle", "score",
    ["pred.jsonl", "a Python pickle, not HOI detections", "metrics vcoco --pred FILE --hois-out DIR"],
    files={"pred.jsonl": FILES["vcoco_dets.pkl"]})
SPEC_T2 = FILES["study.toml"].replace(b'slug = "t"', b'slug = "t2"')
add("create-every-item-an-excluded-sense", "create",
    ["study.toml", "every item shows an excluded sense", "i1 (whore.v.01)"],
    files={"study.toml": SPEC_T2, "study_items.csv": b"item_id,gt_verb,gt_object,pred_verb,pred_object\n"
                                                     b"i1,work.v.01,laptop.n.01,whore.v.01,laptop.n.01\n"})
SHOE_HEADER = b"image_id,gt_verb,gt_object,gt_verb_synset,gt_object_synset,pred_verb_synset,pred_object_synset"
add("create-shoe-layout-without-category", "create",
    ["study_items.csv", "missing columns 'category', 'similarity_level' of SHOE's layout"],
    files={"study.toml": SPEC_T2, "study_items.csv": SHOE_HEADER + b"\n1,ride,horse,ride.v.01,horse.n.01,"
                                                     b"ride.v.01,cow.n.01\n"})
add("create-llm-row-of-an-excluded-item", "create",
    ["llm.csv line 3", "item_id 'i2' is excluded from the study", "whore.v.01", "offensive-sense exclusion"],
    files={"study.toml": SPEC_T2 + b'[llm]\nratings = "llm.csv"\n',
           "study_items.csv": b"item_id,gt_verb,gt_object,pred_verb,pred_object\n"
                              b"i1,ride.v.01,horse.n.01,ride.v.01,cow.n.01\n"
                              b"i2,work.v.01,laptop.n.01,whore.v.01,laptop.n.01\n",
           "llm.csv": b"item_id,m1\ni1,3\ni2,1\n"})
add("create-exclude-senses-not-a-list", "create", ["study.toml", "items.exclude_senses", "list of synset names"],
    files={"study.toml": SPEC_T2 + b'exclude_senses = "straddle.v.01"\n'})


# ------------------------------------------------------------------ mcq
encodings("mcq", "bench.json")
encodings("mcq", "answers.json")
bench = {"q1": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["walk a/an horse"],
                "boxes": {"human": [1.25, 2, 3, 4]}}}
json_policy("mcq", "bench.json", bench, ("q1.boxes.human[0]", 1.25))
add("mcq-bench-no-options", "mcq", ["bench.json", "q1"],
    files={"bench.json": json.dumps({"q1": {"gt_choices": [], "wrong_choices": []}}).encode()})
add("mcq-answers-duplicate-key", "mcq", ["answers.json", "appears twice"],
    files={"answers.json": b'{"q1": ["ride a/an horse"], "q1": []}'})
add("mcq-answers-jsonl-nan", "mcq", ["answers.json", "line 2", "hois[0].score", "NaN"],
    files={"answers.json": b'{"image": "q2", "hois": []}\n{"image": "q1", "hois": [{"human_box": [0, 0, 1, 1], '
                           b'"object_box": [0, 0, 1, 1], "verb": "ride", "object": "horse", "score": NaN}]}\n'})

# ------------------------------------------------------------------ imsitu
for name in ("gold.json", "verbs.json", "clusters.json"):
    encodings("imsitu", name)
json_policy("imsitu", "verbs.json", {"a.jpg": ["leaping", 7]}, ("a.jpg[1]", 7))
add("imsitu-gold-duplicate-image", "imsitu", ["gold.json", "'a.jpg' appears twice"],
    files={"gold.json": b'{"a.jpg": "jumping", "a.jpg": "riding"}'})
add("imsitu-clusters-unknown-id", "imsitu", ["clusters.json", "unknown cluster id"],
    files={"clusters.json": json.dumps({"clusters": {"c1": ["jumping"]}, "images": {"a.jpg": ["c9"]}}).encode()})
add("imsitu-pred-missing-folder", "imsitu", ["--pred", "no such file"], argv={"--pred": "{w}/nope"})

# ------------------------------------------------------------------ imsitu-cluster
encodings("imsitu-cluster", "nodes.csv")
add("imsitu-cluster-embeddings-objects", "imsitu-cluster", ["emb.npy", "not a .npy array"],
    files={"emb.npy": npy_bytes(np.array([{"a": 1}] * 16, dtype=object), allow_pickle=True)})
add("imsitu-cluster-embeddings-strings", "imsitu-cluster", ["emb.npy", "expected numbers"],
    files={"emb.npy": npy_bytes(np.array([["a"] * 4] * 16))})
add("imsitu-cluster-embeddings-npz", "imsitu-cluster", ["emb.npy", "not a .npy array"],
    files={"emb.npy": npz_bytes(x=np.eye(4))})
add("imsitu-cluster-embeddings-empty", "imsitu-cluster", ["emb.npy", "not a .npy array"], files={"emb.npy": b""})
add("imsitu-cluster-embeddings-nan", "imsitu-cluster", ["emb.npy", "row 3", "not finite"],
    files={"emb.npy": npy_bytes(np.where(np.arange(64).reshape(16, 4) == 13, np.nan, 1.0) + np.eye(16, 4))})
add("imsitu-cluster-rows-differ", "imsitu-cluster", ["nodes.csv", "17 rows"],
    files={"nodes.csv": FILES["nodes.csv"] + b"img9.jpg,jumping\n"})
add("imsitu-cluster-empty-verb", "imsitu-cluster", ["nodes.csv", "line 3", "verb is empty"],
    files={"nodes.csv": FILES["nodes.csv"].replace(b"img0.jpg,leaping", b"img0.jpg,")})

# ------------------------------------------------------------------ imsitu-align
encodings("imsitu-align", "align_items.csv")
encodings("imsitu-align", "align_ratings.csv")
encodings("imsitu-align", "judge.csv")
add("imsitu-align-duplicate-item", "imsitu-align", ["align_items.csv", "line 6", "duplicate item_id 'q1'"],
    files={"align_items.csv": FILES["align_items.csv"] + b"q1,b.jpg,m2,riding,riding,main\n"})
add("imsitu-align-unknown-item", "imsitu-align", ["align_ratings.csv", "line 10", "'q9'"],
    files={"align_ratings.csv": FILES["align_ratings.csv"] + b"q9,h1,1,main\n"})
add("imsitu-align-bad-marks", "imsitu-align", ["align_ratings.csv", "'q2'", "h1"],
    files={"align_ratings.csv": FILES["align_ratings.csv"].replace(b"q2,h1,1,", b"q2,h1,7,")})
add("imsitu-align-judge-missing", "imsitu-align", ["--judge", "no such file"], argv={"--judge": "j={w}/nope.csv"})
add("imsitu-align-judge-bad-value", "imsitu-align", ["judge.csv", "line 3", "top1 'maybe'"],
    files={"judge.csv": FILES["judge.csv"].replace(b"m1,b.jpg,1,1", b"m1,b.jpg,maybe,1")})

add("imsitu-align-gold-lacks-an-image", "imsitu-align", ["gold.json (--gold)", "no gold verb for image 'b.jpg'"],
    files={"gold.json": b'{"a.jpg": "jumping"}'})
add("imsitu-align-gold-column-lacks-an-image", "imsitu-align", ["align_items.csv", "gold verb", "--gold"],
    files={"align_items.csv": FILES["align_items.csv"].replace(b",riding,riding,main", b",riding,,main")},
    argv={"--gold": ""})
add("imsitu-align-judge-twice", "imsitu-align", ["--judge 'j'", "given twice"],
    argv={"--judge": ["j={judge.csv}", "j={judge.csv}"]})

# ------------------------------------------------------------------ image-update
encodings("image-update", "update.csv")
add("image-update-before-shares-no-pair-names-it", "image-update",
    ["ratings.csv (--before)", "no (item, annotator) pair", "update.csv"],
    files={"ratings.csv": b"study,item_id,annotator,rating,created_at\ns,i0,nobody,1,2030-01-01\n"})
lines = FILES["update.csv"].decode().splitlines()
for value in ("9", "-1", "2.5", "x"):
    parts = lines[1].split(",")
    parts[4] = value
    bad = "\n".join([lines[0], ",".join(parts), *lines[2:]]) + "\n"
    add(f"image-update-earlier-{value}", "image-update", ["update.csv", "line 2", f"earlier_rating '{value}'"],
        files={"update.csv": bad.encode()})
add("image-update-unknown-item", "image-update", ["update.csv", "'i99'", "items.csv"],
    files={"update.csv": FILES["update.csv"] + b"s,i99,ann0,2,2,2030-01-03T00:00:00\n"})

# ------------------------------------------------------------------ analysis commands: the policy's corners
for command in ("agreement", "alignment", "tune-w", "recalibrate"):
    add(f"{command}-unknown-item", command, ["ratings.csv", "line 74", "'i99'", "items.csv"],
        files={"ratings.csv": FILES["ratings.csv"] + b"s,i99,ann0,2,2030-01-01\n"})
    add(f"{command}-annotator-control-character", command, ["ratings.csv", "line 74", "control character"],
        files={"ratings.csv": FILES["ratings.csv"] + b's,i0,"ann\x07",2,2030-01-01\n'})
add("agreement-line-after-blank-line", "agreement", ["ratings.csv", "line 76", "rating '9'"],
    files={"ratings.csv": FILES["ratings.csv"] + b"\n\ns,i0,ann9,9,2030-01-01\n"})
add("agreement-line-after-quoted-break", "agreement", ["ratings.csv", "line 76", "rating '9'"],
    files={"ratings.csv": FILES["ratings.csv"] + b's,i1,ann9,2,"2030-01-01\n(a note)"\ns,i0,ann9,9,2030-01-01\n'})
add("alignment-items-duplicate-is-an-items-error", "alignment", ["items.csv", "line 26", "duplicate item_id 'i0'"],
    files={"items.csv": FILES["items.csv"] + b"i0,1,ride,horse,ride,dog,1.0,0.5,0.7\n"})
add("tune-w-items-repeated-column", "tune-w", ["items.csv", "line 1", "'category' appears twice"],
    files={"items.csv": FILES["items.csv"].replace(b"item_id,category,", b"item_id,category,category,", 1)})

# ------------------------------------------------------------------ similarity matrices: .npz and the sidecar
for command in ("score", "matrix info"):
    npz = {"score": "object.csv", "matrix info": "verb.npz"}[command]
    target = "verb.npz"
    argv = {"--verb-sim": "{verb.npz}"} if command == "score" else {}
    for key, content, expect in [
        ("object-array", npz_bytes(labels=LABELS, scores=np.array([[4, 1], [1, 4]], dtype=object)),
         ["'scores'", "Python objects"]),
        ("string-scores", npz_bytes(labels=LABELS, scores=np.array([["4", "1"], ["1", "4"]])), ["'scores'", "not numbers"]),
        ("numeric-labels", npz_bytes(labels=np.array([1, 2]), scores=np.eye(2) * 4), ["'labels'", "not strings"]),
        ("dense-self-not-4", npz_bytes(labels=LABELS, scores=np.array([[2.0, 1.0], [1.0, 4.0]])),
         ["scores[0, 0]", "must score 4"]),
        ("sparse-self-not-4", npz_bytes(labels=LABELS, row=np.array([0, 1]), col=np.array([0, 0]),
                                        val=np.array([3.0, 2.0])), ["val[0]", "must score 4"]),
        ("meta-not-an-object", npz_bytes(labels=LABELS, scores=np.eye(2) * 4, meta=np.array("[1, 2]")),
         ["meta", "JSON object"]),
        ("meta-nan", npz_bytes(labels=LABELS, scores=np.eye(2) * 4, meta=np.array('{"x": NaN}')), ["meta", "field x"]),
        ("meta-duplicate-key", npz_bytes(labels=LABELS, scores=np.eye(2) * 4, meta=np.array('{"x": 1, "x": 2}')),
         ["meta", "appears twice"]),
        ("truncated", npz_bytes(labels=LABELS, scores=np.eye(2) * 4)[:60], ["verb.npz", "not a readable .npz"]),
    ]:
        add(f"{command}-npz-{key}", command, ["verb.npz", *expect], files={target: content}, argv=argv)
for key, content, expect in [
    ("invalid", b"{oops", ["verb.csv.meta.json", "invalid JSON"]),
    ("a-list", b"[1, 2]", ["verb.csv.meta.json", "JSON object"]),
    ("nan", b'{"source": NaN}', ["verb.csv.meta.json", "field source"]),
    ("duplicate-key", b'{"source": "a", "source": "b"}', ["verb.csv.meta.json", "appears twice"]),
    ("utf16", '{"source": "a"}'.encode(UTF16), ["verb.csv.meta.json", "UTF-16"]),
]:
    for command in ("score", "matrix compare", "recalibrate"):
        add(f"{command}-sidecar-{key}", command, expect, files={"verb.csv.meta.json": content})

# ------------------------------------------------------------------ SHOE pool, pairs, weights
encodings("matrix import-shoe-pool", "pool.csv")
add("pool-bad-level", "matrix import-shoe-pool", ["pool.csv", "line 3", "similarity_level '7'"],
    files={"pool.csv": FILES["pool.csv"].replace(b"cup.n.01,2,3", b"cup.n.01,2,7")})
add("pool-level-after-quoted-break", "matrix import-shoe-pool", ["pool.csv", "line 4", "similarity_level '9'"],
    files={"pool.csv": FILES["pool.csv"].replace(b"1,ride,horse", b'"1\n",ride,horse').replace(
        b"cup.n.01,2,3", b"cup.n.01,2,9")})
encodings("matrix info", "pairs.csv")
encodings("rater-model", "ratings.csv")
encodings("reliability", "items.csv")
add("reliability-unknown-item", "reliability", ["ratings.csv", "line 74", "'i99'", "items.csv"],
    files={"ratings.csv": FILES["ratings.csv"] + b"s,i99,ann0,2,2030-01-01\n"})
add("rater-model-rating-off-scale", "rater-model", ["ratings.csv", "line 74", "rating '7'"],
    files={"ratings.csv": FILES["ratings.csv"] + b"s,i0,ann9,7,2030-01-01\n"})
add("rater-model-one-rater", "rater-model", ["ratings.csv", "at least two raters", "'ann0'"],
    files={"ratings.csv": b"study,item_id,annotator,rating,created_at\ns,i0,ann0,3,2030-01-01\n"
                          b"s,i1,ann0,1,2030-01-01\n"})
add("studyapp-recalibrate-unknown-study", "studyapp recalibrate", ["'nope'"], argv={"studies": "nope"})
add("matrices-export-unknown-version", "matrices export", ["'v1'"])
add("matrices-compare-unknown-version", "matrices compare", ["'v1'"])
encodings("match", "verb.csv")
encodings("sample", "weights.csv")
add("sample-weight-line-after-blank", "sample", ["weights.csv", "line 5", "weight 'heavy'"],
    files={"weights.csv": FILES["weights.csv"] + b"\n3,heavy\n"})

# ------------------------------------------------------------------ diagnose: every output kept back
add("diagnose-bad-pairs-file", "diagnose", ["p.jsonl", "line 1"],
    files={"p.jsonl": b"{broken\n"}, argv={"--pairs": "{p.jsonl}"})
add("diagnose-pairs-count", "diagnose", ["--pairs gives 2 files for 1 prediction files"],
    argv={"--pairs": ["{pred.jsonl}", "{pred.jsonl}"]})
add("diagnose-pred-nan-score", "diagnose", ["pred.jsonl", "line 2", "score", "NaN"],
    files={"pred.jsonl": FILES["pred.jsonl"].replace(b'"score": 0.4', b'"score": NaN')})
add("score-every-score-nan", "score", ["pred.jsonl", "line 1", "score", "NaN"],
    files={"pred.jsonl": FILES["pred.jsonl"].replace(b'"score": 0.4', b'"score": NaN').replace(
        b'"score": 0.8', b'"score": NaN')})
add("score-400-digit-box", "score", ["pred.jsonl", "line 2", "hois[0].human_box[0]", "too large"],
    files={"pred.jsonl": FILES["pred.jsonl"].replace(b'"human_box": [0, 0, 10, 10], "object_box": [20, 20, 30, 30], '
                                                     b'"verb": "hold"', b'"human_box": [' + b"9" * 400 +
                                                     b', 0, 10, 10], "object_box": [20, 20, 30, 30], "verb": "hold"')})
add("score-duplicate-key", "score", ["pred.jsonl", "line 1", "'score' appears twice"],
    files={"pred.jsonl": FILES["pred.jsonl"].replace(b'"score": 0.8', b'"score": 0.8, "score": 0.1')})
add("score-bom-then-bad-line", "score", ["gt.jsonl", "line 3"],
    files={"gt.jsonl": b"\xef\xbb\xbf" + FILES["gt.jsonl"] + b"{nope\n"})

# ------------------------------------------------------------------ build-llm
for key, content, expect in [
    ("concurrency-zero", b"concurrency = 0\n", ["endpoints[0].concurrency must be a whole number in 1..256, got 0"]),
    ("batch-size-text", b'batch_size = "8"\n', ["endpoints[0].batch_size must be a whole number in 1..1000, got '8'"]),
    ("timeout-negative", b"timeout = -1\n", ["endpoints[0].timeout"]),
    ("timeout-nan", b"timeout = nan\n", ["endpoints[0].timeout must be a number in (0, 3600], got nan"]),
    ("retries-huge", b"retries = 99999999999999\n", ["endpoints[0].retries"]),
    ("unknown-key", b"colour = 1\n", ["endpoints[0]: unknown key 'colour' (allowed: api_key_env,"]),
    ("base-url-ftp", b'base_url = "ftp://x"\n', ["endpoints[0].base_url"]),
]:
    config = FILES["llm.toml"].replace(b"retries = 0\ntimeout = 1\n", b"") \
        .replace(b'base_url = "http://127.0.0.1:9/v1"\n', b"" if key == "base-url-ftp" else
                 b'base_url = "http://127.0.0.1:9/v1"\n')
    config = config.replace(b'name = "local"\n', b'name = "local"\n' + content, 1)
    add(f"build-llm-config-{key}", "matrix build-llm", ["llm.toml", *expect], files={"llm.toml": config})
add("build-llm-config-model-temperature-text", "matrix build-llm", ["llm.toml", "models[0].temperature"],
    files={"llm.toml": FILES["llm.toml"] + b'temperature = "hot"\n'})
add("build-llm-config-plan-negative", "matrix build-llm", ["llm.toml", "plan.control_size"],
    files={"llm.toml": FILES["llm.toml"] + b"[plan]\ncontrol_size = -5\n"})
add("build-llm-config-invalid-toml", "matrix build-llm", ["llm.toml", "not valid TOML"],
    files={"llm.toml": b"[[endpoints]\n"})
encodings("matrix build-llm", "llm.toml", empty=False)  # an empty TOML file is valid TOML:
add("build-llm-config-empty", "matrix build-llm", ["llm.toml", "no [[models]]"], files={"llm.toml": b""})
json_config = {"endpoints": [{"name": "local", "base_url": "http://127.0.0.1:9/v1", "timeout": 5}],
               "models": [{"name": "m1"}]}
json_policy("matrix build-llm", "llm.json", json_config, ("endpoints[0].timeout", 5), argv={"--config": "{llm.json}"})
add("build-llm-bad-ratings-makes-no-cache", "matrix build-llm", ["ratings.csv", "UTF-16"],
    files={"ratings.csv": FILES["ratings.csv"].decode().encode(UTF16)})
add("build-llm-bad-verbs-file", "matrix build-llm", ["synsets.csv", "line 3", "'hold'"],
    files={"synsets.csv": FILES["synsets.csv"].replace(b"hold.v.01", b"hold")})

# ------------------------------------------------------------------ studyapp: studies and the database
add("invite-label-line-break", "invite", ["invite label", "control character"], argv={"--label": "ali\nce"})
add("invite-label-tab", "invite", ["invite label", "control character"], argv={"--label": "ali\tce"})
add("invite-label-taken", "invite", ["every pseudonym given is already used in 't' (alice)"], argv={"--label": "alice"})
add("invite-label-blank", "invite", ["--label ' ' is blank"], argv={"--label": " "})
add("invite-label-twice", "invite", ["--label 'dave' is given twice"], argv={"--label": ["dave", "dave"]})
add("invite-label-twice-with-blanks", "invite", ["--label 'dave' is given twice"], argv={"--label": ["dave", " dave "]})
add("alignment-metric-twice", "alignment", ["--metric 'my_metric' is given twice"],
    argv={"--metric": ["my_metric", "my_metric"]})
add("build-llm-model-twice", "matrix build-llm", ["--model 'm1' is given twice"], argv={"--model": ["m1", "m1"]})
add("reliability-compare-a-column-with-itself", "reliability", ["--compare 'verb_sim' is given twice"],
    argv={"--compare": "verb_sim"})   # the first of its two values: --compare verb_sim verb_sim
add("owner-unknown-account", "owner", ["owner 'carol'", "no owner or researcher account"], argv={"account": "carol"})
add("prolific-status-no-status-column", "prolific-status", ["prolific.csv", "missing column 'Status'"],
    files={"prolific.csv": b"Submission id,Participant id,State\n65a1,5f8a,RETURNED\n"})
add("prolific-status-unknown-status", "prolific-status", ["prolific.csv", "line 3", "status 'GONE'"],
    files={"prolific.csv": b"Participant id,Status\np1,APPROVED\np2,GONE\n"})
add("prolific-status-twice", "prolific-status", ["participant 'p1' is listed twice"],
    files={"prolific.csv": b"Participant id,Status\np1,APPROVED\np1,RETURNED\n"})
add("owner-unknown-study", "owner", ["no study named 'nope'"], argv={"study": "nope"})
add("create-unknown-owner", "create", ["owner 'carol'", "no owner or researcher account"], argv={"--owner": "carol"})
add("invite-unknown-study", "invite", ["no study named 'nope'"], argv={"study": "nope"})
add("export-unknown-study", "export", ["no study named 'nope'"], argv={"study": "nope"})
add("status-unknown-study", "status", ["no study named 'nope'"], argv={"study": "nope"})
add("revoke-unknown-annotator", "revoke", ["no annotator 'carol'"], argv={"pseudonym": "carol"})
add("simulate-unknown-profile", "simulate", ["unknown 'grumpy'"], argv={"--profiles": "neutral,grumpy"})
add("simulate-profile-count", "simulate", ["--profiles names 1 biases for --k 2"], argv={"--profiles": "neutral"})
add("create-taken-slug", "create", ["a study named 't' already exists"])
add("check-images-no-images", "check-images", ["shows no images"], argv={"target": "t"})
add("restore-not-a-zip", "restore", ["backup.zip", "not a zip file"], files={"backup.zip": b"hello"})
add("restore-truncated", "restore", ["backup.zip"], files={"backup.zip": lambda old: old[: len(old) // 2]})
add("restore-damaged-member", "restore", ["backup.zip", "damaged"],
    files={"backup.zip": lambda old: _damage_member(old)})
add("restore-rows-break-rules", "restore", ["backup.zip", "rows break the database's rules"],
    files={"backup.zip": lambda old: _duplicate_row(old)})
add("restore-not-empty", "restore", ["table study is not empty"], argv={"--url": ""})
add("backup-missing-database", "backup", ["STUDYAPP_DB", "no such database"],
    env={"STUDYAPP_DB": "{w}/none.sqlite"})
add("health-missing-database", "health", ["unhealthy", "no such database"], env={"STUDYAPP_DB": "{w}/none.sqlite"},
    status=1, stream="out")


def _zip_members(data: bytes) -> dict:
    import io
    import zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict, compress=True) -> bytes:
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _damage_member(data: bytes) -> bytes:
    """The study table's bytes flipped inside the zip (its CRC no longer matches)."""
    stored = _zip(_zip_members(data), compress=False)
    at = stored.index(b'"slug": "t"')
    return stored[:at] + b'"slug": "X"' + stored[at + 11:]


def _duplicate_row(data: bytes) -> bytes:
    """Two annotator rows with one id, the manifest updated to match (so only the database's
    primary key refuses them)."""
    import hashlib
    members = _zip_members(data)
    rows = members["tables/annotator.jsonl"]
    first = rows.splitlines(keepends=True)[0]
    members["tables/annotator.jsonl"] = rows + first
    manifest = json.loads(members["manifest.json"])
    manifest["tables"]["annotator"] = {"rows": manifest["tables"]["annotator"]["rows"] + 1,
                                       "sha256": hashlib.sha256(rows + first).hexdigest()}
    members["manifest.json"] = json.dumps(manifest).encode()
    return _zip(members)


# every command that opens the database, against databases that cannot be used
DB_COMMANDS = ["create", "invite", "owner", "share", "prolific-status", "export", "status", "revoke", "simulate", "report", "list",
               "reset-admin-password", "backup", "restore", "check-images", "health", "studyapp recalibrate",
               "matrices list", "matrices export", "matrices compare", "account list"]
DB_FAULTS = {
    "text-file": ({"STUDYAPP_DB": "{a_file.txt}"}, ["STUDYAPP_DB", "file is not a database"]),
    "folder": ({"STUDYAPP_DB": "{a_folder}"}, ["STUDYAPP_DB", "is a folder"]),
    "under-a-file": ({"STUDYAPP_DB": "{a_file.txt}/db.sqlite"}, ["STUDYAPP_DB", "is a file, not a folder"]),
    "damaged": ({"STUDYAPP_DB": "{damaged.sqlite}"}, ["STUDYAPP_DB", "malformed"]),
    "unknown-scheme": ({"DATABASE_URL": "foo://x/y"}, ["DATABASE_URL", "unknown database kind 'foo'"]),
    "not-a-url": ({"DATABASE_URL": "just words"}, ["DATABASE_URL", "not a database URL"]),
}
for command in DB_COMMANDS:
    for fault, (env, expect) in DB_FAULTS.items():
        argv = {"--url": ""} if command == "restore" else {}
        if command == "check-images":
            argv = {"target": "t"}
        if command == "health":
            add(f"{command}-db-{fault}", command, ["unhealthy", *expect[1:]], env=env, status=1, stream="out")
        else:
            add(f"{command}-db-{fault}", command, expect, env=env, argv=argv)
for command in ("invite", "owner", "share", "prolific-status", "export", "status", "revoke", "simulate", "report", "check-images",
                "studyapp recalibrate", "matrices list", "matrices export", "matrices compare"):
    add(f"{command}-db-missing", command, ["STUDYAPP_DB", "no such database"], env={"STUDYAPP_DB": "{w}/none.sqlite"},
        argv={"target": "t"} if command == "check-images" else {})


# the password is read from standard input (unreadable under pytest) before the database is opened
for command in ("account add", "account set-password"):
    add(f"{command.replace(' ', '-')}-no-password", command, ["password", "standard input"])


# ------------------------------------------------------------------ the last classes
def _released(**fields) -> bytes:
    record = {"ao_names": ["ride a/an horse"], "ho_scores": [0.9], "h_boxes": [[0, 0, 10, 10]],
              "o_boxes": [[20, 20, 30, 30]]}
    record.update(fields)
    return json.dumps({"q1": record, "q2": {"ao_names": []}}).encode()


add("mcq-released-box-list-number", "mcq", ["answers.json", "'q1'", "h_boxes must be a list", "got 5"],
    files={"answers.json": _released(h_boxes=5)})
add("mcq-released-box-list-object", "mcq", ["answers.json", "'q1'", "o_boxes must be a list"],
    files={"answers.json": _released(o_boxes={"a": [0, 0, 1, 1]})})
add("mcq-released-names-a-string", "mcq", ["answers.json", "'q1'", "ao_names must be a list"],
    files={"answers.json": _released(ao_names="ride a/an horse")})
add("mcq-released-score-text", "mcq", ["answers.json", "detection 0", "score must be a number", "'high'"],
    files={"answers.json": _released(ho_scores=["high"])})
add("mcq-detection-verb-number", "mcq", ["answers.json", "line 1", "hois[0]", "verb must be a non-empty string",
                                         "got 7"],
    files={"answers.json": jl({"image": "q1", "hois": [{"verb": 7, "object": "horse", "score": 0.9}]})})
add("agreement-no-shared-item", "agreement", ["ratings.csv", "an item rated by at least two annotators"],
    files={"ratings.csv": b"study,item_id,annotator,rating,created_at\ns,i0,a,1,x\ns,i1,b,2,x\n"})
add("agreement-one-annotator-names-the-file", "agreement", ["ratings.csv", "at least two annotators"],
    files={"ratings.csv": b"study,item_id,annotator,rating,created_at\ns,i0,a,1,x\ns,i1,a,2,x\n"})
add("reliability-one-annotator-names-the-file", "reliability", ["ratings.csv", "at least two annotators"],
    files={"ratings.csv": b"study,item_id,annotator,rating,created_at\ns,i0,a,1,x\ns,i1,a,2,x\n"})
add("image-update-no-earlier-ratings-names-the-file", "image-update", ["ratings.csv", "no 'earlier_rating' column"],
    files={"ratings.csv": FILES["ratings.csv"]}, argv={"--ratings": "{ratings.csv}", "--before": ""})
for command in ("agreement", "reliability", "tune-w", "rater-model"):  # pandas raised OverflowError (fuzzing)
    add(f"{command}-rating-of-400-digits", command, ["ratings.csv", "line 74", "rating '9999"],
        files={"ratings.csv": FILES["ratings.csv"] + b"s,i0,ann9," + b"9" * 400 + b",2030-01-01\n"})
add("tune-w-category-of-400-digits", "tune-w", ["items.csv", "line 2", "category"],
    files={"items.csv": FILES["items.csv"].replace(b"\ni0,1,", b"\ni0," + b"9" * 400 + b",", 1)})
add("imsitu-cluster-embeddings-complex", "imsitu-cluster", ["emb.npy", "complex numbers"],
    files={"emb.npy": lambda old: npy_bytes(np.load(__import__("io").BytesIO(old)).astype(complex))})
add("alignment-metric-column-of-text", "alignment", ["items.csv", "metric column 'my_metric'", "item 'i0'",
                                                     "'abc'", "not a finite number"],
    files={"items.csv": FILES["items.csv"].replace(FILES["items.csv"].split(b"\n")[1],
                                                   FILES["items.csv"].split(b"\n")[1].rsplit(b",", 1)[0] + b",abc")})
add("imsitu-pred-disjoint-from-gold", "imsitu", ["verbs.json", "gold.json", "no image of the predictions"],
    files={"verbs.json": b'{"c.jpg": ["jumping"]}'})
add("imsitu-pred-names-not-imsitu", "imsitu", ["verbs.json", "'a.jpg'", "not an imSitu name"],
    argv={"--gold": "", "--clusters": ""})
SPEC_SAMPLER = FILES["study.toml"].replace(b'slug = "t"', b'slug = "t2"').split(b"[items]")[0] + b'[items]\nsource = "sampler"\n'
add("create-sampler-n-zero", "create", ["study.toml: [items] n must be a whole number ≥ 1, got 0"],
    files={"study.toml": SPEC_SAMPLER + b"n = 0\n"})
add("create-sampler-seed-negative", "create", ["study.toml", "key 'items.seed'", "got -1"],
    files={"study.toml": SPEC_SAMPLER + b"n = 5\nseed = -1\n"})
add("create-sampler-w-nan", "create", ["study.toml", "key 'items.w'", "finite"],
    files={"study.toml": SPEC_SAMPLER + b"n = 5\nw = nan\n"})
add("create-sampler-categories-empty", "create", ["study.toml", "items.categories"],
    files={"study.toml": SPEC_SAMPLER + b"n = 5\ncategories = []\n"})


def _manifest(data: bytes, change) -> bytes:
    members = _zip_members(data)
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    return _zip(members)


def _with_member(data: bytes, name: str, content: bytes = b"x", *, link: bool = False, compress=True) -> bytes:
    import io
    import zipfile
    members = _zip_members(data)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
        for member, member_data in members.items():
            zf.writestr(member, member_data)
        info = zipfile.ZipInfo(name)
        if link:
            info.external_attr = (0o120777 << 16)
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, content)
    return buf.getvalue()


add("restore-manifest-table-a-number", "restore", ["backup.zip", "manifest.json", "tables.study", "must be an object"],
    files={"backup.zip": lambda old: _manifest(old, lambda m: m["tables"].__setitem__("study", 7))})
add("restore-manifest-rows-negative", "restore", ["backup.zip", "tables.study.rows", "got -1"],
    files={"backup.zip": lambda old: _manifest(old, lambda m: m["tables"]["study"].__setitem__("rows", -1))})
add("restore-manifest-nan", "restore", ["backup.zip", "manifest.json", "NaN"],
    files={"backup.zip": lambda old: _zip({**_zip_members(old), "manifest.json": _zip_members(old)[
        "manifest.json"].replace(b'"format_version": 1', b'"format_version": NaN')})})
add("restore-entry-dotdot", "restore", ["backup.zip", "'../evil.jsonl'", "climbs out"],
    files={"backup.zip": lambda old: _with_member(old, "../evil.jsonl")})
add("restore-entry-absolute", "restore", ["backup.zip", "'/etc/evil'", "absolute path"],
    files={"backup.zip": lambda old: _with_member(old, "/etc/evil")})
add("restore-entry-symlink", "restore", ["backup.zip", "'tables/link.jsonl'", "symbolic link"],
    files={"backup.zip": lambda old: _with_member(old, "tables/link.jsonl", b"/etc/passwd", link=True)})
add("restore-entry-zip-bomb", "restore", ["backup.zip", "'tables/bomb.jsonl'", "zip bomb"],
    files={"backup.zip": lambda old: _with_member(old, "tables/bomb.jsonl", b"\0" * (8 * 2**20))})
add("restore-entry-unknown", "restore", ["backup.zip", "'notes.txt'", "not part of a studyapp backup"],
    files={"backup.zip": lambda old: _with_member(old, "notes.txt")})
add("restore-backup-too-large", "restore", ["backup.zip", "STUDYAPP_MAX_BACKUP_MB"],
    files={"backup.zip": lambda old: old + b"\0" * (2**20 + 1)}, env={"STUDYAPP_MAX_BACKUP_MB": "1"})


# ------------------------------------------------------------------ the runner
@functools.cache
def command_parsers() -> dict:
    """Each command's parser, built once: the tests only read them (the commands build their own)."""
    return {command: parser for command, _module, parser in parsers()}


def with_argv(argv: list[str], command: str, changes: dict) -> list[str]:
    parser = command_parsers()[command]
    for option, value in changes.items():
        action = next(a for a in value_actions(parser) if option_name(a) == option)
        if value == "":
            k = argv.index(option)
            argv = argv[:k] + argv[k + 2:]
        elif isinstance(value, list):
            argv = with_value(argv, command, parser, action, value[0])
            k = argv.index(option) + 1 if action.option_strings else None
            if action.nargs in ("+", "*"):
                argv = argv[:k + 1] + value[1:] + argv[k + 1:]
            else:
                argv = argv + [x for v in value[1:] for x in (option, v)]
        else:
            argv = with_value(argv, command, parser, action, value)
    return argv


def prepare(case: Case, world: dict, monkeypatch) -> list[str]:
    root = Path(world["w"])
    for name, content in case.files.items():
        path = root / name
        if callable(content):
            content = content(path.read_bytes())
        path.write_bytes(content)
        world[name] = str(path)
    if "llm.json" not in world:
        (root / "llm.json").write_text(json.dumps({"endpoints": [{"name": "local", "base_url": "http://127.0.0.1:9/v1"}],
                                                   "models": [{"name": "m1"}]}))
        world["llm.json"] = str(root / "llm.json")
    damaged = root / "damaged.sqlite"
    if any("damaged" in v for v in case.env.values()):
        data = bytearray((root / "studyapp.sqlite").read_bytes())
        for k in range(4096, len(data), 7):
            data[k] = 0xA5
        damaged.write_bytes(bytes(data))
        world["damaged.sqlite"] = str(damaged)
    for key, value in case.env.items():
        monkeypatch.setenv(key, expand([value], world)[0])
    module, base = COMMANDS[case.command]
    return expand(with_argv(list(base), case.command, case.argv), world)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_a_bad_file_or_database_is_one_line_and_changes_nothing(world, capsys, monkeypatch, case):
    argv = prepare(case, world, monkeypatch)
    before = state(Path(world["w"]))
    status, out, err = run_in_process(COMMANDS[case.command][0], argv, capsys)
    check_refused(status, out, err, Refusal(case.expect, case.status, case.stream), case.id)
    assert state(Path(world["w"])) == before, f"{case.id}: something was written or changed"


def test_the_table_covers_every_command():
    covered = {c.command for c in CASES}
    missing = set(COMMANDS) - covered - {"vocab", "matrix baseline", "demo-images", "serve", "plugins",
                                         "studyapp plugins"}
    assert not missing, missing  # those read no input file and no database (test_bad_options)
    assert len(CASES) >= 250


@pytest.mark.parametrize("case_id", ["imsitu-cluster-embeddings-objects", "restore-rows-break-rules",
                                     "simulate-db-damaged", "build-llm-config-concurrency-zero",
                                     "export-db-unknown-scheme"])
def test_real_processes_refuse_the_same_way(world, monkeypatch, case_id):
    case = next(c for c in CASES if c.id == case_id)
    argv = prepare(case, world, monkeypatch)
    before = state(Path(world["w"]))
    env = {"STUDYAPP_DB": os.environ["STUDYAPP_DB"], **{k: os.environ[k] for k in case.env}}
    status, out, err = run_process(COMMANDS[case.command][0], argv, env)
    check_refused(status, out, err, Refusal(case.expect, case.status, case.stream), case_id)
    assert state(Path(world["w"])) == before


# ------------------------------------------------------------------ the policy, the other way round
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("command,name", [
    ("agreement", "ratings.csv"), ("agreement", "items.csv"), ("score", "verb.csv"), ("score", "gt.jsonl"),
    ("mcq", "bench.json"), ("mcq", "answers.json"), ("imsitu", "gold.json"), ("imsitu", "clusters.json"),
    ("imsitu-cluster", "nodes.csv"), ("imsitu-align", "align_items.csv"), ("imsitu-align", "judge.csv"),
    ("image-update", "update.csv"), ("matrix import-shoe-pool", "pool.csv"), ("matrix info", "pairs.csv"),
    ("sample", "weights.csv"), ("create", "study_items.csv"), ("matrix build-llm", "llm.toml"),
    ("matrix build-llm", "synsets.csv"),
])
def test_a_byte_order_mark_is_accepted_everywhere(world, capsys, monkeypatch, command, name):
    if command == "create":  # a new slug: the world's study is 't'
        Path(world["study.toml"]).write_bytes(FILES["study.toml"].replace(b'slug = "t"', b'slug = "t2"'))
    case = Case("bom", command, files={name: BOM + FILES[name]})
    argv = prepare(case, world, monkeypatch)
    status, out, err = run_in_process(COMMANDS[command][0], argv, capsys)
    assert status == 0, err


def test_an_unexpected_exception_keeps_its_traceback(world, monkeypatch):
    """The boundary turns bad input into one line, never a bug: a programming error escapes."""
    import metrics.commands._vocab as vocab
    from metrics.cli import main

    def broken(_args):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(vocab, "run", broken)
    with pytest.raises(ZeroDivisionError):
        main(["vocab"])


# ------------------------------------------------------------------ all or nothing
def test_a_failing_last_output_leaves_no_earlier_one(world, capsys, monkeypatch):
    """agreement writes its report folder, then --json: the disk fills on the JSON, so the
    report must not appear either (and no temporary file stays)."""
    import metrics.cli

    def full(result, path):
        raise OSError(28, "No space left on device", str(path))
    monkeypatch.setattr(metrics.cli, "write_json", full)
    argv = expand(COMMANDS["agreement"][1], world)
    before = state(Path(world["w"]))
    status, out, err = run_in_process("metrics", argv, capsys)
    check_refused(status, out, err, Refusal(["r.json", "no space left on device"]), "agreement")
    assert state(Path(world["w"])) == before


def test_diagnose_errors_file_waits_for_the_report(world, capsys, monkeypatch):
    import metrics.diagnosis._report as report

    def broken(*_a, **_k):
        raise OSError(5, "Input/output error", "delta_map.png")
    monkeypatch.setattr(report, "_write_diagnosis_report", broken)
    argv = expand(COMMANDS["diagnose"][1], world)
    before = state(Path(world["w"]))
    status, out, err = run_in_process("metrics", argv, capsys)
    check_refused(status, out, err, Refusal(["delta_map.png", "input/output error"]), "diagnose")
    assert state(Path(world["w"])) == before


@pytest.mark.parametrize("command,target,after", [
    ("simulate", "studyapp.platform.assignment.submit", 3),
    ("create", "studyapp.platform.records.studies.log_event", 1),
    ("invite", "studyapp.platform.records.studies.log_event", 1),
])
def test_a_database_change_is_complete_or_absent(world, capsys, monkeypatch, command, target, after):
    """A failure part-way (the n-th call of ``target`` fails) leaves every row as it was."""
    import importlib
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    real, calls = getattr(module, name), []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) >= after:
            raise OSError(5, "Input/output error", "studyapp.sqlite")
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, failing)
    if command == "create":
        Path(world["study.toml"]).write_bytes(FILES["study.toml"].replace(b'slug = "t"', b'slug = "t2"'))
    argv = expand(COMMANDS[command][1], world)
    before = state(Path(world["w"]))
    status, out, err = run_in_process("studyapp", argv, capsys)
    check_refused(status, out, err, Refusal(["input/output error"]), command)
    assert calls and state(Path(world["w"])) == before


def test_simulate_with_a_bad_noise_changes_nothing(world, capsys):
    from studyapp.platform.records.simulate import simulate_study
    before = state(Path(world["w"]))
    for noise in (float("nan"), -1.0, float("inf")):
        with pytest.raises(Exception, match="noise"):
            simulate_study("t", k=2, noise=noise)
    assert state(Path(world["w"])) == before


def test_restore_into_a_database_that_was_only_started(world, tmp_path, capsys):
    """Started once (schema and console password): counts as empty, keeps its password when
    the backup has none (the world's backup has none)."""
    from studyapp.core import auth, storage
    from studyapp.platform.operations import backup
    url = f"sqlite:///{tmp_path / 'started.sqlite'}"
    with storage.write_session(storage.get_engine(url)) as session:
        password = auth.ensure_admin_password(session)
    storage.dispose_all()
    manifest = backup.restore(world["backup.zip"], url)
    assert manifest["tables"]["study"]["rows"] == 1
    with storage.read_session(storage.get_engine(url)) as session:
        assert auth.check_admin_password(session, password)
    storage.dispose_all()
    rows = sqlite3.connect(tmp_path / "started.sqlite").execute("SELECT slug FROM study").fetchall()
    assert rows == [("t",)]


def test_two_exports_in_the_same_second_get_two_folders(world):
    from datetime import datetime

    from studyapp.platform.records.exports import export_study
    now = datetime(2030, 1, 1, tzinfo=UTC)
    first, second = export_study("t", world["out"], now=now), export_study("t", world["out"], now=now)
    assert first != second and first.name == "20300101T000000Z" and second.name == "20300101T000000Z-2"
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in second.iterdir())
    assert (first / "ratings.csv").read_bytes() == (second / "ratings.csv").read_bytes()
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".")]


def test_stale_temporaries_of_dead_processes_are_removed(world, capsys):
    out = Path(world["out"])
    out.mkdir()
    stale = [out / ".r.json.999999999.abcd1234.tmp", out / ".b.zip.999999999.tmp"]
    (out / ".report.999999999.x1y2.tmp").mkdir()
    for path in stale:
        path.write_text("half")
    mine = out / f".r.json.{os.getpid()}.live.tmp"
    mine.write_text("in use")  # a live process's temporary is left alone
    status, _out, err = run_in_process("metrics", expand(COMMANDS["score"][1], world), capsys)
    assert status == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted(["r.json", mine.name])
    shutil.rmtree(out)


def test_a_spec_linked_to_no_study_names_the_file_and_key(world, tmp_path, capsys):
    from studyhelpers import image_spec
    spec = image_spec(tmp_path)
    spec.write_text(spec.read_text().replace('linked_study = "first"', 'linked_study = "nosuch"'))
    before = state(Path(world["w"]))
    status, out, err = run_in_process("studyapp", ["create", str(spec)], capsys)
    check_refused(status, out, err, Refusal([str(spec), "items.linked_study", "no study named 'nosuch'"]), "linked")
    assert state(Path(world["w"])) == before


@pytest.mark.parametrize("case_id", ["mcq-released-box-list-number", "restore-manifest-table-a-number",
                                     "create-sampler-seed-negative", "imsitu-cluster-embeddings-complex",
                                     "restore-entry-dotdot"])
def test_each_refusal_class_also_refuses_as_a_process(world, monkeypatch, case_id):
    test_real_processes_refuse_the_same_way(world, monkeypatch, case_id)

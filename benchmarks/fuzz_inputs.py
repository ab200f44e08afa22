"""Fuzzing every input the project reads.

For each input format, inputs come from two generators:

- **structure-aware** (hypothesis strategies): a valid seed of the format, parsed into its
  structure (JSON tree, CSV table, TOML table, array, pickled object, zip members), changed by
  at most one *harmless* edit (a byte-order mark, CRLF line ends, re-indented JSON, quoted CSV
  cells, another zip compression ...) and at most one *defect* (a value replaced by a wrong
  type, NaN, a huge or negative number, text, an empty container; a key or column removed or
  repeated; an array of complex numbers or Python objects; a zip entry with ``..``, a link or a
  bomb ...), then written back;
- **byte-level mutation** of the valid seeds (flips, inserted / deleted / repeated spans,
  truncation, splices of tokens such as ``NaN``, ``1e999``, ``-1``, ``\\x00``).

Each input is given to the command that reads it, called in-process (``main([...])``, catching
``SystemExit``), on a world of valid files (``tests/faults.py``). The property: the command
either succeeds -- with the same ``--json`` result as on the seed when only harmless edits were
made -- or exits 2 with exactly one line on stderr, no traceback, no output written and no
database row changed. The answer route's request bodies (``POST /api/answer``) are given to
its checks and its door in-process (``answer_route.parse_press`` / ``answer_press``, as alice
of the world's study, whose open item the seed answers): each must give the next screen, the
hand-over to the page, or a one-line refusal that changed no row. LLM answers are served as HTTP bodies by a loopback server to
:class:`metrics.llm.ChatClient`, which must return an outcome (scores 0..4 or an error)
and raise nothing.

    nice -n 10 .venv/bin/python -m benchmarks.fuzz_inputs --n 100000 [--formats a,b] [--seed 0]
        [--report fuzz_report.json] [--failures fuzz_failures/] [--workers 2] [--resume]

Inputs run in chunks of 500, round robin over the formats; the report (counts per format: ok /
refused / tracebacks / bad refusals / partial writes / changed rows / changed results, and the
time) is rewritten after every chunk, and ``--resume`` continues from it. Every failing input
is saved under ``--failures`` to become a named regression case (tests/metrics/test_fuzz_inputs.py).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import pickle
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tests") not in sys.path:
    sys.path.append(str(ROOT / "tests"))  # faults.py: the valid world (appended: tests/metrics is no package)

from faults import FILES, build_world, expand, npy_bytes, npz_bytes

CHUNK = 500
OUTCOMES = ("ok", "refused", "tracebacks", "bad_refusals", "partial_writes", "changed_rows", "changed_results")
FAILURES = OUTCOMES[2:]

# ------------------------------------------------------------------ the seeds
QPIC_GT = json.dumps([
    {"file_name": "a.jpg", "annotations": [{"bbox": [0, 0, 10, 10], "category_id": 1},
                                           {"bbox": [20, 20, 30, 30], "category_id": 19}],
     "hoi_annotation": [{"subject_id": 0, "object_id": 1, "category_id": 77}]},
    {"file_name": "b.jpg", "annotations": [{"bbox": [0, 0, 10, 10], "category_id": 1},
                                           {"bbox": [20, 20, 30, 30], "category_id": 47}],
     "hoi_annotation": [{"subject_id": 0, "object_id": 1, "category_id": 37}]}]).encode()
RELEASED_ANSWERS = json.dumps({"q1": {"ao_names": ["ride a/an horse", "walk a/an horse"], "ho_scores": [0.9, 0.2]},
                               "q2": {"ao_names": ["hold a/an cup"], "ho_scores": [0.8]}}).encode()
SWIG_INVERTED_BOX = pickle.dumps([[], [[0, 0, 0, 10, 10, 10, 0, 20, 10, 0.9, 0],
                                       [0, 0, 0, 10, 10, 20, 0, 10, 10, 0.8, 0]]])   # object x2 < x1
VCOCO_GT = (json.dumps({"image": "1", "hois": [{"human_box": [0, 0, 10, 10], "object_box": [10, 10, 20, 20],
                                                "verb": "hit-instr", "object": "tennis_racket", "score": 0.9}]})
            + "\n").encode()
SIDECAR = json.dumps({"source": "fuzz", "models": ["m1"], "date": "2030-01-01"}).encode()
LLM_BODY = json.dumps({"choices": [{"message": {"content": "3"}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 1}}).encode()


@dataclass
class Format:
    """One input format: the world file it replaces, the command that reads it (placeholders
    of :func:`faults.expand`; ``{out}`` is where it writes) and its valid seeds."""
    name: str
    module: str                      # metrics | studyapp | route | llm
    target: str                      # world file replaced by the input
    argv: list[str]
    seeds: list[bytes]
    kind: str                        # json | jsonl | csv | toml | npy | npz | pickle | zip | text
    extra: dict = field(default_factory=dict)   # other world files written first


def _formats() -> dict[str, Format]:
    score = ["score", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--verb-sim", "{verb.csv}",
             "--object-sim", "{object.csv}", "--json", "{out}/r.json"]
    items_csv = FILES["items.csv"]
    formats = [
        Format("detections-jsonl", "metrics", "pred.jsonl", score, [FILES["pred.jsonl"], FILES["gt.jsonl"]], "jsonl"),
        Format("detections-qpic", "metrics", "gt.qpic.json",
               [a.replace("{gt.jsonl}", "{gt.qpic.json}") for a in score], [QPIC_GT], "json"),
        Format("vcoco-pickle", "metrics", "vcoco_dets.pkl",
               ["vcoco", "--vcoco", "{vcoco.json}", "--coco", "{coco.json}", "--ids", "{vcoco.ids}", "--pred",
                "{vcoco_dets.pkl}", "--json", "{out}/r.json"], [FILES["vcoco_dets.pkl"]], "pickle"),
        Format("swig-pickle", "metrics", "swig_pred.pkl",
               ["swig", "--gt", "{swig_gt.json}", "--pred", "{swig_pred.pkl}", "--json", "{out}/r.json"],
               [FILES["swig_pred.pkl"]], "pickle"),
        # the detections as HOIs (role boxes take a COCO category; invalid boxes skipped and counted)
        Format("vcoco-pickle-hois", "metrics", "vcoco_dets.pkl",
               ["vcoco", "--vcoco", "{vcoco.json}", "--coco", "{coco.json}", "--ids", "{vcoco.ids}", "--pred",
                "{vcoco_dets.pkl}", "--hois-out", "{out}/hois", "--json", "{out}/r.json"],
               [FILES["vcoco_dets.pkl"]], "pickle"),
        Format("swig-pickle-hois", "metrics", "swig_pred.pkl",
               ["swig", "--gt", "{swig_gt.json}", "--pred", "{swig_pred.pkl}", "--hois-out", "{out}/hois",
                "--json", "{out}/r.json"], [FILES["swig_pred.pkl"], SWIG_INVERTED_BOX], "pickle"),
        # the ground truth scored on another dataset: the label guard, the dataset's own mAP
        Format("detections-gt-vcoco", "metrics", "gt.jsonl",
               ["score", "--dataset", "vcoco", "--gt", "{gt.jsonl}", "--pred", "{gt.jsonl}", "--json", "{out}/r.json"],
               [VCOCO_GT], "jsonl"),
        Format("ratings-csv", "metrics", "ratings.csv",
               ["agreement", "--ratings", "{ratings.csv}", "--bootstrap", "0", "--json", "{out}/r.json"],
               [FILES["ratings.csv"]], "csv"),
        Format("items-csv", "metrics", "items.csv",
               ["tune-w", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--step", "0.1",
                "--json", "{out}/r.json"], [items_csv], "csv"),
        Format("matrix-csv", "metrics", "verb.csv",
               ["matrix", "info", "{verb.csv}", "--pairs", "{pairs.csv}", "--json", "{out}/r.json"],
               [FILES["verb.csv"]], "csv"),
        Format("matrix-npz", "metrics", "verb.npz",
               ["matrix", "info", "{verb.npz}", "--pairs", "{pairs.csv}", "--json", "{out}/r.json"],
               [FILES["verb.npz"], npz_bytes(labels=np.array(["ride.v.01", "hold.v.01"]), row=np.array([0, 1, 0]),
                                             col=np.array([0, 1, 1]), val=np.array([4.0, 4.0, 2.0]))], "npz"),
        Format("matrix-sidecar", "metrics", "verb.csv.meta.json",
               ["matrix", "info", "{verb.csv}", "--json", "{out}/r.json"], [SIDECAR], "json"),
        Format("study-spec", "studyapp", "new.toml", ["create", "{new.toml}"],
               [FILES["study.toml"].replace(b'slug = "t"', b'slug = "t2"'),
                FILES["study.toml"].replace(b'slug = "t"', b'slug = "t3"').split(b"[items]")[0]
                + b'[items]\nsource = "sampler"\nn = 6\nseed = 3\nw = 0.5\n',
                FILES["study.toml"].replace(b'slug = "t"', b'slug = "t4"').split(b"[items]")[0]
                + b'[items]\nsource = "sampler"\nn = 6\nseed = 3\nexclude_senses = ["straddle.v.01"]\n'], "toml"),
        Format("crosshoi-bench", "metrics", "bench.json",
               ["mcq", "--bench", "{bench.json}", "--pred", "{answers.json}", "--json", "{out}/r.json"],
               [FILES["bench.json"]], "json"),
        Format("crosshoi-answers", "metrics", "answers.json",
               ["mcq", "--bench", "{bench.json}", "--pred", "{answers.json}", "--json", "{out}/r.json"],
               [FILES["answers.json"], RELEASED_ANSWERS], "json"),
        Format("imsitu-predictions", "metrics", "verbs.json",
               ["imsitu", "--gold", "{gold.json}", "--pred", "{verbs.json}", "--clusters", "{clusters.json}",
                "--json", "{out}/r.json"], [FILES["verbs.json"]], "json"),
        Format("imsitu-gold", "metrics", "gold.json",
               ["imsitu", "--gold", "{gold.json}", "--pred", "{verbs.json}", "--json", "{out}/r.json"],
               [FILES["gold.json"]], "json"),
        Format("imsitu-clusters", "metrics", "clusters.json",
               ["imsitu", "--gold", "{gold.json}", "--pred", "{verbs.json}", "--clusters", "{clusters.json}",
                "--json", "{out}/r.json"], [FILES["clusters.json"]], "json"),
        Format("embeddings-npy", "metrics", "emb.npy",
               ["imsitu-cluster", "--embeddings", "{emb.npy}", "--nodes", "{nodes.csv}", "--ks", "2",
                "--ratios", "1.0", "--seed", "1", "--max-exact", "100", "--n-jobs", "1", "--quiet",
                "--json", "{out}/r.json"], [FILES["emb.npy"]], "npy"),
        Format("backup-zip", "studyapp", "backup.zip",
               ["restore", "{backup.zip}", "--url", "sqlite:///{out}/restored.sqlite"], [], "zip"),
        Format("answer-route", "route", "body", [], [], "json"),   # seeds: the world's open item (Runner)
        Format("llm-answers", "llm", "body", [], [LLM_BODY, json.dumps(
            {"choices": [{"message": {"content": "1: 0\n2: 4"}}]}).encode()], "json"),
    ]
    return {f.name: f for f in formats}


FORMATS = _formats()


# ------------------------------------------------------------------ structure-aware edits
BAD_VALUES = [None, -1, 0, 1e308, -1e-300, 10 ** 400, "NaN", "Infinity", "", "x", "-1", [], {}, [[]], True,
              "1+2j", "a" * 300, "\x00\x07", [1, "a"], {"a": None}, 4.5, 2 ** 63, -(2 ** 63), 1.5]
TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1", b"0", b"null", b"true", b"\"\"", b"[]", b"{}",
          b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\n", b"\r\n", b",", b"\"", b"9" * 400, b"-0", b"1e-400", b"\\u0000"]


def json_paths(value, path=()):
    """Every (path, value) of a JSON tree, containers included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, path + (i,))


def json_set(tree, path, new):
    if not path:
        return new
    tree = json.loads(json.dumps(tree))
    node = tree
    for key in path[:-1]:
        node = node[key]
    if new is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return tree


_DELETE = object()


def dump_json(value, *, indent=None) -> str:
    """JSON as the file holds it: ``"NaN"`` / ``"Infinity"`` strings of BAD_VALUES written as the
    bare tokens the JSON policy refuses, big integers as written."""
    text = json.dumps(value, indent=indent)
    return text.replace('"NaN"', "NaN").replace('"Infinity"', "Infinity")


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value) if not isinstance(value, float) or np.isfinite(value) else ("nan" if value != value else "inf")
    if value in ("NaN", "Infinity"):
        return {"NaN": "nan", "Infinity": "inf"}[value]
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return '""'


def dump_toml(table: dict) -> str:
    """A TOML document of a spec (top-level keys, then its tables)."""
    lines = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items() if not isinstance(v, dict)]
    for name, sub in table.items():
        if isinstance(sub, dict):
            lines.append(f"[{json.dumps(name)}]")
            lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in sub.items() if v is not None]
    return "\n".join(lines) + "\n"


def _csv_text(rows: list[list[str]]) -> str:
    return "\n".join(",".join(row) for row in rows) + "\n"


def _csv_cell(draw, text, rows, r, c, width):
    if len(rows) <= 1:
        return None
    import hypothesis.strategies as st
    value = draw(st.sampled_from(["", "nan", "inf", "-1", "1e999", "x", "4.5", "99", "0", "\x00", "é",
                                  '"', "1,2", " 2", "2 ", "true", "-0", "0x10", "1_0", "³"]))
    rows[r][c] = value if "," not in value and '"' not in value else '"' + value.replace('"', '""') + '"'
    return _csv_text(rows), False


def _csv_short_row(draw, text, rows, r, c, width):
    if len(rows) <= 1:
        return None
    rows[r] = rows[r][:-1]
    return _csv_text(rows), False


def _csv_long_row(draw, text, rows, r, c, width):
    if len(rows) <= 1:
        return None
    rows[r] = rows[r] + ["extra"]
    return _csv_text(rows), False


def _csv_drop_row(draw, text, rows, r, c, width):
    if len(rows) <= 2:
        return None
    del rows[r]
    return _csv_text(rows), False


def _csv_reorder_columns(draw, text, rows, r, c, width):
    if width <= 1:
        return None
    order = list(range(width))[::-1]
    return "\n".join(",".join(row[i] for i in order if i < len(row)) for row in rows) + "\n", True


# kind -> (draw, text, rows, r, c, width) -> (edited CSV, harmless?), or None when the kind does
# not apply (then the edit is a byte-order mark)
_CSV_EDITS = {
    "cell": _csv_cell,
    "drop-column": lambda draw, text, rows, r, c, width: (
        "\n".join(",".join(row[:c] + row[c + 1:]) for row in rows) + "\n", False),
    "repeat-column": lambda draw, text, rows, r, c, width: (
        "\n".join(",".join(row + [row[c]] if len(row) > c else row) for row in rows) + "\n", False),
    "short-row": _csv_short_row,
    "long-row": _csv_long_row,
    "empty": lambda draw, text, rows, r, c, width: ("", False),
    "header-only": lambda draw, text, rows, r, c, width: (",".join(rows[0]) + "\n", False),
    "drop-row": _csv_drop_row,
    "quote": lambda draw, text, rows, r, c, width: (
        "\n".join(",".join(f'"{cell}"' for cell in row) for row in rows) + "\n", True),
    "blank-lines": lambda draw, text, rows, r, c, width: (text.replace("\n", "\n\n", 1) + "\n", True),
    "reorder-columns": _csv_reorder_columns,
    "crlf": lambda draw, text, rows, r, c, width: (text.replace("\n", "\r\n"), True),
}


def csv_edit(draw, text: str) -> tuple[str, bool]:
    """(edited CSV, harmless?) with one defect or one harmless edit."""
    import hypothesis.strategies as st
    rows = [line.split(",") for line in text.strip("\n").split("\n")]
    width = len(rows[0])
    kind = draw(st.sampled_from(["cell", "cell", "drop-column", "repeat-column", "short-row", "long-row",
                                 "empty", "header-only", "quote", "blank-lines", "reorder-columns", "crlf",
                                 "bom", "drop-row"]))
    r = draw(st.integers(1, max(1, len(rows) - 1)))
    c = draw(st.integers(0, width - 1))
    edit = _CSV_EDITS.get(kind)
    edited = edit(draw, text, rows, r, c, width) if edit else None
    return edited if edited is not None else ("\ufeff" + text, True)


def json_edit(draw, value) -> tuple[str, bool]:
    import hypothesis.strategies as st
    paths = list(json_paths(value))
    kind = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add-key", "duplicate-key",
                                 "indent", "reorder", "bom", "truncate", "wrap-list"]))
    path, node = draw(st.sampled_from(paths))
    if kind == "replace":
        return dump_json(json_set(value, path, draw(st.sampled_from(BAD_VALUES)))), False
    if kind == "delete" and path:
        return dump_json(json_set(value, path, _DELETE)), False
    if kind == "add-key" and isinstance(node, dict):
        return dump_json(json_set(value, path, {**node, "unexpected": draw(st.sampled_from(BAD_VALUES))})), False
    if kind == "duplicate-key":
        text = dump_json(value)
        at = text.find('": ')
        if at > 0:
            start = text.rfind('"', 0, at)
            key = text[start:at + 1]
            return text.replace("{", "{" + key + ": 0, ", 1), False
    if kind == "indent":
        return dump_json(value, indent=draw(st.integers(0, 4))), True
    if kind == "reorder" and isinstance(value, dict):
        return dump_json(dict(reversed(list(value.items())))), True
    if kind == "bom":
        return "\ufeff" + dump_json(value), True
    if kind == "truncate":
        text = dump_json(value)
        return text[:draw(st.integers(0, max(0, len(text) - 1)))], False
    return dump_json([value]), False


def jsonl_edit(draw, text: str) -> tuple[str, bool]:
    import hypothesis.strategies as st
    lines = [line for line in text.splitlines() if line.strip()]
    k = draw(st.integers(0, len(lines) - 1))
    kind = draw(st.sampled_from(["record", "record", "record", "repeat-line", "blank-line", "crlf", "bom",
                                 "not-json"]))
    if kind == "record":
        edited, harmless = json_edit(draw, json.loads(lines[k]))
        lines[k] = edited.replace("\n", " ")
        return "\n".join(lines) + "\n", harmless
    if kind == "repeat-line":
        return "\n".join(lines + [lines[k]]) + "\n", False
    if kind == "blank-line":
        return "\n\n".join(lines) + "\n", True
    if kind == "crlf":
        return "\r\n".join(lines) + "\r\n", True
    if kind == "bom":
        return "\ufeff" + "\n".join(lines) + "\n", True
    lines[k] = lines[k][: len(lines[k]) // 2]
    return "\n".join(lines) + "\n", False


# kind -> the array it becomes (each a defect)
_ARRAY_REWRITES = {
    "complex": lambda a: a.astype(complex) + 1j,
    "object": lambda a: a.astype(object),
    "strings": lambda a: a.astype(str),
    "bool": lambda a: a.astype(bool),
    "float16": lambda a: a.astype(np.float16),
    "empty": lambda a: a[:0],
    "1d": lambda a: a.ravel(),
    "3d": lambda a: a[None],
}
# kind -> (does it apply to the array?, the array it becomes); else the array stays as it is
_ARRAY_REWRITES_IF = {
    "transpose": (lambda a: a.ndim == 2, lambda a: a.T),
    "int": (lambda a: a.dtype.kind == "f", lambda a: a.astype(np.int64)),
    "float32": (lambda a: a.dtype.kind == "f", lambda a: a.astype(np.float32)),
}
_BAD_NUMBERS = {"nan": np.nan, "inf": np.inf, "huge": 1e300, "negative": -3.0}


def array_edit(draw, array: np.ndarray) -> tuple[np.ndarray, bool]:
    import hypothesis.strategies as st
    kind = draw(st.sampled_from(["complex", "object", "strings", "bool", "float16", "nan", "inf", "huge",
                                 "negative", "empty", "1d", "3d", "transpose", "int", "float32", "same"]))
    a = np.array(array)
    if a.dtype.kind in "USO" and kind in ("complex", "bool", "float16", "int", "float32"):
        a = np.arange(a.size, dtype=float).reshape(a.shape)  # text as numbers, then the kind asked for
    if kind in _ARRAY_REWRITES:
        return _ARRAY_REWRITES[kind](a), False
    if kind in _BAD_NUMBERS and a.size and a.dtype.kind in "iuf":
        a = a.astype(float)
        a.flat[draw(st.integers(0, a.size - 1))] = _BAD_NUMBERS[kind]
        return a, False
    applies, rewrite = _ARRAY_REWRITES_IF.get(kind, (None, None))
    if applies is not None and applies(a):
        return rewrite(a), False
    return a, True


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch fuzz-ran-code",))


def pickle_edit(draw, obj) -> tuple[bytes, bool]:
    import hypothesis.strategies as st
    kind = draw(st.sampled_from(["value", "value", "value", "runs-code", "protocol", "truncate"]))
    if kind == "runs-code":
        return pickle.dumps([_RunsCode()]), False
    if kind == "protocol":
        return pickle.dumps(obj, protocol=draw(st.integers(0, pickle.HIGHEST_PROTOCOL))), True
    data = pickle.dumps(obj)
    if kind == "truncate":
        return data[:draw(st.integers(0, len(data) - 1))], False
    paths = list(json_paths(obj))
    path, _node = draw(st.sampled_from(paths))
    new = draw(st.sampled_from(BAD_VALUES + [float("nan"), complex(1, 2), b"bytes", np.float64(np.inf), (1, 2)]))
    node = obj = pickle.loads(pickle.dumps(obj))
    if not path:
        return pickle.dumps(new), False
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return pickle.dumps(obj), False


def zip_edit(draw, data: bytes) -> tuple[bytes, bool]:
    import hypothesis.strategies as st
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    kind = draw(st.sampled_from(["row", "row", "manifest", "manifest", "drop", "dotdot", "absolute", "link",
                                 "bomb", "extra", "stored", "level"]))
    extra_info = None
    harmless = False
    if kind == "row":
        name = draw(st.sampled_from(sorted(n for n in members if n.endswith(".jsonl") and members[n])))
        edited, _ = jsonl_edit(draw, members[name].decode())
        members[name] = edited.encode()
    elif kind == "manifest":
        edited, _ = json_edit(draw, json.loads(members["manifest.json"]))
        members["manifest.json"] = edited.encode()
    elif kind == "drop":
        del members[draw(st.sampled_from(sorted(members)))]
    elif kind in ("dotdot", "absolute", "link", "bomb", "extra"):
        name = {"dotdot": "tables/../../evil.jsonl", "absolute": "/tmp/evil.jsonl", "link": "tables/link.jsonl",
                "bomb": "tables/bomb.jsonl", "extra": "tables/extra.jsonl"}[kind]
        extra_info = zipfile.ZipInfo(name)
        extra_info.compress_type = zipfile.ZIP_DEFLATED
        if kind == "link":
            extra_info.external_attr = 0o120777 << 16
        members[name] = b"\0" * (4 * 2 ** 20) if kind == "bomb" else b"/etc/passwd" if kind == "link" else b"{}\n"
    else:
        harmless = True
    buf = io.BytesIO()
    compression = zipfile.ZIP_STORED if kind == "stored" else zipfile.ZIP_DEFLATED
    level = draw(st.integers(1, 9)) if kind == "level" else None
    with zipfile.ZipFile(buf, "w", compression=compression, compresslevel=level) as zf:
        for name, content in members.items():
            if extra_info is not None and name == extra_info.filename:
                zf.writestr(extra_info, content)
            else:
                zf.writestr(name, content)
    return buf.getvalue(), harmless


def _text_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _toml_input(draw, seed: bytes) -> tuple[bytes, bool]:
    """A spec edited as JSON, written back as TOML when it still is a table."""
    table = tomllib.loads(seed.decode())
    edited, harmless = json_edit(draw, table)
    try:
        parsed = json.loads(edited.replace("NaN", '"NaN"').replace("Infinity", '"Infinity"'))
    except ValueError:
        parsed = None
    text = dump_toml(parsed) if isinstance(parsed, dict) else edited  # else: not TOML at all
    if isinstance(table, dict) and harmless:
        text = dump_toml(table)
    return _text_bytes(text), harmless


def _npy_input(draw, seed: bytes) -> tuple[bytes, bool]:
    array, harmless = array_edit(draw, np.load(io.BytesIO(seed)))
    return npy_bytes(array, allow_pickle=array.dtype.kind == "O"), harmless


def _npz_input(draw, seed: bytes) -> tuple[bytes, bool]:
    """One array of the archive edited."""
    import hypothesis.strategies as st
    with np.load(io.BytesIO(seed)) as data:
        arrays = {k: data[k] for k in data.files}
    name = draw(st.sampled_from(sorted(arrays)))
    arrays[name], harmless = array_edit(draw, arrays[name])
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue(), harmless


def _edited_text(edit, decode):
    """An input made by a text edit of the decoded seed."""
    def made(draw, seed: bytes) -> tuple[bytes, bool]:
        text, harmless = edit(draw, decode(seed))
        return _text_bytes(text), harmless
    return made


# fmt.kind -> (draw, valid seed) -> (bytes, harmless?)
_STRUCTURED_INPUTS = {
    "jsonl": _edited_text(jsonl_edit, bytes.decode),
    "json": _edited_text(json_edit, json.loads),
    "csv": _edited_text(csv_edit, bytes.decode),
    "toml": _toml_input,
    "npy": _npy_input,
    "npz": _npz_input,
    "pickle": lambda draw, seed: pickle_edit(draw, pickle.loads(seed)),
    "zip": zip_edit,
}


def structured_input(draw, fmt: Format, seed: bytes) -> tuple[bytes, bool]:
    """One structure-aware input of ``fmt`` made from its valid ``seed``: (bytes, harmless?)."""
    if fmt.kind not in _STRUCTURED_INPUTS:
        raise ValueError(fmt.kind)
    return _STRUCTURED_INPUTS[fmt.kind](draw, seed)


def mutated_bytes(rng: random.Random, seed: bytes) -> bytes:
    """A valid seed after 1-4 byte-level mutations."""
    data = bytearray(seed)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        at = rng.randint(0, max(0, len(data) - 1))
        if op == 0 and data:
            data[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del data[at:at + rng.randint(1, 16)]
        elif op == 3:
            end = min(len(data), at + rng.randint(1, 32))
            data[at:at] = data[at:end] * rng.randint(1, 4)
        elif op == 4:
            del data[rng.randint(0, len(data)):]
        elif op == 5:
            token = rng.choice(TOKENS)
            data[at:at + rng.randint(0, 4)] = token
        elif data:
            data[at] = rng.choice(b"0123456789.-+eE,:[]{}\"\\ \n")
    return bytes(data)


# ------------------------------------------------------------------ running one input
class AnswerServer:
    """The loopback LLM server (:mod:`metrics.llm._loopback_server`) answering every chat request
    with the body under test, and a client of it."""

    def __init__(self):
        from metrics.llm import BadBody, ChatClient, Endpoint, LoopbackLLM, Model

        self.body = b""
        self.llm = LoopbackLLM(behaviour=lambda model, pair, attempt: BadBody(self.body)).start()
        self.client = ChatClient(Endpoint(name="fuzz", base_url=self.llm.base_url, retries=0, timeout=5))
        self.model = Model(name="m1", endpoint="fuzz")

    def close(self):
        self.llm.stop()


def _digest(root: Path) -> dict:
    """Every file under ``root`` (size and modification time) and every row of its SQLite
    databases."""
    files, rows = {}, {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_file() and not name.endswith(("-wal", "-shm", "-journal")):
            info = path.stat()
            files[name] = (info.st_size, info.st_mtime_ns)
        if path.suffix == ".sqlite" and path.is_file():
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
                rows[name] = {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
            finally:
                conn.close()
    return {"files": files, "rows": rows}


def _warn_to_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(__import__("warnings").formatwarning(message, category, filename, lineno, line))


class Runner:
    """Runs inputs of every format against one world folder, restoring it after each success."""

    def __init__(self, root: Path):
        self.root = root
        self.world = build_world(root / "w")
        os.environ["STUDYAPP_DB"] = str(self.world / "studyapp.sqlite")
        os.environ["STUDYAPP_EXPORTS"] = str(self.world / "exports")
        os.environ.pop("DATABASE_URL", None)
        self.route = self._open_item()
        (self.world / "gt.qpic.json").write_bytes(QPIC_GT)
        (self.world / "verb.csv.meta.json").write_bytes(SIDECAR)
        (self.world / "new.toml").write_bytes(FORMATS["study-spec"].seeds[0])
        self.pristine = root / "pristine"
        shutil.copytree(self.world, self.pristine)
        self.names = {p.name: str(p) for p in self.world.iterdir()}
        self.names.update(out=str(self.world / "out"), w=str(self.world))
        FORMATS["backup-zip"].seeds = [(self.world / "backup.zip").read_bytes()]
        self.server = None
        self.baselines: dict[tuple[str, bytes], object] = {}
        self._mtimes = {}

    def close(self):
        if self.server is not None:
            self.server.close()

    def _open_item(self) -> tuple[int, str]:
        """(alice's id, her answer key), with an open item, and the answer route's seed: her
        answer to it (the route mounted as the server mounts it, so its replies carry the next
        screen, and the rate limit lifted, so every input reaches the door)."""
        from sqlmodel import select

        from studyapp.core import auth, storage
        from studyapp.core.models import Annotator
        from studyapp.platform import assignment
        from studyapp.views import answer_route

        with storage.read_session() as session:
            alice = session.exec(select(Annotator.id).where(Annotator.pseudonym == "alice")).one()
        task = assignment.next_item(alice)
        key = auth.answer_key(alice)
        storage.dispose_all()
        answer_route.PRESSES_PER_WINDOW = 10 ** 9
        answer_route.middleware()   # as the server mounts it: its replies carry the next screen
        FORMATS["answer-route"].seeds = [json.dumps(
            {"annotator": alice, "item_id": task.assignment_id, "kind": "answer", "value": "3", "comment": None,
             "nonce": "fuzz", "seen_ms": 900, "in_view": True, "not_applied": []}).encode()]
        return alice, key

    # a command's result, with what differs from run to run left out
    @staticmethod
    def _result(path: Path):
        if not path.is_file():
            return None

        def timeless(value):  # "seconds" (timings) differ from run to run
            if isinstance(value, dict):
                return {k: timeless(v) for k, v in value.items() if k != "seconds"}
            return [timeless(v) for v in value] if isinstance(value, list) else value
        return timeless(json.loads(path.read_text(), parse_constant=lambda c: c))

    def _invoke(self, main, argv: list[str]) -> tuple[object, str]:
        """Run the command in the world folder: (exit status, stderr). An escaped exception propagates."""
        out, err = io.StringIO(), io.StringIO()
        from studyapp.core import storage
        cwd = os.getcwd()
        os.chdir(self.world)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("always")
                    warnings.showwarning = _warn_to_stderr  # as a user sees it, even under pytest
                    try:
                        status = main(argv)
                    except SystemExit as exc:
                        status = exc.code
        finally:
            os.chdir(cwd)
            storage.dispose_all()
        return status, err.getvalue()

    def _refusal(self, fmt: Format, lines: list[str], err: str, before) -> tuple[str, str]:
        """(outcome, detail) of exit status 2: a one-line refusal that wrote and changed nothing."""
        if len(lines) != 1 or "Traceback" in err:
            return "bad_refusals", err[-300:]
        out_dir = self.world / "out"
        if out_dir.exists() and any(out_dir.iterdir()):
            return "partial_writes", f"{sorted(p.name for p in out_dir.iterdir())} after {lines[0][:200]}"
        if before is not None:
            after = _digest(self.world)
            after["files"].pop(fmt.target, None)
            before["files"].pop(fmt.target, None)
            if after["rows"] != before["rows"]:
                return "changed_rows", lines[0][:200]
            if after["files"] != before["files"]:
                return "partial_writes", lines[0][:200]
        return "refused", lines[0][:300]

    def run(self, fmt: Format, data: bytes) -> tuple[str, str, object]:
        """(outcome, detail, result) of one input."""
        if fmt.module == "llm":
            return self._run_llm(data)
        if fmt.module == "route":
            return self._run_route(data)
        target = self.world / fmt.target
        target.write_bytes(data)
        before = _digest(self.world) if fmt.module == "studyapp" else None
        argv = expand(fmt.argv, self.names)
        from metrics import cli as metrics_cli
        from studyapp.platform.commands import cli as studyapp_cli
        main = studyapp_cli.main if fmt.module == "studyapp" else metrics_cli.main
        try:
            status, err = self._invoke(main, argv)
        except Exception as exc:
            self._reset(fmt, dirty=True)
            tb = traceback.format_exception(exc)
            return "tracebacks", f"{type(exc).__name__}: {exc}"[:300] + " @ " + tb[-2].strip()[:200], None
        lines = err.strip().splitlines()
        if lines and lines[-1].endswith(INTERRUPTED):  # Ctrl-C / SIGTERM was for the harness
            raise KeyboardInterrupt
        outcome, detail, result = "ok", "", None
        if status == 0:
            result = self._result(self.world / "out" / "r.json")
        elif status == 2:
            outcome, detail = self._refusal(fmt, lines, err, before)
        else:
            outcome, detail = "bad_refusals", f"exit {status}: {err[-300:]}"
        self._reset(fmt, dirty=status == 0 or outcome != "refused")
        return outcome, detail, result

    def _reset(self, fmt: Format, dirty: bool) -> None:
        out = self.world / "out"
        if out.exists():
            shutil.rmtree(out)
        for stray in self.world.glob("fuzz-ran-code"):
            stray.unlink()
        if dirty and fmt.module in ("studyapp", "route"):
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.world / "studyapp.sqlite") + suffix).unlink(missing_ok=True)
            shutil.copy2(self.pristine / "studyapp.sqlite", self.world / "studyapp.sqlite")

    def _run_route(self, data: bytes) -> tuple[str, str, object]:
        """A request body to the answer route: the next screen, the page, or a one-line refusal
        that changed no row (the database is restored after an answer stored)."""
        from studyapp.core import storage
        from studyapp.views import answer_route

        before = _digest(self.world)
        try:
            try:
                status, reply = answer_route.answer_press(answer_route.parse_press(data), self.route[1])
            except answer_route.Refused as refused:
                status, reply = refused.status, {"error": refused.reason}
        except Exception as exc:
            storage.dispose_all()
            self._reset(FORMATS["answer-route"], dirty=True)
            return "tracebacks", f"{type(exc).__name__}: {exc}"[:300], None
        storage.dispose_all()
        if status == 200 and ("data" in reply or reply == {"page": True}):
            self._reset(FORMATS["answer-route"], dirty=True)
            return "ok", "", (status, reply.get("data", {}).get("item_id"), "page" in reply)
        error = str(reply.get("error", ""))
        if status == 200 or not error or "\n" in error:
            self._reset(FORMATS["answer-route"], dirty=True)
            return "bad_refusals", f"{status}: {str(reply)[:200]}", None
        if _digest(self.world)["rows"] != before["rows"]:
            self._reset(FORMATS["answer-route"], dirty=True)
            return "changed_rows", error[:200], None
        return "refused", error[:300], None

    def _run_llm(self, data: bytes) -> tuple[str, str, object]:
        from metrics.llm import EndpointError
        if self.server is None:
            self.server = AnswerServer()
        self.server.body = data
        n_pairs = 2 if b"1:" in data else 1
        try:
            outcome = self.server.client.rate(self.server.model, [{"role": "user", "content": "A: x\nB: y"}], n_pairs)
        except EndpointError as exc:
            return "refused", str(exc)[:200], None
        except Exception as exc:
            return "tracebacks", f"{type(exc).__name__}: {exc}"[:300], None
        scores = outcome.scores
        if len(scores) != n_pairs or any(s is not None and (not isinstance(s, int) or not 0 <= s <= 4)
                                         for s in scores):
            return "changed_results", f"scores {scores!r}", None
        if outcome.error:
            return "refused", outcome.error, None
        return "ok", "", scores

    def baseline(self, fmt: Format, seed: bytes):
        key = (fmt.name, seed)
        if key not in self.baselines:
            outcome, detail, result = self.run(fmt, seed)
            if outcome != "ok":
                raise RuntimeError(f"{fmt.name}: a seed is not accepted: {outcome} {detail}")
            self.baselines[key] = result
        return self.baselines[key]

    def restore_target(self, fmt: Format) -> None:
        if fmt.module not in ("llm", "route"):
            shutil.copy2(self.pristine / fmt.target, self.world / fmt.target)


# ------------------------------------------------------------------ a chunk of inputs
def run_chunk(runner: Runner, fmt: Format, n: int, seed: int, findings: list) -> dict:
    """``n`` inputs of ``fmt`` (up to half structure-aware from hypothesis, the rest byte mutations),
    each checked; returns the counts and appends (outcome, detail, input) to ``findings``."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    counts = dict.fromkeys(OUTCOMES, 0)

    def check(data: bytes, harmless: bool, origin: bytes | None):
        outcome, detail, result = runner.run(fmt, data)
        if outcome == "ok" and harmless and origin is not None and result != runner.baseline(fmt, origin):
            outcome, detail = "changed_results", f"{str(result)[:150]} vs {str(runner.baseline(fmt, origin))[:150]}"
        counts[outcome] += 1
        if outcome in FAILURES:
            findings.append((fmt.name, outcome, detail, data))

    for origin in fmt.seeds:
        runner.baseline(fmt, origin)
    n_structured = n // 2

    @hseed(seed)
    @settings(max_examples=n_structured, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def structured(data):
        origin = data.draw(st.sampled_from(fmt.seeds))
        content, harmless = structured_input(data.draw, fmt, origin)
        check(content, harmless, origin)

    if n_structured:
        structured()
    rng = random.Random(seed)
    for _ in range(n - sum(counts.values())):  # hypothesis may run out of new structures first
        check(mutated_bytes(rng, rng.choice(fmt.seeds)), False, None)
    runner.restore_target(fmt)
    return counts


# how both command lines report Ctrl-C and SIGTERM (``interruptible``): meant for the harness
INTERRUPTED = ("error: interrupted", "error: terminated")
# CPU milliseconds per input measured on the 2-core machine (2026-11-26), to balance --workers
CPU_MS_PER_INPUT = {"backup-zip": 33, "study-spec": 22, "ratings-csv": 11, "embeddings-npy": 10, "items-csv": 10,
                    "swig-pickle": 9, "detections-qpic": 8, "detections-jsonl": 8, "matrix-sidecar": 7,
                    "matrix-csv": 6, "matrix-npz": 6}


def worker_groups(names: list[str], workers: int) -> list[list[str]]:
    """``names`` in ``workers`` groups of about equal CPU time (the costliest format first into
    the cheapest group so far); a format not in ``CPU_MS_PER_INPUT`` counts 4 ms."""
    groups: list[list[str]] = [[] for _ in range(min(workers, len(names)))]
    totals = [0.0] * len(groups)
    for name in sorted(names, key=lambda n: -CPU_MS_PER_INPUT.get(n, 4)):
        k = totals.index(min(totals))
        groups[k].append(name)
        totals[k] += CPU_MS_PER_INPUT.get(name, 4)
    return groups


def run_workers(args, names: list[str]) -> int:
    """The formats split over ``args.workers`` processes of this module, each with its own report
    (``<report>.<k>.json``; an input's seed depends on its format, not on the split), merged into
    ``--report`` when all are done."""
    report_path = Path(args.report)
    parts = []
    processes = []
    for k, group in enumerate(worker_groups(names, args.workers)):
        part = report_path.with_name(f"{report_path.stem}.{k}.json")
        parts.append(part)
        argv = [sys.executable, "-m", "benchmarks.fuzz_inputs", "--n", str(args.n), "--formats", ",".join(group),
                "--seed", str(args.seed), "--report", str(part), "--failures", args.failures, "--workers", "1"]
        processes.append(subprocess.Popen(argv + (["--resume"] if args.resume else []), cwd=ROOT))
    codes = [p.wait() for p in processes]
    report = {}
    for part in parts:
        report.update({k: v for k, v in json.loads(part.read_text()).items() if k != "load"})
    tmp_report = report_path.with_suffix(".tmp")
    tmp_report.write_text(json.dumps(report, indent=1))
    tmp_report.replace(report_path)
    print_summary(report, names)
    return max(codes)


def print_summary(report: dict, names: list[str]) -> None:
    print(f"{'format':20} {'inputs':>8} " + " ".join(f"{o:>15}" for o in OUTCOMES) + f" {'s':>8}")
    for name in names:
        e = report[name]
        print(f"{name:20} {e['inputs']:8d} " + " ".join(f"{e[o]:15d}" for o in OUTCOMES) + f" {e['seconds']:8.0f}")


def _seed_of(base: int, name: str, chunk: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{base}:{name}:{chunk}".encode()).digest()[:4], "big")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="inputs per format (default 100000)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated formats (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", default="fuzz_report.json", help="counts, rewritten after every chunk")
    parser.add_argument("--failures", default="fuzz_failures", help="folder for failing inputs")
    parser.add_argument("--resume", action="store_true", help="continue the counts of --report")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes, each fuzzing a share of the formats (default 1)")
    args = parser.parse_args(argv)
    names = args.formats.split(",")
    unknown = set(names) - set(FORMATS)
    if unknown:
        parser.error(f"unknown formats {sorted(unknown)}")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.workers > 1:
        return run_workers(args, names)
    report_path, failures_dir = Path(args.report), Path(args.failures)
    report = json.loads(report_path.read_text()) if args.resume and report_path.exists() else {}
    for name in names:
        report.setdefault(name, {"inputs": 0, **dict.fromkeys(OUTCOMES, 0), "seconds": 0.0, "chunks": 0})
    print(f"load {os.getloadavg()[0]:.2f} at start", flush=True)
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        runner = Runner(Path(tmp))
        try:
            while any(report[name]["inputs"] < args.n for name in names):
                for name in names:
                    entry = report[name]
                    if entry["inputs"] >= args.n:
                        continue
                    k = min(CHUNK, args.n - entry["inputs"])
                    findings: list = []
                    start = time.perf_counter()
                    counts = run_chunk(runner, FORMATS[name], k, _seed_of(args.seed, name, entry["chunks"]), findings)
                    entry["seconds"] = round(entry["seconds"] + time.perf_counter() - start, 2)
                    entry["inputs"] += k
                    entry["chunks"] += 1
                    for key, value in counts.items():
                        entry[key] += value
                    for fmt_name, outcome, detail, data in findings:
                        failures_dir.mkdir(parents=True, exist_ok=True)
                        digest = hashlib.sha256(data).hexdigest()[:12]
                        (failures_dir / f"{fmt_name}-{outcome}-{digest}.bin").write_bytes(data)
                        (failures_dir / f"{fmt_name}-{outcome}-{digest}.txt").write_text(detail + "\n")
                    report["load"] = os.getloadavg()[0]
                    tmp_report = report_path.with_suffix(".tmp")
                    tmp_report.write_text(json.dumps(report, indent=1))
                    tmp_report.replace(report_path)
                    print(f"{name:20} {entry['inputs']:7d} inputs  " + "  ".join(
                        f"{o} {entry[o]}" for o in OUTCOMES) + f"  {entry['seconds']:.0f} s  load "
                        f"{os.getloadavg()[0]:.2f}", flush=True)
        finally:
            runner.close()
    failed = sum(report[name][o] for name in names for o in FAILURES)
    print_summary(report, names)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

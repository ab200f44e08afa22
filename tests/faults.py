"""A complete, valid set of inputs for every command (the "world"), every command's valid
command line, and the check every fault case makes: exit status 2, exactly one line on stderr
naming the culprit, no traceback, and nothing written or changed (every file under the test's
folder, byte for byte, and every row of the database).

The world is built once per test session (``world_template``) and copied for each case.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from projectpaths import ROOT

A, B = [0, 0, 10, 10], [20, 20, 30, 30]


def hoi(**kw):
    d = {"human_box": A, "object_box": B, "verb": "ride", "object": "horse", "score": 0.9}
    d.update(kw)
    return d


def jl(*records) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def npy_bytes(array, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def _items_and_ratings() -> tuple[bytes, bytes, bytes]:
    rng = np.random.default_rng(0)
    verbs = ["ride", "push", "hold", "walk", "carry", "sit_on"]
    objects = ["bicycle", "horse", "dog", "car", "bench", "cup"]
    items = ["item_id,category,gt_verb,gt_object,pred_verb,pred_object,verb_sim,object_sim,my_metric"]
    ratings = ["study,item_id,annotator,rating,created_at"]
    update = ["study,item_id,annotator,rating,earlier_rating,created_at"]
    for k in range(24):
        cat = k % 3 + 1
        gv, go = verbs[k % 6], objects[(k * 5) % 6]
        pv = gv if cat == 1 else verbs[(k + 1) % 6]
        po = go if cat == 2 else objects[(k * 5 + 1) % 6]
        vs = 1.0 if cat == 1 else round(float(rng.random()), 3)
        os_ = 1.0 if cat == 2 else round(float(rng.random()), 3)
        items.append(f"i{k},{cat},{gv},{go},{pv},{po},{vs},{os_},{round((vs + os_) / 2, 3)}")
        for a in range(3):
            r = int(np.clip(round(4 * (vs + os_) / 2 + rng.normal(0, 0.6)), 0, 4))
            ratings.append(f"s,i{k},ann{a},{r},2030-01-01T00:00:{k:02d}")
            update.append(f"s,i{k},ann{a},{min(4, r + (k % 5 == 0))},{r},2030-01-02T00:00:{k:02d}")
    return tuple(("\n".join(rows) + "\n").encode() for rows in (items, ratings, update))


ITEMS, RATINGS, UPDATE_RATINGS = _items_and_ratings()
MATRIX = b"a,b,score\nride.v.01,hold.v.01,2\nhorse.n.01,cup.n.01,1\n"
BENCH = {"q1": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["walk a/an horse"]},
         "q2": {"gt_choices": ["hold a/an cup"], "wrong_choices": ["wash a/an cup"]}}
IMSITU_GOLD = {"a.jpg": "jumping", "b.jpg": "riding"}
IMSITU_PRED = {"a.jpg": ["leaping", "jumping"], "b.jpg": ["riding"]}
CLUSTERS = {"clusters": {"c1": ["jumping", "leaping"], "c2": ["riding"]},
            "images": {"a.jpg": ["c1"], "b.jpg": ["c2"]}}
SHOE_POOL = (b"image_id,gt_verb,gt_object,gt_verb_synset,gt_object_synset,pred_verb_synset,"
             b"pred_object_synset,category,similarity_level\n"
             b"1,ride,horse,ride.v.01,horse.n.01,ride.v.01,cow.n.01,1,2\n"
             b"2,hold,cup,hold.v.01,cup.n.01,carry.v.01,cup.n.01,2,3\n")
STUDY_ITEMS = (b"item_id,gt_verb,gt_object,pred_verb,pred_object\n"
               b"i1,ride,bicycle,push,bicycle\ni2,hold,cup,carry,cup\ni3,ride,horse,walk,horse\n")
SPEC = b'''title = "T"
slug = "t"
study_type = "hoi_similarity"
instructions = "Rate."
raters_per_item = 2
[prolific]
completion_code = "C0DE"
[items]
source = "csv"
path = "study_items.csv"
'''
LLM_CONFIG = b'''[[endpoints]]
name = "local"
base_url = "http://127.0.0.1:9/v1"
retries = 0
timeout = 1

[[models]]
name = "m1"
'''


def _embeddings() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(1)
    centres = np.eye(4)
    rows, nodes = [], ["image,verb"]
    for k in range(16):
        verb = ["jumping", "leaping", "riding", "driving"][k % 4]
        rows.append(centres[k % 4] + rng.normal(0, 0.05, 4))
        nodes.append(f"img{k // 4}.jpg,{verb}")
    return npy_bytes(np.asarray(rows, dtype=np.float32)), ("\n".join(nodes) + "\n").encode()


EMBEDDINGS, NODES = _embeddings()

FILES = {
    "gt.jsonl": jl({"image": "a.jpg", "hois": [{k: v for k, v in hoi().items() if k != "score"}]},
                   {"image": "b.jpg", "hois": [{k: v for k, v in hoi(verb="hold", object="cup").items()
                                                if k != "score"}]}),
    "pred.jsonl": jl({"image": "a.jpg", "hois": [hoi(score=0.8)]},
                     {"image": "b.jpg", "hois": [hoi(verb="hold", object="cup", score=0.4)]}),
    "items.csv": ITEMS, "ratings.csv": RATINGS, "update.csv": UPDATE_RATINGS,
    "verb.csv": MATRIX, "object.csv": MATRIX,
    "verb.npz": npz_bytes(labels=np.array(["ride.v.01", "hold.v.01"]), scores=np.eye(2) * 4),
    "pairs.csv": b"a,b\nride.v.01,hold.v.01\n",
    "bench.json": json.dumps(BENCH).encode(),
    "answers.json": json.dumps({"q1": ["ride a/an horse"], "q2": ["wash a/an cup"]}).encode(),
    "gold.json": json.dumps(IMSITU_GOLD).encode(), "verbs.json": json.dumps(IMSITU_PRED).encode(),
    "clusters.json": json.dumps(CLUSTERS).encode(),
    "emb.npy": EMBEDDINGS, "nodes.csv": NODES,
    "align_items.csv": (b"item_id,image,model,predictions,gold,role\n"
                        b"q1,a.jpg,m1,leaping;jumping,jumping,main\nq2,b.jpg,m1,riding,riding,main\n"
                        b"q3,a.jpg,m2,jumping,jumping,main\nq4,b.jpg,m2,driving;riding,riding,main\n"),
    "align_ratings.csv": (b"item_id,annotator,rating,phase\nq1,h1,01,main\nq2,h1,1,main\nq3,h1,1,main\n"
                          b"q4,h1,01,main\nq1,h2,01,main\nq2,h2,1,main\nq3,h2,1,main\nq4,h2,01,main\n"),
    "judge.csv": b"model,image,top1,top5\nm1,a.jpg,0,1\nm1,b.jpg,1,1\nm2,a.jpg,1,1\nm2,b.jpg,0,1\n",
    "pool.csv": SHOE_POOL,
    "study.toml": SPEC, "study_items.csv": STUDY_ITEMS,
    "prolific.csv": b"Submission id,Participant id,Status\n65a1,5f8a1b2c3d4e5f6a7b8c9d01,RETURNED\n",
    "weights.csv": b"hoi_id,weight\n1,1.0\n2,2.0\n",
    "llm.toml": LLM_CONFIG, "synsets.csv": b"label,synset\nride,ride.v.01\nhold,hold.v.01\n",
    "a_file.txt": b"a plain file\n",
    # SWIG-HOI: one person injecting (action 169) a syringe (object 31), found by one detection
    "swig_gt.json": json.dumps([{"img_id": 1, "box_annotations": [{"bbox": [0, 0, 10, 10], "category_id": 0},
                                                                  {"bbox": [10, 0, 20, 10], "category_id": 31}],
                                 "hoi_annotations": [{"subject_id": 0, "object_id": 1, "action_id": 169}]}]).encode(),
    "swig_pred.pkl": pickle.dumps([[], [[0, 0, 0, 10, 10, 10, 0, 20, 10, 0.9, 0]]]),
    # V-COCO: one person (COCO annotation 10) holding a cup (11) and standing, found by one detection
    "vcoco.json": json.dumps([{"action_name": "hold", "role_name": ["agent", "obj"], "image_id": [1], "ann_id": [10],
                               "label": [1], "role_object_id": [10, 11]},
                              {"action_name": "stand", "role_name": ["agent"], "image_id": [1], "ann_id": [10],
                               "label": [1], "role_object_id": [10]}]).encode(),
    "coco.json": json.dumps({"images": [{"id": 1, "width": 100, "height": 100}],
                             "annotations": [{"id": 10, "image_id": 1, "category_id": 1, "bbox": [0, 0, 30, 60],
                                              "area": 1800, "iscrowd": 0},
                                             {"id": 11, "image_id": 1, "category_id": 47, "bbox": [20, 20, 10, 10],
                                              "area": 100, "iscrowd": 0}],
                             "categories": [{"id": 1, "name": "person"}, {"id": 47, "name": "cup"}]}).encode(),
    "vcoco.ids": b"1\n",
    "vcoco_dets.pkl": pickle.dumps([{"image_id": 1, "person_box": [0, 0, 29, 59], "hold_agent": 0.9,
                                     "hold_obj": [20, 20, 29, 29, 0.8], "stand_agent": 0.7}]),
}


def build_world(root: Path) -> Path:
    """Write the valid inputs into ``root`` with a database holding study ``t`` (an annotator
    ``alice`` with one rating) and a backup of it; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in FILES.items():
        (root / name).write_bytes(content)
    (root / "a_folder").mkdir()
    env = {**os.environ, "STUDYAPP_DB": str(root / "studyapp.sqlite"), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    script = f"""
from studyapp.platform import assignment
from studyapp.platform.records import studies
from studyapp.platform.operations import backup
from studyapp.core import storage
from studyapp.platform.launch.spec_files import load_spec
study = studies.create_study(load_spec({str(root / 'study.toml')!r}))
(alice,) = studies.invite(study, 0, ["alice"])
annotator = assignment.resolve_token(alice.token)
assignment.accept_instructions(annotator)
task = assignment.next_item(annotator)
assignment.submit(annotator, task.assignment_id, "2", 1.0)
studies.invite(study, 0, ["bob"])
storage.dispose_all()
backup.backup({str(root / 'backup.zip')!r})
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    for suffix in ("-wal", "-shm"):
        Path(str(root / "studyapp.sqlite") + suffix).unlink(missing_ok=True)
    return root


@pytest.fixture(scope="session")
def world_template(tmp_path_factory):
    """The valid world (:func:`build_world`), built once."""
    return build_world(tmp_path_factory.mktemp("world"))


@pytest.fixture
def world(world_template, tmp_path, monkeypatch):
    """A fresh copy of the world in ``tmp_path/w`` (the database is the test's STUDYAPP_DB);
    returns the placeholder map for :func:`expand`."""
    from studyapp.core import storage

    root = tmp_path / "w"
    shutil.copytree(world_template, root)
    monkeypatch.setenv("STUDYAPP_DB", str(root / "studyapp.sqlite"))
    monkeypatch.setenv("STUDYAPP_EXPORTS", str(root / "exports"))
    monkeypatch.chdir(root)
    storage.dispose_all()
    names = {p.name: str(p) for p in root.iterdir()}
    names["out"] = str(root / "out")
    names["w"] = str(root)
    return names


def expand(argv: list[str], names: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in names.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


# Every command with a valid command line (placeholders: world file names, {out} a path to be
# written, {w} the world's folder). ``(module, argv)``.
COMMANDS: dict[str, tuple[str, list[str]]] = {
    "score": ("metrics", ["score", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--verb-sim", "{verb.csv}",
                          "--object-sim", "{object.csv}", "--per-class", "3", "--json", "{out}/r.json"]),
    "agreement": ("metrics", ["agreement", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--bootstrap",
                              "20", "--seed", "1", "--out", "{out}/report", "--json", "{out}/r.json"]),
    "alignment": ("metrics", ["alignment", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--metric",
                              "my_metric", "--verb-sim", "{verb.csv}", "--object-sim", "{object.csv}",
                              "--permutations", "10", "--seed", "1", "--json", "{out}/r.json"]),
    "tune-w": ("metrics", ["tune-w", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--step", "0.01",
                           "--verb-sim", "{verb.csv}", "--object-sim", "{object.csv}", "--out", "{out}/report",
                           "--json", "{out}/r.json"]),
    "recalibrate": ("metrics", ["recalibrate", "--ratings", "{ratings.csv}", "--items", "{items.csv}",
                                "--verb-sim", "{verb.csv}", "--object-sim", "{object.csv}", "--folds", "2",
                                "--w", "0.5", "--prior-strength", "5", "--seed", "1", "--out", "{out}/recal",
                                "--json", "{out}/r.json"]),
    "mcq": ("metrics", ["mcq", "--bench", "{bench.json}", "--pred", "{answers.json}", "--score-threshold", "0.5",
                        "--iou", "0.5", "--per-class", "2", "--json", "{out}/r.json"]),
    "image-update": ("metrics", ["image-update", "--ratings", "{update.csv}", "--before", "{ratings.csv}",
                                 "--items", "{items.csv}", "--out", "{out}/report", "--json", "{out}/r.json"]),
    "imsitu": ("metrics", ["imsitu", "--gold", "{gold.json}", "--pred", "{verbs.json}", "--clusters",
                           "{clusters.json}", "--json", "{out}/r.json"]),
    "imsitu-cluster": ("metrics", ["imsitu-cluster", "--embeddings", "{emb.npy}", "--nodes", "{nodes.csv}",
                                   "--ks", "2,3", "--ratios", "0.6,1.0", "--seed", "1", "--max-exact", "100",
                                   "--n-jobs", "1", "--quiet", "--out", "{out}/clusters.json",
                                   "--json", "{out}/r.json"]),
    "imsitu-align": ("metrics", ["imsitu-align", "--ratings", "{align_ratings.csv}", "--items",
                                 "{align_items.csv}", "--gold", "{gold.json}", "--clusters", "{clusters.json}",
                                 "--judge", "j={judge.csv}", "--resamples", "20", "--seed", "1",
                                 "--json", "{out}/r.json"]),
    "diagnose": ("metrics", ["diagnose", "--gt", "{gt.jsonl}", "--pred", "{pred.jsonl}", "--pairs", "{pred.jsonl}",
                             "--iou", "0.5", "--out", "{out}/diag", "--errors", "{out}/errors.csv",
                             "--json", "{out}/r.json"]),
    "match": ("metrics", ["match", "--verb", "riding", "--gt-verb", "ride.v.01", "--verb-sim", "{verb.csv}",
                          "--object", "horse", "--gt-object", "horse.n.01", "--object-sim", "{object.csv}",
                          "--json", "{out}/r.json"]),
    "matrix info": ("metrics", ["matrix", "info", "{verb.npz}", "--pairs", "{pairs.csv}", "--json", "{out}/r.json"]),
    "matrix baseline": ("metrics", ["matrix", "baseline", "--out-dir", "{out}/base", "--json", "{out}/r.json"]),
    "matrix import-shoe-pool": ("metrics", ["matrix", "import-shoe-pool", "{pool.csv}", "--out", "{out}/pool",
                                            "--json", "{out}/r.json"]),
    "matrix compare": ("metrics", ["matrix", "compare", "{verb.csv}", "{verb.npz}", "--json", "{out}/r.json"]),
    "matrix build-llm": ("metrics", ["matrix", "build-llm", "--config", "{llm.toml}", "--pos", "verb",
                                     "--verbs", "{synsets.csv}", "--limit", "2", "--filter-threshold", "0",
                                     "--control-size", "0", "--control-seed", "1", "--concurrency", "1",
                                     "--batch-size", "1", "--timeout", "1", "--retries", "0", "--backoff", "0",
                                     "--out", "{out}/llm", "--cache", "{out}/cache.sqlite", "--dry-run",
                                     "--ratings", "{ratings.csv}", "--items", "{items.csv}",
                                     "--object-sim", "{object.csv}", "--w", "0.5", "--json", "{out}/r.json"]),
    "vocab": ("metrics", ["vocab", "--pos", "verb", "--json", "{out}/r.json"]),
    "plugins": ("metrics", ["plugins"]),
    "vcoco": ("metrics", ["vcoco", "--vcoco", "{vcoco.json}", "--coco", "{coco.json}", "--ids", "{vcoco.ids}",
                          "--pred", "{vcoco_dets.pkl}", "--iou", "0.5", "--hois-out", "{out}/hois",
                          "--json", "{out}/r.json"]),
    "swig": ("metrics", ["swig", "--gt", "{swig_gt.json}", "--pred", "{swig_pred.pkl}", "--per-class", "2",
                         "--hois-out", "{out}/hois", "--json", "{out}/r.json"]),
    "reliability": ("metrics", ["reliability", "--ratings", "{ratings.csv}", "--items", "{items.csv}", "--compare",
                                "my_metric", "verb_sim", "--bootstrap", "20", "--seed", "1", "--out", "{out}/rel",
                                "--json", "{out}/r.json"]),
    "rater-model": ("metrics", ["rater-model", "--ratings", "{ratings.csv}", "--out", "{out}/rm",
                                "--json", "{out}/r.json"]),
    "create": ("studyapp", ["create", "{study.toml}"]),
    "invite": ("studyapp", ["invite", "t", "--n", "2"]),
    "sample": ("studyapp", ["sample", "--n", "12", "--seed", "1", "--class-weights", "{weights.csv}", "--w", "0.5",
                            "--out", "{out}/items.csv"]),
    "export": ("studyapp", ["export", "t", "--out", "{out}/exports"]),
    "status": ("studyapp", ["status", "t"]),
    "revoke": ("studyapp", ["revoke", "t", "bob"]),
    "owner": ("studyapp", ["owner", "t", "owner"]),
    "share": ("studyapp", ["share", "study", "t", "carol"]),
    "prolific-status": ("studyapp", ["prolific-status", "t", "--csv", "{prolific.csv}"]),
    "simulate": ("studyapp", ["simulate", "t", "--k", "2", "--noise", "0.5", "--seed", "1"]),
    "report": ("studyapp", ["report", "t", "--out", "{out}/reports"]),
    "check-images": ("studyapp", ["check-images", "{study.toml}"]),
    "demo-images": ("studyapp", ["demo-images", "--out", "{out}/demo"]),
    "health": ("studyapp", ["health"]),
    "backup": ("studyapp", ["backup", "{out}/b.zip"]),
    "restore": ("studyapp", ["restore", "{backup.zip}", "--url", "sqlite:///{out}/restored.sqlite"]),
    "list": ("studyapp", ["list"]),
    "studyapp plugins": ("studyapp", ["plugins"]),
    "reset-admin-password": ("studyapp", ["reset-admin-password"]),
    "serve": ("studyapp", ["serve", "--port", "8765", "--no-demo"]),
    "studyapp recalibrate": ("studyapp", ["recalibrate", "t", "--name", "v1", "--w", "0.5", "--prior-strength",
                                          "5", "--folds", "2", "--seed", "1"]),
    "matrices list": ("studyapp", ["matrices", "list"]),
    "matrices export": ("studyapp", ["matrices", "export", "v1", "--out", "{out}/m"]),
    "matrices compare": ("studyapp", ["matrices", "compare", "v1", "v2"]),
    "account add": ("studyapp", ["account", "add", "carol", "--role", "viewer"]),
    "account list": ("studyapp", ["account", "list"]),
    "account set-password": ("studyapp", ["account", "set-password", "carol"]),
}


# ------------------------------------------------------------------ the commands' parsers
def parsers():
    """(command name, module, parser) of every command and action (``matrix info``); a
    platform command named like a metrics one is ``studyapp NAME``."""
    from metrics import cli as metrics_cli
    from studyapp.platform.commands import cli as studyapp_cli

    out, taken = [], set()
    for module, root in (("metrics", metrics_cli.build_parser("*")), ("studyapp", studyapp_cli.build_parser())):
        for name, sub in _choices(root).items():
            shown = f"studyapp {name}" if name in taken else name
            taken.add(name)
            nested = _choices(sub)
            if nested:
                out += [(f"{shown} {action}", module, p) for action, p in nested.items()]
            else:
                out.append((shown, module, sub))
    return out


def command_words(command: str) -> int:
    """How many words of the command line name the command (``matrix info``: 2)."""
    return len(command.split()) - command.startswith("studyapp ")


def _choices(parser) -> dict:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def option_name(action) -> str:
    return action.option_strings[0] if action.option_strings else action.dest


def value_actions(parser):
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and a.nargs != 0]


def with_value(argv: list[str], command: str, parser, action, value: str) -> list[str]:
    """``argv`` with ``action``'s value(s) replaced by ``value`` (the option added if absent)."""
    argv = list(argv)
    if not action.option_strings:  # a positional: after the command words, in parser order
        positionals = [a for a in value_actions(parser) if not a.option_strings]
        argv[command_words(command) + positionals.index(action)] = value
        return argv
    opt = next((o for o in action.option_strings if o in argv), None)
    if opt is None:
        return argv + [action.option_strings[0], value]
    k = argv.index(opt)
    end = k + 2
    if action.nargs in ("+", "*"):
        while end < len(argv) and not argv[end].startswith("--"):
            end += 1
    return argv[:k + 1] + [value] + argv[end:]



# ------------------------------------------------------------------ the state that must not change
def database_rows(path: Path) -> dict | None:
    """Every row of every table of a SQLite file (None when there is no such file)."""
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return {"unreadable": path.read_bytes()}
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in sorted(tables)}
    except sqlite3.Error:
        return {"unreadable": path.read_bytes()}
    finally:
        conn.close()


def state(root: Path) -> dict:
    """Every file under ``root`` (content digest) and every database row; SQLite's own
    ``-wal`` / ``-shm`` files are compared through the rows."""
    import hashlib

    files = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_dir():
            files[name] = "folder"
        elif not name.endswith(("-wal", "-shm", "-journal")):
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "other"
    rows = {str(p.relative_to(root)): database_rows(p) for p in root.rglob("*.sqlite")}
    return {"files": files, "rows": rows}


@dataclass
class Refusal:
    """What a refused run must print: every piece of ``expect`` (case-insensitive) on its line."""
    expect: list[str]
    status: int = 2
    stream: str = "err"
    extra: dict = field(default_factory=dict)


def run_in_process(module: str, argv: list[str], capsys) -> tuple[int, str, str]:
    from metrics import cli as metrics_cli
    from studyapp.core import storage
    from studyapp.platform.commands import cli as studyapp_cli

    main = studyapp_cli.main if module == "studyapp" else metrics_cli.main
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    except Exception as exc:  # an escaped exception is a traceback for the user
        pytest.fail(f"{' '.join(argv[:2])} raised {type(exc).__name__}: {exc}")
    finally:
        storage.dispose_all()
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_process(module: str, argv: list[str], env: dict | None = None) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})
    return done.returncode, done.stdout, done.stderr


def check_refused(status: int, out: str, err: str, refusal: Refusal, what: str) -> str:
    text = err if refusal.stream == "err" else out
    assert status == refusal.status, f"{what}: exit {status}, expected {refusal.status}; out {out[-300:]!r} err {err[-300:]!r}"
    assert "Traceback" not in err, f"{what}: {err}"
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"{what}: {text!r}"
    for piece in refusal.expect:
        assert piece.lower() in lines[0].lower(), f"{what}: message lacks {piece!r}: {lines[0]!r}"
    return lines[0]


def unwritable_folder(root: Path) -> Path | None:
    """A folder nobody (not even root) can create files in, or None when this system cannot
    make one (chmod for users; for root the immutable attribute, on file systems that have it)."""
    folder = root / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
        if made.returncode != 0:
            return None
    try:
        (folder / "probe").write_text("x")
    except OSError:
        return folder
    (folder / "probe").unlink()
    return None


def unlock(folder: Path | None) -> None:
    if folder is not None and os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)

"""``python -m metrics score`` / ``diagnose`` end to end as the user waits.

Writes the HICO-DET-sized workload of ``benchmarks/score_hico_scale.py`` (9,658 images, ~33,000
ground truths, ~966,000 predictions) as JSON Lines once (and the predictions in the QPIC/CDN
format), then, in one run:

  (a) times the real ``python -m metrics score --gt --pred --json`` as a fresh subprocess
      (start-up, reading, label resolution, matrices, scoring, writing) several times;
  (b) times ``python -m metrics diagnose --gt --pred --json`` the same way;
  (c) times reading alone, for the JSON Lines and the QPIC prediction files, the three readers
      taking turns run after run: the reader from before the fast reader (the metric package of
      commit b283132^, taken out with ``git archive`` and run in a process of its own, each
      read timed inside it), the validating reader (that reader plus the input checks,
      which the fast path falls back to) and ``read_detections``, whose fast path parses
      with pyarrow; with the fast path's speed-up over each, in wall and in CPU time;
  (d) times the baseline: the plain transcription — the files read line by line with Python's
      ``json`` into lists, then Algorithms 1 and 2 (``tests/reference/shoe_algorithms.py``) and the
      official HICO-DET evaluation, Default setting (``tests/reference/hico_official.py``), given
      the resolved labels and similarity tables (their preparation not timed; Known-Object not
      included, so the baseline is a lower bound);
  (f) the parse floor, in the same run: the two files parsed alone, with ``json.loads`` per line
      (the plain reading's parser) and with pyarrow's JSON reader (the fastest parser the project
      depends on, the one ``read_detections`` uses), and the command's time over each;
  (g) with ``--interleave N``: N rounds of the command as a fresh process, then the plain
      transcription, one after the other, so that the machine's load weighs on both alike; the
      ratio of each round and their median;
  (e) the 500-image workload of the issue (same generator, 500 images): ``score`` as a fresh
      process next to the plain transcription on the same files, and, given ``--diag-hoi DIR``
      (a checkout of the released neu-vi/Diag-HOI code with its requirements, pycocotools,
      installed), its ``standard_eval.py`` on the same HOIs written as its pickled inputs
      (``no_interaction`` left out, as its ``*_wo_nointer.pkl`` files). The released file does
      not compile (its V-COCO class is broken), so its HICO-DET part runs: the imports and
      everything from ``compute_fptp`` on, unchanged. Without ``--diag-hoi`` the released
      script is not run and only the plain transcription is reported.

Prints medians, every run, the child processes' CPU time (user + system) and the load average
(``os.getloadavg()``) next to each figure: on a shared 2-core machine wall time depends on the
load, CPU time much less.

    .venv/bin/python -m benchmarks.score_end_to_end                 # 5 runs of (a), (b), (c)
    .venv/bin/python -m benchmarks.score_end_to_end --runs 3 --skip-baseline
    .venv/bin/python -m benchmarks.score_end_to_end --quick         # 1,000 images
    .venv/bin/python -m benchmarks.score_end_to_end --diag-hoi ../Diag-HOI   # with (e)'s released script
    .venv/bin/python -m benchmarks.score_end_to_end --ratio-only --interleave 3   # (a), (d), (f), (g) only
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.score_hico_scale import official_inputs, reference_inputs, workload
from metrics.datasets.hico_det import hico
from metrics.detection._detections import COCO_OBJECT_IDS, _read_validating, write_jsonl
from metrics.detection._detections_fast import read_detections
from metrics.detection._scoring import evaluate
from tests.reference import shoe_algorithms as ref
from tests.reference.hico_official import eval_one

BEFORE_FAST_READER = "b283132^"   # the last commit before the fast reader
FAST = "read_detections (pyarrow fast path)"

# reads each path given on its standard input with the metric package in the folder argv[1]
# and answers [wall seconds, CPU seconds] of that read
OLD_READER = """
import json, resource, sys, time
import metrics.detection._detections as detections
assert detections.__file__.startswith(sys.argv[1]), detections.__file__
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
for path in sys.stdin:
    c, t = cpu(), time.perf_counter()
    detections.read_detections(path.strip())
    print(json.dumps([time.perf_counter() - t, cpu() - c]), flush=True)
"""


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_command(argv: list[str], runs: int) -> tuple[list[float], list[float], list[str]]:
    """Wall and CPU seconds of ``runs`` fresh processes, with the load average before each."""
    walls, cpus, loads = [], [], []
    for _ in range(runs):
        loads.append(load())
        cpu, t = children_cpu(), time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "metrics", *argv], cwd=ROOT, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        cpus.append(children_cpu() - cpu)
        if res.returncode != 0:
            raise SystemExit(f"metrics {argv[0]} failed: {res.stderr}")
    return walls, cpus, loads


def old_reader(folder: Path) -> subprocess.Popen | None:
    """A process reading with the metric package of :data:`BEFORE_FAST_READER`; None, with a line
    saying why, when git cannot give that commit (a copy without the history)."""
    res = subprocess.run(["git", "archive", BEFORE_FAST_READER, "metrics"], cwd=ROOT, capture_output=True)
    if res.returncode != 0:
        print(f"    the reader before the fast reader not run: git archive {BEFORE_FAST_READER} failed "
              f"({res.stderr.decode().strip()[:80]})", flush=True)
        return None
    folder.mkdir()
    tarfile.open(fileobj=io.BytesIO(res.stdout)).extractall(folder, filter="data")
    return subprocess.Popen([sys.executable, "-c", OLD_READER, str(folder)], cwd=folder, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def time_readers(readers: dict, path: Path, runs: int) -> tuple[dict, list[str]]:
    """Wall and CPU seconds of each reader on ``path``, the readers taking turns ``runs`` times;
    a reader is a function, or the :func:`old_reader` process."""
    times = {name: ([], []) for name in readers}
    loads = []
    for _ in range(runs):
        loads.append(load())
        for name, reader in readers.items():
            if isinstance(reader, subprocess.Popen):
                reader.stdin.write(f"{path}\n")
                reader.stdin.flush()
                wall, cpu = json.loads(reader.stdout.readline())
            else:
                cpu, t = self_cpu(), time.perf_counter()
                reader(path)
                wall, cpu = time.perf_counter() - t, self_cpu() - cpu
            times[name][0].append(wall)
            times[name][1].append(cpu)
    return times, loads


def report_readers(label: str, times: dict, loads: list[str]) -> None:
    """Each reader's medians, then the fast path's speed-up over the others."""
    print(f"(c) read {label} predictions ({', '.join(loads)})", flush=True)
    for name, (walls, cpus) in times.items():
        print(f"    {name:40} median {statistics.median(walls):7.2f} s  CPU median {statistics.median(cpus):6.2f} s"
              f"  runs {[round(x, 2) for x in walls]}", flush=True)
    fast_wall, fast_cpu = (statistics.median(x) for x in times[FAST])
    for name, (walls, cpus) in times.items():
        if name != FAST:
            print(f"    fast path vs {name}: {statistics.median(walls) / fast_wall:.1f}x in wall time, "
                  f"{statistics.median(cpus) / fast_cpu:.1f}x in CPU time", flush=True)


def report(label: str, walls: list[float], cpus: list[float] | None = None, loads: list[str] | None = None) -> None:
    line = f"{label:44} median {statistics.median(walls):7.2f} s  runs {[round(x, 2) for x in walls]}"
    if cpus:
        line += f"  CPU median {statistics.median(cpus):.2f} s"
    print(line + (f"  ({', '.join(loads)})" if loads else f"  ({load()})"), flush=True)


def write_qpic_predictions(pred, path: Path) -> None:
    """The predictions as QPIC/CDN records: one subject and one object box per HOI."""
    path.write_text(json.dumps(qpic_records(pred, verb_base=1, with_scores=True)))


def qpic_records(det, *, verb_base: int, with_scores: bool, skip_verb: str | None = None) -> list:
    """Per image (in ``det.images`` order) its QPIC/CDN record: two boxes per HOI (person, then
    the object's COCO id), HICO-DET verb ids counted from ``verb_base``, HOIs of ``skip_verb``
    left out; predictions (``with_scores``) or annotations."""
    vocab = hico()
    verb_id = {v: k + verb_base for k, v in enumerate(vocab.verb_labels)}
    coco = {o: COCO_OBJECT_IDS[k] for k, o in enumerate(vocab.object_labels)}
    order = np.argsort(det.image, kind="stable")
    bounds = np.searchsorted(det.image[order], np.arange(len(det.images) + 1))
    hb, ob, verb, obj, score = (det.human_box.tolist(), det.object_box.tolist(), det.verb.tolist(),
                                det.object.tolist(), det.score.tolist())
    box_key, hoi_key = ("predictions", "hoi_prediction") if with_scores else ("annotations", "hoi_annotation")
    records = []
    for i, name in enumerate(det.images):
        boxes, hois = [], []
        for k in order[bounds[i]:bounds[i + 1]]:
            if verb[k] == skip_verb:
                continue
            hoi = {"subject_id": len(boxes), "object_id": len(boxes) + 1, "category_id": verb_id[verb[k]]}
            if with_scores:
                hoi["score"] = score[k]
            hois.append(hoi)
            boxes += [{"bbox": hb[k], "category_id": 1}, {"bbox": ob[k], "category_id": coco[obj[k]]}]
        records.append({"file_name": str(name), box_key: boxes, hoi_key: hois})
    return records


def plain_read(path: Path) -> list:
    """The plain transcription's reading: one ``json.loads`` per line, HOIs into tuples."""
    images = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                images.append((rec["image"], [(h["human_box"], h["object_box"], h["verb"], h["object"],
                                               h.get("score")) for h in rec["hois"]]))
    return images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=9658)
    parser.add_argument("--per-image", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-baseline", action="store_true", help="skip (d), the plain transcription")
    parser.add_argument("--quick", action="store_true", help="1,000 images, 3 runs")
    parser.add_argument("--diag-hoi", metavar="DIR", help="checkout of the released Diag-HOI code: (e) runs "
                        "its standard_eval.py too")
    parser.add_argument("--ratio-only", action="store_true",
                        help="only the command, the plain transcription and the parse floor: (a), (d), (f), (g)")
    parser.add_argument("--interleave", type=int, default=0, metavar="N",
                        help="(g): N rounds of the command and the plain transcription, one after the other")
    parser.add_argument("--map-protocol", default="official", choices=("official", "all-point"),
                        help="the command's --map-protocol (default official)")
    args = parser.parse_args()
    if args.quick:
        args.images, args.runs = 1000, 3
    n_gt = round(args.images * 33000 / 9658)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        gt, pred = workload(args.images, n_gt, args.per_image)
        gt_path, pred_path, qpic_path = tmp / "gt.jsonl", tmp / "pred.jsonl", tmp / "pred_qpic.json"
        write_jsonl(gt, gt_path, with_scores=False)
        write_jsonl(pred, pred_path)
        write_qpic_predictions(pred, qpic_path)
        print(f"workload: {len(gt.images)} images, {len(gt)} ground truths, {len(pred)} predictions; "
              f"pred.jsonl {pred_path.stat().st_size / 2**20:.0f} MiB, pred_qpic.json "
              f"{qpic_path.stat().st_size / 2**20:.0f} MiB; {os.cpu_count()} cores; {load()}", flush=True)

        out = tmp / "score.json"
        score_argv = ["score", "--gt", str(gt_path), "--pred", str(pred_path), "--map-protocol", args.map_protocol,
                      "--json", str(out)]
        walls, cpus, loads = time_command(score_argv, args.runs)
        report(f"(a) python -m metrics score --map-protocol {args.map_protocol}", walls, cpus, loads)
        score_median = statistics.median(walls)
        if args.ratio_only:
            ratio_figures(args, gt, pred, gt_path, pred_path, score_argv, score_median)
            return
        walls, cpus, loads = time_command(["diagnose", "--gt", str(gt_path), "--pred", str(pred_path),
                                           "--json", str(tmp / "diagnose.json")], args.runs)
        report("(b) python -m metrics diagnose", walls, cpus, loads)

        old = old_reader(tmp / "before_fast_reader")
        readers = {f"the reader before the fast reader ({BEFORE_FAST_READER})": old} if old else {}
        readers |= {"validating reader": _read_validating, FAST: read_detections}
        for label, path in (("JSON Lines", pred_path), ("QPIC", qpic_path)):
            report_readers(label, *time_readers(readers, path, args.runs))
        if old:
            old.stdin.close()
            old.wait()

        if not args.skip_baseline:
            ratio_figures(args, gt, pred, gt_path, pred_path, score_argv, score_median)

        gt, pred = workload(500, round(500 * 33000 / 9658), args.per_image)
        small = tmp / "small"
        small.mkdir()
        write_jsonl(gt, small / "gt.jsonl", with_scores=False)
        write_jsonl(pred, small / "pred.jsonl")
        walls, cpus, loads = time_command(["score", "--gt", str(small / "gt.jsonl"), "--pred",
                                           str(small / "pred.jsonl"), "--json", str(small / "score.json")],
                                          args.runs)
        report("(e) 500 images: python -m metrics score", walls, cpus, loads)
        plain_transcription(prepare_plain(gt, pred), small / "gt.jsonl", small / "pred.jsonl", "    500 images:")
        if args.diag_hoi:
            walls, loads = time_diag_hoi(Path(args.diag_hoi), gt, pred, small, args.runs)
            report("    500 images: Diag-HOI standard_eval.py", walls, loads=loads)
        else:
            print("    500 images: Diag-HOI standard_eval.py not run (give --diag-hoi DIR)", flush=True)


def ratio_figures(args, gt, pred, gt_path: Path, pred_path: Path, score_argv: list[str], score_median: float) -> None:
    """(d) the plain transcription and the command's ratio to it, (f) the parse floor and (g)
    the interleaved rounds, in this run."""
    prepared = prepare_plain(gt, pred)
    baseline = plain_transcription(prepared, gt_path, pred_path, "(d)")
    print(f"    score command vs plain transcription: {baseline / score_median:.1f}x faster", flush=True)
    floors = parse_floor([gt_path, pred_path], args.runs)
    for name, seconds in floors.items():
        print(f"(f) parse floor, {name}: median {seconds:.2f} s ({load()}); the score command takes "
              f"{score_median / seconds:.2f}x that; the plain transcription {baseline / seconds:.1f}x", flush=True)
    if args.interleave:
        ratios = []
        for k in range(args.interleave):
            walls, cpus, loads = time_command(score_argv, 1)
            plain = plain_transcription(prepared, gt_path, pred_path, f"(g) round {k + 1}:")
            ratios.append(plain / walls[0])
            print(f"    round {k + 1}: score {walls[0]:.2f} s (CPU {cpus[0]:.2f} s, {loads[0]}), plain "
                  f"{plain:.1f} s: {ratios[-1]:.1f}x", flush=True)
        print(f"(g) interleaved: median ratio {statistics.median(ratios):.1f}x over {len(ratios)} rounds "
              f"{[round(r, 1) for r in ratios]}", flush=True)


def parse_floor(paths: list[Path], runs: int) -> dict[str, float]:
    """Median seconds to parse the files alone (no columns, no checks): ``json.loads`` of every
    line, and pyarrow's JSON reader with the fast path's schema, the two taking turns."""
    from metrics.detection._detections_fast import _jsonl_schema, _parse_lines

    def with_json():
        for path in paths:
            with open(path, "rb") as f:
                for line in f:
                    json.loads(line)

    def with_pyarrow():
        for path in paths:
            _parse_lines(path.read_bytes(), _jsonl_schema())

    times: dict[str, list[float]] = {"json.loads per line": [], "pyarrow JSON reader": []}
    for _ in range(runs):
        for name, parse in zip(times, (with_json, with_pyarrow)):
            t = time.perf_counter()
            parse()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(values) for name, values in times.items()}


def prepare_plain(gt, pred) -> tuple:
    """The plain transcription's inputs: the resolved labels and σ tables as plain lists."""
    ev = evaluate(gt, pred)
    images, sigma = reference_inputs(gt, pred, ev)
    return images, sigma, len(ev.classes)


def plain_transcription(prepared, gt_path: Path, pred_path: Path, label: str) -> float:
    """Seconds of the plain transcription: the files read line by line, then Algorithms 1, 2
    and the official mAP (Default) on the resolved labels (:func:`prepare_plain`, not timed)."""
    images, sigma, n_classes = prepared
    t = time.perf_counter()
    plain_read(gt_path), plain_read(pred_path)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    ref.shoe_map(images, sigma, n_classes)
    ref.shoe_mf1(images, sigma, n_classes, tau=0.5)
    eval_one(*official_inputs(images, n_classes), len(images))
    t_score = time.perf_counter() - t
    print(f"{label} plain transcription: reading {t_read:.1f} s + Algorithms 1, 2 and the official mAP "
          f"{t_score:.1f} s = {t_read + t_score:.1f} s ({load()})", flush=True)
    return t_read + t_score


def time_diag_hoi(root: Path, gt, pred, folder: Path, runs: int) -> tuple[list[float], list[str]]:
    """Wall seconds of the released ``standard_eval.py`` on the same HOIs (fresh processes)."""
    if not (root / "standard_eval.py").exists() or not (root / "utils.py").exists():
        raise SystemExit(f"--diag-hoi: {root} has no standard_eval.py and utils.py")
    # the released file does not compile: its V-COCO class has a line without its indentation
    # and method code at class level. Its HICO-DET part runs as released: the imports, then
    # everything from compute_fptp on (compute_fptp, voc_ap, compute_map, eval_hicodet, main)
    text = (root / "standard_eval.py").read_text()
    script = folder / "standard_eval.py"
    script.write_text(text[:text.index("class VCOCOeval")] + text[text.index("def compute_fptp"):])
    (folder / "utils.py").write_text((root / "utils.py").read_text())
    # the released script pairs the two lists image by image; CDN writes verb ids from 0
    pred = pred.with_images(gt.images)
    gts = qpic_records(gt, verb_base=0, with_scores=False, skip_verb="no_interaction")
    preds = qpic_records(pred, verb_base=0, with_scores=True, skip_verb="no_interaction")
    # its compute_iou_mat fails on an image without ground-truth boxes: such images left out
    kept = [k for k, rec in enumerate(gts) if rec["annotations"]]
    gts, preds = [gts[k] for k in kept], [preds[k] for k in kept]
    sum_gts: dict = {}
    for rec in gts:
        for h in rec["hoi_annotation"]:
            triplet = (1, rec["annotations"][h["object_id"]]["category_id"], h["category_id"])
            sum_gts[triplet] = sum_gts.get(triplet, 0) + 1
    for rec in preds:   # the script asserts every predicted triplet is a key
        for h in rec["hoi_prediction"]:
            sum_gts.setdefault((1, rec["predictions"][h["object_id"]]["category_id"], h["category_id"]), 0)
    for name, value in (("gts.pkl", gts), ("preds.pkl", preds), ("sum_gts.pkl", sum_gts)):
        (folder / name).write_bytes(pickle.dumps(value))
    walls, loads = [], []
    for _ in range(runs):
        loads.append(load())
        t = time.perf_counter()
        res = subprocess.run([sys.executable, str(script), "--sum_gts_file", str(folder / "sum_gts.pkl"),
                              "--gt_triplets_file", str(folder / "gts.pkl"), "--preds_file",
                              str(folder / "preds.pkl")], cwd=folder, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        if res.returncode != 0:
            raise SystemExit(f"standard_eval.py failed: {res.stderr[-500:]}")
    return walls, loads


if __name__ == "__main__":
    main()

"""Submit latency in an adaptive study: the rater-model refit in the background vs inline.

A 500-item adaptive study (``refit_every`` 25) in a temporary SQLite file first gets 2,500 main
ratings from 20 simulated annotators (``studyapp.platform.records.simulate``: invites, ``next_item``, ``submit``;
built with adaptive collection off, so no refit slows the build, then switched on and fitted
once). Then fresh annotators rate ``--submits`` more items per run (``assignment.next_item``,
not timed, then ``assignment.submit``, timed end to end; ``--pause`` seconds apart, the pace
of many annotators together; 0: back to back), in two modes that alternate over ``--runs``:

- background: ``submit`` as it is; the refit it asks for every ``refit_every`` ratings runs on
  the background thread (and competes for the CPU with the submits that follow);
- synchronous (baseline, the behaviour before): each submit also waits for the refit it asked
  for (``adaptive.wait_for_refits``), as when the refit ran inside ``submit``.

Figures: the time of one refit after the build, p50, p95 and max submit latency per mode
(median over the runs), the refits each mode ran, and the load average.

    .venv/bin/python -m benchmarks.submit_latency_adaptive [--items 500] [--ratings 2500] [--submits 100] [--pause 0.05] [--runs 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

# target_se below what a handful of ratings gives (about 0.2 here): no item retires during the runs
ADAPTIVE = {"target_se": 0.1, "min_raters": 3, "max_raters": 8, "refit_every": 25}


def build(n_items: int, n_annotators: int, n_ratings: int):
    """The study filled with simulated ratings, adaptive collection switched on, fitted once;
    returns the stored study and the seconds the fit took."""
    from sqlalchemy import update

    from metrics import hico
    from studyapp.core import storage
    from studyapp.core.models import Study
    from studyapp.platform.assignment import adaptive
    from studyapp.platform.records import studies
    from studyapp.platform.records.simulate import simulate_study
    from studyapp.platform.specs.spec_model import ItemSpec, StudySpec
    from studyapp.studytypes import get_type

    study_type = get_type("hoi_similarity")
    vocab = hico()
    classes = vocab.classes[vocab.classes["verb"] != "no_interaction"]
    synset = {v: vocab.verb_synset(v) for v in vocab.verb_labels if v != "no_interaction"}
    pairs = [(gv, go, pv) for gv, go in zip(classes["verb"], classes["object"]) for pv in synset
             if synset[pv] != synset[gv]]
    pairs = pairs[:: max(1, len(pairs) // n_items)][:n_items]
    items = [ItemSpec(f"b{k:04d}", "main", study_type.normalize_item(
        {"gt_verb": gv, "gt_object": go, "pred_verb": pv, "pred_object": go}, "benchmark"))
        for k, (gv, go, pv) in enumerate(pairs)]
    per_annotator = n_ratings // n_annotators
    spec = StudySpec(slug="bench", title="Adaptive submit latency", study_type="hoi_similarity",
                     instructions="Rate.", scale=study_type.default_scale,
                     raters_per_item=math.ceil(n_ratings / n_items), items_per_annotator=per_annotator,
                     items=items)
    study_id = studies.create_study(spec)
    simulate_study("bench", k=n_annotators, seed=0)
    adaptive_spec = dataclasses.replace(spec, adaptive=ADAPTIVE, raters_per_item=ADAPTIVE["max_raters"])
    with storage.write_session() as session:
        session.exec(update(Study).where(Study.id == study_id).values(
            spec_json=adaptive_spec.to_json(), raters_per_item=ADAPTIVE["max_raters"]))
    with storage.read_session() as session:
        study = session.get(Study, study_id)
    start = time.perf_counter()
    adaptive.refit(study, adaptive_spec)
    return study, time.perf_counter() - start


def timed_submits(study_id: int, n: int, pause: float, synchronous: bool,
                  seed: int) -> tuple[list[float], int]:
    """Seconds of each of ``n`` submits by fresh annotators, and the refits run meanwhile."""
    from studyapp.platform import assignment
    from studyapp.platform.assignment import adaptive
    from studyapp.platform.records import studies

    rng = np.random.default_rng(seed)
    fitted_before = refits_so_far(study_id)
    times: list[float] = []
    annotator_id = None
    while len(times) < n:
        task = assignment.next_item(annotator_id) if annotator_id is not None else None
        if task is None:
            (invite,) = studies.invite(study_id, 1)
            annotator_id = assignment.resolve_token(invite.token)
            task = assignment.next_item(annotator_id)
            if task is None:
                raise SystemExit("no item is open for a new annotator")
        start = time.perf_counter()
        assignment.submit(annotator_id, task.assignment_id, int(rng.integers(5)), 1.0)
        if synchronous:
            adaptive.wait_for_refits()
        times.append(time.perf_counter() - start)
        time.sleep(pause)
    adaptive.wait_for_refits()
    return times, refits_so_far(study_id) - fitted_before


def refits_so_far(study_id: int) -> int:
    """The study's ``rater_model_fitted`` events."""
    from sqlmodel import func, select

    from studyapp.core import storage
    from studyapp.core.models import Event

    with storage.read_session() as session:
        return session.exec(select(func.count(Event.id)).where(
            Event.study_id == study_id, Event.kind == "rater_model_fitted")).one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--annotators", type=int, default=20, help="simulated annotators of the build")
    parser.add_argument("--ratings", type=int, default=2500, help="main ratings before the timed submits")
    parser.add_argument("--submits", type=int, default=100, help="timed submits per mode and run")
    parser.add_argument("--pause", type=float, default=0.05,
                        help="seconds between submits (0: back to back)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each mode (median reported)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STUDYAPP_DB"] = str(Path(tmp) / "studyapp.sqlite")
        os.environ.pop("DATABASE_URL", None)
        from studyapp.core import storage

        started = time.perf_counter()
        study, fit_seconds = build(args.items, args.annotators, args.ratings)
        print(f"built: {args.items} items, {args.ratings} ratings from {args.annotators} simulated "
              f"annotators in {time.perf_counter() - started:.1f} s (SQLite); one refit "
              f"{fit_seconds:.2f} s")
        figures = {"background": [], "synchronous": []}
        for run in range(args.runs):
            for mode in figures:
                times, refits = timed_submits(study.id, args.submits, args.pause,
                                              mode == "synchronous", run)
                ms = np.array(times) * 1000
                figures[mode].append((np.percentile(ms, 50), np.percentile(ms, 95), ms.max(), refits))
        print(f"submit latency, {args.submits} submits {args.pause} s apart per run, median of "
              f"{args.runs} runs (refit_every {ADAPTIVE['refit_every']}):")
        for mode, rows in figures.items():
            p50, p95, worst, refits = (statistics.median(column) for column in zip(*rows))
            print(f"  {mode:<11} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   max {worst:7.1f} ms   "
                  f"refits per run {refits:.0f}")
        print(f"load average: {os.getloadavg()} ({time.perf_counter() - started:.0f} s in all)")
        storage.dispose_all()


if __name__ == "__main__":
    main()

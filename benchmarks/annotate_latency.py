"""Server-side latency from submitting a rating to the next item being rendered.

A study with 10,000 items (raters_per_item = 10) and 100 annotators holding 50,000 ratings
(500 each, 5 per item) is built in a temporary SQLite file. Then one more annotator opens the
annotator page through ``streamlit.testing.v1.AppTest`` and rates 200 items by clicking the
rating buttons; each click runs the page script (the callback stores the rating and commits,
then the next item is claimed and rendered), and the wall time of that run is recorded.
Prints the median and 95th percentile (target: p95 <= 100 ms on SQLite), and the same for the
two database calls alone.

    .venv/bin/python benchmarks/annotate_latency.py [--items 10000] [--submissions 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build(n_items: int, n_annotators: int, per_annotator: int, raters: int) -> tuple[int, str]:
    from sqlalchemy import insert

    from metrics import hico
    from studyapp import auth, storage, studies
    from studyapp.models import Annotator, Assignment, Rating, utcnow
    from studyapp.specs import ItemSpec, StudySpec
    from studyapp.studytypes import get_type

    study_type = get_type("hoi_similarity")
    vocab = hico()
    classes = vocab.classes[vocab.classes["verb"] != "no_interaction"]
    verbs = [v for v in vocab.verb_labels if v != "no_interaction"]
    pairs = [(gv, go, pv) for gv, go in zip(classes["verb"], classes["object"]) for pv in verbs
             if vocab.verb_synset(pv) != vocab.verb_synset(gv)]
    pairs = pairs[:: max(1, len(pairs) // n_items)][:n_items]
    items = [ItemSpec(f"b{k:05d}", "main", study_type.normalize_item(
        {"gt_verb": gv, "gt_object": go, "pred_verb": pv, "pred_object": go}, "benchmark"))
        for k, (gv, go, pv) in enumerate(pairs)]
    spec = StudySpec(slug="bench", title="Latency benchmark", study_type="hoi_similarity",
                     instructions="Rate.", scale=study_type.default_scale, raters_per_item=raters,
                     items=items)
    study_id = studies.create_study(spec)
    rng = np.random.default_rng(0)
    now = utcnow() - timedelta(days=1)
    engine = storage.get_engine()
    with engine.begin() as conn:
        item_ids = [r[0] for r in conn.exec_driver_sql(
            "SELECT id FROM item WHERE study_id = ? ORDER BY position", (study_id,))]
        annotators = [{"study_id": study_id, "pseudonym": f"a{k:03d}", "source": "invite",
                       "token_hash": auth.token_hash(f"bench-{k}"), "seed": int(rng.integers(2**30)),
                       "created_at": now, "started_at": now}
                      for k in range(n_annotators)]
        conn.execute(insert(Annotator), annotators)
        annotator_ids = [r[0] for r in conn.exec_driver_sql(
            "SELECT id FROM annotator WHERE study_id = ? ORDER BY id", (study_id,))]
        # annotator k rates items k*per .. (k+1)*per - 1 (wrapping): every item gets the same
        # number of raters, each in its own slot
        assignments, slot_of = [], {}
        for k, annotator_id in enumerate(annotator_ids):
            for pos in range(per_annotator):
                item_id = item_ids[(k * per_annotator + pos) % len(item_ids)]
                slot = slot_of.get(item_id, 0)
                slot_of[item_id] = slot + 1
                assignments.append({"study_id": study_id, "annotator_id": annotator_id,
                                    "item_id": item_id, "phase": "main", "position": pos,
                                    "slot": slot, "claimed_at": now, "answered_at": now})
        conn.execute(insert(Assignment), assignments)
        conn.exec_driver_sql("UPDATE item SET n_claims = (SELECT COUNT(*) FROM assignment "
                             "WHERE assignment.item_id = item.id AND assignment.phase = 'main')")
        rows = conn.exec_driver_sql("SELECT id, annotator_id, item_id FROM assignment "
                                    "WHERE study_id = ?", (study_id,)).all()
        conn.execute(insert(Rating), [
            {"study_id": study_id, "assignment_id": a, "annotator_id": ann, "item_id": item,
             "revision": 0, "response": str(int(rng.integers(5))),
             "seconds_spent": float(rng.uniform(2, 10)), "created_at": now}
            for a, ann, item in rows])
    (invite,) = studies.invite(study_id, 1)
    return study_id, invite.token


def percentiles(values: list[float]) -> str:
    ms = np.array(values) * 1000
    return f"p50 {np.percentile(ms, 50):6.1f} ms   p95 {np.percentile(ms, 95):6.1f} ms   max {ms.max():6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--per-annotator", type=int, default=500)
    parser.add_argument("--raters", type=int, default=10)
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--json", help="also write the figures as JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STUDYAPP_DB"] = str(Path(tmp) / "bench.sqlite")
        os.environ.pop("DATABASE_URL", None)
        from streamlit.testing.v1 import AppTest

        from studyapp import assignment, storage

        t0 = time.perf_counter()
        study_id, token = build(args.items, args.annotators, args.per_annotator, args.raters)
        with storage.read_session() as session:
            from sqlmodel import func, select

            from studyapp.models import Rating
            n_ratings = session.exec(select(func.count(Rating.id))).one()
        print(f"built: {args.items} items, {args.annotators + 1} annotators, {n_ratings} ratings "
              f"in {time.perf_counter() - t0:.1f} s (SQLite, {storage.get_engine().url.database})")

        at = AppTest.from_file(str(ROOT / "studyapp" / "app.py"), default_timeout=60)
        at.query_params["token"] = token
        at.run()
        at.button(key="start").click().run()
        page_times = []
        for k in range(args.submissions + 5):
            (button,) = [b for b in at.button if b.label.startswith(f"{k % 5} — ")]
            start = time.perf_counter()
            button.click().run()
            elapsed = time.perf_counter() - start
            assert not at.exception, at.exception
            if k >= 5:  # the first runs warm caches
                page_times.append(elapsed)
        annotator_id = assignment.resolve_token(token)
        submit_times, next_times = [], []
        for k in range(args.submissions):
            start = time.perf_counter()
            task = assignment.next_item(annotator_id)
            mid = time.perf_counter()
            assignment.submit(annotator_id, task.assignment_id, k % 5, 1.0)
            next_times.append(mid - start)
            submit_times.append(time.perf_counter() - mid)
        print(f"page (submit -> next item rendered, AppTest, n={len(page_times)}): {percentiles(page_times)}")
        print(f"  submit() alone:    {percentiles(submit_times)}")
        print(f"  next_item() alone: {percentiles(next_times)}")
        p95 = float(np.percentile(np.array(page_times) * 1000, 95))
        print(f"target p95 <= 100 ms: {'met' if p95 <= 100 else 'NOT met'}")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "page_ms": {"p50": float(np.percentile(page_times, 50) * 1000), "p95": p95},
                "submit_ms_p95": float(np.percentile(submit_times, 95) * 1000),
                "next_item_ms_p95": float(np.percentile(next_times, 95) * 1000)}, indent=2))
        storage.dispose_all()


if __name__ == "__main__":
    main()

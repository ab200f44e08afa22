"""Key press -> next item fully rendered, in a real headless Chromium, with 100,000 ratings.

A study with 5,000 items (raters_per_item = 25) and 200 annotators holding 100,000 ratings
(500 each) is built in a temporary SQLite file (``--small``: 200 items, 4 annotators, 200
ratings; ``--database-url``: on that PostgreSQL database instead, emptied first); the app is
started as a process and one more annotator rates ``--submissions`` items by pressing digit keys. Each latency runs from the
keydown event (``performance.now()`` in the page) to the moment the item screen of the next
item is in place and ready (its content and controls together), seen at the next
animation frame; each key is pressed once the item on screen has been drawn for the seen floor
(``[answers] min_seen_ms``, 300 ms: a key before it is dropped) and, where a row of it is
covered (the with-image pair under the answer bar), scrolled through first: neither is counted. ``--type hoi_similarity_image``: the with-image pass of that study (its 10,000
rated pairs, a drawn image per class), rated by one of its 200 annotators, the earlier rating
preselected. ``--burner``: a process keeps a core busy (load ~2 on this 2-core machine). The
server runs as it does once started: its dashboard warm-up, a niced child process that computes
every rated study's dashboard once after a start (minutes on the large study), is off unless
``--warm-up``. The load average is printed (the benchmark's own server and Chromium add ~1.5). The server's share in the same run: the calls one page run makes
after a key (``answer``, which stores it and returns the next screen in one transaction, then
the item's content), timed in this process; ``--explain``
prints the plan of every query those calls send (SQLite ``EXPLAIN QUERY PLAN``, PostgreSQL
``EXPLAIN ANALYZE``). Targets: p50 <= 100 ms, p95 <= 150 ms at load <= 2; server share
p50 <= 15 ms.

    .venv/bin/python -m benchmarks.annotate_latency [--small] [--type hoi_similarity] [--burner]
                                                    [--submissions 100] [--explain] [--warm-up]
                                                    [--database-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np


def build(n_items: int, n_annotators: int, per_annotator: int, raters: int) -> tuple[int, str]:
    from sqlalchemy import insert, text

    from metrics import hico
    from studyapp.core import auth, storage
    from studyapp.core.models import Annotator, Assignment, Rating, utcnow
    from studyapp.platform.records import studies
    from studyapp.platform.specs.spec_model import ItemSpec, StudySpec
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
        item_ids = [r[0] for r in conn.execute(
            text("SELECT id FROM item WHERE study_id = :s ORDER BY position"), {"s": study_id})]
        annotators = [{"study_id": study_id, "pseudonym": f"a{k:03d}", "source": "invite",
                       "token_hash": auth.token_hash(f"bench-{k}"), "seed": int(rng.integers(2**30)),
                       "created_at": now, "started_at": now}
                      for k in range(n_annotators)]
        conn.execute(insert(Annotator), annotators)
        annotator_ids = [r[0] for r in conn.execute(
            text("SELECT id FROM annotator WHERE study_id = :s ORDER BY id"), {"s": study_id})]
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
        rows = conn.execute(text("SELECT id, annotator_id, item_id FROM assignment "
                                 "WHERE study_id = :s"), {"s": study_id}).all()
        conn.execute(insert(Rating), [
            {"study_id": study_id, "assignment_id": a, "annotator_id": ann, "item_id": item,
             "revision": 0, "response": str(int(rng.integers(5))),
             "seconds_spent": float(rng.uniform(2, 10)), "created_at": now}
            for a, ann, item in rows])
    (invite,) = studies.invite(study_id, 1)
    return study_id, invite.token


def build_image_pass(base_slug: str, tmp: Path) -> str:
    """The with-image pass of study ``base_slug`` (one drawn image per ground-truth class) and
    an invite for its first annotator (who rated 500 of its pairs); returns the token."""
    from studyapp.platform.launch.demo_images import class_images
    from studyapp.platform.launch.spec_files import load_spec
    from studyapp.platform.records import studies

    with storage_session() as session:
        classes = sorted({(f["gt_verb"], f["gt_object"]) for (text,) in session.exec_driver_sql(
            "SELECT fields_json FROM item") for f in [json.loads(text)]})
    class_images(tmp / "imgs", classes)
    spec = tmp / "image.toml"
    spec.write_text(f'''title = "Latency benchmark, with images"
study_type = "hoi_similarity_image"
instructions = "Keep or change your rating."
raters_per_item = 20
[items]
source = "sampler"
linked_study = "{base_slug}"
images = "imgs/images.csv"
image_root = "imgs"
''')
    study_id = studies.create_study(load_spec(spec))
    (invite,) = studies.invite(study_id, 0, ["a000"])
    return invite.token


def empty_postgres(url: str) -> None:
    """Drop every table of the PostgreSQL database at ``url`` (the app creates them again)."""
    from sqlalchemy import MetaData, create_engine

    engine = create_engine(url)
    metadata = MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


def storage_session():
    from studyapp.core import storage
    return storage.get_engine().connect()


def percentiles(values: list[float]) -> str:
    ms = np.array(values) * 1000
    return f"p50 {np.percentile(ms, 50):6.1f} ms   p95 {np.percentile(ms, 95):6.1f} ms   max {ms.max():6.1f} ms"


WAIT_FOR_NEXT = """
const done = arguments[arguments.length - 1], old = arguments[0];
const check = () => {
  const bar = document.querySelector('.answer-bar');
  const t = window.__studyappScreenTimes || {};
  if (bar && bar.dataset.item !== old && bar.dataset.state === 'ready')
    done([performance.now() - window.__t0, (t.shown || 0) - (t.invoked || 0)]);
  else requestAnimationFrame(check);
};
check();
"""


# The seen floor (``[answers] min_seen_ms``): a key before it is dropped, so each key waits for it;
# that wait is not part of a latency.
WAIT_ANSWERABLE = """
const done = arguments[arguments.length - 1];
const check = () => {
  const bar = document.querySelector('.answer-bar');
  if (bar && bar.dataset.state === 'ready' && bar.dataset.answerable !== 'soon') done(bar.dataset.answerable);
  else setTimeout(check, 5);
};
check();
"""


def wait_answerable(driver) -> bool:
    """Until the item on screen takes a key: drawn for the floor and, where a row of it is covered
    (the pair under the answer bar), read whole first as an annotator scrolls; whether it had to be."""
    from tests.browserhelpers import read_whole_item

    covered = driver.execute_async_script(WAIT_ANSWERABLE) == "unseen"
    while covered and driver.execute_async_script(WAIT_ANSWERABLE) != "yes":
        read_whole_item(driver)
    return covered


def page_calls(annotator_id: int, task, k: int):
    """What one page run asks the server after a key on ``task``: the answer stored and the
    next screen read in one transaction (``assignment.answer``: the annotator's session, the
    next item, the count of answers), then the item's content (the tab resolved its link's
    annotator once); returns the next task."""
    from studyapp.platform import assignment
    from studyapp.studytypes import get_type
    from studyapp.views.studytypes import view_of

    screen = assignment.answer(annotator_id, task.assignment_id, (k + 1) % 5, 1.0)
    if screen.task is not None:
        view_of(get_type(screen.info.study_type)).item_content(screen.task.fields)
    return screen.task


def server_share(token: str, n: int) -> list[float]:
    """Seconds of :func:`page_calls`, ``n`` times."""
    from studyapp.platform import assignment

    annotator_id = assignment.resolve_token(token)
    task = assignment.next_item(annotator_id)
    times = []
    for k in range(n):
        start = time.perf_counter()
        task = page_calls(annotator_id, task, k)
        times.append(time.perf_counter() - start)
        if task is None:
            break
    return times


def explain(token: str) -> None:
    """The plan of every query one page run sends (:func:`page_calls`)."""
    from sqlalchemy import event

    from studyapp.core import storage

    engine = storage.get_engine()
    seen: dict[str, tuple] = {}

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "UPDATE")):
            seen.setdefault(statement, parameters)

    event.listen(engine, "before_cursor_execute", record)
    from studyapp.platform import assignment

    annotator_id = assignment.resolve_token(token)
    task = assignment.next_item(annotator_id)
    try:
        page_calls(annotator_id, task, 0)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN (ANALYZE, COSTS OFF) "
    with engine.connect() as conn:
        for statement, parameters in seen.items():
            print("\n" + " ".join(statement.split())[:400])
            for row in conn.exec_driver_sql(prefix + statement, parameters):
                print("   ", " ".join(str(x) for x in row[-1:]))
            conn.rollback()


def parse_args() -> argparse.Namespace:
    """The options; the server's dashboard warm-up off unless ``--warm-up``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5_000)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--per-annotator", type=int, default=500)
    parser.add_argument("--raters", type=int, default=25)
    parser.add_argument("--small", action="store_true",
                        help="200 items, 4 annotators with 50 ratings each")
    parser.add_argument("--explain", action="store_true",
                        help="print the plan of every query of a page run")
    parser.add_argument("--database-url",
                        help="a PostgreSQL database to build the study in (its tables are dropped first)")
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--type", choices=["hoi_similarity", "hoi_similarity_image"],
                        default="hoi_similarity")
    parser.add_argument("--burner", action="store_true",
                        help="keep a core busy with a second process while measuring")
    parser.add_argument("--warm-up", action="store_true",
                        help="keep the server's dashboard warm-up, which runs once after a start")
    parser.add_argument("--json", help="also write the figures as JSON")
    args = parser.parse_args()
    if not args.warm_up:
        os.environ["STUDYAPP_DASHBOARD_WARMUP"] = "0"
    if args.small:
        args.items, args.annotators, args.per_annotator = 200, 4, 50
    return args


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STUDYAPP_DB"] = str(Path(tmp) / "studyapp.sqlite")
        os.environ.pop("DATABASE_URL", None)
        if args.database_url:
            empty_postgres(args.database_url)
            os.environ["DATABASE_URL"] = args.database_url
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
        from sqlmodel import func, select

        from studyapp.core import storage
        from studyapp.core.models import Rating
        from tests.browserhelpers import running_app, start_chromium

        t0 = time.perf_counter()
        study_id, token = build(args.items, args.annotators, args.per_annotator, args.raters)
        with storage.read_session() as session:
            n_ratings = session.exec(select(func.count(Rating.id))).one()
        print(f"built: {args.items} items, {args.annotators + 1} annotators, {n_ratings} ratings "
              f"in {time.perf_counter() - t0:.1f} s ({storage.get_engine().dialect.name})")
        if args.type == "hoi_similarity_image":
            t0 = time.perf_counter()
            token = build_image_pass("bench", Path(tmp))
            print(f"with-image pass built in {time.perf_counter() - t0:.1f} s")
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.burner else None
        driver = start_chromium("--window-size=1280,800", script_timeout=60)
        page_times, build_times, scrolled = [], [], 0
        try:
            with running_app(Path(tmp)) as base:
                driver.get(f"{base}/?token={token}")
                WebDriverWait(driver, 60).until(lambda d: next(
                    (b for b in d.find_elements(By.TAG_NAME, "button")
                     if b.text.startswith("Start")), False)).click()
                driver.execute_async_script(WAIT_FOR_NEXT, "none")
                driver.execute_script("window.addEventListener('keydown', "
                                      "() => { window.__t0 = performance.now(); }, true);")
                body = driver.find_element(By.TAG_NAME, "body")
                for k in range(args.submissions + 5):
                    scrolled += wait_answerable(driver)
                    old = driver.execute_script("return document.querySelector('.answer-bar').dataset.item")
                    body.send_keys(str((k + 1) % 5))  # never the preselected 2 of the with-image pass twice
                    elapsed, in_page = driver.execute_async_script(WAIT_FOR_NEXT, old)
                    if k >= 5:  # the first presses warm caches
                        page_times.append(elapsed / 1000)
                        build_times.append(in_page / 1000)
        finally:
            driver.quit()
            if burner is not None:
                load = os.getloadavg()
                burner.kill()
                burner.wait()
        server_times = server_share(token, 30)
        if args.explain:
            explain(token)
        print(f"browser (key press -> next item ready, n={len(page_times)}): {percentiles(page_times)}")
        print(f"  of which in the page (new data in -> screen drawn, images decoded): "
              f"{percentiles(build_times)}")
        print(f"  server share (answer + the item's content, in-process): {percentiles(server_times)}")
        print(f"  items read by scrolling first (a row under the answer bar at 1280 x 800): {scrolled}")
        p50, p95 = (float(np.percentile(np.array(page_times) * 1000, q)) for q in (50, 95))
        server_p50 = float(np.percentile(np.array(server_times) * 1000, 50))
        print(f"targets p50 <= 100 ms, p95 <= 150 ms: {'met' if p50 <= 100 and p95 <= 150 else 'NOT met'}; "
              f"server share p50 <= 15 ms: {'met' if server_p50 <= 15 else 'NOT met'}")
        load = load if burner is not None else os.getloadavg()
        print(f"load average at the end of the browser run: {tuple(round(x, 2) for x in load)}"
              + (" (CPU burner running)" if burner is not None else ""))
        if args.json:
            Path(args.json).write_text(json.dumps({"type": args.type, "burner": args.burner,
                                                   "warm_up": args.warm_up,
                                                   "items": args.items, "ratings": n_ratings,
                                                   "browser_ms": {"p50": p50, "p95": p95},
                                                   "server_ms": {"p50": server_p50},
                                                   "load": list(load)}, indent=2))
        storage.dispose_all()


if __name__ == "__main__":
    main()

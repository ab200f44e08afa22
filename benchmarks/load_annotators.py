"""Load without loss: many annotators rating at once through several app instances.

The deployment layout of docs/operations.md ("Several app instances on one PostgreSQL
database"): several app processes ("instances", each with its own engine and connection pool,
as behind a load balancer) on one database. Each
instance runs its annotators in threads, as Streamlit runs one thread per browser session, and
every annotator goes through the calls the annotator page makes:

- arrive with the invite link (``resolve_token``), accept the instructions;
- ``next_item`` (claim), ``submit`` (timed: the submit latency);
- every ``back_every``-th item: go back (``task_before``, as the Back button) and change the
  answer (a new revision), then continue;
- every ``resume_every``-th item: close the tab and come back (``resolve_token`` again), which
  must show the same unanswered item.

Afterwards the database is checked against what the annotators were told: every acknowledged
rating row is there exactly once (same id, assignment, revision, answer) and nothing else is;
no item has more than ``raters_per_item`` raters (main-phase assignments or answered ones);
every annotator got their ``ratings`` items. Prints ratings/s (acknowledged submits, revisions
included, over the wall time of the run) and the submit latency percentiles.

    .venv/bin/python -m benchmarks.load_annotators --backend sqlite
    scripts/ci_postgres.sh .venv/bin/python -m benchmarks.load_annotators --backend both
    # options: --annotators 64 --ratings 500 --instances 4 --raters 3 --runs 3

PostgreSQL comes from ``--postgres-url`` or ``STUDYAPP_TEST_POSTGRES_URL`` (each run gets its
own schema, dropped afterwards); all traffic goes to that server (127.0.0.1 in the script).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

VERBS = ["ride", "push", "hold", "carry", "wash", "repair", "inspect", "park", "drive", "pull",
         "walk", "straddle"]
OBJECTS = ["bicycle", "motorcycle", "car", "truck", "bus", "boat", "horse", "skateboard",
           "airplane", "train", "cup", "bottle"]


# ------------------------------------------------------------------------------ the study
def build_study(folder: Path, n_items: int, raters: int, per_annotator: int,
                n_annotators: int) -> tuple[int, list[str]]:
    """A hoi_similarity study (items CSV + spec, as a researcher would create it) and one
    invite token per annotator. Uses the app's database (DATABASE_URL / STUDYAPP_DB)."""
    from studyapp.platform.launch.spec_files import load_spec
    from studyapp.platform.records import studies

    rows = ["item_id,gt_verb,gt_object,pred_verb,pred_object"]
    for k in range(n_items):
        verb, other = VERBS[k % len(VERBS)], VERBS[(k + 1 + k // 144) % len(VERBS)]
        if other == verb:
            other = VERBS[(k + 2) % len(VERBS)]
        obj = OBJECTS[(k // len(VERBS)) % len(OBJECTS)]
        rows.append(f"L{k:06d},{verb},{obj},{other},{obj}")
    (folder / "items.csv").write_text("\n".join(rows) + "\n")
    spec = folder / "load.toml"
    spec.write_text(f'''title = "Load test"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = {raters}
items_per_annotator = {per_annotator}

[items]
source = "csv"
path = "items.csv"
''')
    study_id = studies.create_study(load_spec(spec))
    return study_id, [i.token for i in studies.invite(study_id, n_annotators)]


# ------------------------------------------------------------------------------ one annotator
def annotate(token: str, ratings: int, seed: int, back_every: int, resume_every: int,
             out: dict) -> None:
    """One annotator's session, as the page drives it; fills ``out`` (acks, latencies, errors)."""
    from studyapp.platform import assignment

    rng = random.Random(seed)
    acks, latencies, problems = out["acks"], out["latencies"], out["problems"]

    def timed_submit(annotator_id, assignment_id, value, revise=False):
        t0 = time.perf_counter()
        rating = assignment.submit(annotator_id, assignment_id, value, rng.uniform(1, 9),
                                   revise=revise)
        latencies.append(time.perf_counter() - t0)
        acks.append((rating.id, rating.assignment_id, rating.revision, rating.response))
        return rating

    annotator_id = assignment.resolve_token(token)
    if not assignment.annotator_session(annotator_id).started:
        assignment.accept_instructions(annotator_id)
    done = 0
    task = assignment.next_item(annotator_id)
    while task is not None:
        value = rng.randrange(5)
        timed_submit(annotator_id, task.assignment_id, value)
        done += 1
        following = assignment.next_item(annotator_id)
        if back_every and done % back_every == 0:
            previous = assignment.task_before(annotator_id, following.position if following else None)
            if previous is None or previous.assignment_id != task.assignment_id \
                    or previous.response != str(value):
                problems.append(f"back from {following} showed {previous}, expected "
                                f"{task.assignment_id} answered {value}")
            else:
                timed_submit(annotator_id, previous.assignment_id, (value + 1 + rng.randrange(4)) % 5, revise=True)
        if resume_every and following is not None and done % resume_every == 0:
            again_id = assignment.resolve_token(token)  # the tab was closed; the link again
            again = assignment.next_item(again_id)
            if again_id != annotator_id or again is None or again.assignment_id != following.assignment_id:
                problems.append(f"resume showed {again}, expected {following.assignment_id}")
        task = following
    out["rated"] = done


def instance(url: str, jobs: list[tuple[str, int]], ratings: int, back_every: int,
             resume_every: int, start, conn) -> None:
    """One app instance (a process): its own engine; one thread per annotator session."""
    os.environ["DATABASE_URL"] = url
    from studyapp.core import storage

    storage.get_engine()  # open (and check the schema) before the clock starts
    results = []
    threads = []
    for token, seed in jobs:
        out = {"acks": [], "latencies": [], "problems": [], "rated": 0, "error": None}

        def run(token=token, seed=seed, out=out):
            try:
                annotate(token, ratings, seed, back_every, resume_every, out)
            except Exception as exc:
                out["error"] = f"{type(exc).__name__}: {exc}"
        results.append(out)
        threads.append(threading.Thread(target=run))
    start.wait()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    storage.dispose_all()
    conn.send(results)
    conn.close()


# ------------------------------------------------------------------------------ a run
def run_load(url: str, folder: Path, annotators: int = 64, ratings: int = 500,
             instances: int = 4, raters: int = 3, back_every: int = 10, resume_every: int = 25,
             seed: int = 0) -> dict:
    """Build the study in the (empty) database at ``url``, run the annotators, verify, and
    return the figures. Raises AssertionError listing what was lost or over-assigned."""
    from studyapp.core import storage

    os.environ["DATABASE_URL"] = url
    n_items = math.ceil(annotators * ratings / raters * 1.05) + ratings  # some slack
    study_id, tokens = build_study(folder, n_items, raters, ratings, annotators)
    storage.dispose_all()  # no pooled connection may cross the fork
    ctx = mp.get_context("fork")
    start = ctx.Event()
    procs, pipes = [], []
    for k in range(instances):
        jobs = [(tokens[a], seed * 100_000 + a) for a in range(k, annotators, instances)]
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=instance, args=(url, jobs, ratings, back_every, resume_every,
                                               start, child))
        p.start()
        procs.append(p)
        pipes.append(parent)
    time.sleep(0.5)
    t0 = time.perf_counter()
    start.set()
    results = []
    for parent in pipes:
        results.extend(parent.recv())
    wall = time.perf_counter() - t0
    for p in procs:
        p.join(timeout=60)
    errors = [r["error"] for r in results if r["error"]]
    problems = [p for r in results for p in r["problems"]]
    acks = [a for r in results for a in r["acks"]]
    latencies = sorted(x for r in results for x in r["latencies"])
    check = verify(url, study_id, acks, raters, ratings, annotators)
    if errors or problems:
        check.append(f"{len(errors)} annotator errors {errors[:3]}, {len(problems)} page-flow "
                     f"problems {problems[:3]}")
    if any(r["rated"] != ratings for r in results):
        check.append(f"annotators rated {sorted(Counter(r['rated'] for r in results).items())}, "
                     f"expected {ratings} each")
    storage.dispose_all()
    if check:
        raise AssertionError("; ".join(check))
    return {"annotators": annotators, "ratings_each": ratings, "instances": instances,
            "submits": len(acks), "seconds": round(wall, 2),
            "ratings_per_s": round(len(acks) / wall, 1),
            "submit_p50_ms": round(1000 * latencies[len(latencies) // 2], 1),
            "submit_p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1),
            "submit_max_ms": round(1000 * latencies[-1], 1)}


def verify(url: str, study_id: int, acks: list[tuple], raters: int, ratings: int,
           annotators: int) -> list[str]:
    """What the database holds against what was acknowledged; a list of problems."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        stored = [tuple(r) for r in conn.execute(text(
            "SELECT id, assignment_id, revision, response FROM rating WHERE study_id = :s"),
            {"s": study_id})]
        claims = Counter(r[0] for r in conn.execute(text(
            "SELECT item_id FROM assignment WHERE study_id = :s AND phase = 'main'"), {"s": study_id}))
        answered = Counter(r[0] for r in conn.execute(text(
            "SELECT item_id FROM assignment WHERE study_id = :s AND phase = 'main' "
            "AND answered_at IS NOT NULL"), {"s": study_id}))
        counters = dict(conn.execute(text("SELECT id, n_claims FROM item WHERE study_id = :s"),
                                     {"s": study_id}).all())
        per_annotator = Counter(r[0] for r in conn.execute(text(
            "SELECT annotator_id FROM assignment WHERE study_id = :s AND phase = 'main' "
            "AND answered_at IS NOT NULL"), {"s": study_id}))
    engine.dispose()
    problems = []
    ack_count, stored_count = Counter(acks), Counter(stored)
    missing = [a for a in ack_count if stored_count[a] == 0]
    if missing:
        problems.append(f"{len(missing)} acknowledged ratings missing, e.g. {missing[:3]}")
    doubled = [s for s, n in stored_count.items() if n > 1]
    if doubled:
        problems.append(f"{len(doubled)} ratings stored twice")
    # a double acknowledgement of one row is allowed only for an idempotent double submit,
    # which this load never makes: every ack names its own row
    if any(n > 1 for n in ack_count.values()):
        problems.append("a rating row was acknowledged twice")
    unacked = set(stored_count) - set(ack_count)
    if unacked:
        problems.append(f"{len(unacked)} stored ratings nobody was told about")
    if len(stored) != len(acks):
        problems.append(f"{len(stored)} rating rows for {len(acks)} acknowledgements")
    over = {i: n for i, n in claims.items() if n > raters}
    if over or any(n > raters for n in answered.values()):
        problems.append(f"raters_per_item {raters} exceeded on items {sorted(over)[:5]}")
    drift = [i for i, n in counters.items() if n != claims.get(i, 0)]
    if drift:
        problems.append(f"{len(drift)} items whose claim counter differs from their claims")
    if len(per_annotator) != annotators or set(per_annotator.values()) != {ratings}:
        problems.append(f"answered per annotator {sorted(Counter(per_annotator.values()).items())}")
    return problems


# ------------------------------------------------------------------------------ databases
@contextmanager
def postgres_schema(base_url: str):
    """A fresh schema on the server (``search_path`` set through the URL); dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"load_{secrets.token_hex(5)}"
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield make_url(base_url).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


@contextmanager
def database(backend: str, folder: Path, postgres_url: str | None):
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'load.sqlite'}"
    else:
        if not postgres_url:
            raise SystemExit("error: no PostgreSQL server: pass --postgres-url or set "
                             "STUDYAPP_TEST_POSTGRES_URL (scripts/ci_postgres.sh starts one)")
        with postgres_schema(postgres_url) as url:
            yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--annotators", type=int, default=64)
    parser.add_argument("--ratings", type=int, default=500, help="items each annotator rates")
    parser.add_argument("--instances", type=int, default=4, help="app processes")
    parser.add_argument("--raters", type=int, default=3, help="raters_per_item")
    parser.add_argument("--runs", type=int, default=3, help="runs per backend (median reported)")
    parser.add_argument("--postgres-url", default=os.environ.get("STUDYAPP_TEST_POSTGRES_URL"))
    parser.add_argument("--json", help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.annotators < 1 or args.ratings < 1 or args.instances < 1 or args.runs < 1:
        parser.error("--annotators, --ratings, --instances and --runs must be at least 1")
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    summary = {}
    for backend in backends:
        runs = []
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp, \
                    database(backend, Path(tmp), args.postgres_url) as url:
                os.environ.pop("STUDYAPP_DB", None)
                result = run_load(url, Path(tmp), args.annotators, args.ratings, args.instances,
                                  args.raters, seed=run)
            runs.append(result)
            print(f"{backend} run {run + 1}: {result['submits']} ratings in {result['seconds']} s"
                  f" = {result['ratings_per_s']} ratings/s; submit p50 {result['submit_p50_ms']} ms,"
                  f" p95 {result['submit_p95_ms']} ms, max {result['submit_max_ms']} ms;"
                  " verified: nothing lost, raters_per_item kept", flush=True)
        summary[backend] = {
            "runs": runs,
            "median_ratings_per_s": statistics.median(r["ratings_per_s"] for r in runs),
            "median_submit_p95_ms": statistics.median(r["submit_p95_ms"] for r in runs)}
        print(f"{backend}: median {summary[backend]['median_ratings_per_s']} ratings/s, "
              f"median submit p95 {summary[backend]['median_submit_p95_ms']} ms "
              f"({args.annotators} annotators x {args.ratings} items, {args.instances} instances, "
              f"{args.runs} runs)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Annotators through the real web tier: many Streamlit sessions over websockets, behind HAProxy.

Each simulated annotator is a browser tab without a browser (``benchmarks.web_session``: the
page load, then Streamlit's own ``BackMsg`` / ``ForwardMsg`` over ``/_stcore/stream``): it opens
its invite link, reads the instructions, presses Start, and answers its items with the answer
component's value, thinking a lognormal 2-8 s before each answer (median 4 s; ``--think-scale``
multiplies it); some answers are followed by Back and a changed answer, some by a reload of
the tab. Annotators arrive like a Prolific launch: most in the first part of ``--ramp``
(arrival density falling linearly to zero). The app runs as ``--instances`` processes behind
HAProxy (``deploy.cluster``), on ``--db`` (default: a temporary SQLite file). Afterwards every
answer is checked against the database: stored once, on the item on that session's screen.

Reported per run: answers/s; p50/p95/p99 from an answer sent to the next screen's data
received; the bytes received per answer (every ``ForwardMsg`` of the run an answer starts,
as its websocket frames carry them, before any compression of the connection); errors; reloads the balancer sent to another instance (its cookie affinity must keep
a tab on one); the app instances' CPU per answer and memory (total, per instance over time,
per open session at the peak), from ``/proc``. The load generator shares the machine: its own
CPU (one process, all sessions) is measured apart and printed per answer, so the server's share
is what the instances' own counters say, not the machine's load; so is a PostgreSQL server's on
this machine (its processes, and what its postmaster collected from backends that exited).
The instances' dashboard warm-up (a niced child computing every study's dashboard after a
start) is off unless ``--warm-up``: on a database that earlier runs have filled it computes for
minutes beside the load, on the project's side only.

    .venv/bin/python -m benchmarks.load_web --annotators 50 --answers 20          # one run
    .venv/bin/python -m benchmarks.load_web --capacity --instances 1,2,4 --db URL  # capacity table
    .venv/bin/python -m benchmarks.load_web --soak 30 --percent 70 --of 150 --db URL
    ... --browser   # plus one headless Chromium annotator: key press -> next item drawn

Floors (``--floor``, with a single run or with ``--capacity`` at the largest count that
passed): the same annotators (arrivals, think times, answers, Back and reloads) then drive two
floors on the same number of instances behind the same HAProxy configuration, started with the
app's Streamlit options, on ``--db`` or a SQLite file of their own: a bare Streamlit page
(``benchmarks/floor_page.py``: one component, one INSERT and one SELECT per answer), and the
same page with a JSON route on ``st.App`` doing those two statements
(``benchmarks/floor_web.py``), to which the client sends its answers as it does to the
project's answer route. The project and the floors are printed side by side (server CPU, bytes,
p50/p95 per answer, answers/s) with the ratios of their CPU per answer: what the project costs
above Streamlit's own.

    .venv/bin/python -m benchmarks.load_web --annotators 50 --answers 10 --ramp 20 --floor

Capacity: for each instance count, ``--steps`` annotator counts in turn, each a run of
``--step-seconds``; the capacity is the largest count with p95 <= ``--p95-ms`` (300), no error
and nothing lost. Soak: ``--percent`` of ``--of`` annotators for ``--soak`` minutes; an annotator
who finishes ``--answers`` items leaves and a new one arrives, memory per instance is sampled
and must stay flat (``load_web_measure.flatness``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks import load_web_profile
from benchmarks.load_web_measure import (
    Press,
    Samples,
    bytes_per_answer,
    check_answers,
    flatness,
    latency_ms,
    resources,
    slowest,
)
from benchmarks.web_session import SessionError, WebSession

THINK_MEDIAN_S, THINK_SIGMA = 4.0, 0.42   # lognormal: 90% of think times within 2-8 s
P_BACK, P_RELOAD = 0.05, 0.02


def make_study(n_items: int, raters: int, per_annotator: int, tag: str) -> tuple[int, str]:
    """A hoi_similarity study of ``n_items`` distinct pairs (HICO-DET labels); its id and slug."""
    from metrics import hico
    from studyapp.platform.records import studies
    from studyapp.platform.specs.spec_model import ItemSpec, StudySpec
    from studyapp.studytypes import get_type

    study_type = get_type("hoi_similarity")
    vocab = hico()
    verbs = [v for v in vocab.verb_labels if v != "no_interaction"]
    classes = vocab.classes[vocab.classes["verb"] != "no_interaction"]
    pairs = [(gv, go, pv) for gv, go in zip(classes["verb"], classes["object"]) for pv in verbs[::2]
             if vocab.verb_synset(pv) != vocab.verb_synset(gv)]
    random.Random(0).shuffle(pairs)
    if n_items > len(pairs):
        raise SystemExit(f"load_web: the run needs {n_items} items and HICO-DET's pairs give {len(pairs)}; "
                         "lower --annotators or --soak, or raise --raters")
    items = [ItemSpec(f"w{k:05d}", "main", study_type.normalize_item(
        {"gt_verb": gv, "gt_object": go, "pred_verb": pv, "pred_object": go}, "load_web"))
        for k, (gv, go, pv) in enumerate(pairs[:n_items])]
    slug = f"load-web-{tag}"
    spec = StudySpec(slug=slug, title="Web load", study_type="hoi_similarity", instructions="Rate the pair.",
                     scale=study_type.default_scale, raters_per_item=raters,
                     items_per_annotator=per_annotator, items=items)
    return studies.create_study(spec), slug


def invites(study_id: int, count: int) -> list[tuple[int, str]]:
    """(annotator id, token) of ``count`` new invite links."""
    from studyapp.platform import assignment
    from studyapp.platform.records import studies

    tokens = [i.token for i in studies.invite(study_id, count)]
    return [(assignment.resolve_token(t), t) for t in tokens]


def think(rng: random.Random, scale: float) -> float:
    return min(rng.lognormvariate(math.log(THINK_MEDIAN_S), THINK_SIGMA), 30.0) * scale


class Run:
    """One load run's shared state: the presses, errors and open sessions."""

    def __init__(self, base: str, think_scale: float, deadline: float):
        self.base, self.think_scale, self.deadline = base, think_scale, deadline
        self.pressed: dict[int, list[Press]] = {}
        self.errors: list[str] = []
        self.open_sessions = 0
        self.finished = 0
        self.instance_changes = 0

    async def annotator(self, annotator_id: int, token: str, delay: float, seed: int) -> None:
        rng = random.Random(seed)
        await asyncio.sleep(delay)
        presses = self.pressed.setdefault(annotator_id, [])
        session = WebSession(self.base, f"token={token}")
        self.open_sessions += 1
        try:
            screen = await self.retry(session, session.open)
            if screen.start_button:
                await asyncio.sleep(think(rng, self.think_scale) * 2)   # reading the instructions
                screen = await self.retry(session, session.press_start)
            while screen.item and time.monotonic() < self.deadline:
                await asyncio.sleep(think(rng, self.think_scale))
                shown, revising = screen.item_id, screen.item.get("revising")
                value = str(rng.randrange(5))
                if revising:  # a changed answer: the same one again would store nothing new
                    value = str((int(screen.item.get("current") or 0) + 1 + rng.randrange(4)) % 5)
                screen = await self.press(session, presses, shown, value)
                if screen is None:
                    screen = await self.retry(session, session.reload)
                    continue
                if screen.item and not revising and rng.random() < P_BACK:
                    await asyncio.sleep(think(rng, self.think_scale) / 2)
                    screen = await self.retry(session, session.back)
                elif rng.random() < P_RELOAD:
                    screen = await self.retry(session, session.reload)
            self.finished += not screen.item
        except SessionError as exc:
            self.errors.append(f"annotator {annotator_id}: {exc}")
        finally:
            self.open_sessions -= 1
            self.instance_changes += session.instance_changes
            await session.close()

    async def press(self, session: WebSession, presses: list[Press], shown: int, value: str):
        """Answer ``value`` on item ``shown``; the next screen, or None after an error."""
        start = time.monotonic()
        press = Press(shown, value, False, None, start)
        presses.append(press)
        before = session.bytes_received
        try:
            screen = await session.answer(value)
        except SessionError as exc:
            self.errors.append(f"answer on {shown}: {exc}")
            return None
        notices = (screen.item or {}).get("screen", {}).get("notices", [])
        failed = [text for kind, text in notices if kind == "error"] + [
            t for t in screen.texts if t.startswith("exception")]
        if failed:
            self.errors.append(f"answer on {shown}: {failed[0][:120]}")
            return screen
        press.acked, press.seconds = True, (screen.data_at or time.monotonic()) - start
        press.received = session.bytes_received - before
        return screen

    async def retry(self, session: WebSession, step, attempts: int = 3):
        """A step, re-opened like a browser reconnects (the error is counted)."""
        for attempt in range(attempts):
            try:
                return await (step() if attempt == 0 else session.reload())
            except SessionError as exc:
                self.errors.append(str(exc))
                await asyncio.sleep(1.0)
        raise SessionError(f"gave up after {attempts} attempts")


def arrivals(n: int, ramp: float, rng: random.Random) -> list[float]:
    """Arrival times over ``ramp`` seconds, most early (density 2(1 - t/ramp)/ramp)."""
    return sorted(ramp * (1 - math.sqrt(1 - rng.random())) for _ in range(n))


async def drive(run: Run, people: list[tuple[int, str]], delays: list[float], samples: Samples,
                every: float, churn: list[tuple[int, str]] | None = None) -> None:
    """Run the annotators (and, for a soak, a newcomer from ``churn`` for each who finishes)
    while sampling the server every ``every`` seconds."""
    t0 = time.monotonic()
    tasks = {asyncio.create_task(run.annotator(a, t, d, k)) for k, ((a, t), d) in enumerate(zip(people, delays))}
    churn = list(churn or [])

    async def sampler():
        while True:
            samples.take(time.monotonic() - t0, run.open_sessions)
            await asyncio.sleep(every)

    sampling = asyncio.create_task(sampler())
    while tasks:
        done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for _ in done:
            if churn and time.monotonic() < run.deadline:
                a, t = churn.pop()
                tasks.add(asyncio.create_task(run.annotator(a, t, 0.0, a)))
    sampling.cancel()
    samples.take(time.monotonic() - t0, 0)


async def warm_up(cluster) -> None:
    """Run the annotator page once on every instance (a link that names nobody), so that the
    baseline of memory and CPU is taken after the page's first run has loaded its modules."""
    for k in range(cluster.n):
        session = WebSession(cluster.instance_base(k), "token=warm-up")
        await session.open()
        await session.close()


def browser_annotator(base: str, token: str, answers: int, think_s: float, out: dict) -> None:
    """One headless Chromium annotator beside the load: key press -> next item drawn."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from benchmarks.annotate_latency import WAIT_FOR_NEXT
    from tests.browserhelpers import start_chromium

    driver = start_chromium("--window-size=1280,800", script_timeout=60)
    times = []
    try:
        driver.get(f"{base}/?token={token}")
        WebDriverWait(driver, 60).until(lambda d: next(
            (b for b in d.find_elements(By.TAG_NAME, "button") if b.text.startswith("Start")), False)).click()
        driver.execute_async_script(WAIT_FOR_NEXT, "none")
        driver.execute_script("window.addEventListener('keydown', () => { window.__t0 = performance.now(); }, true);")
        body = driver.find_element(By.TAG_NAME, "body")
        for k in range(answers):
            time.sleep(think_s)
            old = driver.execute_script("return document.querySelector('.answer-bar').dataset.item")
            body.send_keys(str(k % 5))
            elapsed, _ = driver.execute_async_script(WAIT_FOR_NEXT, old)
            times.append(elapsed / 1000)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        driver.quit()
    out["latency"] = latency_ms([Press(0, "", True, t) for t in times])


def one_run(cluster, n: int, *, answers: int, raters: int, ramp: float, think_scale: float,
            duration: float | None, every: float, browser: bool, churn_factor: int = 0, tag: str = "",
            profile: Path | None = None, floor_db: str | None = None) -> dict:
    """``n`` annotators (``churn_factor`` x ``n`` more arriving as others finish) against the
    cluster; the figures of the run. ``floor_db``: the cluster serves ``benchmarks/floor_page.py``
    on that database (its tables made by :func:`floor_cluster`), whose links are annotator ids."""
    total = n * (1 + churn_factor) + 1
    per_annotator = answers + 2
    if floor_db:
        people = [(k, str(k)) for k in range(1, total + 1)]
    else:
        study_id, _slug = make_study(math.ceil(total * per_annotator / raters) + 20, raters, per_annotator,
                                     tag or f"{n}-{int(time.time())}")
        people = invites(study_id, total)
    browser_token = people.pop()[1]
    newcomers, people = people[n:], people[:n]
    rng = random.Random(n)
    delays = arrivals(n, ramp, rng)
    deadline = time.monotonic() + (duration if duration else 10 ** 6)
    run = Run(cluster.base, think_scale, deadline)
    asyncio.run(warm_up(cluster))
    pids = {f"app{k + 1}": pid for k, pid in enumerate(cluster.pids())}
    pids["haproxy"] = cluster.balancer.pid
    samples = Samples(pids)
    baseline = samples.take(0.0, 0)
    browser_out: dict = {}
    thread = None
    if browser:
        thread = threading.Thread(target=browser_annotator, args=(cluster.base, browser_token, min(answers, 30),
                                                                  THINK_MEDIAN_S * think_scale, browser_out))
        thread.start()
    profiler = []
    if profile is not None:   # the steady state: after the arrivals, for a minute
        timer = threading.Timer(ramp, lambda: profiler.append(load_web_profile.start(cluster.pids()[0], 60, profile)))
        timer.start()
    t0 = time.monotonic()
    asyncio.run(drive(run, people, delays, samples, every, churn=newcomers if churn_factor else None))
    wall = time.monotonic() - t0
    if thread is not None:
        thread.join()
    if profile is not None:
        timer.cancel()
    presses = [p for ps in run.pressed.values() for p in ps]
    check = check_answers(run.pressed) if not floor_db else floor_check(run.pressed, floor_db)
    result = {"instances": cluster.n, "annotators": n, "sessions": len(run.pressed), "answers": len(presses),
              "answers_per_s": round(len(presses) / wall, 2), "seconds": round(wall, 1),
              "latency_ms": latency_ms(presses), "received_bytes": bytes_per_answer(presses),
              "slowest": slowest(presses, t0), "errors": len(run.errors), "error_examples": run.errors[:5],
              "instance_changes": run.instance_changes,
              "check": check, "resources": resources(samples, len(presses), baseline),
              "load_avg": [round(x, 2) for x in os.getloadavg()], "samples": samples.rows}
    if browser:
        result["browser"] = browser_out
    if profiler and profiler[0] is not None:
        profiler[0].wait()
        result["profile"] = load_web_profile.summarize(profile)
    return result


def floor_cluster(n_inst: int, db: str, per_annotator: int, workdir: Path, *, route: bool = False):
    """A floor as ``n_inst`` instances behind the same HAProxy configuration, started with the
    app's Streamlit options, on ``db`` with ``per_annotator`` items: the bare page
    (``benchmarks/floor_page.py``), or with ``route`` the page and its JSON route
    (``benchmarks/floor_web.py``)."""
    from benchmarks import floor_page
    from deploy.cluster import Cluster
    from studyapp.platform.commands.cli import WEB, streamlit_command

    floor_page.create_tables(db, per_annotator)
    page = str(Path(floor_page.__file__).resolve().with_name("floor_web.py" if route else "floor_page.py"))

    def command(port: int) -> list[str]:   # the app's options, the floor's page
        options = streamlit_command(port, "127.0.0.1")
        return [sys.executable, "-m", "streamlit", "run", page, *options[options.index(str(WEB)) + 1:]]
    env = {"FLOOR_DB": db, **({"FLOOR_ROUTE": "1"} if route else {})}
    return Cluster(n_inst, workdir=workdir, command=command, env=env)


def floor_check(pressed: dict[int, list[Press]], db: str) -> dict:
    """The floor's answers against its table: one row per acknowledged press, at most one more
    per press without an acknowledgement (no per-item check: the floor keeps none)."""
    from benchmarks import floor_page

    presses = [p for ps in pressed.values() for p in ps]
    acked, stored = sum(p.acked for p in presses), floor_page.count_answers(db)
    return {"acked": acked, "stored": stored, "lost": max(acked - stored, 0),
            "doubled": max(stored - len(presses), 0), "wrong_item": 0, "wrong_value": 0}


FLOORS = (("page floor", False, "benchmarks/floor_page.py"), ("route floor", True, "benchmarks/floor_web.py"))


def run_floor(project: dict, db: str, common: dict, workdir: Path, duration: float | None = None) -> list[dict]:
    """The run of ``project`` again on each floor (the bare page, the page with its JSON
    route), for ``duration`` seconds (None: until every answer is given); printed beside it."""
    results = []
    for name, route, source in FLOORS:
        with floor_cluster(project["instances"], db, common["answers"] + 2, workdir / name.replace(" ", "-"),
                           route=route) as floor:
            result = one_run(floor, project["annotators"], **{**common, "browser": False}, duration=duration,
                             floor_db=db)
        result["floor"] = name
        print(f"  {name} ({source}):")
        print_run(result)
        results.append(result)
    print_floor(project, results)
    return results


def print_floor(project: dict, floors: list[dict]) -> None:
    """The project beside the floors, and the ratio of their server CPU per answer."""
    print(f"\nproject beside the floors ({project['annotators']} annotators, {project['instances']} "
          f"instance(s), same think times and answers):")
    print("  side         server CPU ms/answer  bytes/answer (mean, median)  p50 ms  p95 ms  answers/s  answers  errors")
    for r in (project, *floors):
        lat, res, got = r["latency_ms"], r["resources"], r["received_bytes"]
        print(f"  {r.get('floor') or 'project':11s}  {res['server_cpu_ms_per_answer']:20}  {got['mean']!s:>12}, "
              f"{got['median']!s:<13}  {lat['p50']!s:>6}  {lat['p95']!s:>6}  {r['answers_per_s']:9.2f}  "
              f"{r['answers']:7d}  {r['errors']:6d}")
    cpu = project["resources"]["server_cpu_ms_per_answer"]
    for r in floors:
        floor_cpu = r["resources"]["server_cpu_ms_per_answer"]
        print(f"  ratio project/{r['floor']}, server CPU per answer: {cpu / floor_cpu:.2f}" if floor_cpu else
              f"  ratio: the {r['floor']} used no measurable CPU", flush=True)


def passes(result: dict, p95_ms: float) -> bool:
    p95 = result["latency_ms"]["p95"]
    c = result["check"]
    return (p95 is not None and p95 <= p95_ms and not result["errors"] and not result["instance_changes"]
            and not (c["lost"] or c["doubled"] or c["wrong_item"] or c["wrong_value"]))


def print_run(r: dict) -> None:
    lat, res, c = r["latency_ms"], r["resources"], r["check"]
    print(f"  {r['instances']} inst  {r['annotators']:4d} annotators  {r['answers']:6d} answers  "
          f"{r['answers_per_s']:6.2f}/s  p50 {lat['p50']} p95 {lat['p95']} p99 {lat['p99']} ms  "
          f"errors {r['errors']}  instance changes {r['instance_changes']}  lost {c['lost']} doubled {c['doubled']} wrong item {c['wrong_item']}  "
          f"server {res['server_cpu_ms_per_answer']} ms CPU/answer (client {res['client_cpu_ms_per_answer']}, "
          f"database {res['database_cpu_ms_per_answer']})  "
          f"{res['mib_per_session']} MiB/session, {res['rss_peak_mib']} MiB peak  load {r['load_avg'][0]}",
          flush=True)
    got = r["received_bytes"]
    print(f"  received per answer (ForwardMsg bytes, answer sent -> its run's end): median {got['median']} B, "
          f"p95 {got['p95']} B, mean {got['mean']} B over {got['n']} answers", flush=True)
    if r.get("profile"):
        print(f"  profile of app1 ({r['profile']['samples']} samples running): by library "
              f"{r['profile']['innermost_library']}\n  by project function {r['profile']['project_function']}")
    if r.get("browser"):
        print(f"  browser annotator beside the load: {r['browser']}")
    for example in r["error_examples"]:
        print(f"    error: {example}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default=os.environ.get("DATABASE_URL"),
                   help="DATABASE_URL (default: $DATABASE_URL, else a temporary SQLite file)")
    p.add_argument("--instances", default="1", help="app instances behind HAProxy, e.g. 1,2,4 (default 1)")
    p.add_argument("--annotators", type=int, default=50, help="concurrent annotators of one run (default 50)")
    p.add_argument("--answers", type=int, default=20, help="answers per annotator (default 20)")
    p.add_argument("--raters", type=int, default=3, help="raters per item (default 3)")
    p.add_argument("--ramp", type=float, default=60.0, help="arrival window, seconds (default 60)")
    p.add_argument("--think-scale", type=float, default=1.0, help="think time x this (default 1)")
    p.add_argument("--every", type=float, default=5.0, help="resource sample period, seconds (default 5)")
    p.add_argument("--browser", action="store_true", help="one Chromium annotator beside the load")
    p.add_argument("--capacity", action="store_true", help="raise the annotators (--steps) until p95 > --p95-ms")
    p.add_argument("--steps", default="25,50,100,150,200,300,400", help="annotator counts of --capacity")
    p.add_argument("--step-seconds", type=float, default=120.0, help="length of a --capacity step (default 120)")
    p.add_argument("--p95-ms", type=float, default=300.0, help="the latency bound of --capacity (default 300)")
    p.add_argument("--soak", type=float, help="soak for this many minutes")
    p.add_argument("--percent", type=float, default=70.0, help="soak load, %% of --of (default 70)")
    p.add_argument("--of", type=int, help="the measured capacity the soak's --percent refers to")
    p.add_argument("--profile", action="store_true", help="profile instance 1 for a minute after the ramp (py-spy)")
    p.add_argument("--warm-up", action="store_true",
                   help="keep the instances' dashboard warm-up (a niced child; off by default)")
    p.add_argument("--floor", action="store_true",
                   help="after the run (with --capacity: at the largest count that passed), the same load on the "
                        "floors: a bare Streamlit page (benchmarks/floor_page.py) and its JSON route "
                        "(benchmarks/floor_web.py); side by side")
    p.add_argument("--json", type=Path, help="write every figure (and the samples) as JSON")
    args = p.parse_args(argv)
    if args.soak is not None and not args.of:
        p.error("--soak needs --of (the capacity measured with --capacity)")
    if args.floor and args.soak is not None:
        p.error("--floor goes with a run or --capacity, not --soak")
    return args


def _set_environment(args, tmp: Path) -> None:
    """The database the instances and this process use, and the warm-up off unless asked for."""
    if not args.warm_up:
        os.environ["STUDYAPP_DASHBOARD_WARMUP"] = "0"
    if args.db:
        os.environ["DATABASE_URL"] = args.db
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["STUDYAPP_DB"] = str(tmp / "studyapp.sqlite")


def main(argv=None) -> int:
    args = parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="load-web-"))
    _set_environment(args, tmp)
    from deploy.cluster import Cluster
    from studyapp.core import config, storage

    storage.get_engine()   # the schema, before any instance starts
    print(f"load_web: database {storage.describe(config.database_url())}; load {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores (client and server share them)", flush=True)
    common = dict(answers=args.answers, raters=args.raters, ramp=args.ramp, think_scale=args.think_scale,
                  every=args.every, browser=args.browser)
    results, table = [], []
    for n_inst in [int(x) for x in args.instances.split(",")]:
        with Cluster(n_inst, db=config.database_url(), workdir=tmp / f"cluster{n_inst}") as cluster:
            if args.soak is not None:
                n = max(1, round(args.of * args.percent / 100))
                seconds = args.soak * 60
                per_session = args.answers * THINK_MEDIAN_S * args.think_scale * 1.1
                churn = math.ceil(seconds / per_session) + 1
                print(f"soak: {n} annotators ({args.percent:g}% of {args.of}) for {args.soak:g} min, "
                      f"{n_inst} instance(s)", flush=True)
                r = one_run(cluster, n, **common, duration=seconds, churn_factor=churn, tag=f"soak{n_inst}")
                r["flatness"] = flatness(_samples_of(r))
                print_run(r)
                c = r["check"]
                clean = not (r["errors"] or c["lost"] or c["doubled"] or c["wrong_item"] or c["wrong_value"])
                print(f"  memory per instance (MiB, 2nd quarter -> last quarter): {r['flatness']['instances']}")
                print(f"  soak {'PASSED' if clean and r['flatness']['flat'] else 'FAILED'}: memory "
                      f"{'flat' if r['flatness']['flat'] else 'GREW'} (tolerance {r['flatness']['tolerance']:.0%}), "
                      f"{r['errors']} errors, {c['lost']} lost, {c['doubled']} doubled", flush=True)
                results.append(r)
                continue
            counts = [int(x) for x in args.steps.split(",")] if args.capacity else [args.annotators]
            best, answers = None, args.answers
            for n in counts:
                duration = args.step_seconds if args.capacity else None
                answers = max(args.answers, math.ceil(args.step_seconds / THINK_MEDIAN_S)) if args.capacity else args.answers
                r = one_run(cluster, n, **{**common, "answers": answers}, duration=duration,
                            profile=tmp / f"profile-{n_inst}-{n}.txt" if args.profile else None)
                print_run(r)
                results.append(r)
                if not args.capacity or not passes(r, args.p95_ms):
                    break
                best = r
            if args.capacity:
                table.append((n_inst, best))
        if args.floor and args.soak is None:   # once the app's instances have stopped
            project = best if args.capacity and best is not None else results[-1]
            results.extend(run_floor(project, args.db or f"sqlite:///{tmp / 'floor.sqlite'}",
                                     {**common, "answers": answers}, tmp / f"floor{n_inst}",
                                     duration=args.step_seconds if args.capacity else None))
    if table:
        print_table(table, args.p95_ms)
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "runs": results,
                                         "capacity": [{"instances": i, "annotators": b and b["annotators"]}
                                                      for i, b in table]}, indent=1, default=str))
    storage.dispose_all()
    return 0


def _samples_of(r: dict) -> Samples:
    samples = Samples({name: 0 for name in r["samples"][0]["rss"]})
    samples.rows = r["samples"]
    return samples


def print_table(table, p95_ms: float) -> None:
    print(f"\ncapacity (p95 answer -> next screen <= {p95_ms:g} ms, no error, nothing lost; client on the "
          f"same {os.cpu_count()} cores; per busy core: annotators / the instances' CPU seconds per second):")
    print("  instances  annotators  per instance  per busy core  answers/s  p95 ms  server CPU ms/answer  MiB/session")
    for n_inst, best in table:
        if best is None:
            print(f"  {n_inst:9d}  below the first step")
            continue
        lat, res = best["latency_ms"], best["resources"]
        busy = res["server_cpu_s"] / best["seconds"]   # cores the instances kept busy
        print(f"  {n_inst:9d}  {best['annotators']:10d}  {best['annotators'] / n_inst:12.0f}  "
              f"{best['annotators'] / busy if busy else 0:13.0f}  {best['answers_per_s']:9.2f}  {lat['p95']:6}  "
              f"{res['server_cpu_ms_per_answer']:20}  {res['mib_per_session']}")


if __name__ == "__main__":
    sys.exit(main())

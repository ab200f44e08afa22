"""Crash safety: the storage layer runs in a child process (an app instance) where two
annotators rate, sometimes go back and change an answer, and report every acknowledgement
(a line written with os.write after ``submit`` returned, so it survives the kill). The child is
killed with SIGKILL at a random moment, 50 times per backend; after each kill every
acknowledged rating must be in the database, and each annotator must resume at the right item:
the item they were shown if its answer was not stored, else a later one, never skipping one.

On PostgreSQL a statement the child had sent before the kill still runs to its end on the
server: a COMMIT in flight lands after the child is gone (tens of milliseconds later when the
disk is busy). The database is read only once the server has ended the child's sessions, named
by their ``application_name``; SQLite commits inside the writing process, so nothing is left
running there."""

import os
import random
import signal
import time
from multiprocessing import get_context

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlmodel import select
from studyhelpers import make_annotators, make_study

from studyapp.core import config, storage
from studyapp.core.models import Assignment, Rating
from studyapp.platform import assignment

KILLS = 50
CHILD_APPLICATION = "studyapp-crash-child"
SETTLE_TIMEOUT_S = 30


def child(url: str, annotator_ids: list[int], ack_path: str, seed: int) -> None:
    """Rate until killed; one line per shown item and per acknowledged rating."""
    import threading

    os.environ["DATABASE_URL"] = url
    fd = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def log(line: str) -> None:
        os.write(fd, (line + "\n").encode())  # one write: whole lines, kept by the kernel

    def work(annotator_id: int, rng: random.Random) -> None:
        while (task := assignment.next_item(annotator_id)) is not None:
            log(f"show {annotator_id} {task.assignment_id} {task.position}")
            rating = assignment.submit(annotator_id, task.assignment_id, rng.randrange(5), 1.0)
            log(f"ack {annotator_id} {rating.id} {rating.assignment_id} {rating.revision} {rating.response}")
            if rng.random() < 0.2:  # Back, and change the answer just given
                previous = assignment.task_before(annotator_id, None)
                new = (int(previous.response) + 1) % 5
                rating = assignment.submit(annotator_id, previous.assignment_id, new, 0.5, revise=True)
                log(f"ack {annotator_id} {rating.id} {rating.assignment_id} {rating.revision} {rating.response}")
        log(f"done {annotator_id}")

    threads = [threading.Thread(target=work, args=(a, random.Random(seed * 10 + k)))
               for k, a in enumerate(annotator_ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def child_url(url: str) -> str:
    """The child's database URL: on PostgreSQL its sessions carry ``CHILD_APPLICATION``."""
    if not url.startswith("postgresql"):
        return url
    return make_url(url).update_query_dict({"application_name": CHILD_APPLICATION}).render_as_string(
        hide_password=False)


def wait_for_child_sessions_to_end(url: str) -> None:
    """On PostgreSQL, wait until the server has ended the killed child's sessions (a COMMIT it
    had sent is then stored or rolled back for good)."""
    if not url.startswith("postgresql"):
        return
    engine = create_engine(url, isolation_level="AUTOCOMMIT")  # each count a fresh snapshot
    count = text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :name")
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    try:
        with engine.connect() as conn:
            while conn.execute(count, {"name": CHILD_APPLICATION}).scalar():
                assert time.monotonic() < deadline, "the killed child's sessions stayed on the server"
                time.sleep(0.005)
    finally:
        engine.dispose()


def _read(path):
    acks, shown = set(), {}
    if not os.path.exists(path):
        return acks, shown
    with open(path) as fh:
        for line in fh:
            if not line.endswith("\n"):
                continue
            parts = line.split()
            if parts[0] == "ack":
                acks.add((int(parts[2]), int(parts[3]), int(parts[4]), parts[5]))
            elif parts[0] == "show":
                shown[int(parts[1])] = (int(parts[2]), int(parts[3]))
    return acks, shown


@pytest.mark.slow
def test_sigkill_at_random_points_loses_no_acknowledged_rating(db_backend, tmp_path):
    # items enough that the children never run out within the kills: a child with nothing left
    # to rate ends by itself before its kill (a quiet machine rates over 1,200 answers in 50 rounds)
    study = make_study(tmp_path, n_items=3000, raters=2)
    annotators = make_annotators(study, 2)
    url = config.database_url()
    storage.dispose_all()
    ctx = get_context("fork")
    rng = random.Random(20260)
    ack_path = str(tmp_path / "acks.log")
    kills, unacked_before = 0, set()
    for round_ in range(KILLS):
        before = os.path.getsize(ack_path) if os.path.exists(ack_path) else 0
        proc = ctx.Process(target=child, args=(child_url(url), annotators, ack_path, round_))
        proc.start()
        deadline = time.monotonic() + 30
        while (not os.path.exists(ack_path) or os.path.getsize(ack_path) == before) \
                and time.monotonic() < deadline and proc.is_alive():
            time.sleep(0.005)  # wait until the child works, then let it run a random while
        time.sleep(rng.uniform(0.0, 0.3))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
        assert proc.exitcode == -signal.SIGKILL, f"round {round_}: child ended with {proc.exitcode}"
        kills += 1
        wait_for_child_sessions_to_end(url)

        acks, shown = _read(ack_path)
        with storage.read_session() as session:
            stored = {(r.id, r.assignment_id, r.revision, r.response)
                      for r in session.exec(select(Rating))}
            answered = {a.id: a.answered_at is not None for a in session.exec(select(Assignment))}
        lost = acks - stored
        assert not lost, f"round {round_}: acknowledged ratings lost after SIGKILL: {sorted(lost)[:5]}"
        # this round, at most one answer per annotator thread can be committed but not yet
        # acknowledged (killed between the commit and the acknowledgement)
        unacked = stored - acks - unacked_before
        assert len(unacked) <= len(annotators), f"round {round_}: {sorted(unacked)}"
        unacked_before |= unacked
        for annotator_id in annotators:
            resumed = assignment.next_item(annotator_id)  # what the page shows on return
            last = shown.get(annotator_id)
            if last is not None and not answered[last[0]]:
                assert resumed.assignment_id == last[0], f"round {round_}: resumed elsewhere"
            elif last is not None and resumed is not None:
                assert resumed.position > last[1]
            if resumed is not None:
                with storage.read_session() as session:
                    earlier = session.exec(select(Assignment).where(
                        Assignment.annotator_id == annotator_id,
                        Assignment.position < resumed.position)).all()
                assert all(a.answered_at is not None for a in earlier), \
                    f"round {round_}: an earlier item was skipped"
        storage.dispose_all()  # no pooled connection may cross the next fork

    assert kills == KILLS
    acks, _ = _read(ack_path)
    assert len(acks) >= KILLS  # the child got work done in the rounds
    with storage.read_session() as session:
        per_item = {}
        for a in session.exec(select(Assignment).where(Assignment.phase == "main")):
            per_item[a.item_id] = per_item.get(a.item_id, 0) + 1
    assert max(per_item.values()) <= 2

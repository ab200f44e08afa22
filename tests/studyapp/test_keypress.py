"""One key press, one transaction (``assignment.answer``): what it stores and returns, what it
sends to the database, and two requests of one annotator at once on two instances."""

import logging
import re
import threading
from collections import Counter

import pytest
from sqlalchemy import event
from sqlmodel import select
from studyhelpers import make_annotators, make_study, routing_study, write_practice

from studyapp.core import storage
from studyapp.core.models import Assignment, Event, Rating
from studyapp.platform import assignment

pytestmark = pytest.mark.usefixtures("db_backend")

# The statements of one answer to a main item of a plain study, measured on both databases:
#  the answer (4): the annotator's row, locked first, with the study's; the assignment, locked,
#    with the annotator's current item (a stale press) and its latest revision (a repeated
#    press: only then is that rating read); the assignment marked answered; the rating added;
#  the next screen (4): the sequence per phase and the annotator's recent pace (which also give
#    the answers counted and say that no item is open); one window of the annotator's order
#    with the least claim level; the claim counted on the item (compare-and-set, returning the
#    item's key and fields); the assignment added.
# SQLite's BEGIN IMMEDIATE is a statement of its own. The counts per study (items, practice
# items) are kept in memory after the first claim, so they are not sent again.
STATEMENTS_PER_ANSWER = {"postgresql": 8, "sqlite": 9}


class Traffic:
    """Statements and transactions an engine sends while counting."""

    def __init__(self, engine):
        self.engine, self.counts = engine, Counter()

    def __enter__(self):
        event.listen(self.engine, "before_cursor_execute", self._statement)
        event.listen(self.engine, "begin", self._begin)
        event.listen(self.engine, "commit", self._commit)
        return self.counts

    def __exit__(self, *exc):
        event.remove(self.engine, "before_cursor_execute", self._statement)
        event.remove(self.engine, "begin", self._begin)
        event.remove(self.engine, "commit", self._commit)

    def _statement(self, *args):
        self.counts["statements"] += 1

    def _begin(self, conn):
        self.counts["transactions"] += 1

    def _commit(self, conn):
        self.counts["commits"] += 1


def test_an_answer_is_one_transaction_of_a_known_number_of_statements(tmp_path, db_backend):
    study = make_study(tmp_path, n_items=40, raters=3)
    annotator_id, = make_annotators(study, 1)
    task = assignment.next_item(annotator_id)
    engine = storage.get_engine()
    for number in range(1, 6):
        with Traffic(engine) as counts:
            screen = assignment.answer(annotator_id, task.assignment_id, 2, 1.0, seen_ms=1000)
        assert counts == {"statements": STATEMENTS_PER_ANSWER[db_backend], "transactions": 1, "commits": 1}
        assert screen.answered == number and screen.task.number == number + 1
        task = screen.task


def test_the_screen_is_what_the_database_says_next(tmp_path):
    study = make_study(tmp_path, n_items=6, raters=1, per_annotator=4,
                       extra="[quality]\nattention_checks = 1\nrepeat_items = 2\n")
    annotator_id, = make_annotators(study, 1)
    assignment.accept_instructions(annotator_id)
    task = assignment.next_item(annotator_id)
    phases = []
    while task is not None:
        screen = assignment.answer(annotator_id, task.assignment_id, 4 if task.phase == "attention" else 2,
                                   1.0, seen_ms=1000)
        assert screen.answered == assignment.answered_count(annotator_id)
        assert screen.task == assignment.next_item(annotator_id)
        assert screen.info == assignment.annotator_session(annotator_id)
        phases.append(task.phase)
        task = screen.task
    assert phases == ["main", "main", "attention", "main", "main", "retest", "retest"]
    assert screen.info.completed and screen.answered == 7
    assert [r.response for r in _ratings(annotator_id)] == ["2", "2", "4", "2", "2", "2", "2"]


def test_the_claim_step_that_served_each_item_is_logged(tmp_path, caplog):
    extra = write_practice(tmp_path, ["p1,ride,horse,ride,horse,4,"]) + "[quality]\nattention_checks = 1\nrepeat_items = 2\n"
    study = make_study(tmp_path, n_items=6, raters=1, per_annotator=4, extra=extra)
    annotator_id, = make_annotators(study, 1)
    caplog.set_level(logging.DEBUG, logger="studyapp.platform.assignment.claim")
    task = assignment.next_item(annotator_id)
    while task is not None:
        task = assignment.answer(annotator_id, task.assignment_id, 4, 1.0).task
    steps = [re.search(r"from the (\S+) step", r.getMessage()).group(1) for r in caplog.records]
    assert steps == ["practice", "default", "default", "attention", "default", "default", "retest", "retest"]


def test_a_repeated_stale_or_early_press_is_handled_as_submit_handles_it(tmp_path):
    study = make_study(tmp_path, n_items=4, raters=1, extra="[answers]\nmin_seen_ms = 300\n")
    annotator_id, = make_annotators(study, 1)
    first = assignment.next_item(annotator_id)
    with pytest.raises(assignment.AnswerTooSoon):
        assignment.answer(annotator_id, first.assignment_id, 2, 1.0, seen_ms=100)
    screen = assignment.answer(annotator_id, first.assignment_id, 2, 1.0, seen_ms=400)
    again = assignment.answer(annotator_id, first.assignment_id, 2, 1.0, seen_ms=400)  # the same press
    assert again.task == screen.task and again.answered == 1
    with pytest.raises(assignment.StaleAnswer):   # another key reaching the answered item
        assignment.answer(annotator_id, first.assignment_id, 4, 1.0, seen_ms=400)
    revised = assignment.answer(annotator_id, first.assignment_id, 4, 1.0, seen_ms=400, revise=True)
    assert revised.task == screen.task and revised.answered == 1   # Back, then on where they stopped
    assert [(r.response, r.revision) for r in _ratings(annotator_id)] == [("2", 0), ("4", 1)]
    with storage.read_session() as session:
        kinds = Counter(e.kind for e in session.exec(select(Event).where(Event.annotator_id == annotator_id)))
    assert kinds["answer_under_floor"] == 1 and kinds["stale_answer_refused"] == 1


def test_a_practice_answer_brings_its_feedback(tmp_path):
    extra = 'order = "fixed"\n' + write_practice(tmp_path, [
        "p1,ride,horse,ride,horse,4,The same action: interchangeable."])
    study = make_study(tmp_path, n_items=2, raters=1, extra=extra)
    annotator_id, = make_annotators(study, 1)
    practice = assignment.next_item(annotator_id)
    screen = assignment.answer(annotator_id, practice.assignment_id, 3, 1.0)
    assert screen.feedback == assignment.practice_feedback(annotator_id, practice.assignment_id)
    assert (screen.feedback.given, screen.feedback.expected) == ("3", "4") and screen.task.phase == "main"
    assert assignment.answer(annotator_id, screen.task.assignment_id, 3, 1.0).feedback is None


def test_a_rater_routed_out_by_the_refit_of_their_answer_gets_no_further_item(tmp_path):
    """With [routing] the refit after the answer that brings a rater to ``min_ratings`` decides
    whether they get another item, so the page's door claims after it: the constant rater
    (always 2) of test_active_routing's crossing test ends at 8 main ratings, routed."""
    _study, constant = routing_study(
        tmp_path, lambda who, task, value: assignment.answer(who, task.assignment_id, value, 1.0).task)
    task, rated = assignment.next_item(constant), 0
    while task is not None:
        screen = assignment.answer(constant, task.assignment_id, 2, 1.0)
        task, rated = screen.task, rated + 1
    assert rated == 8 and screen.info.routed and screen.answered == 8


@pytest.mark.parametrize("other", ["next_item", "answer"])
def test_two_instances_answering_and_asking_at_once_leave_one_open_item(tmp_path, db_backend, other):
    """Two tabs of one annotator on two instances (two engines, two threads): one answers while
    the other asks for the next item, or answers the same item too. Both lock the annotator's
    row first, so one waits for the other's commit and finds its claim: one open item after
    each round, every answer stored once."""
    if db_backend != "postgresql":
        pytest.skip("SQLite's write lock serialises the two requests whole")
    study = make_study(tmp_path, n_items=30, raters=2)
    annotator_id, = make_annotators(study, 1)
    url = str(storage.get_engine().url.render_as_string(hide_password=False))
    engines = [storage.open_engine(url), storage.open_engine(url)]
    try:
        task = assignment.next_item(annotator_id, engines[0])
        for _ in range(8):
            results = _at_once(
                answer=lambda task=task: assignment.answer(annotator_id, task.assignment_id, 2, 1.0, engines[0]),
                other={"next_item": lambda: assignment.next_item(annotator_id, engines[1]),
                       "answer": lambda task=task: assignment.answer(
                           annotator_id, task.assignment_id, 2, 1.0, engines[1]).task}[other])
            with storage.read_session() as session:
                open_items = session.exec(select(Assignment.id).where(
                    Assignment.annotator_id == annotator_id, Assignment.answered_at.is_(None))).all()
            assert open_items == [results["answer"].task.assignment_id]
            assert results["other"].assignment_id in (task.assignment_id, open_items[0])
            task = results["answer"].task
        assert [r.response for r in _ratings(annotator_id)] == ["2"] * 8
    finally:
        for engine in engines:
            engine.dispose()


def _at_once(**calls) -> dict:
    """Each call's result, the calls started together on threads of their own."""
    start, results = threading.Barrier(len(calls)), {}

    def run(name, call):
        start.wait()
        results[name] = call()

    threads = [threading.Thread(target=run, args=item) for item in calls.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def _ratings(annotator_id):
    with storage.read_session() as session:
        return list(session.exec(select(Rating).where(Rating.annotator_id == annotator_id).order_by(Rating.id)))

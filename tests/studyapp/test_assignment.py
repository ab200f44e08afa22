"""Assignment rules, tested directly on the database (no UI), on SQLite and PostgreSQL."""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from sqlmodel import select
from studyhelpers import make_annotators, make_study, rate_all, ratings_of, write_practice

from metrics import InputError
from studyapp.core import storage
from studyapp.core.models import Assignment, Event, Rating, Study, utcnow
from studyapp.core.storage import read_session
from studyapp.platform import assignment
from studyapp.platform.assignment import claim_order
from studyapp.platform.records import studies

pytestmark = pytest.mark.usefixtures("db_backend")


def _main_ratings():
    with storage.read_session() as session:
        rows = session.exec(select(Rating.item_id, Rating.annotator_id, Assignment.phase)
                            .join(Assignment, Assignment.id == Rating.assignment_id)).all()
    return [(item, annotator) for item, annotator, phase in rows if phase == "main"]


def test_raters_per_item_never_exceeded_under_16_concurrent_annotators(tmp_path):
    study = make_study(tmp_path, n_items=10, raters=3)
    annotators = make_annotators(study, 16)
    barrier = threading.Barrier(len(annotators))
    errors, rated = [], {}

    def work(annotator_id):
        try:
            barrier.wait()
            rated[annotator_id] = rate_all(annotator_id, value=1)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(a,)) for a in annotators]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    ratings = _main_ratings()
    per_item = Counter(item for item, _ in ratings)
    # 16 annotators want up to 10 items each; capacity is 10 items x 3 raters = 30
    assert len(per_item) == 10 and set(per_item.values()) == {3}
    assert len(ratings) == len(set(ratings)) == 30  # nobody rated an item twice
    assert sum(len(keys) for keys in rated.values()) == 30
    with storage.read_session() as session:
        slots = session.exec(select(Assignment.slot).where(Assignment.phase == "main")).all()
    assert sorted(Counter(slots).items()) == [(0, 10), (1, 10), (2, 10)]


def test_least_rated_item_comes_first(tmp_path):
    study = make_study(tmp_path, n_items=4, raters=2)
    first, second = make_annotators(study, 2)
    taken = []
    for _ in range(3):
        task = assignment.next_item(first)
        assignment.submit(first, task.assignment_id, 2, 1.0)
        taken.append(task.item_key)
    untouched = ({"i01", "i02", "i03", "i04"} - set(taken)).pop()
    assert assignment.next_item(second).item_key == untouched


def test_resume_returns_the_first_unanswered_item(tmp_path):
    study = make_study(tmp_path, n_items=5, raters=1)
    (annotator,) = make_annotators(study, 1)
    done = assignment.next_item(annotator)
    assignment.submit(annotator, done.assignment_id, 3, 1.0)
    pending = assignment.next_item(annotator)
    assert pending.item_key != done.item_key and pending.number == 2
    storage.dispose_all()  # tab closed, server restarted
    again = assignment.next_item(annotator)
    assert (again.assignment_id, again.item_key, again.number) == (
        pending.assignment_id, pending.item_key, 2)
    # revisiting the answered item does not move the place where the annotator stopped
    previous = assignment.task_before(annotator, again.position)
    assert previous.item_key == done.item_key and previous.response == "3"
    assignment.submit(annotator, previous.assignment_id, 1, 0.5, revise=True)
    assert assignment.next_item(annotator).assignment_id == pending.assignment_id


def test_items_per_annotator_and_completion(tmp_path):
    study = make_study(tmp_path, n_items=6, raters=3, per_annotator=4)
    (annotator,) = make_annotators(study, 1)
    assert len(rate_all(annotator)) == 4
    info = assignment.annotator_session(annotator)
    assert info.completed
    assert assignment.next_item(annotator) is None


def test_attention_checks_are_spread_and_repeats_come_last(tmp_path):
    study = make_study(tmp_path, n_items=6, raters=1, per_annotator=4,
                       extra="[quality]\nattention_checks = 1\nrepeat_items = 2\n")
    (annotator,) = make_annotators(study, 1)
    phases, keys = [], []
    while (task := assignment.next_item(annotator)) is not None:
        phases.append(task.phase)
        keys.append(task.item_key)
        assert task.total == 4 + 1 + 2
        value = 4 if task.phase == "attention" else 2
        assignment.submit(annotator, task.assignment_id, value, 1.0)
    # the check comes after 4 // 2 = 2 main items; the repeats are two of the four main items
    assert phases == ["main", "main", "attention", "main", "main", "retest", "retest"]
    main_keys = [k for k, p in zip(keys, phases) if p == "main"]
    assert set(keys[5:]) <= set(main_keys) and len(set(keys[5:])) == 2
    assert keys[2] == "attention-1"


def test_fixed_order_follows_the_file(tmp_path):
    study = make_study(tmp_path, n_items=5, raters=1, extra='order = "fixed"')
    (annotator,) = make_annotators(study, 1)
    assert rate_all(annotator) == ["i01", "i02", "i03", "i04", "i05"]


def test_random_order_differs_between_annotators_but_is_stable(tmp_path):
    study = make_study(tmp_path, n_items=12, raters=12)
    annotators = make_annotators(study, 4)
    orders = [tuple(rate_all(a)) for a in annotators]
    assert all(sorted(o) == [f"i{k:02d}" for k in range(1, 13)] for o in orders)
    assert len(set(orders)) > 1


def test_every_open_annotators_order_is_kept_while_they_answer(tmp_path):
    study = make_study(tmp_path, n_items=20, raters=100)
    annotators = make_annotators(study, 100)
    kept = claim_order._ORDERS
    for annotator in annotators:
        assignment.next_item(annotator)
    with read_session() as session:
        here = (str(storage.get_engine().url), study, session.get(Study, study).created_at)
    orders = {key: order for key, order in kept.items() if key[:3] == here}
    assert len(orders) == 100
    for annotator in annotators:   # the next claims read the orders kept, not new ones
        task = assignment.next_item(annotator)
        assignment.answer(annotator, task.assignment_id, 2, 1.0)
    assert all(kept[key] is order for key, order in orders.items())


def test_a_finished_annotators_order_is_dropped(tmp_path):
    study = make_study(tmp_path, n_items=3, raters=2)
    first, second = make_annotators(study, 2)
    with read_session() as session:
        row = session.get(Study, study)
        key = {annotator: claim_order.cache_key(session, row, f"order {annotator}") for annotator in (first, second)}
    assignment.next_item(first)
    assignment.next_item(second)
    assert key[first] in claim_order._ORDERS and key[second] in claim_order._ORDERS
    rate_all(first)
    assert key[first] not in claim_order._ORDERS and key[second] in claim_order._ORDERS


def test_cached_values_go_least_recently_used_first_beyond_their_weight(tmp_path):
    study = make_study(tmp_path, n_items=2, raters=1)
    kept = {}
    with read_session() as session:
        row = session.get(Study, study)
        for name in ("a", "b", "c", "a"):
            claim_order.study_cached(session, row, name, lambda: [0] * 10, kept=kept, limit=25, weight=len)
        assert [key[-1] for key in kept] == ["c", "a"]    # "b" went first: "a" was used again
        claim_order.study_cached(session, row, "big", lambda: [0] * 30, kept=kept, limit=25, weight=len)
        assert [key[-1] for key in kept] == ["big"]        # one entry is kept, however heavy


@pytest.mark.usefixtures("db_backend")
@pytest.mark.parametrize("seed", [0, 1, 2**30 - 1, 123_456_789])
def test_the_database_orders_items_as_the_python_rank_does(tmp_path, seed):
    # the claim's SQL order key, its Python twin and the cached order's numpy sort must agree on
    # each database, products near 2⁶² included; and the order is not the file order
    from sqlalchemy import update

    from studyapp.core.models import Annotator, Item, Study
    from studyapp.platform.assignment import claim
    from studyapp.platform.specs.spec_model import spec_of

    study_id = make_study(tmp_path, n_items=40, raters=1)
    (annotator_id,) = make_annotators(study_id, 1)
    with storage.write_session() as session:
        session.exec(update(Annotator).where(Annotator.id == annotator_id).values(seed=seed))
    with storage.read_session() as session:
        study, annotator = session.get(Study, study_id), session.get(Annotator, annotator_id)
        spec = spec_of(study)
        by_sql = list(session.exec(select(Item.id).where(Item.study_id == study_id)
                                   .order_by(claim._order_key(annotator, spec))))
        rank = claim._rank(session, annotator, study, spec)
    assert by_sql == sorted(by_sql, key=rank) and by_sql != sorted(by_sql)
    assert claim._in_order(reversed(by_sql), rank, annotator, spec) == by_sql   # the cached order
    a, b = claim._permutation(annotator)
    p = claim.PERMUTATION_MODULUS
    assert [rank(i) for i in by_sql] == sorted(((i * a + b) % p) ** 3 % p for i in by_sql)


def test_an_abandoned_claim_is_taken_over_after_the_timeout(tmp_path):
    study = make_study(tmp_path, n_items=1, raters=1, extra="claim_timeout_minutes = 30")
    idle, early, late = make_annotators(study, 3)
    held = assignment.next_item(idle)
    # within the timeout the only slot stays with the idle annotator
    assert assignment.next_item(early, now=utcnow() + timedelta(minutes=10)) is None
    taken = assignment.next_item(late, now=utcnow() + timedelta(minutes=31))
    assert taken.assignment_id == held.assignment_id and taken.item_key == held.item_key
    with pytest.raises(InputError, match="not assigned to you"):
        assignment.submit(idle, held.assignment_id, 2, 1.0)
    assignment.submit(late, taken.assignment_id, 2, 1.0)
    assert assignment.next_item(idle) is None
    assert len(_main_ratings()) == 1


def test_paused_study_hands_out_nothing_and_refuses_answers(tmp_path):
    study = make_study(tmp_path, n_items=3, raters=1)
    first, second = make_annotators(study, 2)
    task = assignment.next_item(first)
    studies.set_status(study, "paused")
    with pytest.raises(InputError, match="paused"):
        assignment.next_item(second)
    with pytest.raises(InputError, match="paused"):
        assignment.submit(first, task.assignment_id, 2, 1.0)
    studies.set_status(study, "open")
    assignment.submit(first, task.assignment_id, 2, 1.0)


def test_stale_answers_are_refused_and_counted(tmp_path):
    """A press meant for item 2 that reaches item 1 (already answered) changes nothing."""
    study = make_study(tmp_path, n_items=3, raters=1, extra='order = "fixed"\n')
    (annotator,) = make_annotators(study, 1)
    first = assignment.next_item(annotator)
    assignment.submit(annotator, first.assignment_id, 2, 1.0)
    second = assignment.next_item(annotator)
    with pytest.raises(assignment.StaleAnswer):  # the old item's button, pressed late
        assignment.submit(annotator, first.assignment_id, 3, 0.0)
    assignment.submit(annotator, first.assignment_id, 2, 0.0)  # a double submit: no change
    assignment.submit(annotator, second.assignment_id, 4, 1.0)
    third = assignment.next_item(annotator)
    assignment.submit(annotator, first.assignment_id, 0, 0.5, revise=True)  # went back
    with storage.read_session() as session:
        rows = [(r.item_id, r.revision, r.response) for r in session.exec(select(Rating).order_by(Rating.id))]
        refused = session.exec(select(Event).where(Event.kind == "stale_answer_refused")).all()
    item_1, item_2 = rows[0][0], rows[1][0]
    assert rows == [(item_1, 0, "2"), (item_2, 0, "4"), (item_1, 1, "0")]
    assert len(refused) == 1
    assert assignment.next_item(annotator).assignment_id == third.assignment_id


def test_time_left_uses_the_median_of_the_annotators_recent_first_answers(tmp_path):
    study = make_study(tmp_path, n_items=6, raters=1)
    (annotator,) = make_annotators(study, 1)
    for seconds in (10.0, 40.0):  # two answers: no estimate yet
        task = assignment.next_item(annotator)
        assert task.seconds_per_item is None and task.seconds_left() is None
        assignment.submit(annotator, task.assignment_id, 1, seconds)
    task = assignment.next_item(annotator)
    assignment.submit(annotator, task.assignment_id, 1, 20.0)
    assignment.submit(annotator, task.assignment_id, 3, 500.0, revise=True)  # a revision: not pace
    task = assignment.next_item(annotator)
    # median(10, 40, 20) = 20 s; item 4 of 6 unanswered: 3 items left -> 60 s
    assert (task.number, task.total, task.seconds_per_item) == (4, 6, 20.0)
    assert task.seconds_left() == 60.0


def test_time_left_reads_plainly():
    from studyapp.views.ui import time_left
    assert [time_left(s) for s in (20, 95, 240, 3_900)] == [
        "under a minute", "2 min", "4 min", "1 h 05 min"]


ANSWERS = 'order = "fixed"\n[answers]\ncant_judge = true\ncomments = true\n'


def test_cant_judge_and_comments_are_stored_and_exported_apart(tmp_path):
    from studyapp.core.models import CANT_JUDGE
    from studyapp.platform.records.exports import study_tables
    study = make_study(tmp_path, n_items=3, raters=1, extra=ANSWERS)
    (annotator,) = make_annotators(study, 1)
    first = assignment.next_item(annotator)
    assignment.submit(annotator, first.assignment_id, CANT_JUDGE, 3.0, comment="  unclear verb \r\n")
    again = assignment.submit(annotator, first.assignment_id, CANT_JUDGE, 1.0, comment="unclear verb")
    second = assignment.next_item(annotator)
    assignment.submit(annotator, second.assignment_id, 2, 2.0)
    third = assignment.next_item(annotator)
    assignment.submit(annotator, third.assignment_id, 4, 2.0, comment="line one\nline two")
    assert len(ratings_of(annotator)) == 3 and again.comment == "unclear verb"
    revisit = assignment.task_at(annotator, first.position)
    assert (revisit.response, revisit.comment) == (CANT_JUDGE, "unclear verb")
    tables = study_tables("t")
    ratings = tables["ratings.csv"]
    assert list(ratings["item_id"]) == ["i02", "i03"] and list(ratings["rating"]) == ["2", "4"]
    assert list(ratings["comment"]) == ["", "line one\nline two"]
    cant = tables["cant_judge.csv"]
    assert cant[["item_id", "comment"]].values.tolist() == [["i01", "unclear verb"]]
    assert list(tables["ratings_history.csv"]["rating"]) == [CANT_JUDGE, "2", "4"]


def test_comments_and_cant_judge_are_refused_where_the_spec_has_none(tmp_path):
    from studyapp.core.models import CANT_JUDGE
    study = make_study(tmp_path, n_items=2, raters=1)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    with pytest.raises(InputError, match="does not take comments"):
        assignment.submit(annotator, task.assignment_id, 2, 1.0, comment="hello")
    with pytest.raises(InputError):
        assignment.submit(annotator, task.assignment_id, CANT_JUDGE, 1.0)
    assert ratings_of(annotator) == []


def test_a_comment_with_control_characters_or_too_long_is_refused(tmp_path):
    study = make_study(tmp_path, n_items=2, raters=1, extra=ANSWERS)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    with pytest.raises(InputError, match="control characters"):
        assignment.submit(annotator, task.assignment_id, 2, 1.0, comment="bad\x07bell")
    with pytest.raises(InputError, match="at most 2000"):
        assignment.submit(annotator, task.assignment_id, 2, 1.0, comment="x" * 2001)
    assert ratings_of(annotator) == []



def test_practice_items_come_first_with_feedback_and_their_own_phase(tmp_path):
    from studyapp.platform.records.exports import study_tables
    extra = 'order = "fixed"\n' + write_practice(tmp_path, [
        "p1,ride,horse,ride,horse,4,The same action: interchangeable.",
        "p2,ride,horse,feed,horse,1,"])
    study = make_study(tmp_path, n_items=3, raters=1, extra=extra)
    (annotator,) = make_annotators(study, 1)
    seen = []
    while (task := assignment.next_item(annotator)) is not None:
        seen.append((task.item_key, task.phase, task.number, task.total))
        assignment.submit(annotator, task.assignment_id, 4 if task.phase == "practice" else 2, 1.0)
        feedback = assignment.practice_feedback(annotator, task.assignment_id)
        if task.item_key == "p1":
            assert (feedback.given, feedback.expected, feedback.correct) == ("4", "4", True)
            assert feedback.explanation == "The same action: interchangeable."
        elif task.item_key == "p2":
            assert (feedback.given, feedback.expected, feedback.correct, feedback.explanation) == (
                "4", "1", False, "")
        else:
            assert feedback is None
    # 2 practice items first, then the 3 main items: 5 in all
    assert seen == [("p1", "practice", 1, 5), ("p2", "practice", 2, 5), ("i01", "main", 3, 5),
                    ("i02", "main", 4, 5), ("i03", "main", 5, 5)]
    ratings = study_tables("t")["ratings.csv"]
    assert ratings[["item_id", "phase"]].values.tolist() == [
        ["p1", "practice"], ["p2", "practice"], ["i01", "main"], ["i02", "main"], ["i03", "main"]]


def test_a_practice_file_is_checked_before_anything_is_created(tmp_path):
    from studyhelpers import write_spec

    from studyapp.platform.launch.spec_files import load_spec
    cases = [(["p1,ride,horse,feed,horse,,"], r"practice\.csv line 2: a practice item needs an 'expected'"),
             (["p1,ride,horse,feed,horse,7,"], r"practice\.csv: item 'p1': expected .*7"),
             (["i01,ride,horse,feed,horse,2,"], r"item 'i01': the item_id is also used by the study's items")]
    for rows, message in cases:
        spec = write_spec(tmp_path, n_items=2, extra=write_practice(tmp_path, rows))
        with pytest.raises(InputError, match=message):
            load_spec(spec)
    assert studies.list_studies() == []


def test_expected_effort_uses_the_spec_until_the_study_has_its_own_median(tmp_path):
    """The welcome page's estimate: the spec's seconds per item until 20 first answers given on
    an item screen by people took at least a second, then their median. Revisions, answers not
    given on a screen (simulated ones), a simulated annotator's and answers under a second do
    not count."""
    from studyapp.core.models import Annotator

    study = make_study(tmp_path, n_items=30, raters=4, extra="[display]\nseconds_per_item = 12\n")
    first, second, bot, sim = (assignment.resolve_token(i.token) for i in studies.invite(study, 4))
    with storage.write_session() as session:
        session.get(Annotator, sim).source = "simulated"
    assert assignment.expected_effort(first) == (30, 12.0)
    for _ in range(30):
        assignment.submit(bot, assignment.next_item(bot).assignment_id, 1, 0.0)  # no screen
        assignment.submit(sim, assignment.next_item(sim).assignment_id, 1, 0.4, seen_ms=400)
    for k in range(19):
        task = assignment.next_item(first)
        assignment.submit(first, task.assignment_id, 1, 3.0 + k, seen_ms=2500)   # 3 .. 21 s
    assignment.submit(second, assignment.next_item(second).assignment_id, 1, 0.5, seen_ms=450)
    assert assignment.expected_effort(second) == (30, 12.0)   # 19 real timings: not enough
    task = assignment.next_item(first)
    assignment.submit(first, task.assignment_id, 1, 22.0, seen_ms=2500)   # 3 .. 22 s: median 12.5
    assignment.submit(first, task.assignment_id, 2, 500.0, revise=True, seen_ms=900)
    assert assignment.expected_effort(second) == (30, 12.5)


def test_the_welcome_estimate_reads_as_english():
    from studyapp.views.ui import effort

    assert effort(40, 20.0) == "**40 items · about 13 min** (about 20 seconds an item)"
    assert effort(40, 0.04) == "**40 items · under a minute** (about 1 second an item)"
    assert effort(1, 1.4) == "**1 item · under a minute** (about 1 second an item)"
    assert effort(3, 95.0) == "**3 items · about 5 min** (about 95 seconds an item)"


def test_a_claim_level_emptied_by_other_claims_still_finds_a_free_slot(tmp_path):
    """The next free slot is found in steps: the least claim level with the first window of the
    annotator's order, then, when that window has no item at the level, the level's items.
    Other annotators' claims in between can move every item of that level up; a free slot one
    level higher must still be found (12 concurrent annotators once had one of them told 'done'
    after 12 of 20 items)."""
    from sqlalchemy import event, update

    from studyapp.core.models import Annotator, Item, Study
    from studyapp.platform.assignment.claim_order import CHUNK
    from studyapp.platform.specs.spec_model import spec_of

    n_items = CHUNK + 6   # the first window (file order) holds CHUNK items, all claimed once
    study_id = make_study(tmp_path, n_items=n_items, raters=3, extra='order = "fixed"')
    (annotator_id,) = make_annotators(study_id, 1)
    with storage.write_session() as session:
        session.exec(update(Item).where(Item.study_id == study_id, Item.position < CHUNK).values(n_claims=1))
    engine = storage.get_engine()
    seen = {"level read": False}

    def others_claim_every_item(conn, cursor, statement, parameters, context, executemany):
        if not seen["level read"] and "AS level" in statement:
            seen["level read"] = True   # level 0, none in the window: everyone else claims each item once
            conn.execute(update(Item).where(Item.study_id == study_id).values(n_claims=Item.n_claims + 1))

    event.listen(engine, "after_cursor_execute", others_claim_every_item)
    try:
        with storage.write_session() as session:
            study, annotator = session.get(Study, study_id), session.get(Annotator, annotator_id)
            found = assignment.free_slot(session, annotator, study, spec_of(study))
            position = session.get(Item, found[0]).position
    finally:
        event.remove(engine, "after_cursor_execute", others_claim_every_item)
    assert seen["level read"] and found[1] == 1 and position == CHUNK


def test_two_tabs_asking_at_once_get_one_open_item(tmp_path, db_backend, monkeypatch):
    """Two tabs of one annotator ask for the next item at the same moment (PostgreSQL: two
    instances). Tab A holds the annotator's row (the first lock of every claim); tab B, started
    while A is between its look for an open item and its claim, waits for A's commit and then
    hands out A's item instead of claiming a second one behind it."""
    if db_backend != "postgresql":
        pytest.skip("SQLite's write lock serialises the two requests whole")
    from studyapp.platform.assignment import claim

    study = make_study(tmp_path, n_items=6, raters=2)
    annotator_id, = make_annotators(study, 1)
    sequence, b_done = claim.sequence, threading.Event()
    b_waited = []

    def a_then_b(session, annotator):
        if not b_waited:            # tab A, after its look for an open item: B asks now
            tab_b.start()
            b_waited.append(not b_done.wait(1.0))   # B cannot get past A's lock on the annotator
        return sequence(session, annotator)

    got = {}

    def run_b():
        got["b"] = assignment.next_item(annotator_id)
        b_done.set()

    tab_b = threading.Thread(target=run_b)
    monkeypatch.setattr(claim, "sequence", a_then_b)
    got["a"] = assignment.next_item(annotator_id)
    tab_b.join()
    assert b_waited == [True]
    assert got["a"].assignment_id == got["b"].assignment_id
    with storage.read_session() as session:
        open_items = session.exec(select(Assignment.id).where(Assignment.annotator_id == annotator_id,
                                                              Assignment.answered_at.is_(None))).all()
    assert open_items == [got["a"].assignment_id]


@pytest.mark.parametrize(("floor", "seen", "stored"), [(None, 299, False), (None, 300, True),
                                                      (120, 119, False), (120, 120, True), (0, 0, True)])
def test_an_answer_under_the_studys_seen_floor_cannot_be_stored(tmp_path, floor, seen, stored):
    """The server's seen floor: an answer from a screen (``seen_ms``) under ``[answers]
    min_seen_ms`` (300 ms by default) is refused and logged with its time; at the floor it is stored
    with its time and in-view flag."""
    extra = 'order = "fixed"\n' + (f"[answers]\nmin_seen_ms = {floor}\n" if floor is not None else "")
    study = make_study(tmp_path, n_items=2, raters=1, extra=extra)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    if not stored:
        with pytest.raises(assignment.AnswerTooSoon):
            assignment.submit(annotator, task.assignment_id, 2, 0.3, seen_ms=seen, in_view=True)
    else:
        assignment.submit(annotator, task.assignment_id, 2, 0.3, seen_ms=seen, in_view=True)
    with storage.read_session() as session:
        rows = [(r.response, r.seen_ms, r.in_view) for r in session.exec(select(Rating))]
        logged = [e.detail for e in session.exec(select(Event).where(Event.kind == "answer_under_floor"))]
    assert rows == ([("2", seen, True)] if stored else [])
    assert len(logged) == (0 if stored else 1) and (stored or f'"seen_ms": {seen}' in logged[0])
    assert (assignment.next_item(annotator).assignment_id == task.assignment_id) != stored

"""The answer route (``POST /api/answer``) on a real server: in Chromium the answer bar sends its
answers there and draws the next screen it returns, Back and the end of the sequence still go
through the page; over HTTP every request it must refuse is refused with its one-line reason and
stores nothing, a stale or too-early answer returns the current item saying why, and the same
checks hold as on the page's own way.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from browserhelpers import module_database, running_app
from sqlmodel import select
from studyhelpers import make_study
from test_browser import browser, button, press, wait_idle, wait_ratings, wait_text  # noqa: F401

from studyapp.core import auth, storage
from studyapp.core.models import Event, Rating
from studyapp.platform import assignment
from studyapp.platform.records import studies
from studyapp.views import answer_route

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def own_database():
    """The module's studies share one database and one server (``app``)."""
    yield


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("route")
    with module_database(folder), running_app(folder) as base:
        yield base, folder
    storage.dispose_all()


def started(folder, slug: str, n_items: int = 4) -> tuple[int, int, assignment.Task]:
    """A study of its own, one annotator past the instructions: (study, annotator, first item)."""
    study = make_study(folder, n_items=n_items, raters=1, slug=slug, extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    annotator = assignment.resolve_token(invite.token)
    assignment.accept_instructions(annotator)
    return study, annotator, assignment.next_item(annotator)


def post(base: str, body, *, key: str | None = None, origin: str | None = "same",
         content_type: str = "application/json", raw: bytes | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": content_type}
    if origin is not None:
        headers["Origin"] = base if origin == "same" else origin
    if key is not None:
        headers["X-Studyapp-Key"] = key
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(base + answer_route.PATH, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def press_body(annotator: int, item: int, value="3", **extra) -> dict:
    return {**{"annotator": annotator, "item_id": item, "kind": "answer", "value": value,
               "comment": None, "nonce": "n-1", "seen_ms": 900, "in_view": True, "not_applied": []},
            **extra}


def stored(study: int) -> list[tuple[int, str]]:
    with storage.read_session() as session:
        return [(r.assignment_id, r.response)
                for r in session.exec(select(Rating).where(Rating.study_id == study).order_by(Rating.id))]


def test_an_answer_returns_the_next_items_screen_and_is_stored(app):
    base, folder = app
    study, annotator, first = started(folder, "route-ok")
    status, reply = post(base, press_body(annotator, first.assignment_id, "2"), key=auth.answer_key(annotator))
    assert status == 200 and stored(study) == [(first.assignment_id, "2")]
    data = reply["data"]
    second = assignment.next_item(annotator)
    assert (data["item_id"], data["position"]) == (second.assignment_id, second.position) != (first.assignment_id, first.position)
    assert data["screen"]["progress"]["text"].startswith("Item 2 of 4")
    assert data["seen_nonce"] == "n-1" and data["route"]["annotator"] == annotator
    assert data["values"] == [0, 1, 2, 3, 4] and data["can_go_back"] is True


BAD = [  # (what is wrong, request options, status, the reason's start)
    ("no origin", {"origin": None}, 403, "the answer must come from this server's page"),
    ("another origin", {"origin": "http://evil.example"}, 403, "the answer must come from this server's page"),
    ("not JSON's type", {"content_type": "text/plain"}, 415, "the answer must be JSON"),
    ("no key", {"key": None}, 403, "the answer key does not match the annotator"),
    ("another annotator's key", {"key": "other"}, 403, "the answer key does not match the annotator"),
    ("not JSON", {"raw": b"{not json"}, 400, "the answer is not JSON"),
    ("a list", {"raw": b"[1, 2]"}, 400, "the answer must be a JSON object"),
    ("nested past the parser's depth", {"raw": b"[" * 7000 + b"]" * 7000}, 400, "the answer is not JSON"),
    ("too large", {"raw": b" " * (answer_route.MAX_BODY + 1)}, 413, f"the answer is over {answer_route.MAX_BODY} bytes"),
    ("item id text", {"fields": {"item_id": "7"}}, 400, "field 'item_id' must be a positive whole number"),
    ("annotator true", {"fields": {"annotator": True}}, 400, "field 'annotator' must be a positive whole number"),
    ("value a list", {"fields": {"value": [3]}}, 400, "field 'value' must be a string or whole number"),
    ("value too long", {"fields": {"value": "3" * 65}}, 400, "field 'value' must be a string or whole number"),
    ("comment too long", {"fields": {"comment": "x" * 2001}}, 400, "field 'comment' must be text of at most 2000"),
    ("seen_ms negative", {"fields": {"seen_ms": -1}}, 400, "field 'seen_ms' must be a number of milliseconds"),
    ("seen_ms huge", {"fields": {"seen_ms": 10 ** 400}}, 400, "field 'seen_ms' must be a number of milliseconds"),
    ("seen_ms text", {"fields": {"seen_ms": "900"}}, 400, "field 'seen_ms' must be a number of milliseconds"),
    ("seen_ms NaN", {"fields": {"seen_ms": float("nan")}}, 400, "field 'seen_ms' must be a number of milliseconds"),
    ("seen_ms Infinity", {"fields": {"seen_ms": float("inf")}}, 400, "field 'seen_ms' must be a number of milliseconds"),
    ("in_view text", {"fields": {"in_view": "yes"}}, 400, "field 'in_view' must be true, false or null"),
    ("keys not a list", {"fields": {"not_applied": "3"}}, 400, "field 'not_applied' must be a list"),
    ("no nonce", {"fields": {"nonce": ""}}, 400, "field 'nonce' must be text of 1 to 64 characters"),
    ("a Back", {"fields": {"kind": "back"}}, 400, "field 'kind' must be \"answer\""),
]


@pytest.mark.parametrize("what, options, status, reason", BAD, ids=[b[0] for b in BAD])
def test_a_request_the_route_must_refuse_is_refused_and_stores_nothing(app, what, options, status, reason):
    base, folder = app
    study, annotator, first = started(folder, f"route-bad-{BAD.index(next(b for b in BAD if b[0] == what))}")
    options = dict(options)
    body = {**press_body(annotator, first.assignment_id), **options.pop("fields", {})}
    key = options.pop("key", auth.answer_key(annotator))
    if key == "other":
        key = auth.answer_key(annotator + 1000)
    got_status, reply = post(base, body, key=key, **options)
    assert (got_status, reply["error"][:len(reason)]) == (status, reason)
    assert "\n" not in reply["error"]
    assert stored(study) == []
    assert assignment.next_item(annotator).assignment_id == first.assignment_id


def test_a_stale_or_early_answer_returns_the_current_item_saying_why(app):
    base, folder = app
    study, annotator, first = started(folder, "route-stale")
    key = auth.answer_key(annotator)
    status, reply = post(base, press_body(annotator, first.assignment_id, "1", seen_ms=50), key=key)
    assert status == 200 and stored(study) == []
    data = reply["data"]
    assert data["item_id"] == first.assignment_id
    assert data["screen"]["notices"] == [["error", "that answer came 50 ms after the item was shown, before "
                                                   "it could be read (at least 300 ms); it was not stored"]]
    assert post(base, press_body(annotator, first.assignment_id, "1"), key=key)[0] == 200
    status, reply = post(base, press_body(annotator, first.assignment_id, "4", nonce="n-2"), key=key)
    assert status == 200 and stored(study) == [(first.assignment_id, "1")]
    assert reply["data"]["item_id"] == assignment.next_item(annotator).assignment_id != first.assignment_id
    assert reply["data"]["screen"]["notices"] == [["error", answer_route.STALE]]


def test_the_last_answer_hands_over_to_the_page(app):
    base, folder = app
    study, annotator, first = started(folder, "route-last", n_items=1)
    status, reply = post(base, press_body(annotator, first.assignment_id, "0"), key=auth.answer_key(annotator))
    assert (status, reply) == (200, {"page": True}) and stored(study) == [(first.assignment_id, "0")]


def test_more_answers_than_the_rate_allows_are_refused(app):
    base, folder = app
    study, annotator, first = started(folder, "route-rate")
    key = auth.answer_key(annotator)
    statuses = [post(base, press_body(annotator, first.assignment_id, "0", seen_ms=1, nonce=f"r{k}"), key=key)[0]
                for k in range(answer_route.PRESSES_PER_WINDOW + 3)]
    assert statuses == [200] * answer_route.PRESSES_PER_WINDOW + [429] * 3
    assert stored(study) == []


def test_keys_dropped_on_screen_are_counted_with_the_answer(app):
    base, folder = app
    study, annotator, first = started(folder, "route-keys")
    post(base, press_body(annotator, first.assignment_id, "2", not_applied=["3", "4"]), key=auth.answer_key(annotator))
    with storage.read_session() as session:
        events = session.exec(select(Event).where(Event.annotator_id == annotator, Event.kind == "keys_not_applied")).all()
    assert [json.loads(e.detail)["keys"] for e in events] == [["3", "4"]]


ROUTE_POSTS = """return performance.getEntriesByType('resource')
    .filter((e) => e.name.endsWith('/api/answer')).length"""


def test_in_chromium_answers_go_by_the_route_and_back_and_the_end_by_the_page(app, browser):
    base, folder = app
    study = make_study(folder, n_items=4, raters=1, slug="route-browser", extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    browser.get(f"{base}/?token={invite.token}")
    button(browser, "Start").click()
    wait_text(browser, "Item 1 of 4")
    press(browser, "2")
    wait_text(browser, "Item 2 of 4")
    press(browser, "3")
    wait_text(browser, "Item 3 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"]})
    assert browser.execute_script(ROUTE_POSTS) == 2
    button(browser, "Back").click()   # from a screen the route drew: back to item 2
    wait_text(browser, "you gave 3")
    press(browser, "1")
    wait_text(browser, "Item 3 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3", "1"]})
    press(browser, "4")
    wait_text(browser, "Item 4 of 4")
    press(browser, "0")
    wait_text(browser, "Thank you!")
    wait_ratings(study, {"i01": ["2"], "i02": ["3", "1"], "i03": ["4"], "i04": ["0"]})
    assert browser.execute_script(ROUTE_POSTS) == 4   # the revision went by the page
    browser.refresh()
    wait_text(browser, "You rated 4 items")


def test_the_route_takes_only_a_post(app):
    base, _folder = app
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + answer_route.PATH, timeout=30)
    assert refused.value.code == 405

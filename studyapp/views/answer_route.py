"""The answer route: an answer from the item screen and the next screen's data, as JSON, without
a run of the page (``POST /api/answer`` on the Streamlit server, ``studyapp/views/web.py``, ahead of
Streamlit's own middleware: :func:`middleware`).

A page run costs about as much as the rest of an answer together (Streamlit's rerun machinery,
the component's mount), so the answer bar sends its answers here when the page offers the route
(``route_for``): a plain item of a study answered on its scale, not one being revised or
practised. The route goes through the same door as the page (``assignment.answer``: the
item's stale check, the seen floor, one transaction) and returns the bar's data for the next
item (``item_screen.bar_data``), which the bar draws in place. Everything else — the end of
the sequence, practice feedback, a paused study — is the page's: the route answers
``{"page": true}`` (the answer stored) and the bar runs the page. Any refusal here (a status
other than 200) sends the bar back to the page's own way with the same press.

A request must be a same-origin ``fetch`` (``Origin`` naming this host, ``Sec-Fetch-Site``
``same-origin`` where sent), JSON of at most :data:`MAX_BODY` bytes, with the annotator's
answer key (``auth.answer_key``) in the ``X-Studyapp-Key`` header; a custom header means a
browser asks first before sending one from another origin, and nothing here answers that
question. Each annotator may send :data:`PRESSES_PER_WINDOW` answers in :data:`WINDOW_S` s.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from urllib.parse import urlsplit

import anyio
from sqlalchemy.exc import SQLAlchemyError
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import request_response

from metrics import InputError
from studyapp.core import auth, config
from studyapp.platform import assignment
from studyapp.platform.assignment import prolific
from studyapp.studytypes import get_type
from studyapp.views import item_screen

LOG = logging.getLogger("studyapp.answer_route")
PATH = "/api/answer"
KEY_HEADER = "x-studyapp-key"
MAX_BODY = 16 * 1024
PRESSES_PER_WINDOW, WINDOW_S = 30, 10.0
MAX_TEXT = 2000           # a comment's length, as the comment box allows
MAX_KEYS = 200            # keys not applied, sent with one answer
MAX_SEEN_MS = 10 ** 9     # about eleven days on screen
STALE = ("That answer was for an item already answered (perhaps in another tab); it was not "
         "stored. Here is your next item.")
_mounted = False
_recent: dict[int, deque] = {}
_recent_lock = threading.Lock()
_answering: anyio.CapacityLimiter | None = None


def middleware() -> list[Middleware]:
    """The route, for the server's ``st.App`` (mounting it lets the page offer it): a middleware
    in front of Streamlit's own (sessions, compression, path checks), which the route does not
    use, so that its requests go straight to it."""
    global _mounted
    _mounted = True
    return [Middleware(RouteFirst)]


class RouteFirst:
    """An ASGI middleware that hands the route's requests to it and everything else on."""

    def __init__(self, app):
        self.app = app
        self.endpoint = request_response(answer_endpoint)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != PATH:
            await self.app(scope, receive, send)
        elif scope["method"] != "POST":
            await JSONResponse({"error": "the answer route takes POST only"}, status_code=405,
                               headers={"Allow": "POST"})(scope, receive, send)
        else:
            await self.endpoint(scope, receive, send)


def route_for(info: assignment.AnnotatorSession, task: assignment.Task) -> dict | None:
    """``{url, annotator, key}`` when the answer to ``task`` may go to the route, else None."""
    if (not _mounted or task.response is not None or task.phase == "practice"
            or get_type(info.study_type).custom_response):
        return None
    return {"url": PATH, "annotator": info.annotator_id, "key": auth.answer_key(info.annotator_id)}


class Refused(Exception):
    """A request the route does not take: its status and a one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


async def answer_endpoint(request: Request) -> JSONResponse:
    try:
        _check_origin(request)
        press = parse_press(await _body(request))
        key = request.headers.get(KEY_HEADER, "")
        status, reply = await anyio.to_thread.run_sync(answer_press, press, key, limiter=_answer_slots())
    except Refused as refused:
        status, reply = refused.status, {"error": refused.reason}
    return JSONResponse(reply, status_code=status, headers={"Cache-Control": "no-store"})


def _answer_slots() -> anyio.CapacityLimiter:
    """As many answers at once as the database pool keeps connections (``config.pool_size``): a
    press beyond them waits here for one to come free, where it would otherwise open one of the
    pool's overflow connections, which is closed again after the answer (a new PostgreSQL
    connection costs both sides a log-in)."""
    global _answering
    if _answering is None:
        _answering = anyio.CapacityLimiter(config.pool_size())
    return _answering


def _check_origin(request: Request) -> None:
    origin, host = request.headers.get("origin"), request.headers.get("host")
    if not origin or not host or urlsplit(origin).netloc != host:
        raise Refused(403, "the answer must come from this server's page")
    if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
        raise Refused(403, "the answer must come from this server's page")
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused(415, "the answer must be JSON")


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise Refused(413, f"the answer is over {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(413, f"the answer is over {MAX_BODY} bytes")
    return body


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


FIELDS = {  # name: (whether a value is valid, what it must be)
    "annotator": (_whole, "a positive whole number"),
    "item_id": (_whole, "a positive whole number"),
    "kind": (lambda v: v == "answer", '"answer"'),
    "value": (lambda v: isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) <= 64,
              "a string or whole number of at most 64 characters"),
    "comment": (lambda v: v is None or (isinstance(v, str) and len(v) <= MAX_TEXT),
                f"text of at most {MAX_TEXT} characters"),
    "seen_ms": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= MAX_SEEN_MS,
                f"a number of milliseconds from 0 to {MAX_SEEN_MS}"),
    "in_view": (lambda v: v is None or isinstance(v, bool), "true, false or null"),
    "not_applied": (lambda v: v is None or (isinstance(v, list) and len(v) <= MAX_KEYS
                                            and all(isinstance(k, str) and len(k) <= 32 for k in v)),
                    f"a list of at most {MAX_KEYS} key names"),
    "nonce": (lambda v: isinstance(v, str) and 0 < len(v) <= 64, "text of 1 to 64 characters"),
}


def parse_press(body: bytes) -> dict:
    """The answer's fields (:data:`FIELDS`), checked: the first bad one named."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):   # RecursionError: nested past the parser's depth
        raise Refused(400, "the answer is not JSON") from None
    if not isinstance(data, dict):
        raise Refused(400, "the answer must be a JSON object")
    for name, (valid, what) in FIELDS.items():
        if not valid(data.get(name)):
            raise Refused(400, f"field '{name}' must be {what}")
    return {"annotator": data["annotator"], "item_id": data["item_id"], "value": str(data["value"]),
            "comment": data.get("comment"), "seen_ms": int(data["seen_ms"]), "in_view": data.get("in_view"),
            "not_applied": data.get("not_applied") or [], "nonce": data["nonce"]}


def _within_rate(annotator_id: int) -> bool:
    now = time.monotonic()
    with _recent_lock:
        if len(_recent) > 50_000:   # forget annotators not heard from within the window
            for known in [a for a, times in _recent.items() if now - times[-1] > WINDOW_S]:
                del _recent[known]
        times = _recent.setdefault(annotator_id, deque())
        while times and now - times[0] > WINDOW_S:
            times.popleft()
        if len(times) >= PRESSES_PER_WINDOW:
            return False
        times.append(now)
        return True


def answer_press(press: dict, key: str) -> tuple[int, dict]:
    """Store ``press`` (checked by ``parse_press``) for the annotator ``key`` belongs to; (status,
    reply): the next screen's data, ``{"page": true}``, or an error."""
    annotator_id = press["annotator"]
    if not auth.answer_key_matches(annotator_id, key):
        return 403, {"error": "the answer key does not match the annotator"}
    if not _within_rate(annotator_id):
        return 429, {"error": f"more than {PRESSES_PER_WINDOW} answers in {WINDOW_S:.0f} s"}
    try:
        if press["not_applied"]:
            assignment.log_keys_not_applied(annotator_id, press["not_applied"], press["item_id"])
        try:
            screen = assignment.answer(annotator_id, press["item_id"], press["value"],
                                       press["seen_ms"] / 1000, comment=press["comment"],
                                       seen_ms=press["seen_ms"], in_view=press["in_view"])
        except assignment.StaleAnswer:
            return 200, _current_screen(annotator_id, press["nonce"], STALE)
        except InputError as exc:
            return 200, _current_screen(annotator_id, press["nonce"], str(exc))
    except SQLAlchemyError as exc:
        LOG.error("answer not stored by the route (annotator %s, assignment %s): %s", annotator_id,
                  press["item_id"], exc)
        return 503, {"error": "the server could not store the answer"}
    return 200, _reply(screen.info, screen.task, screen.answered, press["nonce"])


def _current_screen(annotator_id: int, nonce: str, flash: str) -> dict:
    """The screen after a refused answer: the annotator's current item, saying why."""
    try:
        info = assignment.annotator_session(annotator_id)
        task = assignment.next_item(annotator_id)
    except InputError:
        return {"page": True}
    answered = assignment.answered_count(annotator_id) if task is not None else 0
    return _reply(info, task, answered, nonce, flash)


def _reply(info: assignment.AnnotatorSession, task: assignment.Task | None, answered: int,
           nonce: str, flash: str | None = None) -> dict:
    route = route_for(info, task) if task is not None else None
    if (route is None or info.completed or info.routed or info.study_status != "open"
            or info.prolific_status in prolific.ENDED):
        return {"page": True}
    return {"data": item_screen.bar_data(info, task, answered, seen_nonce=nonce, flash=flash,
                                         route=route)}

"""The answer route stores at most the database pool's size of answers at once: presses beyond
it wait in the event loop for a slot (rather than open overflow connections), and each is
answered. Driven through the route's ASGI middleware as the server mounts it, with the door
replaced by a recorder of how many presses are inside it at once."""

from __future__ import annotations

import json
import threading
import time

import anyio

from studyapp.views import answer_route

PRESSES = 8


def _request(body: bytes) -> tuple[dict, list[dict]]:
    scope = {"type": "http", "method": "POST", "path": answer_route.PATH, "raw_path": answer_route.PATH.encode(),
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("study.example", 80), "client": ("127.0.0.1", 5000),
             "headers": [(b"host", b"study.example"), (b"origin", b"http://study.example"),
                         (b"content-type", b"application/json"), (b"x-studyapp-key", b"key")]}
    return scope, [{"type": "http.request", "body": body, "more_body": False}]


async def _post(app, body: bytes) -> int:
    scope, incoming = _request(body)
    sent: list[dict] = []

    async def receive():
        if incoming:
            return incoming.pop(0)
        await anyio.sleep_forever()

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"]


def test_presses_beyond_the_pool_wait_for_a_slot_and_all_are_answered(monkeypatch):
    monkeypatch.setenv("STUDYAPP_DB_POOL_SIZE", "3")
    monkeypatch.setattr(answer_route, "_answering", None)
    inside, peak, lock = 0, 0, threading.Lock()

    def door(press, key):
        nonlocal inside, peak
        with lock:
            inside += 1
            peak = max(peak, inside)
        time.sleep(0.05)
        with lock:
            inside -= 1
        return 200, {"page": True}

    monkeypatch.setattr(answer_route, "answer_press", door)

    async def not_the_route(scope, receive, send):
        raise AssertionError("the route's request went past it")

    app = answer_route.RouteFirst(not_the_route)
    statuses = []

    async def main():
        async def one(k):
            body = json.dumps({"annotator": 1, "item_id": k + 1, "kind": "answer", "value": "3",
                               "seen_ms": 900, "nonce": f"n{k}"}).encode()
            statuses.append(await _post(app, body))
        async with anyio.create_task_group() as group:
            for k in range(PRESSES):
                group.start_soon(one, k)

    anyio.run(main)
    assert statuses == [200] * PRESSES
    assert peak == 3

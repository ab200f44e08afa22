"""The floors of ``benchmarks.load_web --floor`` (the bare page ``benchmarks/floor_page.py``, and
the page with its JSON route ``benchmarks/floor_web.py``) serve behind HAProxy as load_web
starts them, and the load client drives them as it drives the annotator page: an open shows a
Start button, Start the first item, an answer stores one row and shows the next (on the route
floor, the route's reply), Back shows the answered item as a revision, a reload the item on
screen, and after the last item the page says "Done". Needs haproxy
(``scripts/ci_balancer.sh``); skipped without it."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from benchmarks import floor_page
from benchmarks.load_web import floor_cluster
from benchmarks.web_session import WebSession

pytestmark = pytest.mark.slow
if not (shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()):
    pytest.skip("haproxy not installed", allow_module_level=True)


async def walk(base: str) -> list:
    session = WebSession(base, "token=7")
    try:
        start = await session.open()
        assert start.start_button and not start.item, start.texts
        seen = [(await session.press_start()).item]
        seen.append((await session.answer("2")).item)
        seen.append((await session.back()).item)
        seen.append((await session.answer("4")).item)
        seen.append((await session.reload()).item)   # a reload after answers: no Start again
        final = await session.answer("3")
        seen.append(final.item)
        return seen + [final.texts]
    finally:
        await session.close()


@pytest.mark.parametrize("route", [False, True], ids=["page", "route"])
def test_floor_answers_through_the_balancer(tmp_path, route):
    db = f"sqlite:///{tmp_path / 'floor.sqlite'}"
    with floor_cluster(1, db, 2, tmp_path / "cluster", route=route) as cluster:
        seen = asyncio.run(walk(cluster.base))
    offered = {"url": "/api/answer", "annotator": 7, "key": ""} if route else None
    assert seen == [{"item_id": 1, "revising": False, "route": offered},
                    {"item_id": 2, "revising": False, "route": offered},
                    {"item_id": 1, "revising": True, "current": "2"},
                    {"item_id": 2, "revising": False, "route": offered},
                    {"item_id": 2, "revising": False, "route": offered}, None, ["Done"]]
    assert floor_page.count_answers(db) == 3

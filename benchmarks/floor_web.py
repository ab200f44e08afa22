"""The route floor of ``benchmarks.load_web --floor``: the least a JSON route on Streamlit's own
``st.App`` can do per answer, beside the bare page (``floor_page.py``), which it serves too.

``POST /api/answer`` takes the press the load client sends to the project's answer route and,
in one transaction, does the floor page's two statements: one INSERT (the answer) and one
SELECT (the next item); it returns the next item's data (``{"data": {item_id, route}}``) or,
after the last item, ``{"page": true}``. No key, origin or field checks: the floor. The page
(``floor_page.py``, with ``FLOOR_ROUTE=1``) offers the route in its component's data, so the
same load client takes the same steps on it as on the project.

    FLOOR_DB=sqlite:////tmp/floor.sqlite FLOOR_ROUTE=1 streamlit run benchmarks/floor_web.py
"""

from __future__ import annotations

import os
import time
from functools import cache
from pathlib import Path

import streamlit as st
from floor_page import INSERT, NEXT, engine_for, route_of
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


@cache
def statements():
    engine = engine_for(os.environ["FLOOR_DB"])
    p = "?" if engine.dialect.paramstyle == "qmark" else "%s"
    return engine, INSERT.format(p=p), NEXT.format(p=p)


def store_and_next(press: dict) -> dict:
    engine, insert, next_item = statements()
    annotator = int(press["annotator"])
    with engine.begin() as conn:
        conn.exec_driver_sql(insert, (annotator, int(press["item_id"]), str(press["value"]), time.time()))
        row = conn.exec_driver_sql(next_item, (annotator,)).first()
    if row is None:
        return {"page": True}
    return {"data": {"item_id": row[0], "revising": False, "route": route_of(annotator)}}


async def answer(request: Request) -> JSONResponse:
    return JSONResponse(await run_in_threadpool(store_and_next, await request.json()))


app = st.App(Path(__file__).resolve().with_name("floor_page.py"),
             routes=[Route("/api/answer", answer, methods=["POST"])])

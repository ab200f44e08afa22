"""The bare-Streamlit floor of ``benchmarks.load_web --floor``: the least a Streamlit page can do
per answer, served and driven like the annotator page.

One ``st.components.v2`` component (``floor.answer_bar``) shows an item id and sends, on a
press, the trigger value the project's answer component sends (``{item_id, kind, value,
nonce, ...}``), so ``benchmarks.web_session`` drives it unchanged. Per script run: the press's
callback does one INSERT (the answer), the page one SELECT (the next item: the first the
annotator has not answered, or, after Back, the last answered, shown as a revision), and mounts
the component with it. An annotator who has answered nothing is first shown a Start button, as
the app shows its instructions (so the load client's sessions take the same steps and the same
random draws on both pages). No progress, no checks.

    FLOOR_DB=sqlite:////tmp/floor.sqlite streamlit run benchmarks/floor_page.py
    # then /?token=<annotator id>; the tables come from ``create_tables``

``FLOOR_DB``: a SQLAlchemy URL (SQLite file or the project's PostgreSQL). Every annotator
answers every item of ``floor_item``; the page shows "Done" after the last. ``FLOOR_ROUTE=1``
(set when ``floor_web.py`` serves this page): the item's data offers the route floor
(``route_of``), to which the load client then sends its answers.
"""

from __future__ import annotations

import os
import time

import streamlit as st
from sqlalchemy import create_engine, event

JS = """export default function ({ data, setTriggerValue, parentElement }) {
  const b = parentElement.querySelector("button");
  b.textContent = "item " + data.item_id;
  b.onclick = () => setTriggerValue("action", {item_id: data.item_id, kind: "answer", value: "1",
    nonce: String(Math.random())});
}"""
NEXT = ("SELECT i.id FROM floor_item i WHERE NOT EXISTS (SELECT 1 FROM floor_answer a "
        "WHERE a.annotator = {p} AND a.item_id = i.id) ORDER BY i.id LIMIT 1")
LAST = "SELECT item_id, value FROM floor_answer WHERE annotator = {p} ORDER BY at DESC LIMIT 1"
INSERT = "INSERT INTO floor_answer (annotator, item_id, value, at) VALUES ({p}, {p}, {p}, {p})"


def route_of(annotator: int) -> dict | None:
    """The route floor's address, as the project's screens offer its answer route."""
    return {"url": "/api/answer", "annotator": annotator, "key": ""} if os.environ.get("FLOOR_ROUTE") else None


def engine_for(url: str):
    """An engine on ``url``; SQLite as the project opens it (WAL, synchronous NORMAL, busy timeout)."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _pragmas(conn, _record):
        cur = conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()
    return engine


def create_tables(url: str, n_items: int) -> None:
    """(Re)create the floor's two tables on ``url`` with ``n_items`` items."""
    engine = engine_for(url)
    with engine.begin() as conn:
        for statement in ("DROP TABLE IF EXISTS floor_answer", "DROP TABLE IF EXISTS floor_item",
                          "CREATE TABLE floor_item (id INTEGER PRIMARY KEY)",
                          "CREATE TABLE floor_answer (annotator INTEGER NOT NULL, item_id INTEGER NOT NULL, "
                          "value TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
                          "CREATE INDEX floor_answer_by_annotator ON floor_answer (annotator, item_id)"):
            conn.exec_driver_sql(statement)
        conn.exec_driver_sql("INSERT INTO floor_item (id) VALUES " + ",".join(f"({k})" for k in range(1, n_items + 1)))
    engine.dispose()


def count_answers(url: str) -> int:
    engine = engine_for(url)
    with engine.connect() as conn:
        n = conn.exec_driver_sql("SELECT count(*) FROM floor_answer").scalar()
    engine.dispose()
    return int(n)


def item_of(engine, sql: dict, annotator: int, *, back: bool) -> dict | None:
    """The item to show: the next unanswered one, or after Back the last answered (a revision)."""
    with engine.connect() as conn:
        if back:
            row = conn.exec_driver_sql(sql["last"], (annotator,)).first()
            return row and {"item_id": row[0], "revising": True, "current": row[1]}
        row = conn.exec_driver_sql(sql["next"], (annotator,)).first()
        return row and {"item_id": row[0], "revising": False, "route": route_of(annotator)}


def main() -> None:
    @st.cache_resource
    def shared():
        engine = engine_for(os.environ["FLOOR_DB"])
        p = "?" if engine.dialect.paramstyle == "qmark" else "%s"
        mount = st.components.v2.component("floor.answer_bar", html="<button></button>", js=JS)
        return engine, mount, {k: v.format(p=p) for k, v in (("next", NEXT), ("last", LAST), ("insert", INSERT))}

    engine, mount, sql = shared()
    try:
        annotator = int(st.query_params.get("token", ""))
    except ValueError:
        st.header("No such link")
        return

    def on_action():
        action = st.session_state["bar"]["action"]
        if action and action.get("nonce") != st.session_state.get("nonce"):
            st.session_state["nonce"] = action["nonce"]
            if action["kind"] == "back":
                st.session_state["back"] = True
            elif action["kind"] == "answer":
                with engine.begin() as conn:
                    conn.exec_driver_sql(sql["insert"], (annotator, int(action["item_id"]), str(action["value"]),
                                                         time.time()))

    item = item_of(engine, sql, annotator, back=st.session_state.pop("back", False))
    if not item:
        st.header("Done")
        return
    if item["item_id"] == 1 and not item["revising"] and not st.session_state.get("started"):
        if not st.button("Start"):   # a new annotator's first screen, as the app's instructions
            st.header("Instructions")
            return
        st.session_state["started"] = True
    mount(key="bar", data=item, on_action_change=on_action)


if __name__ == "__main__":
    main()

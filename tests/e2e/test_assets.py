"""The answer component's scripts and style sheets travel once: the page loads them by path from
``/_stcore/bidi-components/<component>/<file>`` (where the browser caches them), and what an
answer brings is the next item's data (the answer route's reply), not the component's code again.

A real server, driven as a browser tab drives it but without a browser
(``benchmarks.web_session``: Streamlit's own messages over its websocket, the answers posted to
the answer route): the instructions, Start, then three answers, each measured in the bytes of
its reply.
"""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request

import pytest
from browserhelpers import running_app
from sqlmodel import select
from studyhelpers import make_study

from benchmarks.web_session import WebSession
from studyapp.core.models import Item
from studyapp.core.storage import read_session
from studyapp.platform.records import studies
from studyapp.views.components import HERE

pytestmark = pytest.mark.slow
ASSETS = HERE / "assets"


class RecordingSession(WebSession):
    """A tab that also keeps every ``st.components.v2`` element it was sent and every reply of
    the answer route."""

    def __init__(self, *args):
        super().__init__(*args)
        self.components, self.replies = [], []

    def read_delta(self, delta, screen):
        if delta.WhichOneof("type") == "new_element" and delta.new_element.WhichOneof("type") == "bidi_component":
            self.components.append(delta.new_element.bidi_component)
        WebSession.read_delta(delta, screen)

    async def post_json(self, path, body, headers):
        reply = await super().post_json(path, body, headers)
        self.replies.append(reply)
        return reply


async def answer_three(base: str, token: str) -> tuple[RecordingSession, list[int]]:
    """Open the invite link, press Start, answer three items; the session and the bytes each
    answer's run brought."""
    session = RecordingSession(base, f"token={token}")
    try:
        screen = await session.open()
        if screen.start_button:
            screen = await session.press_start()
        received = []
        for value in ("1", "3", "2"):
            assert screen.item, screen.texts
            before = session.bytes_received
            screen = await session.answer(value)
            received.append(session.bytes_received - before)
        return session, received
    finally:
        await session.close()


def served(base: str, component: str, name: str) -> tuple[int, bytes, str]:
    """(status, body, Cache-Control) of one of ``component``'s files as the page fetches it."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/bidi-components/{component}/{name}", timeout=10) as r:
            return r.status, r.read(), r.headers.get("Cache-Control", "")
    except urllib.error.HTTPError as exc:
        return exc.code, b"", ""


def files_loaded_by(script: str) -> set[str]:
    """The files a component's script brings into the page: the modules it imports (and theirs)
    and the style sheets it links (``linkStyles([...])``)."""
    found, todo = set(), [script]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        text = (ASSETS / name).read_text()
        todo += re.findall(r'from "\./([\w.]+\.js)"', text)
        for listed in re.findall(r"linkStyles\(\[([^\]]*)\]\)", text):
            found |= set(re.findall(r'"([\w.]+\.css)"', listed))
    return found


def test_an_answer_brings_the_next_item_but_not_the_component_code_again(tmp_path):
    study = make_study(tmp_path, n_items=5, raters=1, extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    script = (ASSETS / "answer_bar.js").stat().st_size
    code = sum((ASSETS / f).stat().st_size for f in files_loaded_by("answer_bar.js"))
    assert script > 4000 and code > 25000   # what an answer would carry if the code went with it
    with running_app(tmp_path) as base:
        session, received = asyncio.run(answer_three(base, invite.token))
        bars = [c for c in session.components if c.component_name == "studyapp.answer_bar"]
        assert len(bars) == 1   # the first item's screen; the answers go to the answer route
        # the mount names the files and carries none of their text
        assert {(c.js_source_path, c.js_content, c.css_content) for c in bars} == {("answer_bar.js", "", "")}
        # each answer's reply is the next item's screen as data, well under the script alone
        with read_session() as db:
            ids = db.exec(select(Item.id).where(Item.study_id == study).order_by(Item.position)).all()
        assert [r["data"]["item_id"] for r in session.replies] == ids[1:4]
        assert all(0 < r < script for r in received), received
        # the files the page loads, as the server serves them: each the file in the package,
        # cacheable; nothing but the asset folder is served
        for name in sorted(files_loaded_by("answer_bar.js") | files_loaded_by("mark_form.js")):
            component = "studyapp.mark_form" if name.startswith("mark_form") else "studyapp.answer_bar"
            status, body, cache = served(base, component, name)
            assert (status, body, cache) == (200, (ASSETS / name).read_bytes(), "public"), name
        assert served(base, "studyapp.page_style", "page.css")[:2] == (200, (ASSETS / "page.css").read_bytes())
        assert served(base, "studyapp.answer_bar", "__init__.py")[0] == 404
        assert served(base, "studyapp.answer_bar", "../__init__.py")[0] in (400, 404)

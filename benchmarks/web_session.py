"""One annotator's browser session without a browser: Streamlit's own protocol messages over
``/_stcore/stream`` (``streamlit.proto``: ``BackMsg`` up, ``ForwardMsg`` down), as the page
sends and reads them.

A session first loads the page over HTTP (``GET /?token=...``, which gives it the load
balancer's affinity cookie, as a browser gets it), then opens the websocket with that cookie and
asks for a script run with the invite link's query string. It reads what the page draws: the
"Start" button of the instructions, and the item screen (the answer component, ``studyapp.
answer_bar``, whose data name the item on screen). An answer is what the component sends on a
key press: when the screen offers the answer route (``route`` in its data), a ``POST`` of the
press as JSON to the route, over one kept-alive HTTP connection per tab, whose reply is the
next screen's data (``{"page": true}``: a run of the page follows, as the component asks for
one); else its trigger ``action`` = ``{item_id, kind, value, comment, nonce}`` in a rerun
request, with the widget states the page holds.

    session = WebSession("http://127.0.0.1:8501", "token=...")
    screen = await session.open()          # instructions or the first item
    screen = await session.press_start()   # the first item
    screen = await session.answer(3)       # the next item's screen
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

TRIGGER_PREFIX = "$$STREAMLIT_INTERNAL_KEY_"  # a component's trigger widget: PREFIX + id + "__events"
RUN_TIMEOUT_S = 60.0
AFFINITY_COOKIE = "STUDYAPP_INSTANCE"  # the balancer's (deploy/haproxy.cfg)
# the item screen's components (studyapp.views.components, and the bare page of
# benchmarks/floor_page.py); the end pages' focus component and the like carry no item
SCREEN_COMPONENTS = ("studyapp.answer_bar", "studyapp.mark_form", "floor.answer_bar")


class SessionError(RuntimeError):
    """The server closed the session, refused it, or did not answer in time."""


@dataclass
class Screen:
    """What one script run drew: the item screen's data (``item``: the answer component's
    ``data``, naming ``item_id``), the Start button's widget id, the headings, alerts and
    exceptions' texts."""
    item: dict | None = None
    component_id: str | None = None
    start_button: str | None = None
    texts: list[str] = field(default_factory=list)
    finished: bool = False
    data_at: float | None = None   # time.monotonic() when the item screen's data arrived

    @property
    def item_id(self) -> int | None:
        return int(self.item["item_id"]) if self.item else None


async def http_get_cookies(base: str, path_query: str, cookies: dict[str, str]) -> dict[str, str]:
    """``GET`` the page as a browser loads it; the cookies the response sets (the balancer's
    affinity cookie among them) are added to ``cookies``."""
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port or 80)
    try:
        head = (f"GET {path_query} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n"
                f"User-Agent: studyapp-load-web\r\n")
        if cookies:
            head += "Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()) + "\r\n"
        writer.write((head + "\r\n").encode())
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), RUN_TIMEOUT_S)
        lines = header.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "set-cookie":
                key, _, val = value.strip().split(";", 1)[0].partition("=")
                cookies[key.strip()] = val.strip()
            elif name == "content-length":
                length = int(value)
        await asyncio.wait_for(reader.readexactly(length), RUN_TIMEOUT_S)   # the page, as a browser reads it
    finally:
        writer.close()
    if " 200 " not in lines[0] + " ":
        raise SessionError(f"GET {path_query}: {lines[0]}")
    return cookies


class WebSession:
    """An annotator's tab: one websocket (re-opened by :meth:`reload`), its widget states."""

    def __init__(self, base: str, query_string: str):
        self.base = base.rstrip("/")
        self.query_string = query_string
        self.cookies: dict[str, str] = {}
        self.ws = None
        self.page_hash = ""
        self.screen = Screen()
        self.bytes_received = 0
        self.instance_changes = 0   # reloads the balancer sent to another instance than before
        self.http = None            # (reader, writer) of the kept-alive connection for the route

    async def open(self) -> Screen:
        """Load the page and run its script (a new tab, or a reload of this one)."""
        await self.close()
        before = self.cookies.get(AFFINITY_COOKIE)
        await http_get_cookies(self.base, "/?" + self.query_string, self.cookies)
        self.instance_changes += before is not None and self.cookies.get(AFFINITY_COOKIE) != before
        ws_url = "ws" + self.base[4:] + "/_stcore/stream"
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else None
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], additional_headers=headers,
                                           max_size=2**24, open_timeout=RUN_TIMEOUT_S, ping_interval=None)
        self.page_hash = ""
        return await self.rerun([])

    async def reload(self) -> Screen:
        return await self.open()

    async def close(self) -> None:
        if self.ws is not None:
            ws, self.ws = self.ws, None
            await ws.close()
        if self.http is not None:
            (_reader, writer), self.http = self.http, None
            writer.close()

    async def press_start(self) -> Screen:
        if not self.screen.start_button:
            raise SessionError(f"no Start button on screen: {self.screen.texts[:3]}")
        state = WidgetState(id=self.screen.start_button, trigger_value=True)
        return await self.rerun([state])

    async def answer(self, value, item_id: int | None = None) -> Screen:
        """Press the key of ``value`` on the item screen (the answer names the item shown)."""
        return await self.action("answer", value, item_id)

    async def back(self) -> Screen:
        return await self.action("back", None)

    async def action(self, kind: str, value, item_id: int | None = None) -> Screen:
        screen = self.screen
        if not screen.item:
            raise SessionError(f"no item screen to act on: {screen.texts[:3]}")
        # as the page does: a press waits for the seen floor, and says how long the item was shown
        floor_s = float(screen.item.get("min_seen_ms", 0)) / 1000
        shown_s = time.monotonic() - (screen.data_at or time.monotonic())
        if shown_s < floor_s:
            await asyncio.sleep(floor_s - shown_s)
            shown_s = floor_s
        payload = {"item_id": item_id if item_id is not None else screen.item["item_id"], "kind": kind,
                   "value": value, "comment": None, "nonce": secrets.token_hex(8), "not_applied": [],
                   "seen_ms": round(shown_s * 1000), "in_view": True,
                   "position": screen.item.get("position")}
        route = screen.item.get("route")
        if route and kind == "answer":
            reply = await self.post_json(route["url"], {**payload, "annotator": route["annotator"]},
                                         {"X-Studyapp-Key": route["key"]})
            if reply is not None and reply.get("data"):
                self.screen = Screen(item=reply["data"], component_id=screen.component_id, finished=True,
                                     data_at=time.monotonic())
                return self.screen
            if reply is not None and reply.get("page"):
                payload = {"kind": "refresh", "item_id": payload["item_id"], "nonce": payload["nonce"]}
        state = WidgetState(id=screen.component_id, json_value="{}")  # the component's own (empty) state
        trigger = WidgetState(id=f"{TRIGGER_PREFIX}{screen.component_id}__events",
                              json_trigger_value=json.dumps([{"event": "action", "value": payload}]))
        return await self.rerun([state, trigger])

    async def post_json(self, path: str, body: dict, headers: dict[str, str]) -> dict | None:
        """``POST`` ``body`` as JSON to ``path`` as the page's ``fetch`` does (same origin, the
        tab's cookies); the reply's JSON, or None for a status other than 200 (the component
        then sends the press the page's own way)."""
        url = urlsplit(self.base)
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nOrigin: {self.base}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                "Sec-Fetch-Site: same-origin\r\nUser-Agent: studyapp-load-web\r\n")
        if self.cookies:
            head += "Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()) + "\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        for attempt in range(2):   # a kept-alive connection the server closed: opened again
            if self.http is None:
                self.http = await asyncio.open_connection(url.hostname, url.port or 80)
            reader, writer = self.http
            try:
                writer.write((head + "\r\n").encode() + data)
                await writer.drain()
                header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), RUN_TIMEOUT_S)
                lines = header.decode("latin-1").split("\r\n")
                length = next((int(line.partition(":")[2]) for line in lines[1:]
                               if line.lower().startswith("content-length:")), 0)
                reply = await asyncio.wait_for(reader.readexactly(length), RUN_TIMEOUT_S)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                writer.close()
                self.http = None
                if attempt:
                    raise SessionError(f"POST {path}: the connection closed") from None
                continue
            except TimeoutError:
                raise SessionError(f"POST {path}: no reply within {RUN_TIMEOUT_S:.0f} s") from None
            self.bytes_received += len(header) + len(reply)
            if any(line.lower() == "connection: close" for line in lines):
                writer.close()
                self.http = None
            return json.loads(reply) if lines[0].split()[1] == "200" else None
        return None

    async def rerun(self, widgets: list[WidgetState]) -> Screen:
        """Ask for a script run with ``widgets``; returns what it drew once it finished."""
        msg = BackMsg(rerun_script=ClientState(query_string=self.query_string,
                                               page_script_hash=self.page_hash))
        msg.rerun_script.widget_states.widgets.extend(widgets)
        msg.rerun_script.context_info.timezone = "UTC"
        msg.rerun_script.context_info.url = f"{self.base}/?{self.query_string}"
        await self.ws.send(msg.SerializeToString())
        return await self.read_run()

    async def read_run(self) -> Screen:
        """Read forward messages until the script run ends."""
        screen = Screen()
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), max(deadline - time.monotonic(), 0.01))
            except TimeoutError:
                raise SessionError(f"no script_finished within {RUN_TIMEOUT_S:.0f} s") from None
            except websockets.ConnectionClosed as exc:
                raise SessionError(f"connection closed ({exc.code})") from None
            self.bytes_received += len(raw)
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            elif kind == "delta":
                self.read_delta(fwd.delta, screen)
            elif kind == "script_finished":
                if fwd.script_finished in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                           ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                    screen.finished = True
                    self.screen = screen
                    return screen
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise SessionError("the page did not compile")
                # FINISHED_EARLY_FOR_RERUN: a callback's st.rerun(); the next run follows
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string

    @staticmethod
    def read_delta(delta, screen: Screen) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "bidi_component" and element.bidi_component.component_name in SCREEN_COMPONENTS:
            screen.item = json.loads(element.bidi_component.json) if element.bidi_component.json else {}
            screen.component_id = element.bidi_component.id
            screen.data_at = time.monotonic()
        elif kind == "button" and element.button.label.startswith("Start"):
            screen.start_button = element.button.id
        elif kind == "heading":
            screen.texts.append(element.heading.body)
        elif kind == "alert":
            screen.texts.append(element.alert.body)
        elif kind == "exception":
            screen.texts.append("exception: " + element.exception.message)

"""A small OpenAI-compatible chat-completions client on the standard library (``http.client``).

One persistent (keep-alive) connection per worker thread and endpoint; every request is bounded
by the endpoint's ``timeout`` (per socket operation). :meth:`ChatClient.rate` sends one rating
request and retries with exponential backoff (``backoff · 2^k``, capped at ``max_backoff``;
``Retry-After`` of a 429/503 is honoured up to the cap) on

- timeouts and connection errors,
- HTTP 408, 409, 429 and 5xx,
- replies that are not a chat-completions JSON body, and
- *malformed* replies (not exactly the integer(s) asked for, see :mod:`metrics.llm._prompt`).

When the retries are used up the outcome is ``missing`` (no score is guessed). HTTP 400, 401,
403 and 404 are configuration errors, not flukes: they raise :class:`EndpointError`, which stops
the run (answers already cached stay cached). The API key is sent in the ``Authorization``
header only; it never appears in an error message.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from metrics.llm._config import Endpoint, Model
from metrics.llm._prompt import MalformedReply, parse_reply

FATAL_STATUS = {400, 401, 403, 404, 405, 422}


class EndpointError(RuntimeError):
    """A non-retryable endpoint failure (bad URL, key or model id): the run stops."""


@dataclass
class Outcome:
    """The final result of one request (one pair, or a batch of pairs)."""

    scores: list[int | None]
    reply: str | None
    attempts: int
    seconds: float
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


class _Throttle:
    """At most ``per_minute`` request starts per minute on one endpoint (0 = unlimited)."""

    def __init__(self, per_minute: float):
        self.interval = 60.0 / per_minute if per_minute and per_minute > 0 else 0.0
        self.lock = threading.Lock()
        self.next_at = 0.0

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_at)
            self.next_at = start + self.interval
        if start > now:
            time.sleep(start - now)


class ChatClient:
    """Rating requests to one endpoint; thread-safe (a connection per thread)."""

    def __init__(self, endpoint: Endpoint, sleep=time.sleep):
        self.endpoint = endpoint
        parts = urlsplit(endpoint.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(f"endpoint {endpoint.name}: bad base_url {endpoint.base_url!r}")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._local = threading.local()
        self._throttle = _Throttle(endpoint.requests_per_minute)
        self._sleep = sleep
        key = endpoint.api_key()
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"

    # ------------------------------------------------------------------ transport
    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.endpoint.timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def post(self, body: dict) -> tuple[int, dict, bytes]:
        """One POST; returns (status, lower-cased headers, body). Network errors propagate."""
        self._throttle.wait()
        payload = json.dumps(body).encode()
        conn = self._connection()
        try:
            conn.request("POST", self._path, body=payload, headers=self._headers)
            resp = conn.getresponse()
            data = resp.read()
        except BaseException:
            self._drop_connection()
            raise
        headers = {k.lower(): v for k, v in resp.getheaders()}
        if resp.will_close:
            self._drop_connection()
        return resp.status, headers, data

    # ------------------------------------------------------------------ rating
    def _post_once(self, body: dict, failures: list[str]):
        """(status, headers, body) of one POST, or None after a network failure (added to ``failures``)."""
        try:
            return self.post(body)
        except TimeoutError:
            failures.append("timeout")
        except (OSError, http.client.HTTPException) as exc:
            failures.append(f"connection: {type(exc).__name__}")
        return None

    def _http_failure(self, model: Model, status: int, headers: dict, data: bytes,
                      failures: list[str]) -> float | None:
        """Record a non-200 reply and return its Retry-After; a fatal status raises EndpointError."""
        if status in FATAL_STATUS:
            detail = data[:200].decode("utf-8", "replace").replace("\n", " ")
            raise EndpointError(f"endpoint {self.endpoint.name} ({model.name}): HTTP {status}: {detail}")
        failures.append(f"HTTP {status}")
        return _retry_after(headers.get("retry-after"))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before the next attempt: doubling, at least Retry-After, at most max_backoff."""
        ep = self.endpoint
        delay = min(ep.max_backoff, ep.backoff * 2 ** attempt)
        if retry_after is not None:
            delay = min(ep.max_backoff, max(delay, retry_after))
        return delay

    def rate(self, model: Model, messages: list[dict], n_pairs: int = 1) -> Outcome:
        """Send one rating request with retries; returns the final :class:`Outcome`."""
        ep = self.endpoint
        body = {"model": model.model_id, "messages": messages, "temperature": model.temperature,
                "max_tokens": model.max_tokens * n_pairs if n_pairs > 1 else model.max_tokens,
                **model.extra}
        start = time.perf_counter()
        failures: list[str] = []
        reply = None
        for attempt in range(ep.retries + 1):
            retry_after = None
            response = self._post_once(body, failures)
            if response is not None:
                status, headers, data = response
                if status != 200:
                    retry_after = self._http_failure(model, status, headers, data, failures)
                else:
                    content, answer = _read_answer(data, n_pairs, failures)
                    if content is not _UNREAD:
                        reply = content
                    if answer is not None:
                        scores, usage = answer
                        return Outcome(list(scores), reply, attempt + 1, time.perf_counter() - start,
                                       prompt_tokens=_count(usage.get("prompt_tokens")),
                                       completion_tokens=_count(usage.get("completion_tokens")),
                                       failures=failures)
            if attempt < ep.retries:
                self._sleep(self._backoff(attempt, retry_after))
        return Outcome([None] * n_pairs, reply, ep.retries + 1, time.perf_counter() - start,
                       error=failures[-1], failures=failures)


_UNREAD = object()   # the reply's content could not be reached in the body


def _read_answer(data: bytes, n_pairs: int, failures: list[str]):
    """Read a 200 body: ``(content or _UNREAD, (scores, usage) or None)``; a failure is added to ``failures``."""
    content = _UNREAD
    try:
        parsed = json.loads(data)
        content = parsed["choices"][0]["message"]["content"]
        usage = parsed.get("usage") or {}
        if not isinstance(content, (str, type(None))) or not isinstance(usage, dict):
            raise TypeError("content is not text, or usage not an object")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        failures.append("bad JSON body")
        return content, None
    try:
        scores = parse_reply(content, n_pairs)
    except MalformedReply:
        failures.append("malformed reply")
        return content, None
    return content, (scores, usage)


def _count(value) -> int | None:
    """A token count the endpoint reported, when it is a whole number ≥ 0 (else unknown)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None

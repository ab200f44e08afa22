"""A deterministic OpenAI-compatible chat-completions server on loopback, for tests, benchmarks
and offline demos of ``matrix build-llm``. It binds to 127.0.0.1 only.

It reads the rating prompt of :mod:`metrics.llm._prompt` (the ``A:`` / ``B:`` lines of each pair)
and answers with a score that depends only on the model name and the two descriptions, skewed to
0 like real ratings of WordNet neighbourhoods. ``behaviour(model, pair, attempt)`` can replace an
answer with a failure — ``Reply(text)`` (e.g. malformed), ``Status(code)`` (429, 500, 401 …),
``Stall(seconds)`` (sleep past the client's timeout), ``BadBody(data)`` (these bytes as the
response body; default not JSON) — to exercise retries and the client's reading of replies.
Every request is counted per (model, pair) so a test can check exactly what was sent.

    python -m metrics.llm._loopback_server --port 8765 [--delay 0.01]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_PAIR = re.compile(r"^A: (.*)\nB: (.*)$", re.M)


@dataclass
class Reply:
    text: str


@dataclass
class Status:
    code: int
    retry_after: float | None = None


@dataclass
class Stall:
    seconds: float


@dataclass
class BadBody:
    data: bytes = b"{not json"


def pair_key(desc_a: str, desc_b: str) -> tuple[str, str]:
    return (desc_a, desc_b) if desc_a <= desc_b else (desc_b, desc_a)


def default_score(model: str, pair: tuple[str, str]) -> int:
    """0 for 60 % of pairs, then 1, 2, 3, 4 for 10 % each (a hash of model and pair)."""
    h = int(hashlib.sha256(f"{model}\x00{pair[0]}\x00{pair[1]}".encode()).hexdigest()[:8], 16) % 10
    return max(0, h - 5)


def _completion(model: str, content: str, text: str, n_pairs: int) -> dict:
    """An OpenAI chat-completion body answering ``text``, with token counts from the prompt's length."""
    return {
        "id": "chatcmpl-loopback", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": len(content) // 4, "completion_tokens": 1 + n_pairs * 2,
                  "total_tokens": len(content) // 4 + 1 + n_pairs * 2}}


class _Handler(BaseHTTPRequestHandler):
    """One request to the :class:`LoopbackLLM` found as ``self.server.llm``."""

    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # headers and body are two writes: no 40 ms delayed-ACK stall

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        server = self.server.llm
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        server.auth.add(self.headers.get("Authorization"))
        if not self.path.endswith("/chat/completions"):
            return self._send(404, {"error": {"message": "not found"}})
        try:
            body = json.loads(raw)
            model = body["model"]
            content = body["messages"][-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return self._send(400, {"error": {"message": "bad request"}})
        pairs = [pair_key(a, b) for a, b in _PAIR.findall(content)]
        attempts = server._count(model, pairs)
        if server.delay:
            time.sleep(server.delay)
        action = server._failure(model, pairs, attempts)
        if isinstance(action, Status):
            headers = {"Retry-After": str(action.retry_after)} if action.retry_after is not None else {}
            return self._send(action.code, {"error": {"message": f"status {action.code}"}}, headers)
        if isinstance(action, BadBody):
            return self._raw(200, action.data)
        text = action.text if isinstance(action, Reply) else server._scores_text(model, pairs)
        self._send(200, _completion(model, content, text, len(pairs)))

    def _send(self, code, payload, headers=None):
        self._raw(code, json.dumps(payload).encode(), headers)

    def _raw(self, code, data, headers=None):
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    llm: LoopbackLLM


class LoopbackLLM:
    """The server; use as a context manager or call start()/stop()."""

    def __init__(self, port: int = 0, delay: float = 0.0, score=default_score, behaviour=None):
        self.delay = delay
        self.score = score
        self.behaviour = behaviour
        self.lock = threading.Lock()
        self.requests = 0
        self.per_pair: Counter = Counter()      # (model, pair) -> requests that named it
        self.answered: Counter = Counter()      # (model, pair) -> valid score replies sent
        self.auth: set = set()
        self.log: list[tuple[str, tuple]] = []
        self.httpd = _Server(("127.0.0.1", port), _Handler)
        self.httpd.llm = self
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread: threading.Thread | None = None

    def _count(self, model: str, pairs: list) -> list[int]:
        """Count a request naming ``pairs``; returns how many earlier requests named each."""
        with self.lock:
            self.requests += 1
            attempts = [self.per_pair[(model, p)] for p in pairs]
            for p in pairs:
                self.per_pair[(model, p)] += 1
            self.log.append((model, tuple(pairs)))
        return attempts

    def _failure(self, model: str, pairs: list, attempts: list):
        """The behaviour's action for the first pair (a Stall is slept here), or None."""
        action = None
        if self.behaviour is not None and pairs:
            action = self.behaviour(model, pairs[0], attempts[0])
        if isinstance(action, Stall):
            time.sleep(action.seconds)
            action = None
        return action

    def _scores_text(self, model: str, pairs: list) -> str:
        """The valid reply: one score, or ``k: score`` lines for a batch; counted as answered."""
        scores = [self.score(model, p) for p in pairs]
        text = str(scores[0]) if len(pairs) == 1 else "\n".join(
            f"{k}: {s}" for k, s in enumerate(scores, 1))
        with self.lock:
            for p in pairs:
                self.answered[(model, p)] += 1
        return text

    def start(self) -> LoopbackLLM:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds of simulated latency per request")
    args = parser.parse_args()
    server = LoopbackLLM(args.port, args.delay)
    print(f"loopback LLM on {server.base_url} (Ctrl-C stops it)", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

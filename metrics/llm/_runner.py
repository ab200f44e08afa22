"""Resumable, concurrent execution of a plan's requests.

Requests go to each endpoint through its own thread pool of ``concurrency`` workers (models
sharing an endpoint share its limit), ``batch_size`` pairs per request; the main thread writes
each answer to the :class:`~metrics.llm._cache.AnswerCache` as it arrives and prints progress
(done / total, requests per second, ETA, missing) to stderr.
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from metrics.core._constraints import POSITIVE, Boolean, validate_params
from metrics.llm import _prompt as prompt
from metrics.llm._cache import AnswerCache, key
from metrics.llm._client import ChatClient
from metrics.llm._config import Config, Model
from metrics.llm._pairs import POS_NAME


# ---------------------------------------------------------------------- progress
class Progress:
    """Throttled one-line progress reports on a stream (stderr by default)."""

    def __init__(self, label: str, total: int, stream=None, interval: float = 2.0):
        self.label, self.total, self.interval = label, total, interval
        self.stream = stream if stream is not None else sys.stderr
        self.done = self.missing = self.requests = 0
        self.start = self.last = time.perf_counter()

    def update(self, pairs: int, missing: int) -> None:
        self.done += pairs
        self.missing += missing
        self.requests += 1
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self.last = now
            self.report()

    def report(self, final: bool = False) -> None:
        if self.stream is None or self.stream is False:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        rate = self.requests / elapsed
        left = self.total - self.done
        eta = left / (self.done / elapsed) if self.done else float("nan")
        tail = f"done in {elapsed:.1f} s" if final else f"ETA {duration_text(eta)}"
        print(f"[{self.label}] {self.done}/{self.total} pairs ({self.done / max(self.total, 1):.0%}), "
              f"{rate:.1f} req/s, {self.missing} missing, {tail}", file=self.stream, flush=True)


def duration_text(seconds: float) -> str:
    """A duration as a person reads it.

    >>> duration_text(75), duration_text(3700), duration_text(float("inf"))
    ('1m15s', '1h01m', '?')
    """
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


# ---------------------------------------------------------------------- execution
class Runner:
    """Executes model plans against their endpoints, caching every answer as it arrives."""

    @validate_params({"retry_missing": Boolean(), "progress_interval": POSITIVE})
    def __init__(self, config: Config, cache: AnswerCache, *, retry_missing: bool = False,
                 progress_stream=None, progress_interval: float = 2.0, sleep=time.sleep):
        self.config = config
        self.cache = cache
        self.retry_missing = retry_missing
        self.progress_stream = progress_stream
        self.progress_interval = progress_interval
        self.clients = {name: ChatClient(ep, sleep=sleep) for name, ep in config.endpoints.items()}
        self.sent: dict[str, int] = {}

    def version(self, model: Model) -> str:
        return prompt.prompt_version(self.config.endpoint_of(model).batch_size)

    def pending(self, model: Model, pairs) -> list[tuple[str, str]]:
        """Pairs without a cached answer (missing ones too with ``retry_missing``)."""
        done = self.cache.answers(model.name, self.version(model))
        return [p for p in pairs if key(*p) not in done
                or (self.retry_missing and done[key(*p)] is None)]

    def _batches(self, plans) -> list[tuple[Model, list]]:
        """The pending pairs of each (model, pairs), cut into batches of the endpoint's size."""
        jobs: list[tuple[Model, list]] = []
        for model, pairs in plans:
            todo = self.pending(model, pairs)
            size = self.config.endpoint_of(model).batch_size
            jobs.extend((model, todo[k:k + size]) for k in range(0, len(todo), size))
        return jobs

    @staticmethod
    def _endpoint_queues(jobs, endpoints) -> dict[str, list]:
        """The batches of each endpoint, reversed so that pop() from the end keeps plan order."""
        queues: dict[str, list] = {name: [] for name in endpoints}
        for job in jobs:
            queues[job[0].endpoint].append(job)
        for q in queues.values():
            q.reverse()
        return queues

    def _submit_ready(self, queues, executors, limit, in_flight, per_endpoint, pos) -> None:
        """Submit queued batches until each endpoint has its in-flight limit."""
        for name, q in queues.items():
            while q and per_endpoint[name] < limit[name]:
                model, chunk = q.pop()
                messages = prompt.messages(chunk, pos)
                fut = executors[name].submit(self.clients[name].rate, model, messages, len(chunk))
                in_flight[fut] = (model, chunk)
                per_endpoint[name] += 1

    def _store_done(self, done, in_flight, per_endpoint, sent, progress) -> None:
        """Store the answers of finished batches; a fatal error is raised after the others are stored."""
        for fut in sorted(done, key=lambda f: f.exception() is not None):
            model, chunk = in_flight.pop(fut)
            per_endpoint[model.endpoint] -= 1
            outcome = fut.result()          # EndpointError propagates and stops the run
            sent[model.name] += outcome.attempts
            self._store(model, chunk, outcome)
            progress.update(len(chunk), 0 if outcome.ok else len(chunk))

    def _pump(self, queues, executors, sent, progress, pos) -> None:
        """Keep every endpoint busy until all batches are answered; on any error cancel the rest."""
        limit = {name: 2 * ep.concurrency for name, ep in self.config.endpoints.items()}
        in_flight: dict[Future, tuple] = {}
        per_endpoint = {name: 0 for name in executors}
        try:
            while in_flight or any(queues.values()):
                self._submit_ready(queues, executors, limit, in_flight, per_endpoint, pos)
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                self._store_done(done, in_flight, per_endpoint, sent, progress)
        except BaseException:
            for fut in in_flight:
                fut.cancel()
            for ex in executors.values():
                ex.shutdown(wait=False, cancel_futures=True)
            raise

    def run(self, plans: list[tuple[Model, list[tuple[str, str]]]], pos: str) -> dict[str, int]:
        """Rate the pending pairs of each (model, pairs); returns requests sent per model."""
        jobs = self._batches(plans)
        sent = {model.name: 0 for model, _ in plans}
        if not jobs:
            return sent
        label = f"{POS_NAME[pos]}: " + ", ".join(m.name for m, _ in plans)
        progress = Progress(label, sum(len(chunk) for _, chunk in jobs), self.progress_stream,
                            self.progress_interval)
        executors = {name: ThreadPoolExecutor(ep.concurrency, thread_name_prefix=f"llm-{name}")
                     for name, ep in self.config.endpoints.items()}
        queues = self._endpoint_queues(jobs, executors)
        self._pump(queues, executors, sent, progress, pos)
        for ex in executors.values():
            ex.shutdown(wait=True)
        progress.report(final=True)
        for name, n in sent.items():
            self.sent[name] = self.sent.get(name, 0) + n
        return sent

    def _store(self, model: Model, chunk, outcome) -> None:
        n = len(chunk)
        for (a, b), score in zip(chunk, outcome.scores):
            self.cache.put(model.name, self.version(model), a, b, score, reply=outcome.reply,
                           error=outcome.error, attempts=outcome.attempts, seconds=outcome.seconds / n,
                           prompt_tokens=None if outcome.prompt_tokens is None else outcome.prompt_tokens / n,
                           completion_tokens=None if outcome.completion_tokens is None
                           else outcome.completion_tokens / n)

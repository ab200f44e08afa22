"""Candidate pairs, the multi-model plan and its resumable, concurrent execution.

Candidate pairs (SHOE §4.1): every dataset synset against every synset of its WordNet
neighbourhood — verbs one hypernym / hyponym / sibling / verb-group / entailment link away,
objects their parents, children and siblings (the candidate functions of
:mod:`metrics.vocab._baseline`) — or the pairs of a CSV file (``a,b``). A pair is unordered: the
dataset synset is shown first, a pair is asked once.

The plan (§4.1, §4.2):

1. the **first model** rates every pair;
2. with ``plan.filter`` on, each other model rates only the pairs the first model scored above
   ``plan.filter_threshold`` (pairs whose first answer is missing are kept: nothing is dropped
   on a missing answer), plus a **control set**: ``plan.control_size`` pairs drawn (seeded) from
   those the first model filtered out. The control answers measure what the filter dropped
   (per-model disagreement rate, §4.2); they do not enter the matrix, which keeps the filter's
   decision for every filtered pair so all filtered pairs are treated alike.

Execution: requests go to each endpoint through its own thread pool of ``concurrency`` workers
(models sharing an endpoint share its limit), ``batch_size`` pairs per request; the main thread
writes each answer to the :class:`~metrics.llm._cache.AnswerCache` as it arrives and prints
progress (done / total, requests per second, ETA, missing) to stderr.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.llm import _prompt as prompt
from metrics.llm._cache import AnswerCache, key
from metrics.llm._client import ChatClient, EndpointError
from metrics.llm._config import Config, Model
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._baseline import object_candidates, verb_candidates

POS_NAME = {"v": "verb", "n": "object"}


@dataclass
class PairSet:
    """The unordered pairs to rate for one part of speech, and the matrix labels."""

    pos: str
    labels: list[str]
    pairs: list[tuple[str, str]]
    source: str
    n_seeds: int = 0


def candidate_pairs(seeds: list[str], pos: str, *, source: str = "") -> PairSet:
    """Each dataset synset against its WordNet neighbourhood (``metrics.vocab._baseline``)."""
    seeds = list(dict.fromkeys(seeds))
    for s in seeds:
        if wordnet.pos_of(s) != pos:
            raise InputError(f"{s} is not a {POS_NAME[pos]} synset")
    labels = verb_candidates(seeds) if pos == "v" else object_candidates(seeds)
    seen: set[tuple[str, str]] = set()
    pairs = []
    for s in seeds:
        for c in labels:
            k = key(s, c)
            if s != c and k not in seen:
                seen.add(k)
                pairs.append((s, c))
    return PairSet(pos, labels, pairs, source or "wordnet neighbourhood", len(seeds))


def pairs_from_file(path: str | Path, pos: str) -> PairSet:
    """Pairs of a CSV with columns ``a,b`` (synset names of one part of speech)."""
    from metrics.core._inputs import line_of, read_csv

    path = Path(path)
    df = read_csv(path, required=("a", "b"))
    seen: set[tuple[str, str]] = set()
    pairs, labels = [], {}
    for k, (a, b) in enumerate(zip(df["a"].str.strip(), df["b"].str.strip())):
        for s in (a, b):
            if not wordnet.is_synset_name(s):
                raise InputError(f"{path}: line {line_of(path, k)}: {s!r} is not a WordNet synset name")
            if wordnet.pos_of(s) != pos:
                raise InputError(f"{path}: line {line_of(path, k)}: {s} is not a {POS_NAME[pos]} synset")
        pair = key(a, b)
        if a != b and pair not in seen:
            seen.add(pair)
            pairs.append((a, b))
            labels.update(dict.fromkeys((a, b)))
    if not pairs:
        raise InputError(f"{path}: no pair of two different synsets")
    return PairSet(pos, list(labels), pairs, str(path))


# ---------------------------------------------------------------------- plan
@dataclass
class ModelPlan:
    model: Model
    pairs: list[tuple[str, str]]
    role: str                        # "all" (first model / no filter) or "filtered"
    control: list[tuple[str, str]] = field(default_factory=list)


def control_sample(zero_pairs: list[tuple[str, str]], size: int, seed: int) -> list[tuple[str, str]]:
    """``size`` pairs drawn without replacement (seeded) from the filtered-out pairs, in plan order."""
    if size <= 0 or not zero_pairs:
        return []
    if size >= len(zero_pairs):
        return list(zero_pairs)
    pick = np.sort(np.random.default_rng(seed).choice(len(zero_pairs), size, replace=False))
    return [zero_pairs[i] for i in pick]


def split_by_filter(pairs, first_answers: dict, threshold: float):
    """(kept, filtered_out): kept = scored above threshold or missing / not yet rated."""
    kept: list[tuple[str, str]] = []
    dropped: list[tuple[str, str]] = []
    for p in pairs:
        score = first_answers.get(key(*p))
        (dropped if score is not None and score <= threshold else kept).append(p)
    return kept, dropped


def other_plans(config: Config, pairs, first_answers: dict) -> tuple[list[ModelPlan], list, list]:
    """Plans of the models after the first, given the first model's answers."""
    plan = config.plan
    if not plan.filter:
        return [ModelPlan(m, list(pairs), "all") for m in config.models[1:]], list(pairs), []
    kept, dropped = split_by_filter(pairs, first_answers, plan.filter_threshold)
    control = control_sample(dropped, plan.control_size, plan.control_seed)
    return [ModelPlan(m, kept + control, "filtered", control) for m in config.models[1:]], kept, control


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


# ---------------------------------------------------------------------- whole pipeline
@dataclass
class Ratings:
    """Answers of every model for one part of speech.

    ``table`` has one row per pair (index ``a, b`` in plan order), a column per model with the
    0–4 score actually given (NaN = not asked or missing), and ``role``: ``kept`` (asked of every
    model), ``control`` (filtered out by the first model, re-rated as a control) or ``filtered``.
    """

    pos: str
    pairs: PairSet
    models: list[str]
    table: pd.DataFrame
    asked: dict[str, int]
    missing: dict[str, int]
    filtered: bool
    threshold: float


def collect(config: Config, cache: AnswerCache, runner: Runner, pairs: PairSet, kept, control) -> Ratings:
    first = config.models[0]
    rows = pd.MultiIndex.from_tuples(pairs.pairs, names=["a", "b"])
    table = pd.DataFrame(index=rows)
    kept_keys = {key(*p) for p in kept}
    control_keys = {key(*p) for p in control}
    filtered = config.plan.filter and len(config.models) > 1
    table["role"] = ["kept" if not filtered or key(*p) in kept_keys else
                     "control" if key(*p) in control_keys else "filtered" for p in pairs.pairs]
    asked, missing = {}, {}
    for m in config.models:
        answers = cache.answers(m.name, runner.version(m))
        wanted = pairs.pairs if m is first or not filtered else \
            [p for p, r in zip(pairs.pairs, table["role"]) if r != "filtered"]
        wanted_keys = {key(*p) for p in wanted}
        col = [answers.get(key(*p)) if key(*p) in wanted_keys else None for p in pairs.pairs]
        table[m.name] = pd.array(col, dtype="Float64").astype(float)
        asked[m.name] = len(wanted)
        missing[m.name] = int(sum(1 for p in wanted if answers.get(key(*p)) is None))
    return Ratings(pairs.pos, pairs, [m.name for m in config.models], table, asked, missing,
                   filtered, config.plan.filter_threshold)


def rate_pairs(config: Config, cache: AnswerCache, runner: Runner, pairs: PairSet) -> Ratings:
    """Run the plan for one part of speech (resuming from the cache) and collect the answers."""
    first = config.models[0]
    try:
        runner.run([(first, pairs.pairs)], pairs.pos)
        first_answers = cache.answers(first.name, runner.version(first))
        plans, kept, control = other_plans(config, pairs.pairs, first_answers)
        if plans:
            runner.run([(p.model, p.pairs) for p in plans], pairs.pos)
    except EndpointError as exc:
        raise InputError(f"{exc} (answers so far are cached; fix the config and rerun to resume)") from None
    if not config.plan.filter or len(config.models) == 1:
        kept, control = list(pairs.pairs), []
    return collect(config, cache, runner, pairs, kept, control)


# ---------------------------------------------------------------------- dry run
def estimate(config: Config, cache: AnswerCache, pairs: PairSet, retry_missing: bool = False) -> dict:
    """Requests, tokens, time and cost per model, without sending anything.

    The first model's requests are exact (pairs not yet cached). The others' are exact once the
    first model has rated every pair; before that the pairs it has not rated are assumed to pass
    the filter at ``plan.expected_nonzero_rate`` (SHOE: ≈120k of ≈850k verb pairs ≈ 0.14).
    Tokens: the prompts of up to 200 pending pairs are built and counted at ≈4 characters per
    token; completion tokens and latency come from the cache when it holds answers of the model,
    else 2 tokens per pair and the endpoint's ``seconds_per_request``. Time assumes the
    endpoint's ``concurrency`` is kept busy; models of the second phase on one endpoint share it.
    """
    runner = Runner(config, cache, retry_missing=retry_missing)
    first = config.models[0]
    first_answers = cache.answers(first.name, runner.version(first))
    pending_first = runner.pending(first, pairs.pairs)
    rated_first = len(pairs.pairs) - len(pending_first)
    out: dict[str, dict] = {}
    phase_seconds: dict[int, dict[str, float]] = {1: {}, 2: {}}
    for k, m in enumerate(config.models):
        ep = config.endpoint_of(m)
        todo: Sequence[tuple[str, str] | None]
        if k == 0:
            todo, exact = pending_first, True
        elif not config.plan.filter:
            todo, exact = runner.pending(m, pairs.pairs), True
        else:
            kept, dropped = split_by_filter([p for p in pairs.pairs if key(*p) in first_answers],
                                            first_answers, config.plan.filter_threshold)
            unknown = len(pending_first)
            n_dropped = len(dropped) + round(unknown * (1 - config.plan.expected_nonzero_rate))
            n_control = min(config.plan.control_size, n_dropped)
            if unknown == 0:
                control = control_sample(dropped, config.plan.control_size, config.plan.control_seed)
                todo, exact = runner.pending(m, kept + control), True
            else:
                done = cache.answers(m.name, runner.version(m))
                n = len(kept) + round(unknown * config.plan.expected_nonzero_rate) + n_control
                todo, exact = [None] * max(0, n - len(done)), False
        n_requests = math.ceil(len(todo) / ep.batch_size)
        stats = cache.stats(m.name, runner.version(m))
        sample = [p for p in (todo if exact else pending_first or pairs.pairs)[:200] if p is not None]
        if sample:
            chunks = [sample[i:i + ep.batch_size] for i in range(0, len(sample), ep.batch_size)]
            prompt_tokens = float(np.mean([sum(prompt.estimate_tokens(msg["content"])
                                         for msg in prompt.messages(c, pairs.pos)) for c in chunks]))
        else:
            prompt_tokens = 0.0
        completion = (stats["mean_completion_tokens"] or 2.0) * ep.batch_size
        seconds_per_request = (stats["mean_seconds"] * ep.batch_size) if stats["mean_seconds"] else ep.seconds_per_request
        tokens_in = n_requests * prompt_tokens
        tokens_out = n_requests * completion
        busy = n_requests * seconds_per_request
        phase = 1 if k == 0 else 2
        phase_seconds[phase][ep.name] = phase_seconds[phase].get(ep.name, 0.0) + busy / ep.concurrency
        out[m.name] = {"pairs": len(todo), "requests": n_requests, "exact": exact,
                       "cached": stats["n"], "prompt_tokens": round(tokens_in),
                       "completion_tokens": round(tokens_out),
                       "seconds": busy / ep.concurrency,
                       "cost_usd": (tokens_in * m.price_input + tokens_out * m.price_output) / 1e6,
                       "endpoint": ep.name, "seconds_per_request": seconds_per_request}
    total_seconds = sum(max(v.values(), default=0.0) for v in phase_seconds.values())
    return {"pos": POS_NAME[pairs.pos], "n_pairs": len(pairs.pairs), "first_model_rated": rated_first,
            "models": out, "seconds": total_seconds,
            "requests": sum(v["requests"] for v in out.values()),
            "prompt_tokens": sum(v["prompt_tokens"] for v in out.values()),
            "completion_tokens": sum(v["completion_tokens"] for v in out.values()),
            "cost_usd": sum(v["cost_usd"] for v in out.values())}

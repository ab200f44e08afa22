"""The multi-model plan (SHOE §4.1, §4.2) and the pipeline of one part of speech:

1. the **first model** rates every pair;
2. with ``plan.filter`` on, each other model rates only the pairs the first model scored above
   ``plan.filter_threshold`` (pairs whose first answer is missing are kept: nothing is dropped
   on a missing answer), plus a **control set**: ``plan.control_size`` pairs drawn (seeded) from
   those the first model filtered out. The control answers measure what the filter dropped
   (per-model disagreement rate, §4.2); they do not enter the matrix, which keeps the filter's
   decision for every filtered pair so all filtered pairs are treated alike.

:func:`rate_pairs` runs the plan through a :class:`~metrics.llm._runner.Runner` and collects the
answers; :func:`estimate` is the dry run (requests, tokens, time and cost).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.llm import _prompt as prompt
from metrics.llm._cache import AnswerCache, key
from metrics.llm._client import EndpointError
from metrics.llm._config import Config, Model
from metrics.llm._pairs import POS_NAME, PairSet
from metrics.llm._runner import Runner


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

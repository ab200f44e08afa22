"""Configuration of endpoints, models and the run plan (TOML or JSON file, environment).

A config file names the OpenAI-compatible endpoints and the models (raters), in order: the
**first model is the filter model** (SHOE §4.1 used Qwen3-32B) that rates every candidate pair;
the others rate only the pairs it scored above ``plan.filter_threshold`` plus a control sample
of zero-rated pairs (§4.2)::

    [plan]
    filter = true              # false: every model rates every pair
    filter_threshold = 0       # others rate pairs the first model scored > this
    control_size = 1000        # zero-rated pairs re-rated by the others (0 = none)
    control_seed = 0
    expected_nonzero_rate = 0.14   # for --dry-run before the first model has run (≈120k/850k)

    [[endpoints]]
    name = "local"
    base_url = "http://127.0.0.1:8000/v1"    # …/chat/completions is appended
    api_key_env = "LOCAL_API_KEY"            # name of an environment variable (optional)
    concurrency = 8            # requests in flight at once on this endpoint
    batch_size = 1             # pairs per request (1 = SHOE's one pair per prompt)
    requests_per_minute = 0    # 0 = unlimited
    timeout = 60               # seconds per socket operation
    retries = 4                # extra attempts after a failed / malformed one
    backoff = 1.0              # first retry delay; doubles each time, capped at max_backoff
    max_backoff = 30
    seconds_per_request = 1.0  # latency assumed by --dry-run until measured in the cache

    [[models]]
    name = "qwen3-32b"         # the rater's name in the cache, the matrices and the report
    model = "Qwen/Qwen3-32B"   # the model id sent to the endpoint (default: name)
    endpoint = "local"
    temperature = 0
    max_tokens = 16
    price_input = 0.0          # USD per million prompt tokens (for the --dry-run estimate)
    price_output = 0.0
    extra = { }                # merged into the request body (e.g. chat_template_kwargs)

API keys are read **only** from environment variables (``api_key_env``; ``OPENAI_API_KEY`` when
the endpoint names none and it is set); they are never written to the cache, the matrices, the
report or the logs. Without a config file, ``--base-url`` (or ``HOI_LLM_BASE_URL``) and
``--model NAME`` (repeatable) describe one endpoint with the default settings.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str
    api_key_env: str | None = None
    concurrency: int = 4
    batch_size: int = 1
    requests_per_minute: float = 0.0
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    seconds_per_request: float = 1.0

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def api_key(self) -> str | None:
        """The key from the environment (never stored anywhere else)."""
        if self.api_key_env:
            return os.environ.get(self.api_key_env) or None
        return os.environ.get("OPENAI_API_KEY") or None

    def public(self) -> dict:
        """Settings safe to write to the matrix meta and the report (no key, only its variable)."""
        return {"name": self.name, "base_url": self.base_url, "api_key_env": self.api_key_env,
                "concurrency": self.concurrency, "batch_size": self.batch_size,
                "requests_per_minute": self.requests_per_minute, "timeout": self.timeout,
                "retries": self.retries, "backoff": self.backoff, "max_backoff": self.max_backoff}


@dataclass(frozen=True)
class Model:
    name: str
    endpoint: str
    model: str = ""
    temperature: float = 0.0
    max_tokens: int = 16
    price_input: float = 0.0
    price_output: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        return self.model or self.name

    def public(self) -> dict:
        return {"name": self.name, "model": self.model_id, "endpoint": self.endpoint,
                "temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class Plan:
    filter: bool = True
    filter_threshold: float = 0.0
    control_size: int = 1000
    control_seed: int = 0
    expected_nonzero_rate: float = 0.14


@dataclass(frozen=True)
class Config:
    endpoints: dict[str, Endpoint]
    models: list[Model]
    plan: Plan = Plan()

    def endpoint_of(self, model: Model) -> Endpoint:
        return self.endpoints[model.endpoint]

    def public(self) -> dict:
        return {"endpoints": [e.public() for e in self.endpoints.values()],
                "models": [m.public() for m in self.models], "plan": self.plan.__dict__.copy()}


_ENDPOINT_KEYS = set(Endpoint.__dataclass_fields__)
_MODEL_KEYS = set(Model.__dataclass_fields__)
_PLAN_KEYS = set(Plan.__dataclass_fields__)


def _build(data: dict, source: str) -> Config:
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a table/object at the top level")
    if "api_key" in data or any("api_key" in e for e in data.get("endpoints", []) if isinstance(e, dict)):
        raise InputError(f"{source}: API keys may not be written in a config file; "
                         "name an environment variable with api_key_env")
    endpoints: dict[str, Endpoint] = {}
    for k, raw in enumerate(data.get("endpoints", [])):
        unknown = set(raw) - _ENDPOINT_KEYS
        if unknown:
            raise InputError(f"{source}: endpoints[{k}]: unknown key(s) {', '.join(sorted(unknown))}")
        if "name" not in raw or "base_url" not in raw:
            raise InputError(f"{source}: endpoints[{k}] needs name and base_url")
        ep = Endpoint(**raw)
        if not ep.base_url.startswith(("http://", "https://")):
            raise InputError(f"{source}: endpoint {ep.name}: base_url must start with http:// or https://")
        if ep.concurrency < 1 or ep.batch_size < 1 or ep.retries < 0 or ep.timeout <= 0:
            raise InputError(f"{source}: endpoint {ep.name}: concurrency and batch_size must be >= 1, "
                             "retries >= 0, timeout > 0")
        endpoints[ep.name] = ep
    models: list[Model] = []
    for k, raw in enumerate(data.get("models", [])):
        unknown = set(raw) - _MODEL_KEYS
        if unknown:
            raise InputError(f"{source}: models[{k}]: unknown key(s) {', '.join(sorted(unknown))}")
        if "name" not in raw:
            raise InputError(f"{source}: models[{k}] needs a name")
        raw = dict(raw)
        if "endpoint" not in raw:
            if len(endpoints) != 1:
                raise InputError(f"{source}: model {raw['name']}: name its endpoint")
            raw["endpoint"] = next(iter(endpoints))
        if raw["endpoint"] not in endpoints:
            raise InputError(f"{source}: model {raw['name']}: unknown endpoint {raw['endpoint']!r}")
        models.append(Model(**raw))
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise InputError(f"{source}: model names must be unique")
    if not models:
        raise InputError(f"{source}: no [[models]] configured")
    plan_raw = data.get("plan", {})
    unknown = set(plan_raw) - _PLAN_KEYS
    if unknown:
        raise InputError(f"{source}: plan: unknown key(s) {', '.join(sorted(unknown))}")
    plan = Plan(**plan_raw)
    if plan.control_size < 0 or not 0 <= plan.expected_nonzero_rate <= 1:
        raise InputError(f"{source}: plan: control_size must be >= 0, expected_nonzero_rate in [0, 1]")
    return Config(endpoints, models, plan)


def load(path: str | Path | None = None, *, base_url: str | None = None,
         models: list[str] | None = None, overrides: dict | None = None) -> Config:
    """Read a TOML/JSON config, or build a one-endpoint config from ``base_url`` and ``models``.

    ``overrides`` (from command-line flags) replace plan keys and, for every endpoint,
    endpoint keys (``concurrency``, ``timeout``, ``retries`` …).
    """
    if path:
        p = Path(path)
        if not p.exists():
            raise InputError(f"{p}: no such file")
        try:
            data = tomllib.loads(p.read_text()) if p.suffix != ".json" else json.loads(p.read_text())
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{p}: not valid {'JSON' if p.suffix == '.json' else 'TOML'} ({exc})") from None
        source = str(p)
    else:
        base_url = base_url or os.environ.get("HOI_LLM_BASE_URL")
        if not base_url or not models:
            raise InputError("give --config FILE, or --base-url URL (or HOI_LLM_BASE_URL) and --model NAME")
        data = {"endpoints": [{"name": "default", "base_url": base_url}],
                "models": [{"name": m} for m in models]}
        source = "command line"
    if models and path:
        known = {m["name"] for m in data.get("models", [])}
        missing = [m for m in models if m not in known]
        if missing:
            raise InputError(f"{source}: --model {missing[0]} is not configured")
        order = {name: k for k, name in enumerate(models)}
        data = dict(data, models=sorted((m for m in data["models"] if m["name"] in order),
                                        key=lambda m: order[m["name"]]))
    config = _build(data, source)
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    plan_over = {k: v for k, v in overrides.items() if k in _PLAN_KEYS}
    ep_over = {k: v for k, v in overrides.items() if k in _ENDPOINT_KEYS}
    if plan_over or ep_over:
        config = Config({n: replace(e, **ep_over) for n, e in config.endpoints.items()},
                        config.models, replace(config.plan, **plan_over))
    return config

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

import math
import os
import tomllib
from dataclasses import field
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass

from metrics.core._errors import InputError
from metrics.core._inputs import decode, parse_json, read_bytes
from metrics.core._validation import boolean_problem, range_problem, shown, text_problem, whole_problem

# config files are typed: a value of the wrong type or outside its range is refused, naming it
_TYPED = ConfigDict(strict=True, extra="forbid")
Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
Seconds = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, le=1e9, allow_inf_nan=False)]


@dataclass(frozen=True, config=_TYPED)
class Endpoint:
    name: Name
    base_url: Annotated[str, Field(pattern=r"^https?://\S+$")]
    api_key_env: Name | None = None
    concurrency: Annotated[int, Field(ge=1, le=256)] = 4
    batch_size: Annotated[int, Field(ge=1, le=1000)] = 1
    requests_per_minute: NonNegative = 0.0
    timeout: Seconds = 60.0
    retries: Annotated[int, Field(ge=0, le=100)] = 4
    backoff: Annotated[float, Field(ge=0, le=600, allow_inf_nan=False)] = 1.0
    max_backoff: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = 30.0
    seconds_per_request: Seconds = 1.0

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


@dataclass(frozen=True, config=_TYPED)
class Model:
    name: Name
    endpoint: Name
    model: str = ""
    temperature: Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)] = 0.0
    max_tokens: Annotated[int, Field(ge=1, le=100_000)] = 16
    price_input: NonNegative = 0.0
    price_output: NonNegative = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        return self.model or self.name

    def public(self) -> dict:
        return {"name": self.name, "model": self.model_id, "endpoint": self.endpoint,
                "temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(frozen=True, config=_TYPED)
class Plan:
    filter: bool = True
    filter_threshold: Annotated[float, Field(ge=0, le=4, allow_inf_nan=False)] = 0.0
    control_size: Annotated[int, Field(ge=0, le=1_000_000)] = 1000
    control_seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 0
    expected_nonzero_rate: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.14


def _typed(kind, raw, where: str):
    """``kind(**raw)``; a value of the wrong type or range is a one-line error naming its field."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a table/object, got {type(raw).__name__}")
    try:
        return kind(**raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field_name = ".".join(str(part) for part in error["loc"]) or "?"
        if error["type"] in ("missing", "missing_argument"):
            raise InputError(f"{where}: missing key '{field_name}'") from None
        if error["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
            raise InputError(f"{where}: unknown key '{field_name}' (allowed: {', '.join(sorted(_fields(kind)))})") \
                from None
        raise InputError(f"{where}.{field_name} {_problem(kind, field_name, error)}") from None


def _fields(kind) -> dict:
    return kind.__pydantic_fields__


def _problem(kind, field_name: str, error) -> str:
    """What is wrong with a field's value, in :mod:`metrics.core._validation`'s words (``must be a
    whole number in 1..256, got 0``), worked out from the field's declared type and bounds."""
    value, info = error["input"], _fields(kind).get(field_name)
    bounds = {bound: getattr(m, bound) for m in getattr(info, "metadata", ()) for bound in ("gt", "ge", "le")
              if hasattr(m, bound)}
    annotation = getattr(info, "annotation", None)
    if annotation is int:
        problem = whole_problem(value, int(bounds.get("ge", bounds.get("gt", -1) + 1)), bounds.get("le"))
    elif annotation is float:
        low, low_open = (bounds["gt"], True) if "gt" in bounds else (bounds.get("ge", -math.inf), False)
        problem = range_problem(value, low, bounds.get("le", math.inf), low_open=low_open)
    elif annotation is bool:
        problem = boolean_problem(value)
    else:
        problem = text_problem(value) or (f"must match {error['ctx']['pattern']}, got {shown(value)}"
                                          if error["type"] == "string_pattern_mismatch" else None)
    return problem or f"must be {error['msg'].removeprefix('Input should be ')}, got {shown(value)}"


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
_PLAN_KEYS = set(Plan.__dataclass_fields__)


def _check_top_level(data, source: str) -> None:
    """A table with only endpoints, models and plan, and no API key written in it."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a table/object at the top level")
    if "api_key" in data or any("api_key" in e for e in data.get("endpoints", []) if isinstance(e, dict)):
        raise InputError(f"{source}: API keys may not be written in a config file; "
                         "name an environment variable with api_key_env")
    unknown = set(data) - {"endpoints", "models", "plan"}
    if unknown:
        raise InputError(f"{source}: unknown key(s) {', '.join(sorted(unknown))} (expected endpoints, "
                         "models, plan)")
    for part in ("endpoints", "models"):
        if not isinstance(data.get(part, []), list):
            raise InputError(f"{source}: {part}: expected a list of tables ([[{part}]])")


def _build_endpoints(data: dict, source: str) -> dict[str, Endpoint]:
    """The endpoints by name; a name used twice is refused."""
    endpoints: dict[str, Endpoint] = {}
    for k, raw in enumerate(data.get("endpoints", [])):
        ep = _typed(Endpoint, raw, f"{source}: endpoints[{k}]")
        if ep.name in endpoints:
            raise InputError(f"{source}: endpoints[{k}].name: {ep.name!r} is used twice")
        endpoints[ep.name] = ep
    return endpoints


def _build_model(raw, k: int, endpoints: dict, source: str) -> Model:
    """models[k], its endpoint defaulting to the only one configured."""
    if not isinstance(raw, dict):
        raise InputError(f"{source}: models[{k}]: expected a table/object, got {type(raw).__name__}")
    raw = dict(raw)
    if "endpoint" not in raw:
        if len(endpoints) != 1:
            raise InputError(f"{source}: models[{k}].endpoint: required when there are several endpoints")
        raw["endpoint"] = next(iter(endpoints))
    if raw["endpoint"] not in endpoints:
        raise InputError(f"{source}: models[{k}].endpoint: unknown endpoint {raw['endpoint']!r}")
    return _typed(Model, raw, f"{source}: models[{k}]")


def _build(data: dict, source: str) -> Config:
    _check_top_level(data, source)
    endpoints = _build_endpoints(data, source)
    models = [_build_model(raw, k, endpoints, source) for k, raw in enumerate(data.get("models", []))]
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise InputError(f"{source}: model names must be unique")
    if not models:
        raise InputError(f"{source}: no [[models]] configured")
    return Config(endpoints, models, _typed(Plan, data.get("plan", {}), f"{source}: plan"))


def load(path: str | Path | None = None, *, base_url: str | None = None,
         models: list[str] | None = None, overrides: dict | None = None) -> Config:
    """Read a TOML/JSON config, or build a one-endpoint config from ``base_url`` and ``models``.

    ``overrides`` (from command-line flags) replace plan keys and, for every endpoint,
    endpoint keys (``concurrency``, ``timeout``, ``retries`` …).
    """
    if path:
        p = Path(path)
        source = str(p)
        text = decode(read_bytes(p), source)
        if p.suffix == ".json":
            data = parse_json(text, source)
        else:
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise InputError(f"{p}: not valid TOML ({exc})") from None
    else:
        base_url = base_url or os.environ.get("HOI_LLM_BASE_URL")
        if not base_url or not models:
            raise InputError("give --config FILE, or --base-url URL (or HOI_LLM_BASE_URL) and --model NAME")
        data = {"endpoints": [{"name": "default", "base_url": base_url}],
                "models": [{"name": m} for m in models]}
        source = "command line"
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a table/object at the top level")
    if models and path:
        known = {m.get("name") for m in data.get("models", []) if isinstance(m, dict)}
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
        config = Config({n: _typed(Endpoint, {**e.__dict__, **ep_over}, "command line")
                         for n, e in config.endpoints.items()},
                        config.models, _typed(Plan, {**config.plan.__dict__, **plan_over}, "command line"))
    return config

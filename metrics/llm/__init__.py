"""SHOE similarity matrices rated by LLMs (SHOE §4.1 "Implementation Details", §4.2,
supplementary §1 and §3), through any OpenAI-compatible chat-completions endpoint.

- :mod:`~metrics.llm._config`  endpoints, models (the first one filters) and the plan; keys from env vars
- :mod:`~metrics.llm._prompt`  the versioned prompt and the strict 0–4 reply parser
- :mod:`~metrics.llm._client`  ``http.client`` requests with timeouts, retries and backoff
- :mod:`~metrics.llm._cache`   the SQLite answer cache that makes runs resumable
- :mod:`~metrics.llm._pairs`   candidate pairs
- :mod:`~metrics.llm._plan`    the filter + control plan, collecting the answers, dry-run estimates
- :mod:`~metrics.llm._runner`  concurrent, resumable execution
- :mod:`~metrics.llm._aggregate`  mean / per-model matrices, Pearson, control disagreement, subset ablation
- :mod:`~metrics.llm._report`  the HTML report
- :mod:`~metrics.llm._loopback_server`  a deterministic OpenAI-compatible server on 127.0.0.1 for tests

The command is ``python -m metrics matrix build-llm`` (:mod:`metrics.commands._matrix_llm`).
"""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("Config", "Endpoint", "Model"), "_config"),
    **dict.fromkeys(("ChatClient", "EndpointError"), "_client"),
    "AnswerCache": "_cache",
    "Runner": "_runner",
    "candidate_pairs": "_pairs",
    **dict.fromkeys(("BadBody", "LoopbackLLM"), "_loopback_server"),
})

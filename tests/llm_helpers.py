"""Shared helpers of the LLM-matrix tests: a loopback server keyed by synset names, configs."""

from __future__ import annotations

from pathlib import Path

from metrics.llm import _prompt as prompt
from metrics.llm._loopback_server import LoopbackLLM, pair_key

PAIRS = [("ride.v.01", "straddle.v.01"), ("ride.v.01", "sit.v.01"), ("ride.v.01", "walk.v.01"),
         ("eat.v.01", "drink.v.01"), ("eat.v.01", "devour.v.01"), ("hold.v.02", "carry.v.01"),
         ("hold.v.02", "grasp.v.01"), ("throw.v.01", "catch.v.01"), ("kick.v.01", "hit.v.01"),
         ("push.v.01", "pull.v.01")]


def desc_key(a: str, b: str) -> tuple[str, str]:
    return pair_key(prompt.describe(a), prompt.describe(b))


class SynsetServer(LoopbackLLM):
    """The loopback server answering from ``table[model][(a, b)]`` (synset names)."""

    def __init__(self, table: dict | None = None, pairs=PAIRS, **kw):
        self.by_desc = {desc_key(a, b): (a, b) for a, b in pairs}
        self.table = table or {}
        super().__init__(score=self._score, **kw)

    def _score(self, model, pair):
        a, b = self.by_desc[pair]
        scores = self.table.get(model, {})
        return scores.get((a, b), scores.get((b, a), 0))

    def count(self, model: str, a: str, b: str) -> int:
        return self.per_pair[(model, desc_key(a, b))]

    def counts(self) -> dict:
        return {(m, self.by_desc[p]): n for (m, p), n in self.per_pair.items()}


def write_pairs(path: Path, pairs=PAIRS) -> Path:
    path.write_text("a,b\n" + "".join(f"{a},{b}\n" for a, b in pairs))
    return path


def write_config(path: Path, base_url: str, models=("m1", "m2", "m3"), plan: str = "",
                 endpoint: str = "") -> Path:
    defaults = {"backoff": "0.001", "max_backoff": "0.01", "timeout": "5"}
    given = {line.split("=")[0].strip() for line in endpoint.splitlines() if "=" in line}
    extra = "".join(f"{k} = {v}\n" for k, v in defaults.items() if k not in given)
    text = f"[plan]\n{plan}\n[[endpoints]]\nname = \"loop\"\nbase_url = \"{base_url}\"\n{extra}{endpoint}\n"
    text += "".join(f"[[models]]\nname = \"{m}\"\n" for m in models)
    path.write_text(text)
    return path

"""A killed-and-restarted ``matrix build-llm`` run repeats no finished request (server-side count).

The run is a real subprocess talking to the loopback OpenAI-compatible server in this process;
it is SIGKILLed mid-run, then restarted to completion."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest
from projectpaths import ROOT

from metrics.llm import _prompt as prompt
from metrics.llm._loopback_server import LoopbackLLM, pair_key
from metrics.vocab import _wordnet as wordnet
from tests.llm_helpers import write_config, write_pairs

pytestmark = pytest.mark.slow


def _pairs(n: int) -> list[tuple[str, str]]:
    out = []
    for seed in ("ride.v.01", "eat.v.01", "hold.v.02", "throw.v.01", "walk.v.01", "carry.v.01"):
        for parent in wordnet.hypernyms(seed) or [seed]:
            for other in wordnet.hyponyms(parent):
                if other != seed and (seed, other) not in out and (other, seed) not in out:
                    out.append((seed, other))
    assert len(out) >= n
    return out[:n]


def test_killed_run_resumes_without_repeating_work(tmp_path):
    pairs = _pairs(60)
    by_desc = {pair_key(prompt.describe(a), prompt.describe(b)): (a, b) for a, b in pairs}
    with LoopbackLLM(delay=0.05) as server:
        cfg = write_config(tmp_path / "llm.toml", server.base_url, ("m1", "m2"), "control_size = 5",
                           "concurrency = 2")
        cmd = [sys.executable, "-m", "metrics", "matrix", "build-llm", "--config", str(cfg),
               "--pairs", str(write_pairs(tmp_path / "pairs.csv", pairs)), "--pos", "verb",
               "--out", str(tmp_path / "out"), "--json", str(tmp_path / "result.json")]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while server.requests < 25 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
        db = sqlite3.connect(tmp_path / "out" / "llm_cache.sqlite")
        cached = {(m, a, b) for m, a, b in db.execute("SELECT model, a, b FROM answers")}
        db.close()
        first_run = Counter(server.per_pair)
        assert 0 < len(cached) < len(pairs)

        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        second_run = Counter(server.per_pair) - first_run
        for (model, desc), n in second_run.items():
            a, b = sorted(by_desc[desc])
            assert (model, a, b) not in cached, f"{model} {a} {b} asked again after it was cached"
            assert n == 1
        # only requests in flight at the kill were lost and sent again: the runner keeps at most
        # 2 x `concurrency` submitted (`concurrency` being sent, the rest queued or answered but not
        # yet written by the main thread; 3 were seen once under load)
        repeated = [k for k in second_run if k in first_run]
        assert len(repeated) <= 2 * 2
        assert all(n <= 2 for n in server.per_pair.values())
        assert {k for k, n in server.per_pair.items() if n == 2} == set(repeated)
        # the plan was completed: m1 rated every pair, and the result counts the cached answers
        assert len([k for k in server.per_pair if k[0] == "m1"]) == len(pairs)
        result = json.loads((tmp_path / "result.json").read_text())
        assert result["verb"]["asked"]["m1"] == len(pairs) and result["verb"]["missing"] == {"m1": 0, "m2": 0}
        assert sum(result["verb"]["requests_sent"].values()) == sum(second_run.values())

"""Request throughput of ``matrix build-llm`` against the loopback OpenAI-compatible server.

The server (``python -m metrics.llm._loopback_server``) runs in its own process on 127.0.0.1;
this process rates N candidate verb pairs of HICO-DET through the real pipeline (prompt
building, ``http.client`` keep-alive requests, strict parsing, one SQLite commit per answer),
with a fresh cache each repeat. Prints the median requests per second over the repeats for each
concurrency (and the per-request latency the server simulates).

    .venv/bin/python -m benchmarks.llm_throughput [--pairs 2000] [--repeats 5] [--delay 0]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from metrics.datasets.hico_det import hico
from metrics.llm import AnswerCache, Config, Endpoint, Model, Runner, candidate_pairs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=1)
        except urllib.error.HTTPError:
            return                               # 400 on an empty body: the server is up
        except OSError:
            time.sleep(0.2)
    raise SystemExit("loopback server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.0, help="server-side latency per request (s)")
    args = parser.parse_args()

    vocab = hico()
    seeds = [s for s in vocab.verbs["synset"] if s]
    pairs = candidate_pairs(seeds, "v")
    pairs.pairs = pairs.pairs[:args.pairs]
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "metrics.llm._loopback_server", "--port", str(port),
                               "--delay", str(args.delay)], cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        wait_ready(base + "/chat/completions")
        print(f"{len(pairs.pairs)} verb pairs, batch size {args.batch_size}, server delay {args.delay} s, "
              f"{args.repeats} repeats")
        for conc in args.concurrency:
            rates = []
            for _ in range(args.repeats):
                ep = Endpoint("loop", base, concurrency=conc, batch_size=args.batch_size, retries=0, timeout=30)
                config = Config({"loop": ep}, [Model("bench", "loop")])
                with tempfile.TemporaryDirectory() as tmp:
                    cache = AnswerCache(Path(tmp) / "cache.sqlite")
                    runner = Runner(config, cache, progress_stream=False)
                    start = time.perf_counter()
                    sent = runner.run([(config.models[0], pairs.pairs)], "v")["bench"]
                    seconds = time.perf_counter() - start
                    assert cache.count() == len(pairs.pairs)
                    cache.close()
                rates.append(sent / seconds)
            print(f"concurrency {conc:2d}: median {statistics.median(rates):7.1f} requests/s "
                  f"({statistics.median(rates) * args.batch_size:7.1f} pairs/s)  "
                  f"[min {min(rates):.1f}, max {max(rates):.1f}]")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()

"""Start-up as the user waits for it: wall time of fresh processes (median of --runs).

  (a) NLTK's stock WordNetCorpusReader on the project's WordNet 3.0 (baseline, same run);
  (b) metrics.vocab._wordnet.wordnet() (the reader without NLTK's version map);
  (c) ``python -m metrics --help``;  (d) ``python -m metrics score --help``;
  (e) WordNet ready through the index: import metrics.vocab._wordnet, load the index, look up a gloss,
      a lemma's synsets and its base forms (target <= 0.5 s).

    .venv/bin/python -m benchmarks.command_startup [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STOCK = ("import nltk; from nltk.corpus.reader.wordnet import WordNetCorpusReader as R; "
         "from metrics.vocab import _wordnet as w; p = str(w.data_dir() / 'corpora' / 'wordnet'); "
         "nltk.data.path.insert(0, str(w.data_dir())); R(nltk.data.FileSystemPathPointer(p), None).synset('ride.v.01')")
OURS = "from metrics.vocab import _wordnet as w; w.wordnet().synset('ride.v.01')"
INDEX = ("from metrics.vocab import _wordnet as w; w.gloss('ride.v.01'); w.synsets('riding', 'v'); "
         "w.lemma_candidates('riding', 'v'); w.hypernyms('bicycle.n.01')")


def timed(cmd: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs each")
    for name, cmd in (("(a) WordNet, NLTK's stock reader", [py, "-c", STOCK]),
                      ("(b) WordNet, metrics.vocab._wordnet", [py, "-c", OURS]),
                      ("(c) python -m metrics --help", [py, "-m", "metrics", "--help"]),
                      ("(d) python -m metrics score --help", [py, "-m", "metrics", "score", "--help"]),
                      ("(e) WordNet ready, metrics.vocab._wordnet index", [py, "-c", INDEX])):
        times = timed(cmd, args.runs)
        print(f"{name:38} median {statistics.median(times):6.2f} s  {[round(t, 2) for t in times]}")


if __name__ == "__main__":
    main()

"""The study report as the researcher waits for it (a 500-item x 5-rater study in <= 2 s).

Builds, in a temporary SQLite database, a ``hoi_similarity`` study of 500 sampled HOI pairs
(``[items] source = "sampler"``, 5 raters per item) and lets ``studyapp simulate`` add 5 raters
(2,500 ratings; about a minute, not timed). Then, in one run:

  (a) ``python -m studyapp report SLUG`` as a fresh process, median of --runs each way:
      computed (``--no-cache``, what the first report after new ratings costs: start-up,
      reading the study, agreement, alignment with its permutation tests, w tuning, the HTML
      report with its PNG plots) and with the ratings unchanged since the last report (the
      cached report copied: ``studyapp.platform.reporting.report_cache``);
  (b) the console's "Download report.html" in this process, computed (the full analysis,
      ``analyse_study``, and the HTML report with its PNG plots, ``write_study_report``) and
      from the cache (``report_cache.study_report``), median of --runs each (the console's live
      dashboard: ``benchmarks.dashboard``);
  (c) before / after of the part the index replaced: the WordNet path / Wu-Palmer / LCH
      baselines of the study's pairs with NLTK's reader (its load included, depths seeded as
      before) next to the same measures from the WordNet index (identical values, checked).

Prints every run and the load average (``os.getloadavg()``) next to each figure.

    .venv/bin/python -m benchmarks.study_report [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SPEC = """title = "Report benchmark"
study_type = "hoi_similarity"
slug = "report-bench"
raters_per_item = 5
items_per_annotator = "all"
order = "random"
instructions = "Rate how similar the prediction is to the ground truth."

[items]
source = "sampler"
n = 500
seed = 0
"""


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def report(label: str, times: list[float], loads: list[str]) -> None:
    print(f"{label:52} median {statistics.median(times):6.2f} s  runs {[round(t, 2) for t in times]}  "
          f"({', '.join(loads)})", flush=True)


def studyapp(*argv: str) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "studyapp", *argv], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"studyapp {argv[0]} failed: {res.stderr}")
    return res


def build_study(folder: Path) -> None:
    """The 500-item x 5-rater study ``report-bench`` in ``folder``'s database (not timed)."""
    os.environ["STUDYAPP_DB"] = str(folder / "studyapp.sqlite")
    os.environ["STUDYAPP_EXPORTS"] = str(folder / "exports")
    spec = folder / "report_bench.toml"
    spec.write_text(SPEC)
    studyapp("create", str(spec))
    studyapp("simulate", "report-bench", "--k", "5")
    print(f"study: 500 items x 5 simulated raters (2,500 ratings); {os.cpu_count()} cores; {load()}", flush=True)


def console_download(slug: str, result) -> None:
    """What the tab's "Download report.html" runs: the HTML report with its tables and plots."""
    from studyapp.platform.reporting import analysis

    analysis.write_study_report(slug, result).read_bytes()


def wordnet_before_after(slug: str) -> None:
    """(c): the alignment's WordNet baselines with NLTK's reader (before) and the index (after)."""
    from metrics.study import item_synsets
    from metrics.vocab import _wordnet as wordnet
    from studyapp.platform.records.exports import study_tables

    items = study_tables(slug)["items.csv"]
    syn = item_synsets(items[items["role"] == "main"])
    pairs = sorted({(p, g) for p, g in zip(syn["pred_verb"], syn["gt_verb"])}
                   | {(p, g) for p, g in zip(syn["pred_object"], syn["gt_object"])})
    start = time.perf_counter()
    reader = wordnet.wordnet()
    for pos in wordnet.INDEX_POS:   # the depths the code before the WordNet index seeded from the index
        reader._max_depth[(pos, False)] = wordnet.index().taxonomy_depth(pos)
        reader._max_depth[(pos, True)] = wordnet.index().taxonomy_depth(pos) + 1
    before = [(reader.synset(a).path_similarity(reader.synset(b)), reader.synset(a).wup_similarity(reader.synset(b)),
               reader.synset(a).lch_similarity(reader.synset(b))) for a, b in pairs]
    t_before = time.perf_counter() - start
    start = time.perf_counter()
    after = [(wordnet.path_similarity(a, b), wordnet.wup_similarity(a, b), wordnet.lch_similarity(a, b))
             for a, b in pairs]
    t_after = time.perf_counter() - start
    if before != after:
        raise SystemExit("the index's similarity measures differ from NLTK's")
    print(f"(c) WordNet baselines of {len(pairs)} distinct pairs: NLTK's reader {t_before:.2f} s "
          f"(load included), the index {t_after:.3f} s; identical values ({load()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build_study(Path(tmp))

        for label, argv in (("computed (--no-cache)", ("--no-cache",)), ("ratings unchanged (cached)", ())):
            times, loads = [], []
            for _ in range(args.runs):
                loads.append(load())
                start = time.perf_counter()
                studyapp("report", "report-bench", *argv)
                times.append(time.perf_counter() - start)
            report(f"(a) python -m studyapp report, {label}", times, loads)

        from studyapp.platform.reporting import analysis, report_cache

        times, loads, downloads, cached = [], [], [], []
        for _ in range(args.runs):
            loads.append(load())
            start = time.perf_counter()
            result = analysis.analyse_study("report-bench")
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            console_download("report-bench", result)
            downloads.append(time.perf_counter() - start)
            start = time.perf_counter()
            report_cache.study_report("report-bench").path.read_bytes()
            cached.append(time.perf_counter() - start)
        report("(b) console report.html: the full analysis", times, loads)
        report("    console report.html: the HTML report (plots drawn)", downloads, loads)
        report("    console report.html: ratings unchanged (cached)", cached, loads)

        wordnet_before_after("report-bench")


if __name__ == "__main__":
    main()

"""Creating an active-selection study and handing out its items, against the same study without
``[active]`` (baseline, measured in the same run).

A spec with ``--items`` HOI pairs (``items.csv``) and three LLMs' ratings of each
(``llm.csv``) is loaded and created in a temporary SQLite file twice: with ``[llm]`` +
``[active] budget = --budget`` (the draw of ``metrics.study.active_selection`` at create),
and with ``[llm]`` only. Timed: ``load_spec`` + ``create_study`` (the ``studyapp create`` path),
then ``--annotators`` annotators each taking ``--per-annotator`` items — ``assignment.next_item``
(the claim, timed) then ``assignment.submit`` (timed) — the server calls behind every key press.
Figures: create seconds, p50 / p95 of next_item and submit per mode, median over ``--runs``;
the load average is printed.

    .venv/bin/python -m benchmarks.active_next_item [--items 5000] [--budget 1000] [--annotators 10]
                                                    [--per-annotator 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

SPEC = '''title = "Benchmark"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = 3
[llm]
ratings = "llm.csv"
{active}
[items]
source = "csv"
path = "items.csv"
'''


def write_inputs(folder: Path, n_items: int) -> None:
    """items.csv (the test helpers' generated pairs) and llm.csv (three models, seeded)."""
    import sys
    sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))
    from studyhelpers import write_items

    write_items(folder / "items.csv", n_items)
    rng = np.random.default_rng(0)
    level = rng.integers(0, 5, n_items)
    rows = ["item_id,m1,m2,m3"] + [
        f"i{k + 1:02d}," + ",".join(str(int(np.clip(level[k] + rng.integers(-1, 2), 0, 4))) for _ in range(3))
        for k in range(n_items)]
    (folder / "llm.csv").write_text("\n".join(rows) + "\n")


def run(folder: Path, active: bool, budget: int, annotators: int, per_annotator: int) -> dict:
    from studyapp.core import storage
    from studyapp.platform import assignment
    from studyapp.platform.launch.spec_files import load_spec
    from studyapp.platform.records import studies

    os.environ["STUDYAPP_DB"] = str(folder / f"{'active' if active else 'plain'}-{time.time_ns()}.sqlite")
    storage.dispose_all()
    (folder / "s.toml").write_text(SPEC.format(active=f"[active]\nbudget = {budget}\n" if active else ""))
    start = time.perf_counter()
    study_id = studies.create_study(load_spec(folder / "s.toml"))
    create_s = time.perf_counter() - start
    invites = studies.invite(study_id, annotators)
    claim, submit = [], []
    for invite in invites:
        annotator = assignment.resolve_token(invite.token)
        for _ in range(per_annotator):
            t0 = time.perf_counter()
            task = assignment.next_item(annotator)
            t1 = time.perf_counter()
            assignment.submit(annotator, task.assignment_id, 2, 1.0)
            submit.append(time.perf_counter() - t1)
            claim.append(t1 - t0)
    storage.dispose_all()
    return {"create_s": create_s, "next_p50_ms": 1e3 * np.percentile(claim, 50),
            "next_p95_ms": 1e3 * np.percentile(claim, 95), "submit_p50_ms": 1e3 * np.percentile(submit, 50),
            "submit_p95_ms": 1e3 * np.percentile(submit, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--per-annotator", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["STUDYAPP_EXPORTS"] = str(folder / "exports")
        write_inputs(folder, args.items)
        results = {True: [], False: []}
        for _ in range(args.runs):       # alternate, so both modes see the same load
            for active in (True, False):
                results[active].append(run(folder, active, args.budget, args.annotators, args.per_annotator))
    print(f"{args.items} items, budget {args.budget}, {args.annotators} annotators × {args.per_annotator} "
          f"items, median of {args.runs} runs; load average {os.getloadavg()[0]:.2f}")
    for active, label in ((True, "[active]"), (False, "baseline ([llm] only)")):
        rows = results[active]
        print(f"{label:>22}: " + ", ".join(f"{key} {statistics.median(r[key] for r in rows):.3g}"
                                           for key in rows[0]))


if __name__ == "__main__":
    main()

"""The console's live dashboard as the researcher waits for it (≤ 1 s for a 500-item ×
5-rater study).

Builds the study of ``benchmarks.study_report`` (500 sampled HOI pairs, 5 simulated raters,
2,500 ratings) in a temporary SQLite database, then, in one run:

  (a) ``studyapp.platform.reporting.dashboard.study_dashboard`` as the console calls it: the first view in a fresh
      process (imports included), a view with nothing new (median of --runs), and the views
      after 1 and after 25 changed ratings (revisions; median of --runs each);
  (b) the baseline, in this process: ``studyapp.platform.reporting.analysis.analyse_study`` (the full analysis of
      the HTML report: 1,000 resamples and permutations), median of --runs;
  (c) unless --no-browser: the browser round trip in headless Chromium — the console is
      opened and signed into, then the time from pressing "Sign in" to the dashboard's
      Krippendorff's α on screen (median of --runs, a new browser session each).

Prints every run and the load average next to each figure.

    .venv/bin/python -m benchmarks.dashboard [--runs 5] [--no-browser]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.study_report import build_study, load, report


def fresh_process_view(slug: str) -> float:
    """Seconds of the first dashboard view in a new Python process (imports included)."""
    code = ("import time; t = time.perf_counter(); from studyapp.platform.reporting import dashboard; "
            f"dashboard.study_dashboard({slug!r}); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def revise(count: int, value_shift: int) -> None:
    """Change ``count`` stored ratings (a revision each), as annotators going back would."""
    from sqlmodel import select

    from studyapp.core import storage
    from studyapp.core.models import Rating
    from studyapp.platform import assignment

    with storage.read_session() as session:
        rows = session.exec(select(Rating).order_by(Rating.id.desc()).limit(count)).all()
        latest = {r.assignment_id: (r.annotator_id, r.response) for r in rows}
    for assignment_id, (annotator_id, response) in latest.items():
        value = (int(response) + value_shift) % 5
        assignment.submit(annotator_id, assignment_id, value, 1.0, revise=True)


def browser_round_trips(runs: int, folder: Path) -> list[float]:
    """Seconds from "Sign in" to the dashboard's α on screen, a new browser session each run
    (the app serves ``folder``'s database; ``running_app`` sets the console password)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.browserhelpers import running_app, start_chromium

    times = []
    with running_app(folder) as base:
        for _ in range(runs):
            driver = start_chromium()
            try:
                driver.get(f"{base}/console")
                wait = WebDriverWait(driver, 120)
                box = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "input[type=password]"))
                box.send_keys("browser-pw")
                button = next(b for b in driver.find_elements(By.TAG_NAME, "button") if b.text == "Sign in")
                start = time.perf_counter()
                button.click()
                wait.until(lambda d: "Krippendorff" in d.find_element(By.TAG_NAME, "body").text)
                times.append(time.perf_counter() - start)
            finally:
                driver.quit()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build_study(Path(tmp))

        loads = [load()]
        report("(a) dashboard, first view in a fresh process", [fresh_process_view("report-bench")], loads)
        from studyapp.platform.reporting import analysis, dashboard

        dashboard.study_dashboard("report-bench")
        for label, change in (("nothing new", 0), ("after 1 changed rating", 1), ("after 25 changed ratings", 25)):
            times, loads = [], []
            for run in range(args.runs):
                if change:
                    revise(change, run % 4 + 1)   # a shift of 1-4 points: always a new value
                loads.append(load())
                start = time.perf_counter()
                dashboard.study_dashboard("report-bench")
                times.append(time.perf_counter() - start)
            report(f"    dashboard, {label}", times, loads)

        times, loads = [], []
        for _ in range(args.runs):
            loads.append(load())
            start = time.perf_counter()
            analysis.analyse_study("report-bench")
            times.append(time.perf_counter() - start)
        report("(b) baseline: analyse_study (the report's full analysis)", times, loads)

        if not args.no_browser:
            loads = [load()]
            report("(c) browser: Sign in -> dashboard's alpha on screen", browser_round_trips(args.runs, Path(tmp)),
                   loads)
        print(f"target: <= 1 s; median of the views with new ratings above ({load()})")


if __name__ == "__main__":
    main()

"""The researcher's console as the researcher waits for it (every interaction <= 1 s p95,
console scoring and export within 1.5x of the command line, the first report download <= 2 s,
a reload (F5) keeps the researcher signed in).

Builds, in a temporary SQLite database (not timed): the 500-item x 5-rater study of
``benchmarks.study_report`` (``report-bench``, 2,500 simulated ratings), a second 40-item study
(``second``, no ratings), two saved matrix versions (``studyapp recalibrate``), and 40 images of
ground truth with two models' detections (``benchmarks.score_hico_scale.workload``). Then serves
the app as ``python -m studyapp serve`` does (``tests.browserhelpers.running_app``) and drives it
in headless Chromium with selenium, by mouse and keyboard, ``--runs`` times each:

  floor            baselines, each a bare Streamlit page served with the same flags, opened (new
                   browser profile) and reloaded: the sign-in form alone (Streamlit's own part
                   of "login page"), and the console's first view drawn from constants (what a
                   reload of the console costs the browser, without the app's own work)
  login page       ``/console`` opened until its password field is shown and the run is over
  sign in          "Sign in" pressed until the console's first dashboard (α) is on screen
  reload (F5)      the page reloaded until the console (signed in) or the sign-in form is back
  switch study     the study picker set to ``second`` until its page has run
  dashboard        the picker set back to ``report-bench`` until its dashboard (α) is on screen
  details          the Details tab (the dashboard's tables and charts), then its Raters group,
                   until each has run
  preview item     the preview's item picker moved one item down until the page has run
  open an area     a click on the console's Matrices or Scoring tab until that area has run;
                   "back to Studies" until the dashboard (α) is on screen again
  save version     "Save version" (after one recalibration) until "Saved matrix version" shows
  compare          "Compare with" set to another version until the comparison is shown (v-a with
                   v-b, then v-b with v-a: the first two runs compute, later ones read the cache)
  score            "Score" (2 models x 3 sets of matrices, 40 images) until the run is over;
                   baseline: the same 6 ``python -m metrics score`` processes, same run
  export           "Write export folder" until "Wrote" shows; baseline: ``studyapp export``
  report download  one rating revised (so no cached report holds), then "Download report.html"
                   until the file is in the download folder: "first report download" 21 s later
                   (two dashboard refreshes: the dashboard has seen the change and its report
                   warm-up, started then, has had time to finish: the download is a copy), and
                   "as new ratings are seen" 11 s later (one refresh: the download waits for the
                   warm-up the refresh has just started -- the worst case)

An interaction ends when Streamlit reports its script run over (``data-test-script-state``
back to ``notRunning`` after it was ``running``) with the expected text on screen. Prints
p50 / p95 / max per interaction and the load average (``uptime``) next to each.

    nice -n 10 .venv/bin/python -m benchmarks.console_latency [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.study_report import build_study, studyapp

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "browser-pw"   # tests.browserhelpers.running_app's console password
DASHBOARD_REFRESH_S = 10  # studyapp/views/console/dashboard.py: the dashboard's timed refresh
SECOND = """title = "Second study"
study_type = "hoi_similarity"
slug = "second"
raters_per_item = 3
instructions = "Rate."
[items]
source = "sampler"
n = 40
seed = 1
"""

ARM = """
const app = document.querySelector('[data-testid="stApp"]');
window.__ran = false;
if (window.__obs) window.__obs.disconnect();
window.__obs = new MutationObserver(() => { window.__ran = true; });   // a run began (and may be over)
window.__obs.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
"""
WAIT = """
const done = arguments[arguments.length - 1], texts = arguments[0], needRun = arguments[1];
const give_up = performance.now() + 90000;
const check = () => {
  if (performance.now() > give_up) { done(null); return; }
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = app && app.dataset.testScriptState === 'notRunning' && (window.__ran || !needRun);
  const running = [...document.querySelectorAll('[data-testid="stStatusWidget"]')]
    .some((e) => e.offsetParent !== null);
  const body = document.body.innerText;
  const found = texts.find((t) => body.includes(t));
  if (idle && !running && found !== undefined) done(found); else setTimeout(check, 20);
};
check();
"""


ELEMENT_POLL_S = 0.02
TYPING_PAUSE_S = 0.05   # between typed characters: 20 per second


def load() -> float:
    return os.getloadavg()[0]


class Console:
    """A headless Chromium on the served console, with the moves a researcher makes."""

    def __init__(self, base: str, downloads: Path):
        from tests.browserhelpers import allow_downloads, start_chromium

        downloads.mkdir(parents=True, exist_ok=True)
        self.driver = start_chromium(script_timeout=180)
        allow_downloads(self.driver, downloads)
        self.base, self.downloads = base, downloads

    def quit(self) -> None:
        self.driver.quit()

    def arm(self) -> None:
        self.driver.execute_script(ARM)

    def wait(self, *texts: str, need_run: bool = True) -> str:
        found = self.driver.execute_async_script(WAIT, list(texts), need_run)
        if found is None:
            shot = Path(tempfile.gettempdir()) / "console_latency_failure.png"
            self.driver.save_screenshot(str(shot))
            raise SystemExit(f"waited 90 s for one of {texts} (screenshot: {shot})")
        return found

    def timed(self, act, *texts: str, need_run: bool = True) -> tuple[float, str]:
        """Seconds from ``act()`` to the end of the run it starts with one of ``texts`` shown."""
        print(f"    waiting for {texts[0]!r}", flush=True)
        self.arm()
        start = time.perf_counter()
        act()
        found = self.wait(*texts, need_run=need_run)
        return time.perf_counter() - start, found

    def element(self, css: str, label: str | None = None, timeout: float = 120):
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        def find(d):
            for e in d.find_elements("css selector", css):
                if e.is_displayed() and (label is None or e.text.strip().startswith(label)):
                    return e
            return False
        # polled every 20 ms: WebDriverWait's default 0.5 s added up to half a second to the
        # page loads timed through it
        return WebDriverWait(self.driver, timeout, poll_frequency=ELEMENT_POLL_S,
                             ignored_exceptions=(StaleElementReferenceException,)).until(
            find, message=f"waiting for {css} {label or ''}")

    def button(self, label: str):
        self.wait("", need_run=False)
        return self.element("button", label)

    def tab(self, name: str) -> None:
        self.element("[role='tab']", name).click()

    def pick(self, testid: str, label: str, *keys: str) -> None:
        """Type ``keys`` into the select box labelled ``label`` (a choice is made on Enter): the
        text first, once the list is open, then, once the list shows it, the other keys."""
        from selenium.common.exceptions import TimeoutException

        self.wait("", need_run=False)
        box = self.element(f'[data-testid="{testid}"]', label).find_element("tag name", "input")
        box.click()
        self.element("[role='option']")   # the list is open before anything is typed
        typed = "".join(k for k in keys if k.isprintable())
        if typed:   # ... and filtered to the typed name before a key chooses (when the list shows it)
            for char in typed:   # at a fast typist's pace: typed at machine speed, the list's filter
                box.send_keys(char)   # sometimes ends empty (Streamlit's selectbox)
                time.sleep(TYPING_PAUSE_S)
            with contextlib.suppress(TimeoutException):
                self.element("[role='option']", typed, timeout=5)
        box.send_keys(*[k for k in keys if not k.isprintable()])

    def choose(self, label: str, value: str, Keys) -> None:
        """Choose ``value`` in the select box ``label`` and wait for the run the choice starts
        (none when it was chosen already), so that boxes whose options follow it are redrawn."""
        box = self.element('[data-testid="stSelectbox"]', label).find_element("tag name", "input")
        shown = box.get_attribute("value")
        self.pick("stSelectbox", label, value)
        self.timed(self.option(value).click, "", need_run=shown != value)

    def option(self, text: str):
        """The open list's option ``text``, to be clicked (Enter chooses only the option the list
        has highlighted, which a box without a choice yet does not always do)."""
        return self.element("[role='option']", text)

    def area(self, name: str, *texts: str) -> float:
        """Open the console's top-level tab ``name``; seconds until its run is over (with one of
        ``texts`` shown, when given)."""
        self.wait("", need_run=False)
        tab = self.element("[role='tab']", name)
        return self.timed(tab.click, *(texts or ("",)))[0]

    def open_login(self) -> float:
        start = time.perf_counter()
        self.driver.get(f"{self.base}/console")
        self.element("input[type='password']")
        self.wait("Sign in", need_run=False)
        return time.perf_counter() - start

    def sign_in(self) -> float:
        self.element("input[type='password']").send_keys(PASSWORD)
        button = self.button("Sign in")
        return self.timed(button.click, "Krippendorff")[0]


FLOOR_PAGE = """import streamlit as st
st.set_page_config(layout="wide")


def sign_in_form():
    st.title("Researcher console")
    with st.form("login"):
        st.text_input("Account (empty: the platform owner)")
        st.text_input("Password", type="password")
        st.form_submit_button("Sign in")


def console_first_view():
    with st.sidebar:
        st.markdown("Signed in as **owner** (owner)")
        st.markdown("Database: `sqlite:////tmp/studyapp.sqlite`")
        st.button("Sign out")
    st.title("Researcher console")
    with st.tabs(["Studies", "Create", "Matrices", "Scoring", "Accounts"], key="a", on_change="rerun")[0]:
        st.selectbox("Study", ["report-bench — Report bench (running)", "second — Second study (running)"])
        with st.tabs(["Dashboard", "Details", "Progress", "Preview", "Invite", "Export"], key="v",
                     on_change="rerun")[0]:
            st.caption("Live: refreshed every 10 s and recomputed when ratings arrive (intervals from 200 "
                       "bootstrap resamples; the downloadable report uses 1,000). Tables and charts: the "
                       "**Details** tab.")
            cols = st.columns(4)
            cols[0].metric("Ratings", "2500 / 2500")
            cols[1].metric("Annotators", 5)
            for column, label in ((cols[2], "Krippendorff's α (ordinal)"), (cols[3], "Mean agreement (Eq. 13)")):
                column.metric(label, "0.410", help="95% interval 0.366–0.443")
                column.caption("95% interval 0.366–0.443")
            st.caption("Mean quadratic weighted κ 0.457 (no interval); 2500 ratings of 500 items by 5 annotators.")
            for title, text in (("Metric–human alignment", "Eq. 13 agreement and Spearman ρ of each baseline "
                                 "with the mean rating (Fisher interval; permutation p from 200 permutations)."),
                                ("w per category (Eq. 14)", "Overall w = 0.500; agreement with category-tuned "
                                 "w 0.9401, with w = 0.5 0.9401.")):
                st.markdown(f"**{title}**")
                st.caption(text)
            st.download_button("Download report.html", b"report", "report.html")


console_first_view() if st.query_params.get("view") == "console" else sign_in_form()
"""


def framework_floor(scratch: Path, runs: int, record) -> None:
    """Baselines served as a bare Streamlit page with the app's flags: the sign-in form alone (the
    part of "login page" and "reload" that is Streamlit's own: its page and script bundle, the
    websocket, a session, one run), and the console's first view (sidebar, both rows of tabs,
    study picker, the dashboard's headline figures) drawn from constants -- what a reload of the
    console costs the browser without any of the app's own work."""
    from studyapp.platform.commands.cli import WEB, streamlit_command
    from tests.browserhelpers import answers_health_check, free_port

    page = scratch / "floor.py"
    page.write_text(FLOOR_PAGE)
    port = free_port()
    command = [str(page) if part == str(WEB) else part for part in streamlit_command(port, "127.0.0.1")]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        while not answers_health_check(base):
            time.sleep(0.25)
        for _ in range(runs):
            for view, label, text in (("", "sign-in page", "Sign in"), ("console", "console's first view", "Krippendorff")):
                console = Console(base, scratch / "downloads-floor")
                try:
                    start = time.perf_counter()
                    console.driver.get(f"{base}/?view={view}")
                    console.wait(text, need_run=False)
                    record(f"floor: bare Streamlit {label}", time.perf_counter() - start)
                    record("floor: its reload (F5)" if not view else f"floor: {label}, reload (F5)",
                           console.timed(console.driver.refresh, text, need_run=False)[0])
                finally:
                    console.quit()
    finally:
        server.terminate()
        server.wait(timeout=20)


def percentile_row(label: str, seconds: list[float], loads: list[float], note: str = "") -> str:
    ms = np.array(seconds)
    return (f"{label:34} p50 {np.percentile(ms, 50):6.2f} s  p95 {np.percentile(ms, 95):6.2f} s  "
            f"max {ms.max():6.2f} s  n={len(ms)}  load {min(loads):.2f}-{max(loads):.2f}  {note}")


def cli_seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    res = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {res.stderr[-2000:]}")
    return time.perf_counter() - start


def build(folder: Path) -> dict[str, Path]:
    """The studies, two matrix versions and the scoring files (not timed)."""
    from benchmarks.score_hico_scale import workload
    from metrics.detection import write_jsonl

    build_study(folder)
    (folder / "second.toml").write_text(SECOND)
    studyapp("create", str(folder / "second.toml"))
    files = {}
    for name, w in (("v-a", "0.5"), ("v-b", "0.3")):
        studyapp("recalibrate", "report-bench", "--name", name, "--w", w)
        studyapp("matrices", "export", name, "--out", str(folder / name))
    gt, model_a = workload(40, 120, 20, seed=2)
    _, model_b = workload(40, 120, 20, seed=3)
    for name, data, scores in (("gt", gt, False), ("model_a", model_a, True), ("model_b", model_b, True)):
        files[name] = folder / f"{name}.jsonl"
        write_jsonl(data, files[name], with_scores=scores)
    return files


def revise_one(shift: int) -> None:
    """One stored rating changed, so the next report is computed (not read from the cache)."""
    from benchmarks.dashboard import revise
    revise(1, shift)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, help="build the studies in this folder, or reuse the ones "
                        "built there by an earlier run (default: a temporary folder)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # stop the app and browsers on kill
    times: dict[str, list[float]] = {}
    loads: dict[str, list[float]] = {}
    notes: dict[str, str] = {}

    def record(label: str, seconds: float) -> None:
        times.setdefault(label, []).append(seconds)
        loads.setdefault(label, []).append(load())

    try:
        measure(args, record, notes)
    finally:   # what was measured, also when a step failed
        print_table(args, times, loads, notes)


def _bench_data(args, tmp: str) -> tuple[Path, dict]:
    """The benchmark's folder and input files: those of ``--data`` when built there, else built now."""
    folder = args.data or Path(tmp)
    os.environ.pop("DATABASE_URL", None)
    if (folder / "model_b.jsonl").exists():
        os.environ["STUDYAPP_DB"] = str(folder / "studyapp.sqlite")
        os.environ["STUDYAPP_EXPORTS"] = str(folder / "exports")
        return folder, {name: folder / f"{name}.jsonl" for name in ("gt", "model_a", "model_b")}
    folder.mkdir(parents=True, exist_ok=True)
    return folder, build(folder)


def _cli_baselines(args, files: dict, folder: Path, scratch: Path, record) -> None:
    """Command-line baselines, this run: metrics score of both models with each matrix set, and the export."""
    for run in range(args.runs):
        total = 0.0
        for model in ("model_a", "model_b"):
            for version in (None, "v-a", "v-b"):
                argv = ["-m", "metrics", "score", "--gt", str(files["gt"]), "--pred", str(files[model])]
                if version:
                    argv += ["--verb-sim", str(folder / version / "verb.npz"),
                             "--object-sim", str(folder / version / "object.npz")]
                seconds = cli_seconds(argv)
                record("CLI metrics score, one run", seconds)
                total += seconds
        record("CLI metrics score, the 6 runs", total)
        record("CLI studyapp export", cli_seconds(["-m", "studyapp", "export", "report-bench",
                                                   "--out", str(scratch / f"cli-export-{run}")]))


def _sign_in_runs(args, base: str, scratch: Path, record, notes) -> None:
    """Sign-in, login page and reload: a new page each run."""
    for run in range(args.runs):
        console = Console(base, scratch / f"downloads-a{run}")
        try:
            record("login page", console.open_login())
            record("sign in -> console loaded", console.sign_in())
            seconds, found = console.timed(console.driver.refresh, "Krippendorff", "Password",
                                           need_run=False)   # a new page: its first run
            record("reload (F5)", seconds)
            notes["reload (F5)"] = ("still signed in" if found == "Krippendorff"
                                    else "SIGNED OUT (the sign-in form came back)")
        finally:
            console.quit()


def _console_setup(console, notes, Keys) -> None:
    """Sign in, recalibrate once (the first saved version's cost), and go to the Studies area."""
    console.open_login()
    console.sign_in()
    console.area("Matrices")
    console.pick("stMultiSelect", "Studies whose ratings recalibrate", "report-bench", Keys.ENTER,
                 Keys.ESCAPE)
    console.wait("", need_run=False)
    seconds, _ = console.timed(console.button("Recalibrate").click, "Held-out agreement")
    notes["save version"] = f"(one recalibration first: {seconds:.2f} s)"
    console.area("Studies")


def _console_run(console, run: int, stamp: str, files: dict, record, Keys) -> None:
    """One round of the signed-in interactions, ending on the dashboard after a revised rating
    (``Keys``: selenium's)."""
    console.pick("stSelectbox", "Study", "second")
    record("switch study", console.timed(lambda: console.driver.switch_to.active_element.send_keys(
        Keys.ENTER), "0 / 120")[0])
    console.pick("stSelectbox", "Study", "report-bench")
    record("dashboard (study with 2,500 ratings)", console.timed(
        lambda: console.driver.switch_to.active_element.send_keys(Keys.ENTER), "Krippendorff")[0])
    record("details: agreement (a table, 4 charts)", console.timed(
        lambda: console.tab("Details"), "median seconds per item")[0])
    record("details: raters (a table, 2 charts)", console.timed(
        lambda: console.tab("Raters"), "Reliability")[0])
    console.tab("Preview")
    console.pick("stSelectbox", "Item", Keys.ARROW_DOWN)
    for _ in range(run):
        console.driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    record("preview item switch", console.timed(
        lambda: console.driver.switch_to.active_element.send_keys(Keys.ENTER),
        "answers given here are not stored")[0])
    record("open the Matrices area", console.area("Matrices"))
    name = console.element('[data-testid="stTextInput"]', "Version name").find_element(
        "tag name", "input")
    name.send_keys(Keys.CONTROL, "a")
    name.send_keys(Keys.DELETE)
    name.send_keys(f"bench-{stamp}-{run}", Keys.ENTER)
    console.wait("", need_run=False)
    record("save version", console.timed(console.button("Save version").click,
                                         f"Saved matrix version bench-{stamp}-{run}")[0])
    # v-a with v-b, then v-b with v-a (each computed the first time, kept per process after)
    first, other = ("v-a", "v-b") if run % 2 == 0 else ("v-b", "v-a")
    console.choose("Version", first, Keys)
    console.pick("stSelectbox", "Compare with", other)
    record("compare", console.timed(console.option(other).click, f"verb: {first} vs {other}")[0])
    record("open the Scoring area", console.area("Scoring"))
    for label, paths in (("Ground truth", [files["gt"]]),
                         ("Predictions", [files["model_a"], files["model_b"]])):
        field = console.element('[data-testid="stFileUploader"]', label)
        field.find_element("css selector", "input[type=file]").send_keys("\n".join(map(str, paths)))
        console.wait(paths[-1].name, need_run=False)
    for version in ("v-a", "v-b"):
        console.pick("stMultiSelect", "Recalibrated matrix versions", version, Keys.ENTER, Keys.ESCAPE)
        console.wait("", need_run=False)
    record("console scoring (2 models x 3 sets)",
           console.timed(console.button("Score").click, "Download scores.json")[0])
    record("back to Studies (dashboard)", console.area("Studies", "Krippendorff"))
    console.tab("Export")
    record("console export", console.timed(console.button("Write export folder").click, "Wrote ")[0])
    console.tab("Dashboard")


def _report_download_seconds(console, downloads: Path) -> float:
    """Seconds from clicking "Download report.html" to the file in the downloads folder."""
    before = set(downloads.iterdir())
    button = console.button("Download report.html")
    start = time.perf_counter()
    button.click()
    deadline = start + 180
    while True:
        new = [p for p in set(downloads.iterdir()) - before
               if p.suffix == ".html" and p.stat().st_size > 0]
        if new:
            break
        if time.perf_counter() > deadline:
            raise SystemExit("no report.html downloaded in 180 s")
        time.sleep(0.02)
    return time.perf_counter() - start


def measure(args, record, notes) -> None:
    from selenium.webdriver.common.keys import Keys

    from tests.browserhelpers import running_app

    with tempfile.TemporaryDirectory() as tmp:
        folder, files = _bench_data(args, tmp)
        stamp = time.strftime("%H%M%S")   # version names are never reused
        scratch = Path(tmp)
        print(f"built: report-bench (500 items x 5 raters), second (40 items), versions v-a and v-b; "
              f"{os.cpu_count()} cores; load {load():.2f}", flush=True)
        _cli_baselines(args, files, folder, scratch, record)
        framework_floor(scratch, args.runs, record)
        with running_app(folder) as base:
            _sign_in_runs(args, base, scratch, record, notes)
            # the other interactions in one signed-in session
            downloads = scratch / "downloads"
            downloads.mkdir()
            console = Console(base, downloads)
            try:
                _console_setup(console, notes, Keys)
                for run in range(args.runs):
                    _console_run(console, run, stamp, files, record, Keys)
                    for label, wait in (("first report download", 2 * DASHBOARD_REFRESH_S + 1),
                                        ("report download as new ratings are seen", DASHBOARD_REFRESH_S + 1)):
                        revise_one(run % 4 + 1)
                        time.sleep(wait)
                        record(label, _report_download_seconds(console, downloads))
                    print(f"  run {run + 1}/{args.runs} done (load {load():.2f})", flush=True)
            finally:
                console.quit()


def print_table(args, times, loads, notes) -> None:
    if "console scoring (2 models x 3 sets)" in times:
        cli_score = float(np.median(times["CLI metrics score, the 6 runs"]))
        notes["console scoring (2 models x 3 sets)"] = (
            f"{np.median(times['console scoring (2 models x 3 sets)']) / cli_score:.2f}x the CLI's 6 runs")
    if "console export" in times:
        cli_export = float(np.median(times["CLI studyapp export"]))
        notes["console export"] = f"{np.median(times['console export']) / cli_export:.2f}x the CLI"
    print(f"\nconsole latency ({args.runs} runs each; load = 1-minute average while measured)")
    for label in times:
        print(percentile_row(label, times[label], loads[label], notes.get(label, "")))
    print(f"targets: each interaction <= 1 s p95; scoring and export <= 1.5x the CLI; first report "
          f"download <= 2 s; F5 keeps the researcher signed in (load now {load():.2f})")


if __name__ == "__main__":
    main()

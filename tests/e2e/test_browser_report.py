"""The study report as a researcher opens it: headless Chromium at 1366 px wide. Each plot is
shown at its own size (not shrunk, so its text keeps the ≥ 10 px the plots are drawn with,
tests/metrics/test_report_plots.py), lies inside the page, and no plot, heading, table or
paragraph overlaps another (bounding boxes). Each plot's screenshot goes to
test-artifacts/report-browser/ to look at."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from browserhelpers import CHROMEDRIVER, CHROMIUM, start_chromium
from projectpaths import ROOT
from studyhelpers import make_study

ARTIFACTS = ROOT / "test-artifacts" / "report-browser"

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but chromium / chromedriver are missing (scripts/ci_browser.sh)")
    pytest.skip("chromium and chromium-driver are not installed", allow_module_level=True)

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By

BOXES = """return Array.from(document.querySelectorAll('body > h1, body > h2, body > h3, body > p, body > table, img'))
  .map(e => { const r = e.getBoundingClientRect();
    return {tag: e.tagName, alt: e.alt || e.textContent.slice(0, 40), x: r.left + scrollX, y: r.top + scrollY,
            w: r.width, h: r.height, natural: e.naturalWidth || null}; });"""


# raters: (items, ratings per item, items per rater) — 3, 11 and 30 raters each rate a share
DESIGNS = {3: (24, 3, "all"), 11: (33, 4, 12), 30: (60, 4, 8)}


@pytest.fixture(params=sorted(DESIGNS), ids=lambda k: f"{k}-raters")
def report(tmp_path, request):
    from studyapp.platform.records.simulate import simulate_study
    from studyapp.platform.reporting import analysis
    items, per_item, per_rater = DESIGNS[request.param]
    make_study(tmp_path, n_items=items, raters=per_item, per_annotator=per_rater, slug="r")
    simulate_study("r", k=request.param, noise=0.6, seed=2)
    result = analysis.analyse_study("r", n_resamples=50, permutations=50)
    assert result.agreement.n_annotators == request.param
    return analysis.write_study_report("r", result, tmp_path / "exports")


@pytest.fixture
def browser():
    driver = start_chromium("--window-size=1366,900", "--hide-scrollbars", "--force-device-scale-factor=1")
    yield driver
    driver.quit()


def test_report_plots_unshrunk_and_nothing_overlaps_at_1366_px(report, browser):
    browser.get(report.as_uri())
    assert browser.execute_script("return document.documentElement.clientWidth") >= 1300
    boxes = browser.execute_script(BOXES)
    plots = [b for b in boxes if b["tag"] == "IMG"]
    assert len(plots) >= 6
    page = browser.execute_script("return document.body.getBoundingClientRect().right")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for element in browser.find_elements(By.TAG_NAME, "img"):
        browser.execute_script("arguments[0].scrollIntoView()", element)
        element.screenshot(str(ARTIFACTS / f"{element.get_attribute('alt')}-{report.parent.parent.name}.png"))
    for plot in plots:
        assert plot["w"] == pytest.approx(plot["natural"], abs=1), plot      # shown at its own size
        assert plot["x"] + plot["w"] <= page + 1, plot
    for a, b in itertools.combinations([b for b in boxes if b["w"] > 0 and b["h"] > 0], 2):
        across = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
        down = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
        assert not (across > 1 and down > 1), (a, b)

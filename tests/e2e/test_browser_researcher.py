"""The researcher's loop in a real headless Chromium: sign in, watch a simulated study
fill up with the dashboard's agreement updating, recalibrate the matrices from it, save the
version and download its provenance, score two models with the baseline and the recalibrated
matrices, download the scores. Every figure on screen or in the download is checked against the
metric package; both downloads are audited with the study behind the version."""

from __future__ import annotations

import json
import time

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from studyhelpers import make_study
from test_browser import WAIT_S, browser, button, open_tab, running_app, wait_idle, wait_text  # noqa: F401

from metrics.detection._detections import write_jsonl
from metrics.study._agreement import alpha_of_matrix, rating_matrix, validate_ratings
from studyapp.core import accounts
from studyapp.platform.operations import matrix_versions, scoring
from studyapp.platform.records import exports
from studyapp.platform.records.simulate import simulate_study

pytestmark = pytest.mark.slow


def widget(driver, testid: str, label: str):
    """The Streamlit widget of this kind whose label starts with ``label``."""
    def find(d):
        for element in d.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]'):
            if element.text.strip().startswith(label) and element.is_displayed():
                return element
        return False
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        find, message=f"waiting for the {label!r} widget")


def choose(driver, label: str, option: str) -> None:
    """Pick ``option`` in the multiselect labelled ``label`` (typed, then Enter)."""
    wait_idle(driver)
    box = widget(driver, "stMultiSelect", label).find_element(By.TAG_NAME, "input")
    box.click()
    box.send_keys(option)
    box.send_keys(Keys.ENTER)
    box.send_keys(Keys.ESCAPE)
    wait_idle(driver)


def alpha_of(slug: str) -> float:
    ratings = exports.study_tables(slug)["ratings.csv"]
    return alpha_of_matrix(rating_matrix(validate_ratings(ratings[ratings["phase"] == "main"], source="r")))


def downloaded(driver, name: str) -> bytes:
    target = driver.downloads / name
    deadline = time.monotonic() + WAIT_S
    while not target.exists() or target.stat().st_size == 0:
        assert time.monotonic() < deadline, f"no {name} in {list(driver.downloads.iterdir())}"
        time.sleep(0.2)
    return target.read_bytes()


def test_the_researchers_loop_from_ratings_to_scored_models(tmp_path, browser):
    from benchmarks.score_hico_scale import workload

    make_study(tmp_path, n_items=30, raters=3, slug="t")
    gt, model_a = workload(25, 90, 15, seed=2)
    _, model_b = workload(25, 90, 15, seed=3)
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(model_a, tmp_path / "model_a.jsonl")
    write_jsonl(model_b, tmp_path / "model_b.jsonl")
    with running_app(tmp_path) as base:
        browser.get(f"{base}/console")
        field = WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']"))
        field.send_keys("browser-pw")
        button(browser, "Sign in").click()
        wait_text(browser, "no main ratings yet")

        # the study fills up: one annotator, then two more; the dashboard follows by itself
        simulate_study("t", k=1, noise=0.5, seed=1)
        wait_text(browser, "only one annotator")
        simulate_study("t", k=2, noise=0.5, seed=2)
        wait_text(browser, f"{alpha_of('t'):.3f}")
        wait_text(browser, "90 / 90")

        # recalibrate from it and save the version
        open_tab(browser, "Matrices")
        choose(browser, "Studies whose ratings recalibrate", "t")
        button(browser, "Recalibrate").click()
        wait_text(browser, "Held-out agreement")
        name = widget(browser, "stTextInput", "Version name").find_element(By.TAG_NAME, "input")
        name.send_keys("v1")
        name.send_keys(Keys.ENTER)
        button(browser, "Save version").click()
        wait_text(browser, "Saved matrix version v1")
        button(browser, "provenance.json").click()
        provenance = json.loads(downloaded(browser, "v1-provenance.json"))

        # score two models with the baseline and the saved version, download the table
        open_tab(browser, "Scoring")
        for label, path in (("Ground truth", tmp_path / "gt.jsonl"),):
            widget(browser, "stFileUploader", label).find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(str(path))
        uploader = widget(browser, "stFileUploader", "Predictions").find_element(By.CSS_SELECTOR, "input[type=file]")
        uploader.send_keys(f"{tmp_path / 'model_a.jsonl'}\n{tmp_path / 'model_b.jsonl'}")
        wait_text(browser, "model_b.jsonl")
        choose(browser, "Recalibrated matrix versions", "v1")
        button(browser, "Score").click()
        button(browser, "Download scores.json").click()
        shown = json.loads(downloaded(browser, "scores.json"))["models"]

    expected = json.loads(scoring.score_models(tmp_path / "gt.jsonl", {"model_a": tmp_path / "model_a.jsonl",
                                                                       "model_b": tmp_path / "model_b.jsonl"},
                                               ["v1"]).to_json())["models"]
    assert shown == expected
    assert set(shown["model_a"]) == {scoring.BASELINE, "version v1"}
    assert shown["model_a"][scoring.BASELINE]["shoe_map"] != shown["model_a"]["version v1"]["shoe_map"]
    (version,) = matrix_versions.list_versions()["name"]
    assert version == "v1"
    assert provenance["studies"] == ["t"]
    # each download is audited with the study behind the version it used
    entries = [r for r in accounts.audit_log(accounts.FIRST_OWNER).to_dict("records") if r["action"] == "downloaded"]
    assert [(r["who"], r["study"], json.loads(r["detail"])["file"]) for r in entries] == [
        ("owner", "t", "scores.json"), ("owner", "t", "v1-provenance.json")]

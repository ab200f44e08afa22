"""SHOE's design launched from uploads in a real headless Chromium: the platform owner uploads
SHOE's spec extended with ``[llm]``, ``[active]`` and ``[prolific]``, first without its LLM
ratings file (one error naming the file as the spec names it, no server folder, nothing
created), then with the items and the ratings; the study is created as ``studyapp create``
would create it from the same files."""

from __future__ import annotations

import json

import pytest
from projectpaths import ROOT
from selenium.webdriver.common.by import By
from sqlmodel import select
from test_browser import WAIT_S, browser, button, open_tab, running_app, wait_text  # noqa: F401
from test_browser_researcher import widget

from studyapp.core import storage
from studyapp.core.models import Item
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

pytestmark = pytest.mark.slow

EXTRA = '''
[llm]
ratings = "llm_ratings.csv"

[active]
budget = 60
seed = 0

[prolific]
completion_code = "SHOEDONE1"
screened_out_code = "SHOESCR1"
attention_failed_code = "SHOEATTN1"
'''


def shoe_uploads(folder, shared_data):
    """SHOE's spec (slug ``shoe-llm``) with the three sections, its items file (copied from the
    shared data into the test's folder) and two models' ratings of every pair."""
    items = folder / "shoe_user_study_items.csv"
    items.write_bytes((shared_data / "shoe" / "shoe_user_study_items.csv").read_bytes())
    spec = (ROOT / "studies" / "shoe_study.toml").read_text().replace('slug = "shoe-study"', 'slug = "shoe-llm"')
    (folder / "plain.toml").write_text(spec.replace("../../shared/data/shoe/", ""))
    keys = [(i.key, json.dumps(i.fields)) for i in load_spec(folder / "plain.toml").items if i.role == "main"]
    (folder / "llm_ratings.csv").write_text("item_id,model_a,model_b\n" + "".join(
        f"{key},{len(fields) % 5},{(k * 7) % 5}\n" for k, (key, fields) in enumerate(keys)))
    (folder / "shoe_llm.toml").write_text(spec + EXTRA)
    local = folder / "local.toml"    # the same spec as `studyapp create` reads it beside its files
    local.write_text((spec + EXTRA).replace("../../shared/data/shoe/", ""))
    return folder / "shoe_llm.toml", items, folder / "llm_ratings.csv", local


def test_shoes_design_with_llm_active_and_prolific_launches_from_uploads(tmp_path, browser, shared_data):
    upload_dir = tmp_path / "upload"
    upload_dir.mkdir()
    spec, items, llm, local = shoe_uploads(upload_dir, shared_data)
    expected = load_spec(local)
    with running_app(tmp_path) as base:
        browser.get(f"{base}/console")
        widget(browser, "stTextInput", "Password").find_element(By.TAG_NAME, "input").send_keys("browser-pw")
        button(browser, "Sign in").click()
        wait_text(browser, "Signed in as owner")
        open_tab(browser, "Create")
        open_tab(browser, "Upload")
        widget(browser, "stFileUploader", "Spec (TOML").find_element(
            By.CSS_SELECTOR, "input[type=file]").send_keys(str(spec))
        files = widget(browser, "stFileUploader", "Files the spec names").find_element(By.CSS_SELECTOR, "input[type=file]")
        files.send_keys(str(items))
        wait_text(browser, "_items.csv")   # the chip shortens long names
        button(browser, "Create from upload").click()
        wait_text(browser, "names a file that does not exist")
        (error,) = [e.text for e in browser.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')]
        assert error == ("shoe_llm.toml: key 'llm.ratings' names a file that does not exist: llm_ratings.csv "
                     "(not among the uploads; the upload box refuses a file over 50 MB)")
        assert studies.list_studies() == []

        files = widget(browser, "stFileUploader", "Files the spec names").find_element(By.CSS_SELECTOR, "input[type=file]")
        files.send_keys(str(llm))
        wait_text(browser, "ratings.csv")
        button(browser, "Create from upload").click()
        wait_text(browser, "Created study 'shoe-llm' with", timeout=3 * WAIT_S)
    (study,) = studies.list_studies()
    assert json.loads(study.spec_json) == json.loads(expected.to_json())
    with storage.read_session() as session:
        stored = session.exec(select(Item.item_key, Item.llm_rating, Item.active_priority)
                              .where(Item.study_id == study.id, Item.role == "main")).all()
    by_key = {i.key: i for i in expected.items if i.role == "main"}
    assert len(stored) == 499   # pair 135 shows an excluded sense (bitch.n.04)
    assert all(by_key[key].llm_rating == llm_rating and by_key[key].active_priority == priority
               for key, llm_rating, priority in stored)
    assert 0 < sum(1 for *_, priority in stored if priority) < 499   # a sample drawn for humans

"""Active selection with rater routing in a real headless Chromium: an adaptive study
whose spec gives an LLM ensemble's ratings (``[llm]``), draws the items humans rate
(``[active]``) and routes inconsistent raters out (``[routing]``). Two annotators rate by keys;
the database shows only the drawn items were handed out, the first annotator's in the drawn
priority order. A third, simulated careless, presses 2 every time: once the server's rater model
has seen five of those ratings it flags them and their session ends with the routed code on
screen. The console's dashboard then shows the prediction-powered estimate and the routing."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import write_items
from test_browser import WAIT_S, browser, button, running_app, wait_text  # noqa: F401
from test_browser_adaptive import rate_in_browser, wait_for_server_refits

from studyapp.core import storage
from studyapp.core.models import Annotator, Assignment, Event, Item
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

pytestmark = pytest.mark.slow

SPEC = '''title = "Active routing"
study_type = "hoi_similarity"
instructions = "Rate the pair."
[adaptive]
target_se = 0.01
min_raters = 2
max_raters = 3
refit_every = 1
[llm]
ratings = "llm.csv"
[active]
budget = 10
seed = 3
[routing]
min_ratings = 5
min_consistency = 0.5
[prolific]
completion_code = "DONE1"
routed_code = "ROUTED7"
[items]
source = "csv"
path = "items.csv"
'''


def truth(key: str) -> int:
    return int(key[1:]) % 5


def test_active_selection_with_routing_in_the_browser(tmp_path, browser):
    write_items(tmp_path / "items.csv", 16)
    # three models: two agree on k mod 5, one says 3k mod 5, so items disagree by 0 (k ≡ 0 mod 5)
    # or by an SD of 0.94–1.89; floor 0.2, budget 10 → π 0.925 / 0.525 / 0.125
    (tmp_path / "llm.csv").write_text("item_id,gpt,claude,gemini\n" + "".join(
        f"i{k:02d},{k % 5},{(k * 3) % 5},{k % 5}\n" for k in range(1, 17)))
    (tmp_path / "s.toml").write_text(SPEC)
    study_id = studies.create_study(load_spec(tmp_path / "s.toml"))
    with storage.read_session() as session:
        drawn = dict(session.exec(select(Item.item_key, Item.active_priority)
                                  .where(Item.active_priority > 0)).all())
    by_priority = sorted(drawn, key=drawn.get)
    invites = studies.invite(study_id, 3)
    with running_app(tmp_path) as base:
        first = rate_in_browser(browser, f"{base}/?token={invites[0].token}", truth)
        wait_for_server_refits(study_id)
        second = rate_in_browser(browser, f"{base}/?token={invites[1].token}",
                                 lambda k: min(4, truth(k) + int(k[1:]) % 2))
        wait_for_server_refits(study_id)
        careless = rate_in_browser(browser, f"{base}/?token={invites[2].token}", lambda k: 2)
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "routes its remaining items to other annotators" in body and "ROUTED7" in body
        assert "DONE1" not in body

        browser.get(f"{base}/console")
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']")).send_keys("browser-pw")
        button(browser, "Sign in").click()
        wait_text(browser, "Prediction-powered estimates")
        wait_text(browser, "items: 13, retired")   # adaptive progress counts the drawn items
        wait_text(browser, "How to read this: the target is")
        wait_text(browser, "Routed out so far: 1")

    # the first annotator got every drawn item, most uncertain first; nobody got an undrawn one
    assert first == by_priority and sorted(second) == sorted(drawn)
    with storage.read_session() as session:
        handed = set(session.exec(select(Item.item_key).join(Assignment, Assignment.item_id == Item.id)
                                  .where(Assignment.phase == "main")).all())
        routed = [(a.pseudonym, a.routed_at is not None) for a in session.exec(select(Annotator).order_by(Annotator.id))]
        events = [json.loads(e.detail) for e in session.exec(select(Event).where(Event.kind == "routed_out"))]
    assert handed == set(drawn) and len(drawn) == 13
    # the careless rater: routed once a stored fit saw ≥ 5 of their ratings (refits run in the
    # background, so an item or two more may be served first), well before all 13 drawn items
    assert [r for _name, r in routed] == [False, False, True]
    assert 5 <= len(careless) < len(drawn) and events[0]["ratings"] == len(careless)
    assert events[0]["consistency"] == 0.0   # flagged constant by the rater model: no weight

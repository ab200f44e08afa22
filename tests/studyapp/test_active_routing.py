"""Active selection (spec ``[llm]`` + ``[active]``), rater routing (``[routing]``) and the
prediction-powered estimates of the console and the report (``studyapp.platform.reporting.ppi_estimates``), on
SQLite and PostgreSQL. Expected values are worked out by hand in the comments."""

import json
import re

import pandas as pd
import pytest
from sqlmodel import select
from studyhelpers import make_annotators, rate_all, routing_study, write_adaptive_spec, write_items

from metrics import InputError
from metrics.study._report import table_html
from studyapp.core import storage
from studyapp.core.models import Annotator, Event, Item, Study
from studyapp.platform import assignment
from studyapp.platform.assignment import adaptive, prolific
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import exports, studies
from studyapp.platform.reporting.analysis import analyse_study, write_report_folder
from studyapp.platform.reporting.dashboard import study_dashboard
from studyapp.platform.reporting.ppi_estimates import headline, ppi_estimates

pytestmark = pytest.mark.usefixtures("db_backend")

# two models; their disagreement (SD, ddof 0): i02 1, i03 2, every other item 0
LLM = "item_id,gpt,claude\ni01,2,2\ni02,1,3\ni03,0,4\ni04,2,2\ni05,3,3\ni06,1,1\ni07,4,4\ni08,0,0\n"


def active_spec(folder, active="budget = 2\nseed = 0\n", llm=LLM, extra=""):
    write_items(folder / "items.csv", 8)
    (folder / "llm.csv").write_text(llm)
    spec = folder / "s.toml"
    spec.write_text(f'''title = "Active"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = 2
{extra}
[llm]
ratings = "llm.csv"
{"" if active is None else "[active]"}
{active or ""}
[items]
source = "csv"
path = "items.csv"
''')
    return spec


def test_active_study_hands_out_only_the_drawn_items_most_uncertain_first(tmp_path):
    study_id = studies.create_study(load_spec(active_spec(tmp_path)))
    # floor 0.2 of uniform: weights 0.8·u/3 + 0.2/8 → i02 7/24, i03 67/120, others 1/40; budget 2
    # caps i03 at 1 and spreads the other 1 over 7/24 + 6/40 = 53/120: i02 35/53, others 3/53
    with storage.read_session() as session:
        stored = {k: (p, q, llm) for k, p, q, llm in session.exec(select(
            Item.item_key, Item.active_probability, Item.active_priority, Item.llm_rating))}
    assert stored["i03"][0] == pytest.approx(1.0) and stored["i02"][0] == pytest.approx(35 / 53)
    assert all(stored[k][0] == pytest.approx(3 / 53) for k in ("i01", "i04", "i05", "i06", "i07", "i08"))
    # seed 0 draws i02, i03, i04 (numpy's default_rng(0) uniforms 0.64, 0.27, 0.04, 0.02, ...)
    # ; priority: i03 (SD 2), i02 (SD 1), i04 (SD 0)
    assert {k: v[1] for k, v in stored.items() if v[1]} == {"i03": 1, "i02": 2, "i04": 3}
    assert stored["i02"][2] == 2.0 and stored["i07"][2] == 4.0   # the ensemble's mean
    first, second, third = make_annotators(study_id, 3)
    assert rate_all(first) == ["i03", "i02", "i04"]
    assert assignment.planned_count(first) == 3   # only the drawn items count
    assert rate_all(second, 3) == ["i03", "i02", "i04"]
    assert rate_all(third) == []                 # two raters each: nothing left, never i01
    p = studies.progress(study_id)               # only the drawn items are to be rated
    assert (p["items"], p["ratings_done"], p["ratings_needed"], p["items_not_drawn"]) == (3, 6, 6, 5)
    items = exports.study_tables("s")["items.csv"].set_index("item_id")
    assert items.loc["i02", "active_probability"] == pytest.approx(35 / 53)
    assert items["active_selected"].to_dict() == {f"i0{k}": k in (2, 3, 4) for k in range(1, 9)}
    assert items.loc["i03", "llm_rating"] == 2.0
    # the report carries the PPI table: 8 items, the 3 drawn ones human-rated (2 ratings each)
    analysis = analyse_study("s", n_resamples=50, permutations=50)
    page = write_report_folder(tmp_path / "report", "s", analysis)
    assert "Prediction-powered estimates" in page.read_text() and "How to read this" in page.read_text()
    row = pd.read_csv(page.parent / "prediction_powered.csv").set_index("group").loc["all items"]
    assert (row["items"], row["human-rated items"], row["human ratings"]) == (8, 3, 6)
    # every drawn item's mean is (2 + 3)/2 = 2.5: the human-only (constant-only regression)
    # estimate of the drawn items is that constant; the two raters differ by a point on every
    # item, so over raters the interval is wide (t on 1 degree of freedom), not of zero width
    assert row["human-only estimate"] == pytest.approx(2.5) and row["human-only low"] < 0 < 5 < row["human-only high"]


def test_without_active_the_llm_ratings_change_nothing_in_the_order(tmp_path):
    study_id = studies.create_study(load_spec(active_spec(tmp_path, None, extra='order = "fixed"')))
    (annotator,) = make_annotators(study_id, 1)
    assert rate_all(annotator) == [f"i0{k}" for k in range(1, 9)]
    assert "active_probability" not in exports.study_tables("s")["items.csv"].columns


def test_console_dashboard_leads_with_the_ppi_answer(tmp_path):
    # [llm] without [active]: two raters rate every item (2 and 3); the dashboard's first line is
    # the all-items PPI answer with what its interval is over, the table one click away
    from studyhelpers import console_page

    from studyapp.core import auth
    study_id = studies.create_study(load_spec(active_spec(tmp_path, active=None)))
    first, second = make_annotators(study_id, 2)
    rate_all(first, 2)
    rate_all(second, 3)
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    assert not at.exception and not at.error
    lines = [m.value.replace("\\", "") for m in at.markdown]      # inert text escapes markdown
    # right under the section's title: estimate, interval over items and raters (2 raters: t on
    # 1 df, wide), saved 0 (every item rated)
    assert lines[0] == "**Prediction-powered estimates: LLM ratings plus human ratings**"
    assert lines[1].startswith("Mean rating over all 8 items: 2.50, 95% interval ")
    assert "over items and raters" in lines[1] and "t on 1 df" in lines[1] and "saves 0%" in lines[1]
    assert [e for e in at.expander if e.label.startswith("Table")]
    assert any("percentile bootstrap over items" in c.value for c in at.caption)


@pytest.mark.parametrize("active, llm, message", [
    ("budget = 9\n", LLM, "key 'active.budget' must not exceed the 8 main items, got 9"),
    ("budget = 2\nfloor = 0\n", LLM, "key 'active.floor' must be a number in (0, 1]"),
    ("budget = 2\ncells = [\"colour\"]\n", LLM, "names 'colour', which not every main item has"),
    ("budget = 2\n", "item_id,gpt\n" + "".join(f"i0{k},2\n" for k in range(1, 9)),
     "key 'active.budget' needs an [llm] ratings file with two or more models"),
    ("budget = 2\n", LLM.replace("i05,3,3", "i05,3,7"), "llm.csv line 6: claude 7 is outside the scale [0, 4]"),
    ("budget = 2\n", LLM.replace("i05,3,3\n", ""), "llm.csv: no LLM ratings for 1 main items, e.g. 'i05'"),
    ("budget = 2\n", LLM.replace("i05,3,3", "i05,x,3"), "llm.csv line 6: gpt 'x' is not a number"),
    ("budget = 2\n", LLM + "i99,1,1\n", "line 10: item_id 'i99' is not a main item of the study"),
])
def test_bad_active_and_llm_sections_are_one_line_errors_naming_the_key_or_line(tmp_path, active, llm, message):
    with pytest.raises(InputError) as error:
        load_spec(active_spec(tmp_path, active, llm))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_routing_needs_adaptive_and_a_distinct_code(tmp_path):
    with pytest.raises(InputError, match="key 'routing.min_consistency' needs an \\[adaptive\\] section"):
        load_spec(active_spec(tmp_path, extra="[routing]\nmin_consistency = 0.5\n"))
    spec = write_adaptive_spec(tmp_path, extra='[routing]\nmin_consistency = 0.5\n'
                                               '[prolific]\ncompletion_code = "C1"\nrouted_code = "C1"\n')
    with pytest.raises(InputError, match="key 'prolific.routed_code' must differ"):
        load_spec(spec)


def fit_parameters(pseudonyms, discrimination):
    """A stored rater-model fit (as adaptive.refit writes it) with the given discriminations."""
    return json.dumps({"thresholds": [-1.5, -0.5, 0.5, 1.5], "scale": [0, 1, 2, 3, 4],
                       "discrimination": dict(zip(pseudonyms, discrimination)),
                       "severity_logit": {p: 0.0 for p in pseudonyms}, "excluded": [], "n_ratings": 0})


def test_a_rater_below_the_consistency_threshold_is_routed_out_with_their_code(tmp_path):
    spec = write_adaptive_spec(
        tmp_path, extra='[routing]\nmin_ratings = 3\nmin_consistency = 0.5\n'
                        '[prolific]\ncompletion_code = "DONE1"\nrouted_code = "ROUTED7"\n',
        adaptive_keys="target_se = 0.01\nmin_raters = 2\nmax_raters = 4\nrefit_every = 1000\n")
    study_id = studies.create_study(load_spec(spec))
    good, middling, shaky = make_annotators(study_id, 3)
    with storage.write_session() as session:
        names = [session.get(Annotator, a).pseudonym for a in (good, middling, shaky)]
        study = session.get(Study, study_id)
        # consistency = discrimination / the median one (1.0): 2.0, 1.0, 0.4 — only the last < 0.5
        study.rater_model = fit_parameters(names, [2.0, 1.0, 0.4])
        session.add(study)
    assert len(rate_all(shaky)) == 3          # min_ratings = 3, then routed out
    assert assignment.next_item(shaky) is None
    assert len(rate_all(good)) == 12 and len(rate_all(middling)) == 12
    assert adaptive.wait_for_refits(timeout=60)
    info = assignment.annotator_session(shaky)
    assert info.routed and info.completed and not assignment.annotator_session(good).routed
    assert prolific.outcome(shaky).code == "ROUTED7" and prolific.outcome(good).code == "DONE1"
    with storage.read_session() as session:
        routed = [json.loads(e.detail) for e in session.exec(select(Event).where(Event.kind == "routed_out"))]
    assert routed == [{"consistency": 0.4, "ratings": 3}]
    annotators = exports.study_tables("a")["annotators.csv"].set_index("annotator")
    assert annotators.loc[names[2], "status"] == "routed out" and annotators.loc[names[2], "routed_at"]
    assert pd.isna(annotators.loc[names[0], "routed_at"])
    board = study_dashboard("a")
    assert board.sections[0].title == "Rater routing"
    assert f"Routed out so far: 1 ({names[2]})." in board.sections[0].text


def test_a_rater_crossing_min_ratings_gets_no_further_item_before_the_next_scheduled_refit(tmp_path):
    # refit_every = 1000: no scheduled refit during the test. Two raters spread their answers
    # over the scale (item k gets k mod 5, and one more capped at 4); the third always presses 2.
    # At the third's 8th main rating the submit refits (the stored fit has not judged them); the
    # fit flags them constant (consistency 0 < 0.5), so the next item request routes them: 8
    # ratings, not 12. Whichever 8 items the third's random order gives them, the others' mean
    # rating over them has SD ≥ 0.78, above the 0.5 a rater needs to be judged (0.125 of the
    # scale's range; with k and k + 1 mod 5 one order in 495 fell to 0.43 and went unjudged).
    def rate(who, task, value):
        assignment.submit(who, task.assignment_id, value, 1.0)
        return assignment.next_item(who)

    study_id, constant = routing_study(tmp_path, rate)
    rated = rate_all(constant)
    with storage.read_session() as session:
        events = [(e.kind, e.annotator_id, e.detail) for e in session.exec(select(Event).order_by(Event.id))
                  if e.kind.startswith(("rater_model", "routed"))]
    assert len(rated) == 8, (rated, events)
    assert assignment.annotator_session(constant).routed
    with storage.read_session() as session:
        fit = json.loads(session.get(Study, study_id).rater_model)
        pseudonym = session.get(Annotator, constant).pseudonym
    assert fit["rater_ratings"][pseudonym] == 8 and pseudonym in fit["excluded"]


def frames(llm, human, active=None):
    """items.csv and ratings.csv of a study: ``llm`` per item, ``human``: item -> ratings."""
    items = pd.DataFrame({"item_id": list(llm), "role": "main", "category": 2, "llm_rating": list(llm.values())})
    if active is not None:
        items["active_probability"] = [active[k][0] for k in llm]
        items["active_selected"] = [active[k][1] for k in llm]
    ratings = pd.DataFrame([{"item_id": k, "annotator": f"a{j}", "rating": str(v), "phase": "main"}
                            for k, values in human.items() for j, v in enumerate(values)],
                           columns=["item_id", "annotator", "rating", "phase"])
    return items, ratings


def test_ppi_estimates_by_hand():
    # rated: item means y = (1, 3, 4) with LLM (0, 2, 4); unrated LLM (1, 3); raters a0 (i1, i2, i3)
    # and a1 (i2). λ = Cov(y, ŷ)/Var(ŷ) = 2/(8/3) = 0.75; estimate 0.75·2 + mean(1, 1.5, 1) = 8/3.
    # Items: (1 − 3/5)·Var(y − 0.75ŷ, ddof 1)/3 = 0.4·(1/12)/3 = 1/90. Raters: residuals y − 0.75ŷ
    # per rating (1, 0.5, 1 | 2.5), rater means 5/6 and 5/2 around 5/4: MS_B = 3·(5/12)² + (5/4)²
    # = 25/12, MS_W = (1/36 + 1/9 + 1/36)/(4 − 2) = 1/12, n₀ = 4 − 10/4 = 3/2; within item i2
    # S = ((0.5 − 1.5)² + (2.5 − 1.5)²)/1 = 2; sharing g = 2 − 6/4 = 1/2, so σ̂_B² = (25/12 − S/2 −
    # MS_W/2)/(3/2 − 1 + 1/2) = 25/24 (so ∂σ̂_B²/∂MS_B = 1). Weights c = (1/3 + 1/6 + 1/3, 1/6),
    # Σc² = 13/18, coefficient C = Σc²·(1 + 0.4/2) − 0.4·(1 + 1/2 + 1)/(3·2) = 0.7. Each rater mean's
    # noise over its own m = (3, 1) ratings: Q = (25/36)/3 + (1/36)/1 = 7/27, so the rater term is
    # C·σ̂_B² + 0.6·Q·(MS_B − n₀σ̂_B²) = 0.7·25/24 + 0.6·(7/27)·(25/48), and MS_B's weight in it
    # (C − 0.6·Q·n₀)·1 + 0.6·Q. T_items' rater noise (13/18 − 0.7)·σ̂_B² = 0.023 exceeds T_items,
    # so all of T_items counts with the raters (D = 1/90), and the degrees of freedom take MS_B at its
    # upper bound κ·MS_B, κ = 1/χ²₁(0.25), in the raters' part's MS_B terms B = w·25/12 + 1/90:
    # U = (κ − 1)·B, df = (V + U)²/(κ·B)² (ν_B = 1, two raters).
    from scipy import stats
    items, ratings = frames({"i1": 0, "i2": 2, "i3": 4, "i4": 1, "i5": 3}, {"i1": [1], "i2": [2, 4], "i3": [4]})
    table = ppi_estimates(items, ratings).set_index("group")
    assert list(table.index) == ["all items", "category 2"]
    row = table.loc["all items"]
    assert (row["items"], row["human-rated items"], row["human ratings"], row["raters"]) == (5, 3, 4, 2)
    assert row["PPI estimate"] == pytest.approx(8 / 3) and row["human-only estimate"] == pytest.approx(8 / 3)
    second_stage = 0.6 * 7 / 27
    variance = 1 / 90 + 0.7 * 25 / 24 + second_stage * 25 / 48
    on_between = (0.7 - second_stage * 1.5) + second_stage
    kappa = 1 / stats.chi2.ppf(0.25, 1)
    bounded = on_between * 25 / 12 + 1 / 90
    df = (variance + (kappa - 1) * bounded) ** 2 / (kappa * bounded) ** 2
    half = stats.t.ppf(0.975, df) * variance ** 0.5
    assert (row["PPI low"], row["PPI high"]) == pytest.approx((8 / 3 - half, 8 / 3 + half), rel=1e-9)
    assert row["df"] == pytest.approx(round(df, 1))
    line = headline(ppi_estimates(items, ratings))   # the dashboard's first line
    assert line.startswith("Mean rating over all 5 items: 2.67, 95% interval ")
    assert "over items and raters" in line and "2 raters, 4 human ratings" in line and "saves" in line
    assert ppi_estimates(items.drop(columns="llm_rating"), ratings) is None


def test_active_ppi_estimates_wait_for_every_drawn_item_and_weight_by_probability():
    llm = {"i1": 1, "i2": 2, "i3": 3}
    drawn = {"i1": (1.0, True), "i2": (1.0, True), "i3": (1.0, True)}
    items, ratings = frames(llm, {"i1": [2], "i2": [3]}, drawn)
    row = ppi_estimates(items, ratings).set_index("group").loc["all items"]
    assert row["note"] == "1 of the items drawn for humans not rated yet" and pd.isna(row["PPI estimate"])
    # every item drawn with π = 1: the estimate is the mean of the human means (2 + 3 + 1)/3 = 2;
    # the items are all in, but the raters are a sample, so the interval is not of zero width
    items, ratings = frames(llm, {"i1": [2], "i2": [3, 3], "i3": [0, 2]}, drawn)
    row = ppi_estimates(items, ratings).set_index("group").loc["all items"]
    assert row["PPI estimate"] == pytest.approx(2.0) and row["PPI low"] < 2.0 < row["PPI high"]
    assert (row["PPI low"], row["PPI high"]) == pytest.approx((row["human-only low"], row["human-only high"]))
    assert row["human-only estimate"] == pytest.approx(2.0) and row["human ratings"] == 5


def test_ppi_table_names_levels_as_the_study_files_do_and_rounds_effective_items():
    items, ratings = frames({"i1": 0, "i2": 2, "i3": 4, "i4": 1}, {"i1": [1], "i2": [2, 4], "i3": [4], "i4": [2]})
    items["level"] = [1.0, 1.0, 3.0, 3.0]     # pandas reads the level column of items.csv as floats
    table = ppi_estimates(items, ratings)
    assert list(table["group"]) == ["all items", "category 2", "category 2, level 1", "category 2, level 3"]
    effective = table["effective items"].dropna()
    assert len(effective) and all(value == round(value, 1) for value in effective)
    # the report prints them as the console shows them: df and effective items with one decimal
    # (df a little under the two raters' 1: their means rest on 3 and 1 ratings, so the rater
    # term rests on σ̂_B² too)
    all_items = dict(zip(table.columns[1:], re.findall(r"<td>(.*?)</td>", table_html(table.set_index("group")))))
    assert (all_items["df"], all_items["effective items"]) == ("0.9", "4.0")
    assert table.set_index("group").loc["all items", "df"] == 0.9
    assert all_items["PPI estimate"] == "2.500"

"""The with-image analysis (SHOE supp. §6.2) on a hand-made example with known updates."""

import json
import subprocess
import sys

import pandas as pd
import pytest
from projectpaths import ROOT

from metrics import InputError
from metrics.study._image_update import image_update, pair_ratings

ITEMS = ["a", "b", "c", "d"]
CATEGORY = {"a": 1, "b": 2, "c": 3, "d": 3}
BEFORE = {"x": [2, 3, 1, 0], "y": [2, 2, 2, 2], "z": [4, 0, 1, 3]}
AFTER = {"x": [2, 4, 1, 0], "y": [2, 2, 0, 2], "z": [4, 0, 1, 3]}  # x: b +1; y: c -2


def table():
    return pd.DataFrame([{"item_id": i, "annotator": a, "before": BEFORE[a][k], "after": AFTER[a][k],
                          "category": CATEGORY[i]} for a in BEFORE for k, i in enumerate(ITEMS)])


def test_share_change_and_direction_by_hand():
    r = image_update(table())
    assert (r["n"], r["n_updated"]) == (12, 2)
    assert r["share_updated"] == pytest.approx(1 / 6)
    half = 1.959964 * (1 / 6 * 5 / 6 / 12) ** 0.5          # 0.210863
    assert r["share_updated_ci"] == pytest.approx([0.0, 1 / 6 + half], abs=1e-6)  # clipped at 0
    assert r["mean_abs_change"] == pytest.approx(1.5)        # |+1| and |−2|
    t = 12.706205                                            # t(0.975, 1)
    sd = 0.5 ** 0.5                                          # sd of [1, 2]
    assert r["mean_abs_change_ci"] == pytest.approx([1.5 - t * sd / 2 ** 0.5, 1.5 + t * sd / 2 ** 0.5], abs=1e-5)
    assert r["mean_abs_change_all"] == pytest.approx(3 / 12)
    assert r["direction"] == {"up": 1, "down": 1, "mean_signed_change": -0.5, "by_size": {"-2": 1, "1": 1}}
    cats = r["by_category"]
    assert {c: (s["n"], s["n_updated"]) for c, s in cats.items()} == {"1": (3, 0), "2": (3, 1), "3": (6, 1)}
    assert cats["2"]["direction"]["up"] == 1 and cats["3"]["direction"]["down"] == 1
    assert cats["1"]["mean_abs_change"] is None
    ann = r["by_annotator"]
    assert {a: s["share_updated"] for a, s in ann.items()} == {"x": 0.25, "y": 0.25, "z": 0.0}


def test_pairing_from_exports_uses_the_latest_answer():
    after = pd.DataFrame({"item_id": ["a", "a", "b"], "annotator": ["x", "x", "x"],
                          "rating": [3, 4, 1], "earlier_rating": ["2", "2", ""],
                          "created_at": ["2025-01-01T10:00:02", "2025-01-01T10:00:05", "2025-01-01T10:00:09"]})
    paired = pair_ratings(after)
    assert paired[["item_id", "before", "after"]].values.tolist() == [["a", "2", 4]]  # b had no earlier rating
    before = pd.DataFrame({"item_id": ["a", "b"], "annotator": ["x", "x"], "rating": [2, 1]})
    joined = pair_ratings(after.drop(columns="earlier_rating"), before,
                          items=pd.DataFrame({"item_id": ["a", "b"], "category": [1, 2]}))
    assert joined.values.tolist() == [["a", "x", 2, 4, 1], ["b", "x", 1, 1, 2]]
    with pytest.raises(InputError, match="--before"):
        pair_ratings(after.drop(columns="earlier_rating"))


def test_cli_and_agreement_report(tmp_path):
    rows = [{"item_id": i, "annotator": a, "rating": AFTER[a][k], "earlier_rating": BEFORE[a][k]}
            for a in BEFORE for k, i in enumerate(ITEMS)]
    ratings = tmp_path / "ratings.csv"
    pd.DataFrame(rows).to_csv(ratings, index=False)
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ITEMS, "category": [CATEGORY[i] for i in ITEMS],
                  "verb_sim": [1.0, 0.5, 0.2, 0.6], "object_sim": [0.4, 1.0, 0.3, 0.1]}).to_csv(items, index=False)
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "metrics", "image-update", "--ratings", str(ratings),
                           "--items", str(items), "--json", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["share_updated"] == pytest.approx(1 / 6) and result["by_category"]["2"]["n_updated"] == 1
    done = subprocess.run([sys.executable, "-m", "metrics", "agreement", "--ratings", str(ratings),
                           "--items", str(items), "--bootstrap", "0", "--out", str(tmp_path / "rep"),
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["image_update"]["n_updated"] == 2
    frame = pd.read_csv(tmp_path / "rep" / "image_update.csv")
    assert frame.loc[frame["group"] == "annotator y", "down"].item() == 1
    assert "With-image pass" in (tmp_path / "rep" / "report.html").read_text()
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,annotator,rating\na,x,2\n")
    done = subprocess.run([sys.executable, "-m", "metrics", "image-update", "--ratings", str(bad)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "--before" in done.stderr and len(done.stderr.splitlines()) == 1

"""The analysis commands on the real states of a study: one annotator so far, every
rating equal, and one category without items. Each command either gives its result, with
"undefined" and the reason where a chance-corrected statistic is 0/0, or refuses in one line;
never a traceback or a NumPy warning."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from projectpaths import ROOT

ITEMS = ("item_id,category,gt_verb,gt_object,pred_verb,pred_object,verb_sim,object_sim\n"
         "p1,2,ride.v.01,horse.n.01,feed.v.01,horse.n.01,0.2,1\n"
         "p2,2,ride.v.01,horse.n.01,straddle.v.01,horse.n.01,0.7,1\n"
         "p3,3,ride.v.01,horse.n.01,ride.v.01,cow.n.01,1,0.4\n"
         "p4,3,hold.v.02,cup.n.01,hold.v.02,bottle.n.01,1,0.6\n")   # no category 1 item at all


def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture
def files(tmp_path):
    def write(rows: str):
        (tmp_path / "items.csv").write_text(ITEMS)
        (tmp_path / "ratings.csv").write_text("item_id,annotator,rating\n" + rows)
        return str(tmp_path / "ratings.csv"), str(tmp_path / "items.csv")
    return write


def one_line_refusal(done, *phrases):
    assert done.returncode == 2 and "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and all(p in done.stderr for p in phrases), done.stderr


@pytest.mark.parametrize("command", ["agreement", "reliability", "rater-model"])
def test_one_annotator_so_far_is_refused_in_one_line(files, command):
    ratings, _ = files("p1,a,2\np2,a,3\np3,a,4\np4,a,1\n")
    one_line_refusal(run(command, "--ratings", ratings), "two", "annotators" if command != "rater-model" else "raters")


def test_every_rating_equal_gives_undefined_with_the_reason_and_no_warning(files, tmp_path):
    ratings, items = files("".join(f"p{k},{a},2\n" for k in range(1, 5) for a in "ab"))
    done = run("agreement", "--ratings", ratings, "--json", str(tmp_path / "a.json"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "Krippendorff's alpha (ordinal) undefined"
    assert lines[2].startswith("mean pairwise agreement (Eq. 13)   1.0000")     # Eq. 13: |2-2| = 0 → 1
    assert lines[-1] == ("undefined: every rating of the items rated twice or more is 2: with no variation, "
                         "chance-corrected statistics (alpha, kappa, rho, ICC) are undefined")
    result = json.loads((tmp_path / "a.json").read_text())
    assert result["krippendorff_alpha"] is None and result["mean_pairwise_agreement"] == 1.0
    done = run("reliability", "--ratings", ratings, "--items", items)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "ICC (agreement  , 1 rater)  undefined" in done.stdout and done.stdout.rstrip().endswith("are undefined")


def test_a_category_without_items_is_left_out_of_tuning_and_alignment(files):
    ratings, items = files("".join(f"p{k},{a},{r}\n" for k, rs in ((1, (1, 1)), (2, (3, 3)), (3, (2, 3)),
                                                                   (4, (3, 4))) for a, r in zip("ab", rs)))
    done = run("tune-w", "--ratings", ratings, "--items", items)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    rows = [line.split()[0] for line in done.stdout.splitlines()[2:] if not line.startswith("agreement")]
    assert rows == ["2", "3", "overall"]           # category 1 has no item: no row, no NaN
    done = run("alignment", "--ratings", ratings, "--items", items, "--permutations", "99")
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr

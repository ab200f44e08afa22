"""The worked example of docs/studies.md, "From an empty folder to a SHOE score on V-COCO", runs
as it stands: its bash block, as processes in an empty temporary folder, ends with a
``score.json`` whose SHOE scores are those of the recalibrated matrices it wrote, and the table
the docs show is that run's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from projectpaths import ROOT

DOC = ROOT / "docs" / "studies.md"
HEADING = "## From an empty folder to a SHOE score on V-COCO"
VERBS = pd.read_csv(ROOT / "metrics" / "datasets" / "vcoco" / "data" / "vcoco_verbs.csv", dtype=str,
                    keep_default_na=False).set_index("label")["synset"]


def example_blocks() -> tuple[str, str]:
    """(the section's bash block, its text block)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    bash = re.search(r"^```bash\n(.*?)^```$", section, re.S | re.M)
    table = re.search(r"^```text\n(.*?)^```$", section, re.S | re.M)
    assert bash and table, "the example needs its bash block and the score table"
    return bash.group(1), table.group(1)


def matrix_sim(path: Path, a: str, b: str) -> float:
    """Similarity in [0, 1] of two synsets in a long-form matrix CSV (a,b,score on 0-4)."""
    if a == b:
        return 1.0
    m = pd.read_csv(path)
    hit = m[((m["a"] == a) & (m["b"] == b)) | ((m["a"] == b) & (m["b"] == a))]
    return float(hit["score"].iloc[0]) / 4 if len(hit) else 0.0


@pytest.mark.slow
def test_the_vcoco_example_runs_from_an_empty_folder_to_a_shoe_score(tmp_path):
    script, table = example_blocks()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "STUDYAPP_DB")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["STUDYAPP_EXPORTS"] = str(tmp_path / "unused-exports")
    run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    folder = tmp_path / "shoe-vcoco"
    assert (folder / "study.sqlite").exists() and not (tmp_path / "unused-exports").exists()
    (export,) = (folder / "export" / "vcoco-verbs").iterdir()
    assert set(pd.read_csv(export / "items.csv")["dataset"]) == {"vcoco"}

    out = json.loads((folder / "score.json").read_text())
    verbs = folder / "recalibrated" / "verb_recalibrated.csv"
    sigma = {}   # one prediction per class on its ground truth's boxes, same object: σ = (v + 1) / 2
    for gt, pred in (("kick-obj", "hit-obj"), ("ski-instr", "surf-instr")):
        v = matrix_sim(verbs, VERBS[pred], VERBS[gt])
        sigma[gt] = (v + 1.0) / 2
    sigma["cut-obj"] = 1.0
    per = {c["verb"]: c for c in out["per_class"]}
    assert set(per) == set(sigma)
    for verb, s in sigma.items():
        assert per[verb]["shoe_ap"] == pytest.approx(s * s, abs=1e-6), verb
    assert out["shoe_map"] == pytest.approx(sum(s * s for s in sigma.values()) / 3, abs=1e-6)
    assert out["map"] == pytest.approx(1 / 3)
    assert out["params"]["dataset"] == "vcoco"
    # the matrices were recalibrated: hit for kick is no longer the baseline's 2.4 / 4 (siblings)
    assert 2 * sigma["kick-obj"] - 1 != pytest.approx(0.6, abs=1e-4)

    row = table.strip().splitlines()[-1].split()
    assert row[:2] == ["full", "3"]
    assert [float(x) for x in row[2:]] == [round(100 * out["map"], 2), round(100 * out["shoe_map"], 2),
                                           round(100 * out["shoe_mf1"], 2)]

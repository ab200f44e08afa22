"""The PPI savings benchmark in its fast mode, run as the command it is: the figures
it prints hold the properties the docs report."""

import re
import subprocess
import sys

import numpy as np
import pytest
from projectpaths import ROOT

from benchmarks.ppi_savings import load_design, shoe_statistics

pytestmark = pytest.mark.slow

def test_fast_mode_prints_savings_and_coverage():
    done = subprocess.run([sys.executable, "-m", "benchmarks.ppi_savings", "--fast"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        m = re.match(r"(\S.*?\)|agreement SHOE vs humans)\s+(classical|PPI|active PPI.*?)\s+([\d.]+)\s+([\d.]+)%\s+(\d+)\s+(-?[\d.]+)%",
                     line)
        if m:
            rows[(m[1], m[2].strip())] = (float(m[3]), float(m[4]), int(m[5]), float(m[6]))
    assert len(rows) == 5 * 5
    assert rows[("mean rating (pool)", "classical")][2:] == (2500, 0.0)
    # the LLM's ratings correlate ~0.8 with the mean human rating: PPI needs well under 60% of the ratings
    assert rows[("mean rating (pool)", "PPI")][3] > 40
    # the agreement of SHOE's score with humans: the model *is* the metric, nothing to gain
    assert abs(rows[("agreement SHOE vs humans", "PPI")][3]) < 10
    # 40 studies: coverage of nominal 95% intervals within sampling error
    assert all(c >= 80 for _, c, _, _ in rows.values())


def test_simulation_reproduces_shoe_published_figures():
    stats = np.median([shoe_statistics(load_design(), seed) for seed in range(6)], axis=0)
    agreement, annotators, spearman = stats
    assert abs(agreement - 0.8573) < 0.01 and abs(annotators - 0.7861) < 0.01 and abs(spearman - 0.799) < 0.03

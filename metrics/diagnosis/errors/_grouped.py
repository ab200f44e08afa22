"""The grouped oracles of Diag-HOI §3.3: every false positive, every false negative."""

from __future__ import annotations

import numpy as np

from metrics.diagnosis.errors._base import GroupedOracle


class FalsePositiveGroup(GroupedOracle):
    """Grouped oracle (§3.3): remove every false positive."""

    name, title, section = "false_positive", "False positives", "§3.3"
    rank = 8

    def fix(self, state, d):
        state.keep[d.kind != 0] = False

    def count(self, d, predictions, ground_truths):
        return int(np.sum(predictions & (d.kind != 0)))


class FalseNegativeGroup(GroupedOracle):
    """Grouped oracle (§3.3): the ground-truth count of each class becomes its true positives."""

    name, title, section, group = "false_negative", "False negatives", "§3.3", "false_negative"
    rank = 9

    def fix(self, state, d):
        state.n_gt = np.bincount(state.cls[d.kind == 0], minlength=len(state.n_gt))

    def count(self, d, predictions, ground_truths):
        return int(np.sum(ground_truths & (d.gt_tp < 0)))

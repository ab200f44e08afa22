"""Missed ground truths (Diag-HOI §3.2): ground truths no prediction found."""

from __future__ import annotations

import numpy as np

from metrics.diagnosis.errors._base import ErrorType


class MissedGTError(ErrorType):
    """Oracle: the ground-truth count of each class drops by its missed ground truths."""

    name, title, section, group = "missed_gt", "Missed GT", "§3.1.3, §3.2.3", "false_negative"
    rank = 7

    def fix(self, state, d):
        state.n_gt -= np.bincount(d.scene.gt_class[d.missed], minlength=len(state.n_gt))

    def count(self, d, predictions, ground_truths):
        return int(np.sum(ground_truths & d.missed))

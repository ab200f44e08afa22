"""Interaction (classification) errors (Diag-HOI §3.2): the pair right, the verb wrong."""

from __future__ import annotations

import numpy as np

from metrics.diagnosis.errors._base import FixedToTruePositive


class InteractionError(FixedToTruePositive):
    name, title, section, priority = "interaction", "Interaction", "§3.1.2, §3.2.2", 2
    rank = 6

    def test(self, f):
        return f.localized & ~f.same_class

    def candidates(self, e):
        return e.localized

    def kept_iou(self, e):
        return np.minimum(e.iou_h, e.iou_o)

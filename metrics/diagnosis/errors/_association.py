"""Association errors (Diag-HOI §3.2): both boxes right, paired with the wrong partner."""

from __future__ import annotations

import numpy as np

from metrics.diagnosis.errors._base import FixedToTruePositive


class AssociationError(FixedToTruePositive):
    name, title, section, priority = "association", "Association", "§3.1.1, §3.2.1", 3
    rank = 4

    def test(self, f):
        return f.human & f.object & ~f.localized

    def candidates(self, e):
        return e.human_ok | e.object_ok

    def kept_iou(self, e):
        return np.where(e.human_ok, e.iou_h, e.iou_o)

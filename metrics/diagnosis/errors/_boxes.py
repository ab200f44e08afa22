"""Localization errors (Diag-HOI §3.2): a wrong human box, a wrong object box, both."""

from __future__ import annotations

import numpy as np

from metrics.diagnosis.errors._base import FixedToTruePositive, RemovedByOracle


class HumanBoxError(FixedToTruePositive):
    name, title, section, priority = "human_box", "Human box", "§3.1.1, §3.2.1", 4
    rank = 1

    def test(self, f):
        return f.object & ~f.human

    def candidates(self, e):
        return e.object_ok

    def kept_iou(self, e):
        return e.iou_o


class ObjectBoxError(FixedToTruePositive):
    name, title, section, priority = "object_box", "Object box", "§3.1.1, §3.2.1", 5
    rank = 2

    def test(self, f):
        return f.human & ~f.object

    def candidates(self, e):
        return e.human_ok

    def kept_iou(self, e):
        return e.iou_h


class BothBoxesError(RemovedByOracle):
    name, title, section, priority = "both_boxes", "Both boxes", "§3.1.1, §3.2.1", 6
    rank = 3

    def test(self, f):
        return np.ones(len(f.tp), dtype=bool)

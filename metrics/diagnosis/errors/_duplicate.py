"""Duplicate detections (Diag-HOI §3.2): a second detection of a ground truth already found."""

from __future__ import annotations

from metrics.diagnosis.errors._base import RemovedByOracle


class DuplicateError(RemovedByOracle):
    name, title, section, priority = "duplicate", "Duplicate", "§3.1.2, §3.2.2", 1
    rank = 5

    def test(self, f):
        return f.same_class & ~f.tp

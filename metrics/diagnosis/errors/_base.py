"""What an error type is (TIDE's ``Error``): its name, place in the paper, test and oracle fix;
the two oracle shapes most types share (remove the prediction, or make it a true positive)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from metrics.diagnosis._scene import Edges, Flags, OracleState

if TYPE_CHECKING:   # the diagnosis imports the error types
    from metrics.diagnosis._core import Diagnosis


# ---------------------------------------------------------------------------- error types
class ErrorType(ABC):
    """One error type: its name, where it sits in the paper, its oracle ``fix`` and its count.

    ``title`` and ``section`` are what the report shows; ``group`` names the grouped oracle
    (§3.3) that covers the type. Prediction errors also define ``test(flags)`` (Fig. 2: the
    first type, by ``priority``, whose test holds names the prediction) and get ``code``
    (their index in :attr:`ErrorRegistry.prediction_kinds`); an error type about ground truths
    (no ``priority``) defines ``count`` instead.
    """

    name = ""
    title = ""
    section = ""
    group = "false_positive"
    priority: float | None = None
    rank: float | None = None   # place in the paper's order (Fig. 5, then §3.3); None: after those
    code: int = -1

    def test(self, f: Flags) -> np.ndarray:
        """Which predictions are of this type; error types about ground truths flag none."""
        return np.zeros(len(f.tp), dtype=bool)

    @abstractmethod
    def fix(self, state: OracleState, d: Diagnosis) -> None:
        """Apply this type's oracle to ``state`` (which predictions are kept / true positives);
        ``d`` is the :class:`~metrics.diagnosis._core.Diagnosis`."""

    def count(self, d: Diagnosis, predictions: np.ndarray, ground_truths: np.ndarray) -> int:
        """How many errors of this type are among the ``predictions`` and ``ground_truths``
        (masks of a subset: Full, Rare, Non-rare)."""
        return int(np.sum(predictions & (d.kind == self.code)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class GroupedOracle(ErrorType):
    """A grouped oracle of §3.3: fixes every error of its group at once."""


class RemovedByOracle(ErrorType):
    """Oracle: remove every prediction of this type."""

    def fix(self, state, d):
        state.keep[d.kind == self.code] = False


class FixedToTruePositive(ErrorType):
    """Oracle: turn the prediction into a true positive of its assigned ground truth (joint
    assignment, see module docstring); the lower-scoring true positive it displaces and the
    predictions of this type left without a ground truth are suppressed."""

    @abstractmethod
    def candidates(self, e: Edges) -> np.ndarray:
        """Which (prediction, ground truth) edges this type may be fixed to."""

    @abstractmethod
    def kept_iou(self, e: Edges) -> np.ndarray:
        """IoU of the box the fix keeps (prefers the ground truth closest to the prediction)."""

    def fix(self, state, d):
        mine = d.kind == self.code
        fixed = np.flatnonzero(mine & (d.fix_gt >= 0))
        g = d.fix_gt[fixed]
        state.keep[mine & (d.fix_gt < 0)] = False
        state.cls[fixed] = d.scene.gt_class[g]
        state.tp[fixed] = True
        displaced = d.gt_tp[g]
        state.keep[displaced[displaced >= 0]] = False

"""Diag-HOI's error types, one module per family as TIDE keeps them: localization
(:mod:`._boxes`), :mod:`._association`, :mod:`._duplicate`, :mod:`._interaction`, :mod:`._missed`
and the grouped oracles (:mod:`._grouped`); their base classes in :mod:`._base`. The registry
that orders them is :mod:`metrics.diagnosis._registry`."""

from metrics.diagnosis.errors._association import AssociationError
from metrics.diagnosis.errors._base import ErrorType, FixedToTruePositive, GroupedOracle, RemovedByOracle
from metrics.diagnosis.errors._boxes import BothBoxesError, HumanBoxError, ObjectBoxError
from metrics.diagnosis.errors._duplicate import DuplicateError
from metrics.diagnosis.errors._grouped import FalseNegativeGroup, FalsePositiveGroup
from metrics.diagnosis.errors._interaction import InteractionError
from metrics.diagnosis.errors._missed import MissedGTError

__all__ = ["AssociationError", "BothBoxesError", "DuplicateError", "ErrorType", "FalseNegativeGroup",
           "FalsePositiveGroup", "FixedToTruePositive", "GroupedOracle", "HumanBoxError", "InteractionError",
           "MissedGTError", "ObjectBoxError", "RemovedByOracle"]

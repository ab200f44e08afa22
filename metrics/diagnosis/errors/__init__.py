"""Diag-HOI's error types, one module per family as TIDE keeps them: localization
(:mod:`.boxes`), :mod:`.association`, :mod:`.duplicate`, :mod:`.interaction`, :mod:`.missed`
and the grouped oracles (:mod:`.grouped`); their base classes in :mod:`.base`. The registry
that orders them is :mod:`metrics.diagnosis.registry`."""

from metrics.diagnosis.errors.association import AssociationError
from metrics.diagnosis.errors.base import ErrorType, FixedToTruePositive, GroupedOracle, RemovedByOracle
from metrics.diagnosis.errors.boxes import BothBoxesError, HumanBoxError, ObjectBoxError
from metrics.diagnosis.errors.duplicate import DuplicateError
from metrics.diagnosis.errors.grouped import FalseNegativeGroup, FalsePositiveGroup
from metrics.diagnosis.errors.interaction import InteractionError
from metrics.diagnosis.errors.missed import MissedGTError

__all__ = ["AssociationError", "BothBoxesError", "DuplicateError", "ErrorType", "FalseNegativeGroup",
           "FalsePositiveGroup", "FixedToTruePositive", "GroupedOracle", "HumanBoxError", "InteractionError",
           "MissedGTError", "ObjectBoxError", "RemovedByOracle"]

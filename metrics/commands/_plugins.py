"""``python -m metrics plugins``: the datasets and Diag-HOI error types, built in and from installed
packages (each plugin loaded on its own; one that failed with one line why), and the study types
and study views installed packages declare, listed without loading them: ``python -m studyapp plugins``
loads the study types, the app the views.
Exits 1 when a plugin failed to load.
"""

from __future__ import annotations

from metrics import ERROR_REGISTRY, datasets
from metrics.core._plugins import PLUGIN_GROUPS, PluginGroup, listing_exit_code, plugin_listing


def add_arguments(parser) -> None:
    """No options besides ``--json``."""


def run(args):
    return plugin_listing([datasets.PLUGINS, ERROR_REGISTRY.plugins,
                           PluginGroup(PLUGIN_GROUPS["study type"], kind="study type"),
                           PluginGroup(PLUGIN_GROUPS["study view"], kind="study view")])


def exit_code(result: dict) -> int:
    return listing_exit_code(result)

"""The server process of ``python -m studyapp serve``: Streamlit's own command line, started
after the pages' modules are imported.

Streamlit imports a page's modules in the first browser session's script run, so without this
the first page opened after a start waited ~3 s more (altair, scipy.stats, statsmodels,
sqlmodel and the metric package). Only modules that do not need Streamlit's runtime are
imported here; the pages and the custom components register themselves in their first run.
The dashboards of the studies with ratings are then computed in a background thread, so the
first sign-in after a start does not wait for a large study's first computation (~2 s for
500 items x 5 raters).

    python studyapp/views/server.py run studyapp/views/app.py --server.port 8501 ...   (as ``streamlit``)
"""

from __future__ import annotations

import importlib
import os
import sys
import threading

PRELOADED = (
    "studyapp.core.accounts", "studyapp.platform.assignment", "studyapp.core.charts", "studyapp.platform.reporting.dashboard",
    "studyapp.platform.records.exports", "studyapp.platform.operations.matrix_versions", "studyapp.platform.reporting.overview",
    "studyapp.platform.assignment.prolific", "studyapp.platform.reporting.report_cache", "studyapp.platform.operations.scoring",
    "studyapp.platform.launch.spec_files", "studyapp.platform.records.studies", "studyapp.platform.specs.spec_model", "studyapp.studytypes",
    "metrics.study:reliability_frame", "metrics.study:compare_lines",
)


def preload() -> None:
    """Import each module of :data:`PRELOADED`; ``package:name`` gets a name a package exports
    lazily, which imports the module behind it (the metric package's packages do so)."""
    for entry in PRELOADED:
        module, _, name = entry.partition(":")
        loaded = importlib.import_module(module)
        if name:
            getattr(loaded, name)


def warm_dashboards() -> None:
    """The dashboards of the studies with ratings, computed once in the background, in a child
    process (``studyapp.platform.reporting.dashboard.warm_in_child``; ``STUDYAPP_DASHBOARD_WARMUP=0``: off)."""
    from studyapp.platform.reporting import dashboard

    try:
        dashboard.warm_in_child()
    except Exception as exc:
        print(f"studyapp: dashboard warm-up stopped ({type(exc).__name__})", file=sys.stderr)


def main(argv: list[str]) -> None:
    preload()
    if os.environ.get("STUDYAPP_DASHBOARD_WARMUP", "1") != "0":
        threading.Thread(target=warm_dashboards, name="dashboard-warm-up", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])

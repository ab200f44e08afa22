"""Background child processes of the server end with it."""

from __future__ import annotations

import os
import threading
import time


def exit_with_parent(interval: float = 1.0) -> None:
    """End this process once the process that started it is gone: a daemon thread compares the
    parent's id every ``interval`` seconds (an orphan is handed to another parent). The server's
    warm-up children call it first, so a killed server does not leave them computing a large
    study's dashboard or report for minutes."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()

"""Sweeps a worker runs in the background for as long as it lives (stale jobs, stale release builds)."""

import logging
import threading
from collections.abc import Callable

from django.db import close_old_connections

logger = logging.getLogger(__name__)


def start_sweeping(name: str, sweep: Callable[[], list], interval: float) -> threading.Event:
    """Call ``sweep()`` now and then every ``interval`` seconds in a daemon thread; set the event to stop.

    What the sweep returns (the ids it acted on) is logged; an error is logged and the sweep goes on,
    so that a database hiccup does not end it.
    """
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                acted_on = sweep()
                if acted_on:
                    logger.warning("%s: %s", name, acted_on)
            except Exception:  # noqa: BLE001 - the sweep must outlive a database hiccup
                logger.exception("%s failed", name)
            finally:
                close_old_connections()
            stop.wait(interval)

    threading.Thread(target=loop, name=name, daemon=True).start()
    return stop

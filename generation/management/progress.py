"""The commands that start background work (generate, evaluate, topics): ``--here`` and the progress bar."""

import logging
import threading
import time
from collections.abc import Callable

from django.core.management.base import CommandError
from django.db import connection
from tqdm import tqdm

from generation.services import new_owner_token

logger = logging.getLogger(__name__)

WAITING_HINT = "waiting for a worker: start one with `celery -A causalqa_site worker`, or use --here"


def run_here(
    *, claim: Callable[[str], bool], execute: Callable[[str], object], name: str
) -> threading.Thread:
    """``--here``: claim the work for this process, as a worker would, and do it in a thread of its own, which
    the command follows like a worker's. ``claim(owner)`` and ``execute(owner)`` take the owner token. The
    work records its own failure on its row; what escapes is logged, and the thread closes its connection."""
    owner = new_owner_token()
    if not claim(owner):
        raise CommandError(f"{name} could not be claimed")

    def work():
        try:
            execute(owner)
        except Exception:  # noqa: BLE001 - the row says what failed; the command reports its status
            logger.exception("%s failed", name)
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    return thread


def follow(row, *, runner, stream, quiet: bool, describe: Callable, cancel: Callable):
    """Show ``row``'s progress (a job or a run: ``status``, ``is_finished``) until it ends, and return it.

    ``describe(row)`` gives (total, finished, text after the bar); ``runner`` is the thread doing the
    work in this process, or None when a worker does it. Ctrl-C calls ``cancel(row)`` and waits for
    the calls under way.
    """
    # tqdm writes carriage returns; a command's OutputWrapper would add a newline to each, so the
    # bar writes to the wrapped stream itself.
    bar = tqdm(total=1, unit="call", disable=quiet, file=stream, dynamic_ncols=True)
    warned, started = False, time.monotonic()
    try:
        while True:
            row.refresh_from_db()
            total, finished, text = describe(row)
            bar.total, bar.n = max(total, 1), finished
            bar.set_postfix_str(text)
            bar.refresh()
            if row.is_finished and (runner is None or not runner.is_alive()):
                return row
            if row.status == "queued" and not warned and time.monotonic() - started > 5:
                bar.write(WAITING_HINT)
                warned = True
            time.sleep(0.5)
    except KeyboardInterrupt:
        bar.write("cancelling: no new calls; waiting for the calls under way")
        cancel(row)
        while not row.is_finished:
            time.sleep(0.5)
            row.refresh_from_db()
        return row
    finally:
        bar.close()

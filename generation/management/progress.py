"""The terminal progress bar of the commands that start background work (generate, evaluate)."""

import time
from collections.abc import Callable

from tqdm import tqdm

WAITING_HINT = "waiting for a worker: start one with `celery -A causalqa_site worker`, or use --here"


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

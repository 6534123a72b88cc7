"""`make run`: the web server, a Celery worker and Celery beat side by side; Ctrl-C stops them all.

On the embedded default the worker uses kombu's filesystem transport, so nothing
needs to be installed or started by hand. With REDIS_URL set it uses Redis.
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
    import django

    django.setup()
    port = os.environ.get("PORT", "8000")
    python = sys.executable
    worker = subprocess.Popen(
        [python, "-m", "celery", "-A", "causalqa_site", "worker", "--pool=threads", "--concurrency=8",
         "--loglevel=WARNING", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-n", f"local-{os.getpid()}@%h"],
    )
    # Celery beat sends the periodic sweep of stale work (jobs, runs, releases, topic runs, imports).
    beat = subprocess.Popen(
        [python, "-m", "celery", "-A", "causalqa_site", "beat", "--loglevel=WARNING",
         f"--schedule={settings.CELERY_BEAT_SCHEDULE_FILENAME}"],
    )
    web = subprocess.Popen(
        [python, "-m", "gunicorn", "causalqa_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--threads", "4", "--access-logfile", "-", "--log-level", "warning"],
    )
    broker = "Redis" if settings.REDIS_URL else "the filesystem (no server)"
    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"\nCausalQA Studio is running at http://127.0.0.1:{port}/", flush=True)
    print(f"  database: {database}; task broker: {broker}; worker pid {worker.pid}", flush=True)
    print("  sign in with one of the demo accounts above; press Ctrl-C to stop.\n", flush=True)
    children = [web, worker, beat]
    try:
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
    print("stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

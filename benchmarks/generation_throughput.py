"""Calls per second of a generation job in a real Celery worker, against the fake model server.

    .venv/bin/python benchmarks/generation_throughput.py [--calls 2000] [--concurrency 32] [--latency 0.2]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python benchmarks/generation_throughput.py

The fake OpenAI-compatible server (tests/fake_llm.py) answers every call after ``latency``
seconds and serves at most ``concurrency`` calls at once (more wait in its queue). The
endpoint allows the same concurrency, so the best a job can do is concurrency / latency
calls per second; the script prints the rate reached and its ratio to that ideal. The job
answers ``calls`` questions: each call is rendered, sent with the real openai client,
validated, recorded and applied to its item as a revision. Ends with one JSON line.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import _django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, help="2000 (300 with --quick)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    args.calls = args.calls or (300 if args.quick else 2000)
    _django.setup("generation")
    from django.conf import settings

    from annotation.importing.funnel import text_key
    from annotation.models import Item, Project
    from generation.models import GenerationJob, LLMCall, ModelEndpoint
    from generation.services import job_create, prompt_templates_load
    from tests.fake_llm import FakeLLM
    from tests.workers import CeleryWorker

    prompt_templates_load()
    unfinished = GenerationJob.objects.filter(status__in=["queued", "running"]).count()
    if unfinished:
        print(f"warning: {unfinished} unfinished job(s) in this database; the worker will resume them too")
    stamp = int(time.time())
    project = Project.objects.create(name="bench generation", slug=f"bench-generation-{stamp}")
    questions = [f"Por que a pergunta de teste número {n} tem uma causa?" for n in range(args.calls)]
    Item.objects.bulk_create(
        Item(project=project, question=q, causal_class="associational", text_key=text_key(q))
        for q in questions
    )
    server = FakeLLM(latency=args.latency, max_concurrency=args.concurrency).start()
    endpoint = ModelEndpoint.objects.create(
        name=f"bench-{stamp}",
        base_url=server.base_url,
        model="fake-bench",
        api_key_env="",
        requests_per_minute=0,
        max_concurrency=args.concurrency,
        timeout_seconds=30,
    )
    log = Path(tempfile.mkdtemp()) / "worker.log"
    worker = CeleryWorker(log_path=log, concurrency=2)
    try:
        worker.start()
        item_ids = list(project.items.values_list("pk", flat=True))
        cpu_before = _cpu_seconds(worker.process.pid)
        submitted = time.perf_counter()
        job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=item_ids)
        last = -1
        while True:
            job.refresh_from_db()
            if job.done != last:
                print(f"\r{job.status:>9} {job.done:>6,} / {job.total:,} calls", end="", flush=True)
                last = job.done
            if job.is_finished:
                break
            time.sleep(0.5)
        wall = time.perf_counter() - submitted
        worker_cpu = _cpu_seconds(worker.process.pid) - cpu_before
        print()
        if job.status != GenerationJob.Status.SUCCEEDED:
            raise SystemExit(f"job {job.status}: {job.error}\n{worker.log()[-3000:]}")
        calls = LLMCall.objects.filter(job=job)
        first_sent = min(received.started for received in server.requests)
        last_answered = max(received.finished for received in server.requests)
        seconds = (job.finished_at - job.started_at).total_seconds()
        rate = job.done / seconds
        ideal = args.concurrency / args.latency
        applied = Item.objects.filter(project=project, status=Item.Status.IN_REVIEW).count()
    finally:
        worker.stop()
        server.stop()
    print(f"database: {_django.database_label()}; broker: {'redis' if settings.REDIS_URL else 'filesystem'}")
    print(
        f"{job.done:,} calls, concurrency {args.concurrency}, latency {args.latency:g} s: ideal {ideal:,.0f} calls/s"
    )
    print(
        f"job running {seconds:.2f} s (first request to last answer {last_answered - first_sent:.2f} s; "
        f"{wall:.2f} s from submitting to seeing it done)"
    )
    print(f"throughput: {rate:,.1f} calls/s, ratio to concurrency/latency: {rate / ideal:.3f}")
    print(f"most calls at once seen by the server: {server.max_seen_concurrency}; items applied: {applied:,}")
    print(
        f"worker CPU: {1000 * worker_cpu / job.done:.2f} ms per call; load average {os.getloadavg()[0]:.2f}"
    )
    result = {
        "benchmark": "generation_throughput",
        "database": _django.database_label(),
        "broker": "redis" if settings.REDIS_URL else "filesystem",
        "calls": job.done,
        "concurrency": args.concurrency,
        "latency": args.latency,
        "seconds": round(seconds, 3),
        "calls_per_second": round(rate, 1),
        "ratio": round(rate / ideal, 3),
        "max_seen_concurrency": server.max_seen_concurrency,
        "worker_cpu_ms_per_call": round(1000 * worker_cpu / job.done, 2),
        "load_average": round(os.getloadavg()[0], 2),
        "recorded_calls": calls.count(),
    }
    project.delete()
    endpoint.delete()
    print(json.dumps(result))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux), to show what each call costs the worker."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()

"""Running a generation job: model calls in parallel up to each endpoint's limit, results recorded once.

One runner holds a job at a time (its ``owner`` token, checked on every heartbeat). The
model calls run in a thread pool and touch no database; this thread renders prompts,
hands calls to the pool and records results in small batches, each result in a savepoint:
the call row turns succeeded and its output is applied to the items in the same
transaction, and only if the row was not already succeeded. So a job resumed after its
worker died redoes only the calls whose results were never committed, and applies
nothing twice; a result that was committed is never asked for again.
"""

import logging
import queue
import threading
import time
from collections import Counter, deque

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from ..llm import CallResult, LLMClient, PromptRequest, render
from ..models import GenerationJob, LLMCall
from .endpoints import endpoint_config, limiter_for
from .work import NotApplied, work_for

logger = logging.getLogger(__name__)
Status = GenerationJob.Status
CallStatus = LLMCall.Status
OPEN = (CallStatus.PENDING, CallStatus.RUNNING)
COMMIT_EVERY_SECONDS = 0.1
COMMIT_BATCH = 100
CANCEL_CHECK_SECONDS = 0.5
SYSTEMATIC_CLIENT_ERRORS = 5


def job_run(*, job_id: int, owner: str) -> dict:
    """Run a job this ``owner`` has claimed, until it is done, cancelled, failed or taken away."""
    return JobRunner(job_id=job_id, owner=owner).run()


def job_counters(job_id: int) -> dict:
    totals = LLMCall.objects.filter(job_id=job_id).aggregate(
        done=Count("pk", filter=Q(status=CallStatus.SUCCEEDED)),
        failed=Count("pk", filter=Q(status=CallStatus.FAILED)),
        retried=Count("pk", filter=Q(n_attempts__gt=1)),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
        cost=Sum("cost"),
    )
    return {key: value or 0 for key, value in totals.items()}


class JobRunner:
    def __init__(self, *, job_id: int, owner: str):
        self.job = GenerationJob.objects.select_related(
            "project", "endpoint", "template", "answer_endpoint", "answer_template"
        ).get(pk=job_id)
        self.owner = owner
        self.work = work_for(self.job)
        self.cancel = threading.Event()
        self.cancelled = False
        self.lost = False
        self.fatal_error = ""
        self.queues: dict[int, deque] = {}
        self.in_flight: dict[int, LLMCall] = {}
        self.in_flight_by_endpoint: Counter = Counter()
        self.finished: queue.Queue = queue.Queue()
        self.results: list[tuple[LLMCall, CallResult]] = []
        self.clients: dict[int, LLMClient] = {}
        self.limiters: list = []
        self.concurrency: dict[int, int] = {}
        self.client_errors = 0
        self.results_seen = 0

    def run(self) -> dict:
        try:
            self._plan()
            self._open_clients()
            threads = max(1, min(settings.GENERATION_MAX_THREADS, sum(self.concurrency.values())))
            self.pool = _Pool(threads, name=f"job-{self.job.pk}")
            try:
                self._loop()
            finally:
                self.cancel.set()
                self.pool.shutdown()
        except Exception as exc:
            logger.exception("generation job %s stopped by an internal error", self.job.pk)
            self._finish(Status.FAILED, f"internal error: {type(exc).__name__}: {exc}")
            raise
        finally:
            for client in self.clients.values():
                client.close()
        if self.lost:
            logger.warning("generation job %s was taken over by another worker; this run stops", self.job.pk)
            return {"job": self.job.pk, "status": "taken over"}
        return self._conclude()

    # --- planning -------------------------------------------------------------------------
    def _plan(self) -> None:
        with transaction.atomic():
            if not LLMCall.objects.filter(job=self.job).exists():
                planned = self.work.plan()
                LLMCall.objects.bulk_create(planned, ignore_conflicts=True)
                GenerationJob.objects.filter(pk=self.job.pk).update(total=self.work.expected_total(planned))
        open_calls = (
            LLMCall.objects.filter(job=self.job, status__in=OPEN)
            .select_related("item", "endpoint", "template")
            .order_by("pk")
        )
        for call in open_calls:
            self.queues.setdefault(call.endpoint_id, deque()).append(call)

    def _open_clients(self) -> None:
        endpoints = [self.job.endpoint] + ([self.job.answer_endpoint] if self.job.answer_endpoint else [])
        for endpoint in endpoints:
            if endpoint.pk in self.clients:
                continue
            limiter = limiter_for(endpoint)
            self.limiters.append(limiter)
            self.clients[endpoint.pk] = LLMClient(endpoint_config(endpoint), limiter=limiter, cancel=self.cancel)
            self.concurrency[endpoint.pk] = max(1, endpoint.max_concurrency)

    # --- the loop -------------------------------------------------------------------------
    def _loop(self) -> None:
        last_commit = last_beat = last_check = time.monotonic()
        self._heartbeat()
        while True:
            if not self.cancel.is_set():
                self._fill()
            idle = not self.in_flight and (self.cancel.is_set() or not any(self.queues.values()))
            if idle and not self.results:
                return
            self._collect(timeout=0.05 if self.in_flight else 0)
            now = time.monotonic()
            if self.results and (
                len(self.results) >= COMMIT_BATCH or now - last_commit >= COMMIT_EVERY_SECONDS or not self.in_flight
            ):
                self._commit()
                last_commit = now
            if now - last_beat >= settings.GENERATION_HEARTBEAT_SECONDS:
                self._heartbeat()
                last_beat = last_check = now
            elif now - last_check >= CANCEL_CHECK_SECONDS:
                self._check_cancel()
                last_check = now

    def _fill(self) -> None:
        started = []
        for endpoint_id, waiting in self.queues.items():
            while waiting and self.in_flight_by_endpoint[endpoint_id] < self.concurrency[endpoint_id]:
                call = waiting.popleft()
                try:
                    prompt = self._prompt(call)
                except Exception as exc:  # noqa: BLE001 - a template that cannot be filled fails its call
                    self.results.append((call, CallResult(request={}, attempts=[], error=f"prompt: {exc}")))
                    continue
                self.in_flight[call.pk] = call
                self.in_flight_by_endpoint[endpoint_id] += 1
                self.pool.submit(self.clients[endpoint_id], call.pk, prompt, self.finished)
                started.append(call.pk)
        if started:
            LLMCall.objects.filter(pk__in=started, status=CallStatus.PENDING).update(status=CallStatus.RUNNING)

    def _prompt(self, call: LLMCall) -> PromptRequest:
        variables = self.work.variables(call)
        template = call.template
        return PromptRequest(
            system=render(template.system, variables),
            user=render(template.user, variables),
            schema=self.work.schema(call),
            schema_name=f"{template.kind}_{template.name}".replace("-", "_")[:64],
        )

    def _collect(self, timeout: float) -> None:
        try:
            first = self.finished.get(timeout=timeout) if timeout else self.finished.get_nowait()
        except queue.Empty:
            return
        batch = [first]
        while True:
            try:
                batch.append(self.finished.get_nowait())
            except queue.Empty:
                break
        for call_id, result in batch:
            call = self.in_flight.pop(call_id)
            self.in_flight_by_endpoint[call.endpoint_id] -= 1
            self.results.append((call, result))
            self._watch_for_endpoint_failure(result)  # before anything else is sent

    # --- recording ------------------------------------------------------------------------
    def _commit(self) -> None:
        batch, self.results = self.results, []
        for attempt in range(5):
            try:
                with transaction.atomic():
                    follow_ups = [new for call, result in batch for new in self._record(call, result)]
                break
            except OperationalError:  # a locked SQLite database, a dropped connection: the batch is all or nothing
                if attempt == 4:
                    raise
                logger.warning("job %s: recording results failed, trying again", self.job.pk, exc_info=True)
                time.sleep(0.5 * (attempt + 1))
        if follow_ups:
            fresh = LLMCall.objects.filter(pk__in=[call.pk for call in follow_ups]).select_related(
                "item", "endpoint", "template"
            )
            for call in fresh.order_by("pk"):
                self.queues.setdefault(call.endpoint_id, deque()).append(call)

    def _record(self, call: LLMCall, result: CallResult) -> list[LLMCall]:
        config = self.clients[call.endpoint_id].config if call.endpoint_id in self.clients else None
        fields = {
            "attempts": [attempt.as_dict() for attempt in result.attempts],
            "n_attempts": len(result.attempts),
            "raw_response": result.raw,
            "tokens_in": result.tokens_in,
            "tokens_out": result.tokens_out,
            "cost": config.cost(result.tokens_in, result.tokens_out) if config else 0,
            "latency_ms": result.latency_ms,
            "finished_at": timezone.now(),
        }
        if result.request:
            fields["request"] = {**result.request, **{k: v for k, v in call.request.items() if k == "planned"}}
        unrecorded = LLMCall.objects.filter(pk=call.pk, status__in=OPEN)
        if result.cancelled:
            if result.attempts:  # what was spent is kept; the call can be made again
                unrecorded.update(status=CallStatus.PENDING, error=result.error, **fields)
            else:
                unrecorded.update(status=CallStatus.PENDING)
            return []
        if not result.ok:
            if unrecorded.update(status=CallStatus.FAILED, error=result.error, parsed=None, **fields):
                self.work.on_failed(call)
            return []
        try:
            with transaction.atomic():
                if not unrecorded.update(status=CallStatus.SUCCEEDED, parsed=result.parsed, error="", **fields):
                    return []  # recorded by an earlier run: never applied twice
                return self.work.apply(call, result.parsed)
        except NotApplied as exc:
            unrecorded.update(status=CallStatus.SUCCEEDED, parsed=result.parsed, error=f"not applied: {exc}", **fields)
        except Exception as exc:  # noqa: BLE001 - the output was paid for: keep it, say why it was not used
            logger.exception("job %s: output of call %s could not be applied", self.job.pk, call.pk)
            unrecorded.update(status=CallStatus.FAILED, parsed=result.parsed,
                              error=f"not applied: {type(exc).__name__}: {exc}", **fields)
        return []

    def _watch_for_endpoint_failure(self, result: CallResult) -> None:
        if result.cancelled:
            return
        self.results_seen += 1
        if result.fatal:
            self._stop(result.error)
            return
        if result.status in (400, 422):
            self.client_errors += 1
            if self.client_errors == self.results_seen >= SYSTEMATIC_CLIENT_ERRORS:
                self._stop(f"the endpoint refused each of the first {self.client_errors} requests; last: {result.error}")

    def _stop(self, error: str) -> None:
        if not self.fatal_error:
            self.fatal_error = error
        self.cancel.set()

    # --- heartbeat, cancellation, the end --------------------------------------------------
    def _heartbeat(self) -> None:
        updated = GenerationJob.objects.filter(pk=self.job.pk, owner=self.owner, status=Status.RUNNING).update(
            heartbeat_at=timezone.now(), **job_counters(self.job.pk)
        )
        if not updated:
            self.lost = True
            self.cancel.set()
            return
        for limiter in self.limiters:
            limiter.refresh()
        self._check_cancel()

    def _check_cancel(self) -> None:
        if GenerationJob.objects.filter(pk=self.job.pk, cancel_requested=True).exists():
            self.cancelled = True
            self.cancel.set()

    def _conclude(self) -> dict:
        counters = job_counters(self.job.pk)
        if self.fatal_error:
            status, error = Status.FAILED, self.fatal_error
        elif self.cancelled:
            status, error = Status.CANCELLED, ""
        elif counters["failed"] and not counters["done"]:
            first = LLMCall.objects.filter(job=self.job, status=CallStatus.FAILED).order_by("pk").first()
            status, error = Status.FAILED, f"every call failed; the first: {first.error if first else ''}"
        else:
            status, error = Status.SUCCEEDED, ""
        self._finish(status, error, counters)
        return {"job": self.job.pk, "status": status, **{k: str(v) for k, v in counters.items()}}

    def _finish(self, status: str, error: str, counters: dict | None = None) -> None:
        now = timezone.now()
        GenerationJob.objects.filter(pk=self.job.pk, owner=self.owner).update(
            status=status, error=error[:5000], finished_at=now, heartbeat_at=now,
            **(counters if counters is not None else job_counters(self.job.pk)),
        )


class _Pool:
    """Daemon threads taking (client, call id, prompt) and putting (call id, result) on a queue.

    Not a ThreadPoolExecutor: its threads are not daemons, so a call hanging past its
    timeout would hold the worker process at exit.
    """

    def __init__(self, size: int, name: str):
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self._serve, name=f"{name}-{n}", daemon=True) for n in range(size)
        ]
        for thread in self.threads:
            thread.start()

    def submit(self, client: LLMClient, call_id: int, prompt: PromptRequest, done: queue.Queue) -> None:
        self.tasks.put((client, call_id, prompt, done))

    def _serve(self) -> None:
        while True:
            task = self.tasks.get()
            if task is None:
                return
            client, call_id, prompt, done = task
            try:
                result = client.complete(prompt)
            except Exception as exc:  # noqa: BLE001 - a bug in one call must not stall the job
                logger.exception("model call %s raised", call_id)
                result = CallResult(request={}, attempts=[], error=f"internal error: {type(exc).__name__}: {exc}")
            done.put((call_id, result))

    def shutdown(self) -> None:
        for _ in self.threads:
            self.tasks.put(None)

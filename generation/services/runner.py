"""Running a generation job: model calls in parallel up to each endpoint's limit, results recorded once.

One runner holds a job at a time (its ``owner`` token, checked on every heartbeat). Each
endpoint of the job gets a lane: as many threads as the endpoint's concurrency, sending
the prompts this thread renders for them, touching no database. This thread records the
results as they arrive, in batches: the call rows turn succeeded and their outputs are
applied to the items in the same transaction, and only for rows not already recorded.
So a job resumed after its worker died redoes only the calls whose results were never
committed, and applies nothing twice; a result that was committed is never asked again.
"""

import json
import logging
import queue
import threading
import time
from collections import deque

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from core.db.bulk import fast_insert, fast_update

from ..llm import CallResult, LLMClient, PromptRequest, render
from ..models import GenerationJob, LLMCall, PromptTemplate
from .endpoints import endpoint_config, limiter_for
from .templates import empty_output
from .work import Applied, work_for

logger = logging.getLogger(__name__)
Status = GenerationJob.Status
CallStatus = LLMCall.Status
OPEN = (CallStatus.PENDING, CallStatus.RUNNING)
RECORD_FIELDS = [
    "status",
    "parsed",
    "error",
    "request",
    "attempts",
    "n_attempts",
    "raw_response",
    "tokens_in",
    "tokens_out",
    "cost",
    "latency_ms",
    "finished_at",
]
CANCEL_CHECK_SECONDS = 0.5
COMMIT_EVERY_SECONDS = 0.1
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


def _insert_calls(calls: list[LLMCall]) -> None:
    """Store planned calls in one statement (a job may plan a hundred thousand)."""
    fast_insert(
        LLMCall,
        ["job", "item", "purpose", "endpoint", "template", "request"],
        (
            (
                call.job_id,
                call.item_id,
                call.purpose,
                call.endpoint_id,
                call.template_id,
                json.dumps(call.request),
            )
            for call in calls
        ),
        constants={
            "status": CallStatus.PENDING,
            "attempts": [],
            "raw_response": "",
            "n_attempts": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "cost": 0,
            "latency_ms": 0,
            "error": "",
            "created_at": timezone.now(),
        },
    )


class _Lane:
    """One endpoint of a job: its client, the prompts ready to send, and threads that send them.

    ``budget`` holds twice the endpoint's concurrency in tokens: a thread takes one before it
    sends a call, and the runner gives it back once the call's result is recorded. So at
    most ``concurrency`` calls are under way and at most ``concurrency`` results wait to be
    recorded, whatever the database is doing; a worker killed at any moment leaves no more
    than that many results received but unrecorded (made again when the job resumes).
    """

    def __init__(self, client: LLMClient, concurrency: int, name: str):
        self.client = client
        self.concurrency = concurrency
        self.waiting: deque[int] = deque()  # ids of calls to make
        self.loaded: deque[LLMCall] = deque()  # the next of them, read from the database
        self.ready: queue.Queue = queue.Queue()
        self.budget = threading.Semaphore(2 * concurrency)
        self.threads = [
            threading.Thread(target=self._serve, name=f"{name}-{n}", daemon=True) for n in range(concurrency)
        ]
        self.finished: queue.Queue | None = None

    def start(self, finished: queue.Queue) -> None:
        self.finished = finished
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        for _ in self.threads:
            self.ready.put(None)

    def _serve(self) -> None:
        client = self.client
        cancel = client.cancel
        while True:
            try:
                task = self.ready.get_nowait()
            except queue.Empty:
                client.release_slot()  # nothing to send: the endpoint's slot is free for others
                task = self.ready.get()
            if task is None:
                client.release_slot()
                return
            call_id, prompt = task
            took = self.budget.acquire(blocking=False)
            if not took:
                client.release_slot()  # results wait to be recorded: hold no slot meanwhile
            while not took and not cancel.is_set():
                took = self.budget.acquire(timeout=0.1)
            if not took:
                self.finished.put((call_id, NOT_SENT, False))
                continue
            try:
                result = client.complete(prompt, keep_slot=True)
            except Exception as exc:  # noqa: BLE001 - a bug in one call must not stall the job
                logger.exception("model call %s raised", call_id)
                result = CallResult(
                    request={}, attempts=[], error=f"internal error: {type(exc).__name__}: {exc}"
                )
            if result.fatal:
                cancel.set()  # a wrong key or model name: the other threads send nothing more
            self.finished.put((call_id, result, True))


NOT_SENT = CallResult(request={}, attempts=[], cancelled=True, error="cancelled before it was sent")


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
        self.lanes: dict[int, _Lane] = {}
        self.sent: dict[int, LLMCall] = {}  # handed to a lane, result not yet collected
        self.finished: queue.Queue = queue.Queue()
        self.results: list[tuple[LLMCall, CallResult]] = []
        self.tokens: list[int] = []  # endpoint of each collected result that holds a budget token
        self.limiters: list = []
        self.client_errors = 0
        self.results_seen = 0
        self.template_kinds: dict[int | None, str] = {}  # template id → kind, for the empty-output check

    @property
    def clients(self) -> dict[int, LLMClient]:
        return {endpoint_id: lane.client for endpoint_id, lane in self.lanes.items()}

    def run(self) -> dict:
        try:
            self._open_lanes()
            self._plan()
            for lane in self.lanes.values():
                lane.start(self.finished)
            try:
                self._loop()
            finally:
                self.cancel.set()
                for lane in self.lanes.values():
                    lane.stop()
        except Exception as exc:
            logger.exception("generation job %s stopped by an internal error", self.job.pk)
            self._finish(Status.FAILED, f"internal error: {type(exc).__name__}: {exc}")
            raise
        finally:
            for lane in self.lanes.values():
                lane.client.close()
        if self.lost:
            logger.warning("generation job %s was taken over by another worker; this run stops", self.job.pk)
            return {"job": self.job.pk, "status": "taken over"}
        return self._conclude()

    # --- planning -------------------------------------------------------------------------
    def _plan(self) -> None:
        """Store the job's calls the first time it runs; then queue, by id, every call not yet recorded."""
        with transaction.atomic():
            if not LLMCall.objects.filter(job=self.job).exists():
                planned = self.work.plan()
                _insert_calls(planned)
                GenerationJob.objects.filter(pk=self.job.pk).update(total=self.work.expected_total(planned))
        open_calls = LLMCall.objects.filter(job=self.job, status__in=OPEN).order_by("pk")
        for call_id, endpoint_id in open_calls.values_list("pk", "endpoint_id"):
            self.lanes[endpoint_id].waiting.append(call_id)

    def _load(self, call_ids: list[int]) -> list[LLMCall]:
        """The calls with their items; endpoints and templates come from this run's own copies."""
        calls = list(LLMCall.objects.filter(pk__in=call_ids).select_related("item").order_by("pk"))
        unknown = {call.template_id for call in calls} - set(self.templates)
        if unknown:  # kinds whose calls use several templates (a CausalityCheck checklist, benchmark answers)
            self.templates.update((t.pk, t) for t in PromptTemplate.objects.filter(pk__in=unknown))
        for call in calls:
            call.endpoint = self.endpoints[call.endpoint_id]
            call.template = self.templates[call.template_id]
        return calls

    def _open_lanes(self) -> None:
        endpoints = [self.job.endpoint] + ([self.job.answer_endpoint] if self.job.answer_endpoint else [])
        endpoints += self.work.extra_endpoints()
        self.endpoints = {endpoint.pk: endpoint for endpoint in endpoints}
        templates = [self.job.template] + ([self.job.answer_template] if self.job.answer_template else [])
        self.templates = {template.pk: template for template in templates}
        for endpoint in endpoints:
            if endpoint.pk in self.lanes:
                continue
            limiter = limiter_for(endpoint)
            self.limiters.append(limiter)
            config = endpoint_config(endpoint, params=self.job.params.get("decoding"))
            client = LLMClient(config, limiter=limiter, cancel=self.cancel)
            concurrency = max(1, min(endpoint.max_concurrency, settings.GENERATION_MAX_THREADS))
            self.lanes[endpoint.pk] = _Lane(client, concurrency, name=f"job-{self.job.pk}-{endpoint.pk}")

    # --- the loop -------------------------------------------------------------------------
    def _loop(self) -> None:
        last_beat = last_check = last_commit = time.monotonic()
        enough = sum(lane.concurrency for lane in self.lanes.values())
        self._heartbeat()
        while True:
            if not self.cancel.is_set():
                self._top_up()
            nothing_left = self.cancel.is_set() or not any(
                lane.waiting or lane.loaded for lane in self.lanes.values()
            )
            if not self.sent and not self.results and nothing_left:
                return
            self._collect(timeout=0.02 if self.sent else 0)
            now = time.monotonic()
            # Results are recorded in batches: a batch costs about the same few queries whatever its
            # size. Waiting is bounded: by time, and by the lanes' budgets (they stop sending while
            # a concurrency's worth of results waits).
            if self.results and (
                len(self.results) >= enough or now - last_commit >= COMMIT_EVERY_SECONDS or not self.sent
            ):
                self._commit()
                last_commit = now
            if now - last_beat >= settings.GENERATION_HEARTBEAT_SECONDS:
                self._heartbeat()
                last_beat = last_check = now
            elif now - last_check >= CANCEL_CHECK_SECONDS:
                self._check_cancel()
                last_check = now

    def _top_up(self) -> None:
        """Keep a concurrency's worth of rendered prompts ready in each lane, so sending never waits on us."""
        for lane in self.lanes.values():
            while lane.ready.qsize() < lane.concurrency and (lane.loaded or lane.waiting):
                if not lane.loaded:
                    chunk = [
                        lane.waiting.popleft() for _ in range(min(len(lane.waiting), 4 * lane.concurrency))
                    ]
                    lane.loaded.extend(self._load(chunk))
                    continue
                call = lane.loaded.popleft()
                try:
                    prompt = self._prompt(call)
                except Exception as exc:  # noqa: BLE001 - a template that cannot be filled fails its call
                    self.results.append((call, CallResult(request={}, attempts=[], error=f"prompt: {exc}")))
                    continue
                self.sent[call.pk] = call
                lane.ready.put((call.pk, prompt))

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
        for call_id, result, took in batch:
            call = self.sent.pop(call_id)
            self.results.append((call, result))
            if took:
                self.tokens.append(call.endpoint_id)
            self._watch_for_endpoint_failure(result)  # stop the others before they send more

    # --- recording ------------------------------------------------------------------------
    def _commit(self) -> None:
        batch, self.results = self.results, []
        together = True
        for attempt in range(5):
            try:
                with transaction.atomic():
                    follow_ups = self._record(batch, together=together)
                break
            except (
                OperationalError
            ):  # a locked SQLite database, a dropped connection: the batch is all or nothing
                if attempt == 4:
                    raise
                logger.warning("job %s: recording results failed, trying again", self.job.pk, exc_info=True)
                time.sleep(0.5 * (attempt + 1))
            except Exception:  # noqa: BLE001 - writing the outputs together failed: again, one by one
                if not together:
                    raise
                logger.warning(
                    "job %s: applying %s outputs together failed; one by one now",
                    self.job.pk,
                    len(batch),
                    exc_info=True,
                )
                together = False
        for endpoint_id in self.tokens:
            self.lanes[endpoint_id].budget.release()
        self.tokens = []
        for call in follow_ups:
            self.lanes[call.endpoint_id].waiting.append(call.pk)

    def _record(self, batch: list[tuple[LLMCall, CallResult]], together: bool = True) -> list[LLMCall]:
        """Record a batch of results and apply the valid outputs, in the caller's transaction."""
        unrecorded = set(
            LLMCall.objects.select_for_update()
            .filter(pk__in=[call.pk for call, _result in batch], status__in=OPEN)
            .values_list("pk", flat=True)
        )
        rows, succeeded, failed = [], [], []
        for call, result in batch:
            if call.pk not in unrecorded:
                continue  # recorded by an earlier run: never applied twice
            if result.cancelled and not result.attempts:
                continue  # never sent: the call stays as it was, to be made by a later run
            self._fill_record(call, result)
            rows.append(call)
            empty = empty_output(self._kind_of(call), call.parsed) if result.ok else ""
            if empty:  # e.g. a template whose schema names another key: a "success" that gives nothing
                call.status, call.error = CallStatus.FAILED, empty
                failed.append(call)
            elif result.ok:
                succeeded.append(call)
            elif not result.cancelled:
                failed.append(call)
        applied = self.work.apply_many(succeeded, together=together) if succeeded else Applied()
        for call in succeeded:
            if call.pk in applied.problems:
                call.status, call.error = applied.problems[call.pk]
        for call in failed:
            self.work.on_failed(call)
        fast_update(LLMCall, RECORD_FIELDS, rows)
        return applied.follow_ups

    def _kind_of(self, call: LLMCall) -> str:
        """The kind of the call's template (a questions job's follow-up calls are answers)."""
        kinds = self.template_kinds
        if call.template_id not in kinds:
            kinds[call.template_id] = (
                PromptTemplate.objects.filter(pk=call.template_id).values_list("kind", flat=True).first()
                or self.job.kind
            )
        return kinds[call.template_id]

    def _fill_record(self, call: LLMCall, result: CallResult) -> None:
        lane = self.lanes.get(call.endpoint_id)
        config = lane.client.config if lane is not None else None
        if result.request:
            call.request = {**result.request, **{k: v for k, v in call.request.items() if k == "planned"}}
        # Cumulative: a call made again (after a cancel, or a retry of failed calls) keeps what its
        # earlier runs tried and spent.
        call.attempts = list(call.attempts or []) + [attempt.as_dict() for attempt in result.attempts]
        call.n_attempts = len(call.attempts)
        call.raw_response = result.raw
        call.tokens_in += result.tokens_in
        call.tokens_out += result.tokens_out
        call.cost = (call.cost or 0) + (config.cost(result.tokens_in, result.tokens_out) if config else 0)
        call.latency_ms = result.latency_ms
        call.finished_at = timezone.now()
        call.parsed = result.parsed if result.ok else None
        call.error = "" if result.ok else result.error
        if result.ok:
            call.status = CallStatus.SUCCEEDED
        elif result.cancelled:  # what was spent is kept; the call can be made again
            call.status = CallStatus.PENDING
        else:
            call.status = CallStatus.FAILED

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
                self._stop(
                    f"the endpoint refused each of the first {self.client_errors} requests; last: {result.error}"
                )

    def _stop(self, error: str) -> None:
        if not self.fatal_error:
            self.fatal_error = error
        self.cancel.set()

    # --- heartbeat, cancellation, the end --------------------------------------------------
    def _heartbeat(self) -> None:
        updated = GenerationJob.objects.filter(
            pk=self.job.pk, owner=self.owner, status=Status.RUNNING
        ).update(heartbeat_at=timezone.now(), **job_counters(self.job.pk))
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
            status=status,
            error=error[:5000],
            finished_at=now,
            heartbeat_at=now,
            **(counters if counters is not None else job_counters(self.job.pk)),
        )

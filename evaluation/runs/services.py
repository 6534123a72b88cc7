"""Starting, running, cancelling and resuming benchmark runs (pages, the API, the command and tasks call these).

A run goes through stages: the models answer (one generation job per model), the judge
scores and ranks (open answers, when a judge is chosen), BERTScore is computed (open
answers). A stage's jobs run side by side, each with the runner's concurrency within its endpoint's
limits: in a worker, the run's task runs the first job itself and hands the others to the queue, so other
worker processes (other cores) run them while it waits; a job no worker took within ``HANDOFF_SECONDS`` is
run by the run's task in a thread of its own. A job whose worker died is taken over by the generation watch
or by the run when it resumes, and only calls whose results were never recorded are made again.
"""

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from core.background import work_cancel, work_claim, work_requeue_stale
from generation.local_models import LocalModelUnavailable, model_dir_allowed, while_beating
from generation.models import GenerationJob, ModelEndpoint, PromptTemplate
from generation.services import (
    JobInvalid,
    endpoint_usable,
    job_cancel,
    job_claim,
    job_enqueue,
    job_run,
    new_owner_token,
    template_latest,
)

from ..models import EvalResponse, EvalRun, JudgeScore, Ranking, Release, ReleaseItem, default_metadata_keys
from .bertscore import bertscore, idf_weights
from .bertscore import scorer as bertscore_scorer
from .conditions import CONDITIONS, DEFAULT_CONDITIONS, OPEN
from .kinds import Kind
from .metrics import DifferenceError, parse_differences
from .options import RUN_BOUNDS, RUN_OPTIONS, run_option_in_bounds

logger = logging.getLogger(__name__)
Status = EvalRun.Status
Stage = EvalRun.Stage
DECODING_KEYS = {"temperature": float, "top_p": float, "max_tokens": int, "seed": int}
WAIT_SECONDS = 0.5
HANDOFF_SECONDS = 3.0  # how long a job handed to the queue may wait for another worker before the run runs it
HANDOFF_POLL_SECONDS = 0.1
BERTSCORE_BATCH = 64


class RunInvalid(JobInvalid):
    """What is wrong with a run request, by field."""


def run_create(
    *,
    project,
    release: Release,
    endpoints: list[ModelEndpoint],
    split: str = ReleaseItem.Split.TEST,
    conditions: list[str] | None = None,
    judge_endpoint: ModelEndpoint | None = None,
    repetitions: int = RUN_OPTIONS["repetitions"],
    decoding: dict | None = None,
    seed: int = RUN_OPTIONS["seed"],
    few_shot: int = RUN_OPTIONS["few_shot"],
    template_versions: dict[str, int] | None = None,
    bertscore_model: str = "",
    bertscore_layer: int | None = RUN_OPTIONS["bertscore_layer"],
    bertscore_idf: bool = False,
    metadata_keys: dict | None = None,
    differences: str = "",
    user=None,
    enqueue: bool = True,
) -> EvalRun:
    """Check the request, store the run and (after commit) hand it to a worker. Raises ``RunInvalid``."""
    errors: dict[str, str] = {}
    answer_format = project.answer_format
    if answer_format not in CONDITIONS:
        raise RunInvalid(
            {"answer_format": f"runs evaluate open, multiple-choice or yes/no answers, not {answer_format}"}
        )
    if release.project_id != project.pk:
        errors["release"] = "the release belongs to another project"
    elif not release.is_ready:
        errors["release"] = f"{release.tag} is {release.status}; evaluate a ready release"
    elif not ReleaseItem.objects.filter(release=release, split=split).exists():
        errors["split"] = f"{release.tag} has no items in its {split!r} split"
    endpoints = list(dict.fromkeys(endpoints or []))
    if not endpoints:
        errors["endpoints"] = "choose at least one model endpoint"
    elif not all(endpoint_usable(endpoint, project) for endpoint in endpoints):
        errors["endpoints"] = "choose active model endpoints of this project or of the site"
    conditions = list(dict.fromkeys(conditions or DEFAULT_CONDITIONS[answer_format]))
    allowed = CONDITIONS[answer_format]
    unknown = [condition for condition in conditions if condition not in allowed]
    if unknown:
        errors["conditions"] = (
            f"unknown for {answer_format} answers: {', '.join(unknown)}; use {', '.join(allowed)}"
        )
    chosen = _templates(project, conditions if not unknown else [], template_versions or {}, errors)
    if (
        "few-shot" in conditions
        and release.pk
        and not ReleaseItem.objects.filter(release=release, split=ReleaseItem.Split.TRAIN).exists()
    ):
        errors["conditions"] = "few-shot prompts take their examples from the train split, which is empty"
    judge_templates = _judge_templates(project, judge_endpoint, errors) if judge_endpoint is not None else {}
    if not run_option_in_bounds("repetitions", repetitions):
        errors["repetitions"] = "ask for {} to {} repetitions".format(*RUN_BOUNDS["repetitions"])
    if not run_option_in_bounds("few_shot", few_shot):
        errors["few_shot"] = "use {} to {} solved examples".format(*RUN_BOUNDS["few_shot"])
    if not run_option_in_bounds("seed", seed):
        errors["seed"] = "the seed must be a whole number from {} to {}".format(*RUN_BOUNDS["seed"])
    decoding = _decoding(decoding or {}, errors)
    keys = {**default_metadata_keys(), **(metadata_keys or {})}
    if set(keys) != set(default_metadata_keys()) or not all(isinstance(v, str) and v for v in keys.values()):
        errors["metadata_keys"] = "give a metadata key (text) for each of level, type, task and variant"
    try:
        parse_differences(differences)
    except DifferenceError as exc:
        errors["differences"] = str(exc)
    if bertscore_layer is not None and not run_option_in_bounds("bertscore_layer", bertscore_layer):
        errors["bertscore_layer"] = (
            "use a layer from {} to {}, or leave it empty for the model's last".format(
                *RUN_BOUNDS["bertscore_layer"]
            )
        )
    if not model_dir_allowed(bertscore_model.strip(), settings.LOCAL_MODEL_DIRS):
        errors["bertscore_model"] = (
            "name a model directory the administrators allowed (LOCAL_MODEL_DIRS), or leave it empty"
        )
    if errors:
        raise RunInvalid(errors)
    with transaction.atomic():
        run = EvalRun.objects.create(
            project=project,
            release=release,
            split=split,
            answer_format=answer_format,
            conditions=conditions,
            templates={condition: template.pk for condition, template in chosen.items()},
            judge_endpoint=judge_endpoint,
            judge_score_template=judge_templates.get(Kind.JUDGE_SCORE),
            judge_ranking_template=judge_templates.get(Kind.JUDGE_RANKING),
            decoding=decoding,
            repetitions=repetitions,
            seed=seed,
            few_shot=few_shot,
            bertscore_model=bertscore_model.strip() or project.bertscore_model,
            bertscore_layer=bertscore_layer,
            bertscore_idf=bool(bertscore_idf),
            metadata_keys=keys,
            differences=differences.strip(),
            created_by=user,
            heartbeat_at=timezone.now(),
        )
        run.endpoints.set(endpoints)
        if bertscore_model.strip() and bertscore_model.strip() != project.bertscore_model:
            project.bertscore_model = bertscore_model.strip()  # the project's model from now on
            project.save(update_fields=["bertscore_model"])
        if enqueue:
            transaction.on_commit(lambda: run_enqueue(run.pk), robust=True)
    return run


def _judge_templates(
    project, judge_endpoint: ModelEndpoint, errors: dict
) -> dict[str, PromptTemplate | None]:
    """The judge's score and ranking templates; what stands in the way of this judge goes in ``errors``. One rule
    for a run that starts with a judge and for a judge asked afterwards (``run_judge``)."""
    if project.answer_format != OPEN:
        errors["judge_endpoint"] = _(
            "a judge scores and ranks open answers; closed formats are scored exactly"
        )
    elif not endpoint_usable(judge_endpoint, project):
        errors["judge_endpoint"] = _("choose an active model endpoint of this project or of the site")
    templates = {}
    for kind in (Kind.JUDGE_SCORE, Kind.JUDGE_RANKING):
        templates[kind] = template_latest(kind=kind, language=project.language)
        if templates[kind] is None:
            errors["judge_endpoint"] = _(
                "no %(kind)s prompt template; run `python manage.py load_prompt_templates`"
            ) % {"kind": kind}
    return templates


def judged_by(run: EvalRun, judge_endpoint: ModelEndpoint) -> bool:
    """Whether the run carries scores or rankings of this judge: its own judge's (no name), or rows under the
    judge's name (a judge asked afterwards, or an imported file's judge of that name)."""
    names = [judge_endpoint.name]
    if run.judge_endpoint_id == judge_endpoint.pk:
        names.append("")
    return (
        JudgeScore.objects.filter(run=run, judge__in=names).exists()
        or Ranking.objects.filter(run=run, judge__in=names).exists()
    )


def run_judge(*, run: EvalRun, judge_endpoint: ModelEndpoint, user=None, enqueue: bool = True) -> EvalRun:
    """Have one of the platform's judges score and rank the open answers of a finished run — one imported from
    files (lm-eval, Inspect, a published table), or one made without a judge — as a run with that judge would
    have: the run goes back to the queue at its judging stage, and its report then has the judge's scores and
    rankings beside any it had. Raises ``RunInvalid`` (by field) when the run has no open answers, is not
    finished, or already carries this judge's scores, or when the judge cannot be used."""
    errors: dict[str, str] = {}
    project = run.project
    templates = _judge_templates(project, judge_endpoint, errors)
    if "judge_endpoint" not in errors and judged_by(run, judge_endpoint):
        errors["judge_endpoint"] = _("run #%(run)s already carries judge scores from %(judge)s") % {
            "run": run.pk,
            "judge": judge_endpoint.label,
        }
    if (
        run.answer_format != OPEN
        or not EvalResponse.objects.filter(run=run, error="").exclude(text="").exists()
    ):
        errors["run"] = _("run #%(run)s has no open answers to judge") % {"run": run.pk}
    elif run.status != Status.SUCCEEDED:
        errors["run"] = _("run #%(run)s is %(status)s; judge a run that has finished") % {
            "run": run.pk,
            "status": run.get_status_display().lower(),
        }
    if errors:
        raise RunInvalid(errors)
    with transaction.atomic():
        reopened = EvalRun.objects.filter(pk=run.pk, status=Status.SUCCEEDED).update(
            status=Status.QUEUED,
            stage=Stage.JUDGING,
            judge_endpoint=judge_endpoint,
            judge_score_template=templates[Kind.JUDGE_SCORE],
            judge_ranking_template=templates[Kind.JUDGE_RANKING],
            owner="",
            error="",
            cancel_requested=False,
            finished_at=None,
            heartbeat_at=timezone.now(),
        )
        if not reopened:  # another request reopened it first
            raise RunInvalid({"run": _("run #%(run)s is already being judged") % {"run": run.pk}})
        if enqueue:
            transaction.on_commit(lambda: run_enqueue(run.pk), robust=True)
    logger.info("run %s: judge %s asked for by %s", run.pk, judge_endpoint.label, user)
    run.refresh_from_db()
    return run


def template_versions_parse(pairs: list[str]) -> dict[str, int]:
    """``["class-informed=2", ...]`` (from a command line, or a form's lines) as ``{condition: version}``;
    blank entries are skipped. Raises ValueError naming the entry that is not ``CONDITION=N``."""
    versions = {}
    for pair in pairs:
        if not pair.strip():
            continue
        condition, _sep, number = (part.strip() for part in pair.partition("="))
        if not condition or not number.isdigit() or int(number) < 1:
            raise ValueError(f"write CONDITION=N, e.g. class-informed=2, not {pair.strip()!r}")
        versions[condition] = int(number)
    return versions


def _templates(project, conditions, versions, errors) -> dict[str, PromptTemplate]:
    """Each condition's benchmark-answer template: the latest in the project's language, or the version asked for."""
    chosen = {}
    for condition in conditions:
        name = CONDITIONS[project.answer_format][condition]
        template = template_latest(kind=Kind.BENCHMARK_ANSWER, language=project.language, name=name)
        if template is not None and versions.get(condition) not in (None, template.version):
            template = PromptTemplate.objects.filter(
                kind=Kind.BENCHMARK_ANSWER, name=name, language=template.language, version=versions[condition]
            ).first()
            if template is None:
                errors["template_versions"] = f"{name!r} has no version {versions[condition]}"
                continue
        if template is None:
            errors["templates"] = (
                f"no benchmark_answer template {name!r}; run `python manage.py load_prompt_templates`"
            )
        else:
            chosen[condition] = template
    return chosen


def _decoding(decoding: dict, errors) -> dict:
    clean = {}
    for key, value in decoding.items():
        if value is None or value == "":
            continue
        if key not in DECODING_KEYS:
            errors["decoding"] = f"unknown decoding parameter {key!r}; use {', '.join(DECODING_KEYS)}"
            continue
        try:
            clean[key] = DECODING_KEYS[key](value)
        except (TypeError, ValueError):
            errors["decoding"] = f"{key} must be a number"
    return clean


def run_enqueue(run_id: int) -> None:
    from ..tasks import run_eval_task

    run_eval_task.delay(run_id)


def run_claim(*, run_id: int, owner: str) -> bool:
    return work_claim(EvalRun, pk=run_id, owner=owner, queued=Status.QUEUED, running=Status.RUNNING)


def run_cancel(*, run: EvalRun) -> EvalRun:
    """A queued run ends at once; a running one stops its jobs, which stop making calls at their next check."""
    work_cancel(EvalRun, pk=run.pk, queued=Status.QUEUED, running=Status.RUNNING, cancelled=Status.CANCELLED)
    for job in run.jobs.exclude(status__in=FINISHED_JOBS):
        job_cancel(job=job)
    run.refresh_from_db()
    return run


FINISHED_JOBS = (GenerationJob.Status.SUCCEEDED, GenerationJob.Status.FAILED, GenerationJob.Status.CANCELLED)


class _Lost(Exception):
    """Another worker took the run over (this one was thought dead)."""


def run_execute(*, run_id: int, owner: str, hand_off: bool = False) -> dict:
    """Take a claimed run through its stages, resuming where an earlier worker stopped.

    ``hand_off`` (the worker's task): a stage's jobs after the first go to the queue, for other workers."""
    run = EvalRun.objects.select_related("project", "release").get(pk=run_id)
    try:
        for stage in _stages(run):
            _beat(run, owner, stage=stage)
            if stage == Stage.SCORING:
                _bertscore(run, owner)
                continue
            jobs = _drive_all(run, _stage_jobs(run, stage), owner, hand_off=hand_off)
            if _cancel_requested(run):
                return _finish(run, owner, Status.CANCELLED)
            failed = [job for job in jobs if job.status == GenerationJob.Status.FAILED]
            if failed:  # a wrong key or model name, or every call failed: the next stages would mislead
                return _finish(
                    run,
                    owner,
                    Status.FAILED,
                    "\n".join(f"{job.kind_label} ({job.endpoint.label}): {job.error}" for job in failed),
                )
        return _finish(run, owner, Status.SUCCEEDED)
    except _Lost:
        logger.warning("run %s was taken over by another worker; this one stops", run.pk)
        return {"run": run.pk, "status": "taken over"}
    except Exception as exc:
        logger.exception("run %s stopped by an internal error", run.pk)
        _finish(run, owner, Status.FAILED, f"internal error: {type(exc).__name__}: {exc}")
        raise


def _stages(run: EvalRun) -> list[str]:
    # Imported, the answers (and any scores and rankings) came from files: the platform's judge, when one was
    # asked for (``run_judge``: an imported judge's endpoint has no templates, and is never called), and
    # BERTScore are left to compute.
    stages = [] if run.imported else [Stage.ANSWERING]
    if run.answer_format == OPEN:
        if run.judge_endpoint_id and run.judge_score_template_id:
            stages.append(Stage.JUDGING)
        stages.append(Stage.SCORING)
    return stages


def _stage_jobs(run: EvalRun, stage: str) -> list[GenerationJob]:
    """The stage's jobs, created the first time the stage starts (a resumed run finds them)."""
    kinds = [Kind.BENCHMARK_ANSWER] if stage == Stage.ANSWERING else [Kind.JUDGE_SCORE, Kind.JUDGE_RANKING]
    with transaction.atomic():
        EvalRun.objects.select_for_update().filter(pk=run.pk).first()
        jobs = run.jobs.filter(kind__in=kinds).select_related("endpoint").order_by("pk")
        # a judge asked for afterwards (``run_judge``) has jobs of its own beside an earlier judge's
        if stage == Stage.JUDGING:
            jobs = jobs.filter(endpoint=run.judge_endpoint_id)
        jobs = list(jobs)
        if jobs:
            return jobs
        params = {"eval_run": run.pk}
        now = timezone.now()
        if stage == Stage.ANSWERING:
            first_template = run.templates[run.conditions[0]]
            specs = [
                (Kind.BENCHMARK_ANSWER, endpoint, first_template, {**params, "decoding": run.decoding})
                for endpoint in run.endpoints.order_by("pk")
            ]
        else:
            # The first judge's rows go unnamed, as a run's own judge's; a judge after it (or after an imported
            # file's) signs its rows with its endpoint's name, so each judge's scores stand apart.
            earlier = JudgeScore.objects.filter(run=run).exists() or Ranking.objects.filter(run=run).exists()
            params = {**params, "judge": run.judge_endpoint.name if earlier else ""}
            specs = [
                (Kind.JUDGE_SCORE, run.judge_endpoint, run.judge_score_template_id, params),
                (Kind.JUDGE_RANKING, run.judge_endpoint, run.judge_ranking_template_id, params),
            ]
        for kind, endpoint, template_id, job_params in specs:
            job = GenerationJob.objects.create(
                project=run.project,
                kind=kind,
                endpoint=endpoint,
                template_id=template_id,
                params=job_params,
                created_by=run.created_by,
                heartbeat_at=now,
            )
            run.jobs.add(job)
            jobs.append(job)
    return jobs


def _drive_all(
    run: EvalRun, jobs: list[GenerationJob], owner: str, hand_off: bool = False
) -> list[GenerationJob]:
    """Drive the stage's jobs side by side: each model answers at its own endpoint's pace (the endpoints'
    limiters, shared by every job, keep each within its limits), so a run of three models takes about
    as long as its slowest model, not the sum. Inside an enclosing transaction (a test's) the jobs run one
    after another, since other threads could not see its rows.

    With ``hand_off`` and Redis every job but the first is sent to the queue: another worker process runs it
    on another core (one process's threads share one interpreter lock, which three models' calls saturate);
    this one waits for it, and runs it itself if no worker took it within ``HANDOFF_SECONDS``. Only with
    Redis: there the endpoints' limiters are shared by every process; the embedded default (`make run`: one
    worker process, filesystem broker polled each second) keeps its jobs in this process's threads."""
    if len(jobs) < 2 or transaction.get_connection().in_atomic_block:
        return [_drive(run, job, owner) for job in jobs]
    claim_after = [0.0] * len(jobs)
    if hand_off and settings.REDIS_URL:
        for n, job in enumerate(jobs[1:], start=1):
            if _hand_off(job):
                claim_after[n] = time.monotonic() + HANDOFF_SECONDS

    def drive(n: int) -> GenerationJob:
        try:
            return _drive(run, jobs[n], owner, claim_after=claim_after[n])
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix=f"run-{run.pk}") as pool:
        return list(pool.map(drive, range(len(jobs))))


def _hand_off(job: GenerationJob) -> bool:
    """Send a queued job to the queue; False if it is not waiting or the broker cannot be reached."""
    if job.status != GenerationJob.Status.QUEUED:
        return False
    try:
        job_enqueue(job.pk)
    except Exception:  # noqa: BLE001 - the broker is down: the run runs the job itself
        logger.warning("run job %s could not be queued; the run runs it itself", job.pk, exc_info=True)
        return False
    return True


def _drive(run: EvalRun, job: GenerationJob, owner: str, claim_after: float = 0.0) -> GenerationJob:
    """Run the job here if it is free; if another worker has it (a resumed job, or one handed to the queue),
    wait for it to end. A job handed to the queue is left to the other workers until ``claim_after``, and
    watched closely (its end is the run's next step), the run beating at its usual pace meanwhile."""
    handed_off = claim_after > 0
    last_beat = 0.0
    while True:
        job.refresh_from_db()
        if job.is_finished:
            return job
        if _cancel_requested(run):
            job_cancel(job=job)
        if not (job.status == GenerationJob.Status.QUEUED and time.monotonic() < claim_after):
            job_owner = new_owner_token()
            if job_claim(job_id=job.pk, owner=job_owner):
                job_run(job_id=job.pk, owner=job_owner)
                _beat(run, owner)
                continue
        if time.monotonic() - last_beat >= (WAIT_SECONDS if handed_off else 0):
            _beat(run, owner)
            last_beat = time.monotonic()
        time.sleep(HANDOFF_POLL_SECONDS if handed_off else WAIT_SECONDS)


def _bertscore(run: EvalRun, owner: str) -> None:
    """BERTScore of each answered response against the reference answer, for responses without one yet.

    An empty answer or reference scores 0. Without the ml extra (or with a wrong model directory or layer)
    the run goes on without it and says why in its notes. The run beats while the model loads and while
    each batch is scored, so no other worker takes it over meanwhile.

    Batches take an item's responses together (its models, conditions and repetitions), so its reference, and an
    answer given again word for word, are embedded once per batch rather than once per response: with three
    repetitions, 1.3 texts a response instead of 2. (The order is the run's unique index's: read without a sort.)"""
    records = dict(ReleaseItem.objects.filter(release=run.release, split=run.split).values_list("pk", "data"))
    pending = EvalResponse.objects.filter(run=run, bertscore_f1__isnull=True, error="").order_by(
        "release_item_id", "endpoint_id", "condition", "repetition"
    )
    if not pending.exists():
        return
    model_dir = run.bertscore_model or settings.LOCAL_MODEL_DIR
    if not model_dir_allowed(run.bertscore_model, settings.LOCAL_MODEL_DIRS):
        # named before the allow-list, or taken off it since: never loaded
        EvalRun.objects.filter(pk=run.pk).update(
            notes="BERTScore not computed: its model directory is not among the allowed ones (LOCAL_MODEL_DIRS)"
        )
        return

    def beat() -> None:
        _beat(run, owner)

    def beating(work):
        return while_beating(work, beat=beat, every=settings.GENERATION_HEARTBEAT_SECONDS)

    try:
        model = beating(lambda: bertscore_scorer(model_dir, run.bertscore_layer))
    except (LocalModelUnavailable, ValueError) as exc:
        EvalRun.objects.filter(pk=run.pk).update(notes=f"BERTScore not computed: {exc}")
        return
    references = [(data.get("answer") or "") for data in records.values()]
    idf = beating(lambda: idf_weights(model, references)) if run.bertscore_idf else None
    texts = [text for text in EvalResponse.objects.filter(run=run).values_list("text", flat=True)]
    EvalRun.objects.filter(pk=run.pk).update(
        bertscore_used={
            **model.described(idf=run.bertscore_idf),
            "windowed": beating(lambda: model.windowed(texts + references)),
        }
    )
    while True:
        batch = list(pending[:BERTSCORE_BATCH])
        if not batch:
            return
        candidates = [response.text for response in batch]
        answers = [records.get(response.release_item_id, {}).get("answer") or "" for response in batch]
        scores = beating(partial(bertscore, candidates, answers, model=model, idf=idf))
        for response, score in zip(batch, scores):
            response.bertscore_precision, response.bertscore_recall, response.bertscore_f1 = (
                score.precision,
                score.recall,
                score.f1,
            )
        EvalResponse.objects.bulk_update(batch, ["bertscore_precision", "bertscore_recall", "bertscore_f1"])
        _beat(run, owner)
        if _cancel_requested(run):
            return


def _beat(run: EvalRun, owner: str, **fields) -> None:
    if not EvalRun.objects.filter(pk=run.pk, owner=owner, status=Status.RUNNING).update(
        heartbeat_at=timezone.now(), **fields
    ):
        raise _Lost()


def _cancel_requested(run: EvalRun) -> bool:
    return EvalRun.objects.filter(pk=run.pk, cancel_requested=True).exists()


def _finish(run: EvalRun, owner: str, status: str, error: str = "") -> dict:
    now = timezone.now()
    fields = {"status": status, "error": error[:5000], "finished_at": now, "heartbeat_at": now}
    if status == Status.SUCCEEDED:
        fields["stage"] = Stage.DONE
    EvalRun.objects.filter(pk=run.pk, owner=owner).update(**fields)
    return {"run": run.pk, "status": status}


def runs_resume_stale() -> list[int]:
    """Queue again every running run whose worker stopped beating while none of its jobs is being worked on,
    and queued runs nobody picked up for long. Returns their ids."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.GENERATION_STALE_SECONDS)
    busy = EvalRun.jobs.through.objects.filter(
        generationjob__status=GenerationJob.Status.RUNNING, generationjob__heartbeat_at__gte=cutoff
    ).values("evalrun_id")
    return work_requeue_stale(
        EvalRun,
        stale_before=cutoff,
        exclude=Q(pk__in=busy),
        forgotten_before=now - timedelta(seconds=settings.GENERATION_QUEUED_STALE_SECONDS),
        enqueue=run_enqueue,
        queued=Status.QUEUED,
        running=Status.RUNNING,
        label="evaluation run",
    )

"""Starting, cancelling and resuming generation jobs (every door calls these)."""

import logging
import os
import socket
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from designs.meter import pipeline as meter
from designs.meter import stems as meter_stems
from annotation.models import CurationDecision, Item, Judgment, Project, Topic

from ..models import GenerationJob, LLMCall, ModelEndpoint, ProjectGenerationSettings, PromptTemplate
from .endpoints import endpoint_from_environment
from .templates import template_latest
from .work import ANSWERABLE, FINAL, JOB_KINDS, chunks, items_needing_distractors, work_for
from designs.causalbench.work import CAUSALBENCH_WORK, causalbench_params

logger = logging.getLogger(__name__)
Kind = PromptTemplate.Kind
Status = GenerationJob.Status
MAX_QUESTIONS = 1000
MAX_BATCH = 50
MAX_ITEMS = 100_000
ANSWER_VARIANTS = ("class-agnostic", "class-informed")


class JobInvalid(ValueError):
    """What is wrong with a job request, by field: {"count": "…", "item_ids": "…"}."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))


def endpoint_usable(endpoint: ModelEndpoint | None, project: Project) -> bool:
    return bool(endpoint and endpoint.is_active and endpoint.project_id in (None, project.pk))


def job_create(
    *,
    project: Project,
    kind: str,
    endpoint: ModelEndpoint,
    user=None,
    template: PromptTemplate | None = None,
    count: int | None = None,
    causal_class: str = "",
    topic: Topic | None = None,
    batch_size: int = 10,
    item_ids: list[int] | None = None,
    answer_endpoint: ModelEndpoint | None = None,
    answer_variant: str = "class-agnostic",
    answer_template: PromptTemplate | None = None,
    feedback: dict[int, str] | None = None,
    group_ids: list[int] | None = None,
    voters: list[ModelEndpoint] | None = None,
    domain: str = "",
    double_prompt: bool = True,
    enqueue: bool = True,
) -> GenerationJob:
    """Check the request, store the job and (after commit) hand it to a worker.

    Kinds: ``questions`` (``count`` new questions of ``causal_class``, in ``topic`` if given,
    answered by ``answer_endpoint`` in the same job if given), ``answer`` (``item_ids``, with
    the ``answer_variant`` template), ``distractors`` (``item_ids``, default all approved
    multiple-choice items without distractors), ``revision`` (``item_ids`` with ``feedback``); for METER
    projects ``decontamination`` (``group_ids`` of entries, default all waiting pairs, asked of ``endpoint`` and
    every model in ``voters``) and ``meter_question`` (``group_ids``, default all verified entries); for
    CausalBench projects ``causalbench_expand`` and ``causalbench_check`` (``item_ids``) and
    ``causalbench_scenario`` (``count`` scenarios of ``domain``); for CausalityCheck
    projects ``checklist`` (the texts the seeds ``group_ids`` lack, default every seed without items;
    ``double_prompt`` asks for correct and corrupted versions in one request).
    Raises ``JobInvalid`` naming each problem.
    """
    errors: dict[str, str] = {}
    if kind not in JOB_KINDS:
        raise JobInvalid({"kind": f"unknown kind {kind!r}; use one of {', '.join(JOB_KINDS)}"})
    if not endpoint_usable(endpoint, project):
        errors["endpoint"] = "choose an active model endpoint of this project or of the site"
    if kind == Kind.ANSWER and answer_variant in ANSWER_VARIANTS and template is None:
        template = template_latest(kind=kind, language=project.language, name=answer_variant)
    template = template or template_latest(kind=kind, language=project.language)
    if template is None or template.kind != kind:
        errors["template"] = f"no {kind} prompt template; run `python manage.py load_prompt_templates`"
    params: dict = {}
    if kind == Kind.QUESTIONS:
        params, answer_template = _questions_params(
            project, errors, count=count, causal_class=causal_class, topic=topic, batch_size=batch_size,
            answer_endpoint=answer_endpoint, answer_variant=answer_variant, answer_template=answer_template,
        )
    elif kind == Kind.ANSWER:
        params = {"item_ids": _checked_items(project, errors, item_ids, allowed=ANSWERABLE, required=True)}
    elif kind == Kind.DISTRACTORS:
        eligible = items_needing_distractors(project)
        if item_ids is None:
            ids = list(eligible.values_list("pk", flat=True)[: MAX_ITEMS + 1])
            if not ids:
                errors["item_ids"] = "no approved multiple-choice item lacks distractors"
            params = {"item_ids": ids}
        else:
            params = {"item_ids": _checked_items(project, errors, item_ids, queryset=eligible, required=True)}
    elif kind == Kind.REVISION:
        ids = _checked_items(project, errors, item_ids, excluded=FINAL, required=True)
        feedback = feedback if feedback is not None else revision_feedback_for(ids)
        params = {"item_ids": ids, "feedback": {str(key): text for key, text in feedback.items()}}
    elif kind in (Kind.DECONTAMINATION, Kind.METER_QUESTION):
        params = _entry_params(project, errors, kind=kind, group_ids=group_ids, endpoint=endpoint, voters=voters)
    # --- CausalBench ---
    elif kind in CAUSALBENCH_WORK:
        params = causalbench_params(project, errors, kind=kind, endpoint=endpoint, item_ids=item_ids, count=count,
                                    domain=domain)
    # --- end CausalBench ---
    # --- CausalityCheck (issue 8, part C) ---
    elif kind == Kind.CHECKLIST:
        params = _checklist_params(project, errors, group_ids=group_ids, double_prompt=double_prompt)
    # --- end CausalityCheck ---
    if len(params.get("item_ids", [])) > MAX_ITEMS:
        errors["item_ids"] = f"at most {MAX_ITEMS:,} items per job"
    if errors:
        raise JobInvalid(errors)
    with transaction.atomic():
        job = GenerationJob.objects.create(
            project=project, kind=kind, endpoint=endpoint, template=template, params=params, created_by=user,
            answer_endpoint=answer_endpoint if kind == Kind.QUESTIONS else None,
            answer_template=answer_template if kind == Kind.QUESTIONS else None,
            total=_planned_calls(kind, params), heartbeat_at=timezone.now(),
        )
        if enqueue:
            # robust: with the broker down the job stays queued (the stale-job watch sends it again
            # later) and the page that started it still answers.
            transaction.on_commit(lambda: job_enqueue(job.pk), robust=True)
    return job


def _questions_params(project, errors, *, count, causal_class, topic, batch_size, answer_endpoint, answer_variant,
                      answer_template):
    if not isinstance(count, int) or not 1 <= count <= MAX_QUESTIONS:
        errors["count"] = f"ask for 1 to {MAX_QUESTIONS} questions"
    if causal_class not in project.label_set:
        errors["causal_class"] = f"use one of the project's classes: {', '.join(project.label_set)}"
    if topic is not None and topic.project_id != project.pk:
        errors["topic"] = "the topic belongs to another project"
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH:
        errors["batch_size"] = f"ask for 1 to {MAX_BATCH} questions per call"
    if answer_endpoint is not None:
        if not endpoint_usable(answer_endpoint, project):
            errors["answer_endpoint"] = "choose an active model endpoint of this project or of the site"
        answer_template = answer_template or template_latest(
            kind=Kind.ANSWER, language=project.language, name=answer_variant
        )
        if answer_template is None or answer_template.kind != Kind.ANSWER:
            errors["answer_template"] = "no answer prompt template; run `python manage.py load_prompt_templates`"
    params = {"count": count, "causal_class": causal_class, "topic_id": topic.pk if topic else None,
              "batch_size": min(batch_size, count) if isinstance(count, int) and count > 0 else batch_size}
    return params, answer_template if answer_endpoint is not None else None


# The entry stages each METER kind works on.
ENTRY_STAGES = {Kind.DECONTAMINATION: ("pair", "decontamination"), Kind.METER_QUESTION: ("generation",)}


def _entry_params(project, errors, *, kind, group_ids, endpoint, voters) -> dict:
    if project.design != Project.Design.METER:
        errors["kind"] = f"{kind} jobs are for METER projects; this one is {project.get_design_display()}"
        return {}
    eligible = meter.entries(project, *ENTRY_STAGES[kind])
    if group_ids is None:
        ids = list(eligible.order_by("pk").values_list("pk", flat=True)[: MAX_ITEMS + 1])
    else:
        try:
            ids = list(dict.fromkeys(int(pk) for pk in group_ids))
        except (TypeError, ValueError):
            errors["group_ids"] = "entry ids must be whole numbers"
            return {}
        found = set(eligible.filter(pk__in=ids).values_list("pk", flat=True))
        if missing := [pk for pk in ids if pk not in found]:
            stages = " or ".join(ENTRY_STAGES[kind])
            errors["group_ids"] = f"not entries of this project at stage {stages}: {_id_list(missing)}"
    if not ids and "group_ids" not in errors:
        errors["group_ids"] = f"no entry waits for {kind}"
    if len(ids) > MAX_ITEMS:
        errors["group_ids"] = f"at most {MAX_ITEMS:,} entries per job"
    params = {"group_ids": ids}
    if kind == Kind.DECONTAMINATION:
        models = list(dict.fromkeys([endpoint, *(voters or [])]))
        if any(not endpoint_usable(voter, project) for voter in models):
            errors["voters"] = "choose active model endpoints of this project or of the site"
        params["endpoint_ids"] = [voter.pk for voter in models if voter is not None]
    return params


def _planned_calls(kind: str, params: dict) -> int:
    if kind == Kind.DECONTAMINATION:
        return len(params["group_ids"]) * len(params["endpoint_ids"])
    if kind == Kind.METER_QUESTION:
        return len(params["group_ids"]) * len(meter_stems.LEVELS)
    return len(params.get("item_ids", []))


# --- CausalityCheck (issue 8, part C) ---
def _checklist_params(project, errors, *, group_ids, double_prompt) -> dict:
    from designs.causalitycheck import seeds as checklist
    from designs.causalitycheck.work import CHECKLIST_TEMPLATES

    seeds = checklist.seeds_of(project)
    waiting = list(seeds.filter(items__isnull=True).distinct().values_list("pk", flat=True))
    if group_ids is None:
        group_ids = waiting
        if not group_ids:
            errors["group_ids"] = "no seed of this project lacks its checklist"
    else:
        try:
            group_ids = list(dict.fromkeys(int(pk) for pk in group_ids))
        except (TypeError, ValueError):
            errors["group_ids"] = "seed ids must be whole numbers"
            group_ids = []
        wrong = [pk for pk in group_ids if pk not in set(waiting)]
        if not group_ids:
            errors["group_ids"] = "choose at least one seed"
        elif wrong:
            errors["group_ids"] = f"not a seed of this project without its checklist: {_id_list(wrong)}"
    templates = {name: template_latest(kind=Kind.CHECKLIST, language=project.language, name=name)
                 for name in CHECKLIST_TEMPLATES}
    absent = [name for name, template in templates.items() if template is None]
    if absent:
        errors["template"] = (f"no checklist prompt template {', '.join(absent)}; "
                              "run `python manage.py load_prompt_templates`")
    return {"group_ids": group_ids, "double_prompt": bool(double_prompt),
            "templates": {name: template.pk for name, template in templates.items() if template is not None}}
# --- end CausalityCheck ---


def _checked_items(project, errors, item_ids, *, allowed=None, excluded=None, queryset=None, required=False):
    if not item_ids:
        if required:
            errors["item_ids"] = "choose at least one item"
        return []
    try:
        wanted = list(dict.fromkeys(int(pk) for pk in item_ids))
    except (TypeError, ValueError):
        errors["item_ids"] = "item ids must be whole numbers"
        return []
    rows = {}
    for chunk in chunks(wanted):
        rows.update((queryset if queryset is not None else Item.objects.filter(project=project))
                    .filter(pk__in=chunk).values_list("pk", "status"))
    missing = [pk for pk in wanted if pk not in rows]
    wrong = [pk for pk, status in rows.items()
             if (allowed is not None and status not in allowed) or (excluded is not None and status in excluded)]
    if missing:
        reason = "not eligible or not in this project" if queryset is not None else "not in this project"
        errors["item_ids"] = f"{reason}: {_id_list(missing)}"
    elif wrong:
        statuses = ", ".join(str(Item.Status(status).label).lower() for status in (allowed or excluded))
        verb = "must be" if allowed is not None else "must not be"
        errors["item_ids"] = f"items {verb} {statuses}: {_id_list(sorted(wrong))}"
    return wanted


def _id_list(ids: list[int]) -> str:
    shown = ", ".join(str(pk) for pk in ids[:20])
    return shown + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")


def job_enqueue(job_id: int) -> None:
    from ..tasks import run_generation_job

    run_generation_job.delay(job_id)


def new_owner_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def job_claim(*, job_id: int, owner: str) -> bool:
    """Take a queued job for this run; False if another run has it or it is over."""
    now = timezone.now()
    return bool(
        GenerationJob.objects.filter(pk=job_id, status=Status.QUEUED, cancel_requested=False).update(
            status=Status.RUNNING, owner=owner, heartbeat_at=now, started_at=Coalesce(F("started_at"), now)
        )
    )


def job_cancel(*, job: GenerationJob) -> GenerationJob:
    """A queued job ends at once; a running one stops making new calls at its next check."""
    now = timezone.now()
    GenerationJob.objects.filter(pk=job.pk, status=Status.QUEUED).update(
        status=Status.CANCELLED, cancel_requested=True, finished_at=now
    )
    GenerationJob.objects.filter(pk=job.pk, status=Status.RUNNING).update(cancel_requested=True)
    job.refresh_from_db()
    return job


def job_retry_failed(*, job: GenerationJob) -> int:
    """Queue a finished job again, to make its failed calls anew and the calls it never made (after a
    key, a model name or a limit was fixed, or after a cancel). Returns how many calls that is; 0 if
    the job is still running or has nothing left to make.

    Each call keeps the attempts, tokens and cost of its earlier runs; the runner adds the new ones.
    """
    with transaction.atomic():
        job = GenerationJob.objects.select_for_update().get(pk=job.pk)
        if not job.is_finished:
            return 0
        failed = list(LLMCall.objects.filter(job=job, status=LLMCall.Status.FAILED).order_by("pk"))
        unmade = LLMCall.objects.filter(job=job, status=LLMCall.Status.PENDING).count()
        if not failed and not unmade:
            return 0
        LLMCall.objects.filter(pk__in=[call.pk for call in failed]).update(status=LLMCall.Status.PENDING)
        work = work_for(job)
        for call in failed:
            work.on_retry(call)
        GenerationJob.objects.filter(pk=job.pk).update(
            status=Status.QUEUED, error="", cancel_requested=False, owner="", finished_at=None,
            heartbeat_at=timezone.now(), failed=F("failed") - len(failed),
        )
        transaction.on_commit(lambda: job_enqueue(job.pk))
    logger.info("generation job %s queued again: %s failed and %s unmade calls", job.pk, len(failed), unmade)
    return len(failed) + unmade


def jobs_resume_stale() -> list[int]:
    """Hand back to the queue every running job whose worker stopped beating (it died), and
    queued jobs nobody picked up for long (their message was lost). Returns their ids."""
    now = timezone.now()
    running_cutoff = now - timedelta(seconds=settings.GENERATION_STALE_SECONDS)
    queued_cutoff = now - timedelta(seconds=settings.GENERATION_QUEUED_STALE_SECONDS)
    resumed = []
    stale = GenerationJob.objects.filter(status=Status.RUNNING, heartbeat_at__lt=running_cutoff)
    for job_id in stale.values_list("pk", flat=True):
        taken = GenerationJob.objects.filter(pk=job_id, status=Status.RUNNING, heartbeat_at__lt=running_cutoff).update(
            status=Status.QUEUED, owner="", heartbeat_at=now, resumed=F("resumed") + 1
        )
        if taken:
            logger.warning("generation job %s lost its worker; queued again", job_id)
            resumed.append(job_id)
    forgotten = GenerationJob.objects.filter(status=Status.QUEUED, heartbeat_at__lt=queued_cutoff)
    for job_id in forgotten.values_list("pk", flat=True):
        if GenerationJob.objects.filter(pk=job_id, status=Status.QUEUED, heartbeat_at__lt=queued_cutoff).update(
            heartbeat_at=now
        ):
            resumed.append(job_id)
    for job_id in resumed:
        job_enqueue(job_id)
    return resumed


# --- revision on a curator's request ---------------------------------------------------------

def revision_endpoint_for(project: Project) -> ModelEndpoint | None:
    """The endpoint that rewrites the project's answers, or None (then people revise by hand)."""
    chosen = ProjectGenerationSettings.objects.filter(project=project).select_related("revision_endpoint").first()
    if chosen is not None and not chosen.revise_automatically:
        return None
    if chosen is not None and endpoint_usable(chosen.revision_endpoint, project):
        return chosen.revision_endpoint
    from_environment = endpoint_from_environment()
    return from_environment if endpoint_usable(from_environment, project) else None


def revision_feedback_for(item_ids: list[int]) -> dict[int, str]:
    """For each item: the curator's note and the reviewers' comments of its latest round, as lines."""
    feedback = {}
    for chunk in chunks(item_ids):
        feedback.update(_feedback(chunk))
    return feedback


def _feedback(item_ids: list[int]) -> dict[int, str]:
    decisions = {}
    for decision in CurationDecision.objects.filter(item_id__in=item_ids).order_by("item_id", "round"):
        decisions[decision.item_id] = decision  # the latest round wins
    rounds = {item_id: decision.round for item_id, decision in decisions.items()}
    rounds.update({pk: rnd for pk, rnd in Item.objects.filter(pk__in=item_ids).values_list("pk", "round")
                   if pk not in rounds})
    judgments = (
        Judgment.objects.filter(item_id__in=item_ids).order_by("item_id", "created_at", "pk")
        .values_list("item_id", "round", "vote", "comment")
    )
    lines: dict[int, list[str]] = {item_id: [] for item_id in item_ids}
    for item_id, decision in decisions.items():
        if decision.note.strip():
            lines[item_id].append(f"- Curator: {decision.note.strip()}")
    reviewer: dict[int, int] = {}
    for item_id, judgment_round, vote, comment in judgments:
        if judgment_round != rounds.get(item_id) or not (comment.strip() or vote):
            continue
        reviewer[item_id] = reviewer.get(item_id, 0) + 1
        label = Judgment.Vote(vote).label.lower() if vote else "no vote"
        text = comment.strip() or "(no comment)"
        lines[item_id].append(f"- Reviewer {reviewer[item_id]} ({label}): {text}")
    return {item_id: "\n".join(entries) or "-" for item_id, entries in lines.items()}


def job_request_revision(*, item: Item, decision: CurationDecision | None = None) -> GenerationJob | None:
    """Start a model revision of the item's answer, if the project has an endpoint for it."""
    endpoint = revision_endpoint_for(item.project)
    if endpoint is None:
        return None
    if template_latest(kind=Kind.REVISION, language=item.project.language) is None:
        logger.warning("no revision template: item %s waits for a person", item.pk)
        return None
    return job_create(
        project=item.project, kind=Kind.REVISION, endpoint=endpoint, item_ids=[item.pk],
        user=decision.curator if decision is not None else None,
    )

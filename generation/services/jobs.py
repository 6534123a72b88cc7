"""Starting, cancelling and resuming generation jobs (every door calls these)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import CurationDecision, Item, Judgment, Project
from core.background import work_cancel, work_claim, work_owner_token, work_requeue_stale

from .. import selectors
from ..models import GenerationJob, LLMCall, ModelEndpoint, ProjectGenerationSettings, PromptTemplate
from ..options import option_defaults
from .endpoints import environment_endpoint
from .templates import template_latest
from .work import ANSWERABLE, FINAL, chunks, items_needing_distractors, work_for

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
    enqueue: bool = True,
    **options,
) -> GenerationJob:
    """Check the request, store the job and (after commit) hand it to a worker.

    ``kind`` is a registered job kind (``generation.kinds``); ``options`` are what the kind asks for, the same
    at every door: ``questions`` (``count`` new questions of ``causal_class``, in ``topic`` if given, answered
    by ``answer_endpoint`` in the same job if given), ``answer`` (``item_ids``, default every item waiting for
    an answer, with the ``answer_variant`` template), ``distractors`` (``item_ids``, default all approved
    multiple-choice items without distractors), ``revision`` (``item_ids`` with ``feedback``); a kind with
    options of its own (``JobKind.options``) takes them too, each left out given its default.
    Raises ``JobInvalid`` naming each problem.
    """
    job_kind = kind_of(kind)
    if job_kind is None:
        offered = ", ".join(kind.key for kind in job_kinds())
        raise JobInvalid({"kind": f"unknown kind {kind!r}; use one of {offered}"})
    options = {**DEFAULT_OPTIONS, **option_defaults(job_kind.options), **options, "endpoint": endpoint}
    errors: dict[str, str] = {}
    refusal = job_kind.runs_on(project)
    if refusal:
        raise JobInvalid({"kind": refusal})
    if not endpoint_usable(endpoint, project):
        errors["endpoint"] = "choose an active model endpoint of this project or of the site"
    if template is None and (name := job_kind.template_name(options)):
        template = template_latest(kind=kind, language=project.language, name=name)
    template = template or template_latest(kind=kind, language=project.language)
    if template is None or template.kind != kind:
        errors["template"] = f"no {kind} prompt template; run `python manage.py load_prompt_templates`"
    params = job_kind.params(project, errors, options)
    if len(params.get("item_ids", [])) > MAX_ITEMS:
        errors["item_ids"] = f"at most {MAX_ITEMS:,} items per job"
    if errors:
        raise JobInvalid(errors)
    answered = job_kind.answered and options["answer_endpoint"] is not None
    with transaction.atomic():
        job = GenerationJob.objects.create(
            project=project,
            kind=kind,
            endpoint=endpoint,
            template=template,
            params=params,
            created_by=user,
            answer_endpoint=options["answer_endpoint"] if answered else None,
            answer_template=options["answer_template"] if answered else None,
            total=job_kind.planned_calls(params),
            heartbeat_at=timezone.now(),
        )
        if enqueue:
            # robust: with the broker down the job stays queued (the stale-job watch sends it again
            # later) and the page that started it still answers.
            transaction.on_commit(lambda: job_enqueue(job.pk), robust=True)
    return job


# The options every door may pass, with their defaults; a kind reads the ones it needs and declares its own.
DEFAULT_OPTIONS = {
    "count": None,
    "causal_class": "",
    "topic": None,
    "batch_size": 10,
    "item_ids": None,
    "answer_endpoint": None,
    "answer_variant": "class-agnostic",
    "answer_template": None,
    "feedback": None,
}


def kind_of(key: str):
    from ..kinds import job_kind

    return job_kind(key)


def job_kinds():
    from ..kinds import job_kinds as registered

    return registered()


def _questions_params(project, errors, options) -> dict:
    count, batch_size, topic = options["count"], options["batch_size"], options["topic"]
    if not isinstance(count, int) or not 1 <= count <= MAX_QUESTIONS:
        errors["count"] = f"ask for 1 to {MAX_QUESTIONS} questions"
    if options["causal_class"] not in project.label_set:
        errors["causal_class"] = f"use one of the project's classes: {', '.join(project.label_set)}"
    if topic is not None and topic.project_id != project.pk:
        errors["topic"] = "the topic belongs to another project"
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH:
        errors["batch_size"] = f"ask for 1 to {MAX_BATCH} questions per call"
    answer_endpoint = options["answer_endpoint"]
    if answer_endpoint is not None:
        if not endpoint_usable(answer_endpoint, project):
            errors["answer_endpoint"] = "choose an active model endpoint of this project or of the site"
        answer_template = options["answer_template"] or template_latest(
            kind=Kind.ANSWER, language=project.language, name=options["answer_variant"]
        )
        if answer_template is None or answer_template.kind != Kind.ANSWER:
            errors["answer_template"] = (
                "no answer prompt template; run `python manage.py load_prompt_templates`"
            )
        options["answer_template"] = answer_template
    return {
        "count": count,
        "causal_class": options["causal_class"],
        "topic_id": topic.pk if topic else None,
        "batch_size": min(batch_size, count) if isinstance(count, int) and count > 0 else batch_size,
    }


def _answer_params(project, errors, options) -> dict:
    item_ids = options["item_ids"]
    if item_ids is None:  # every item waiting for an answer
        item_ids = list(
            selectors.items_waiting_for_answer(project).values_list("pk", flat=True)[: MAX_ITEMS + 1]
        )
    return {"item_ids": checked_items(project, errors, item_ids, allowed=ANSWERABLE, required=True)}


def _distractors_params(project, errors, options) -> dict:
    eligible = items_needing_distractors(project)
    if options["item_ids"] is None:
        ids = list(eligible.values_list("pk", flat=True)[: MAX_ITEMS + 1])
        if not ids:
            errors["item_ids"] = "no approved multiple-choice item lacks distractors"
        return {"item_ids": ids}
    return {"item_ids": checked_items(project, errors, options["item_ids"], queryset=eligible, required=True)}


def _revision_params(project, errors, options) -> dict:
    ids = checked_items(project, errors, options["item_ids"], excluded=FINAL, required=True)
    feedback = options["feedback"] if options["feedback"] is not None else revision_feedback_for(ids)
    return {"item_ids": ids, "feedback": {str(key): text for key, text in feedback.items()}}


def _answer_variant(options) -> str | None:
    return options["answer_variant"] if options["answer_variant"] in ANSWER_VARIANTS else None


def core_job_kinds() -> list:
    """The kinds generation itself offers (registered when its app is ready)."""
    from django.utils.translation import gettext_lazy as _

    from ..kinds import JobKind
    from .work import AnswerWork, DistractorsWork, QuestionsWork, RevisionWork

    return [
        JobKind(
            key=Kind.QUESTIONS,
            label=_("New questions of a class"),
            work=QuestionsWork,
            params=_questions_params,
            answered=True,
            variables=frozenset(
                {
                    "count",
                    "causal_class",
                    "class_definition",
                    "class_definitions",
                    "topic",
                    "topic_words",
                    "examples",
                    "language",
                }
            ),
            output_keys=("questions",),
        ),
        JobKind(
            key=Kind.ANSWER,
            label=_("Answer a question"),
            work=AnswerWork,
            params=_answer_params,
            template_name=_answer_variant,
            default_template="class-agnostic",
            command="answers",
            variables=frozenset({"question", "context", "causal_class", "class_description", "language"}),
            output_keys=("answer",),
        ),
        JobKind(
            key=Kind.DISTRACTORS,
            label=_("Distractors"),
            work=DistractorsWork,
            params=_distractors_params,
            variables=frozenset(
                {"question", "context", "question_type", "correct_option", "causal_class", "language"}
            ),
            output_keys=("contradictory", "unfounded", "reversal", "irrelevant"),
        ),
        JobKind(
            key=Kind.REVISION,
            label=_("Revise an answer from feedback"),
            work=RevisionWork,
            params=_revision_params,
            variables=frozenset({"question", "context", "causal_class", "answer", "feedback", "language"}),
            output_keys=("answer",),
        ),
    ]


def checked_items(project, errors, item_ids, *, allowed=None, excluded=None, queryset=None, required=False):
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
        rows.update(
            (queryset if queryset is not None else Item.objects.filter(project=project))
            .filter(pk__in=chunk)
            .values_list("pk", "status")
        )
    missing = [pk for pk in wanted if pk not in rows]
    wrong = [
        pk
        for pk, status in rows.items()
        if (allowed is not None and status not in allowed) or (excluded is not None and status in excluded)
    ]
    if missing:
        reason = "not eligible or not in this project" if queryset is not None else "not in this project"
        errors["item_ids"] = f"{reason}: {id_list(missing)}"
    elif wrong:
        statuses = ", ".join(str(Item.Status(status).label).lower() for status in (allowed or excluded))
        verb = "must be" if allowed is not None else "must not be"
        errors["item_ids"] = f"items {verb} {statuses}: {id_list(sorted(wrong))}"
    return wanted


def id_list(ids: list[int]) -> str:
    shown = ", ".join(str(pk) for pk in ids[:20])
    return shown + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")


def job_enqueue(job_id: int) -> None:
    from ..tasks import run_generation_job

    run_generation_job.delay(job_id)


def new_owner_token() -> str:
    return work_owner_token()


def job_claim(*, job_id: int, owner: str) -> bool:
    """Take a queued job for this run; False if another run has it or it is over."""
    return work_claim(GenerationJob, pk=job_id, owner=owner, queued=Status.QUEUED, running=Status.RUNNING)


def job_cancel(*, job: GenerationJob) -> GenerationJob:
    """A queued job ends at once; a running one stops making new calls at its next check."""
    work_cancel(
        GenerationJob, pk=job.pk, queued=Status.QUEUED, running=Status.RUNNING, cancelled=Status.CANCELLED
    )
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
            status=Status.QUEUED,
            error="",
            cancel_requested=False,
            owner="",
            finished_at=None,
            heartbeat_at=timezone.now(),
            failed=F("failed") - len(failed),
        )
        transaction.on_commit(lambda: job_enqueue(job.pk))
    logger.info("generation job %s queued again: %s failed and %s unmade calls", job.pk, len(failed), unmade)
    return len(failed) + unmade


def jobs_resume_stale() -> list[int]:
    """Hand back to the queue every running job whose worker stopped beating (it died), and
    queued jobs nobody picked up for long (their message was lost). Returns their ids."""
    now = timezone.now()
    return work_requeue_stale(
        GenerationJob,
        stale_before=now - timedelta(seconds=settings.GENERATION_STALE_SECONDS),
        forgotten_before=now - timedelta(seconds=settings.GENERATION_QUEUED_STALE_SECONDS),
        enqueue=job_enqueue,
        queued=Status.QUEUED,
        running=Status.RUNNING,
        label="generation job",
    )


# --- revision on a curator's request ---------------------------------------------------------


def revision_endpoint_for(project: Project) -> ModelEndpoint | None:
    """The endpoint that rewrites the project's answers, or None (then people revise by hand)."""
    chosen = (
        ProjectGenerationSettings.objects.filter(project=project).select_related("revision_endpoint").first()
    )
    if chosen is not None and not chosen.revise_automatically:
        return None
    if chosen is not None and endpoint_usable(chosen.revision_endpoint, project):
        return chosen.revision_endpoint
    from_environment = environment_endpoint()
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
    rounds.update(
        {
            pk: rnd
            for pk, rnd in Item.objects.filter(pk__in=item_ids).values_list("pk", "round")
            if pk not in rounds
        }
    )
    judgments = (
        Judgment.objects.filter(item_id__in=item_ids)
        .order_by("item_id", "created_at", "pk")
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
        project=item.project,
        kind=Kind.REVISION,
        endpoint=endpoint,
        item_ids=[item.pk],
        user=decision.curator if decision is not None else None,
    )

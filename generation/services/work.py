"""What each kind of job asks the model, and what it does with a valid answer.

A ``Work`` plans the calls of a job (one ``LLMCall`` row per thing to produce, unique per
job, item and purpose), gives each call its prompt variables and schema, and applies a
valid output to the items. ``apply`` runs inside the transaction that records the call as
succeeded, so an output is applied exactly once, together with the record that it was.
"""

import copy
import logging
import random
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F, Q

from annotation.importing.funnel import text_key
from annotation.models import Item, Option, Revision
from annotation.services import (
    Author,
    ItemChange,
    NewItem,
    item_revise,
    item_start_round,
    items_create,
    items_revise,
)

from ..models import GenerationJob, LLMCall
from .templates import class_definitions

logger = logging.getLogger(__name__)
DISTRACTOR_ROLES = [
    Option.Role.CONTRADICTORY,
    Option.Role.UNFOUNDED,
    Option.Role.REVERSAL,
    Option.Role.IRRELEVANT,
]
ANSWERABLE = (Item.Status.PENDING, Item.Status.NEEDS_REVISION)
FINAL = (Item.Status.APPROVED, Item.Status.REJECTED)
MAX_EXAMPLES = 20


class NotApplied(Exception):
    """The output is valid but no longer fits the item (it moved on); the call keeps it."""


@dataclass
class Applied:
    """What applying a batch of outputs gave: new calls to make, and per call why it was not used."""

    follow_ups: list = field(default_factory=list)
    problems: dict = field(default_factory=dict)  # call id -> (call status, error)


def chunks(ids: list, size: int = 10_000):
    """Id lists in pieces a query's IN (...) can take on every database (SQLite stops at 32,766)."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def provenance(call: LLMCall) -> dict:
    return {
        "kind": "model",
        "model": call.endpoint.model if call.endpoint else "",
        "endpoint": call.endpoint.name if call.endpoint else "",
        "template": call.template.label if call.template else "",
        "template_id": call.template_id,
        "call_id": call.pk,
        "job_id": call.job_id,
    }


def author_of(call: LLMCall) -> Author:
    return Author(llm_call_id=call.pk, provenance=provenance(call))


class Work:
    purpose = ""
    # Calls whose prompt or output carries what blind reviewers must not read (a closed round's votes and
    # comments, the answers a judge or a blind check compares) are shown to curators and owners only.
    calls_for_curators_only = False

    @classmethod
    def call_readers(cls, project) -> str:
        """The lowest role that may read this kind's calls in ``project``: curators when the kind says its calls
        carry what a blind step compares, or when the project's design checks answers blind (then any call of
        the project may carry an answer: an answer job's output is the first answer the check compares)."""
        from annotation.designs import design_for
        from annotation.permissions import Role

        if cls.calls_for_curators_only or design_for(project).answers_checked_blind:
            return Role.CURATOR
        return Role.ANNOTATOR

    def __init__(self, job: GenerationJob):
        self.job = job
        self.project = job.project
        self.definitions = class_definitions(
            language=self.project.language,
            labels=list(self.project.label_set),
            overrides=(self.project.design_settings or {}).get("class_definitions"),
        )

    def plan(self) -> list[LLMCall]:
        """A call per chosen item that still exists."""
        wanted = self.job.params.get("item_ids", [])
        existing = set()
        for chunk in chunks(wanted):
            existing.update(
                Item.objects.filter(project=self.project, pk__in=chunk).values_list("pk", flat=True)
            )
        return [self.new_call(item_id=item_id) for item_id in sorted(existing)]

    def expected_total(self, planned: list[LLMCall]) -> int:
        return len(planned)

    def new_call(self, *, item_id=None, purpose=None, request=None) -> LLMCall:
        return LLMCall(
            job=self.job,
            item_id=item_id,
            purpose=purpose or self.purpose,
            endpoint_id=self.job.endpoint_id,
            template_id=self.job.template_id,
            request=request or {},
        )

    def schema(self, call: LLMCall) -> dict:
        return call.template.output_schema

    def variables(self, call: LLMCall) -> dict:
        item = call.item
        causal_class = item.causal_class
        return {
            "question": item.question,
            "context": item.context,
            "causal_class": causal_class,
            "class_description": self.definitions.get(causal_class, causal_class),
            "language": self.project.language,
        }

    def apply(self, call: LLMCall, parsed) -> list[LLMCall]:
        raise NotImplementedError

    def apply_many(self, calls: list[LLMCall], together: bool = True) -> Applied:
        """Apply each call's output in its own savepoint, so one that cannot be used spoils nothing else.

        Kinds whose outputs can be written together in a few queries do so when ``together``.
        """
        applied = Applied()
        for call in calls:
            try:
                with transaction.atomic():
                    applied.follow_ups += self.apply(call, call.parsed)
            except NotApplied as exc:
                applied.problems[call.pk] = (LLMCall.Status.SUCCEEDED, f"not applied: {exc}")
            except Exception as exc:  # noqa: BLE001 - the output was paid for: keep it, say why it was not used
                logger.exception("job %s: output of call %s could not be applied", call.job_id, call.pk)
                applied.problems[call.pk] = (
                    LLMCall.Status.FAILED,
                    f"not applied: {type(exc).__name__}: {exc}",
                )
        return applied

    def on_failed(self, call: LLMCall) -> None:
        """A call failed for good; nothing to undo by default."""

    def on_retry(self, call: LLMCall) -> None:
        """A failed call is made again: undo what ``on_failed`` did."""

    def extra_endpoints(self) -> list:
        """Endpoints beyond the job's own (and its answering one) that its calls use: several models may vote."""
        return []


class AnswerWork(Work):
    """Answers for chosen items: each answer is a model revision; a waiting item enters review."""

    purpose = "answer"

    def apply(self, call, parsed):
        return answer_apply(call, parsed["answer"])

    def apply_many(self, calls, together=True):
        return answers_apply_many(calls, fallback=super().apply_many, together=together)


def answers_apply_many(calls: list[LLMCall], fallback, together: bool = True) -> Applied:
    """Answers arrive by the hundred: write them in a few queries (``together``), else one by one.

    Together, a failure spoils the caller's whole transaction (no savepoint: they cost a round
    trip each); the runner then records the batch again with ``together=False``.
    """
    return _answers_apply(calls) if together else fallback(calls)


def _answers_apply(calls: list[LLMCall]) -> Applied:
    applied = Applied()
    _changed, left_alone = items_revise(
        changes=[
            ItemChange(
                call.item_id,
                {"reference_answer": call.parsed["answer"]},
                author_of(call),
                note=f"answer by {call.endpoint.model}",
            )
            for call in calls
        ],
        kind=Revision.Kind.MODEL,
        only_if_status=ANSWERABLE,
        start_round=True,
    )
    for call in calls:
        if call.item_id in left_alone:
            status = left_alone[call.item_id]
            reason = "was deleted" if status is None else f"is {Item.Status(status).label.lower()} now"
            applied.problems[call.pk] = (
                LLMCall.Status.SUCCEEDED,
                f"not applied: item {call.item_id} {reason}; its answer was not replaced",
            )
    return applied


def answer_apply(call: LLMCall, answer: str) -> list:
    item = Item.objects.get(pk=call.item_id)
    if item.status not in ANSWERABLE:
        raise NotApplied(
            f"item {item.pk} is {item.get_status_display().lower()} now; its answer was not replaced"
        )
    item = item_revise(
        item=item,
        changes={"reference_answer": answer},
        author=author_of(call),
        kind=Revision.Kind.MODEL,
        note=f"answer by {call.endpoint.model}",
    )
    item_start_round(item=item)
    return []


class QuestionsWork(Work):
    """N new questions of a class within a topic, in batches; optionally answered in the same job."""

    def plan(self):
        count, batch = self.job.params["count"], self.job.params.get("batch_size", 10)
        calls = []
        for number, start in enumerate(range(0, count, batch), start=1):
            size = min(batch, count - start)
            calls.append(self.new_call(purpose=f"questions:{number}", request={"planned": {"count": size}}))
        return calls

    def expected_total(self, planned):
        answering = self.job.answer_endpoint_id is not None
        return len(planned) + (self.job.params["count"] if answering else 0)

    @staticmethod
    def batch_size(call: LLMCall) -> int:
        return call.request.get("planned", {}).get("count", 1)

    def schema(self, call):
        if call.purpose == "answer":
            return super().schema(call)
        schema = copy.deepcopy(call.template.output_schema)
        questions = schema.get("properties", {}).get("questions")
        if isinstance(questions, dict) and questions.get("type") == "array":
            questions["minItems"] = questions["maxItems"] = self.batch_size(call)
        return schema

    def variables(self, call):
        if call.purpose == "answer":
            return super().variables(call)
        params = self.job.params
        label = params["causal_class"]
        topic = (
            self.project.topics.filter(pk=params.get("topic_id")).first() if params.get("topic_id") else None
        )
        return {
            "count": self.batch_size(call),
            "causal_class": label,
            "class_definition": self.definitions.get(label, label),
            "class_definitions": "\n".join(f"- {text}" for text in self.definitions.values()),
            "topic": topic.label if topic else "",
            "topic_words": ", ".join(topic.top_words[:10]) if topic else "",
            "examples": "\n".join(f"    - {question}" for question in self._examples(label, topic)),
            "language": self.project.language,
        }

    def _examples(self, label, topic) -> list[str]:
        """Questions of the class and topic already there, newest of this job first, to steer away from."""
        same = Item.objects.filter(project=self.project, causal_class=label)
        if topic is not None:
            same = same.filter(topic=topic)
        from_job = list(
            same.filter(metadata__generation__job_id=self.job.pk)
            .order_by("-pk")
            .values_list("question", flat=True)[:15]
        )
        others = list(
            same.filter(origin=Item.Origin.NATURAL).order_by("pk").values_list("question", flat=True)[:5]
        )
        return (others + from_job)[:MAX_EXAMPLES]

    def apply(self, call, parsed):
        if call.purpose == "answer":
            return answer_apply(call, parsed["answer"])
        params = self.job.params
        proposed = [entry for entry in parsed["questions"] if entry.get("question", "").strip()]
        keys = {text_key(entry["question"]) for entry in proposed}
        taken = set(
            Item.objects.filter(project=self.project, text_key__in=keys).values_list("text_key", flat=True)
        )
        topic_id = params.get("topic_id")
        if topic_id and not self.project.topics.filter(pk=topic_id).exists():
            topic_id = None  # re-clustered since the job started: the next topic run places these questions
        new, follow_ups = [], []
        for entry in proposed:
            question = entry["question"].strip()
            key = text_key(question)
            if key in taken:
                continue
            taken.add(key)
            new.append(
                NewItem(
                    question=question,
                    causal_class=params["causal_class"],
                    topic_id=topic_id,
                    origin=Item.Origin.GENERATED,
                    source=f"model:{call.endpoint.model}",
                    text_key=key,
                    metadata={"generation": {**provenance(call), "rationale": entry.get("rationale", "")}},
                    author=author_of(call),
                    note=f"question by {call.endpoint.model}",
                )
            )
        created = items_create(project=self.project, items=new)
        skipped = len(parsed["questions"]) - len(created)
        updates = {
            "items_created": F("items_created") + len(created),
            "duplicates_skipped": F("duplicates_skipped") + skipped,
        }
        if self.job.answer_endpoint_id is not None:
            updates["total"] = F("total") - skipped
            follow_ups = LLMCall.objects.bulk_create(
                LLMCall(
                    job=self.job,
                    item=item,
                    purpose="answer",
                    endpoint_id=self.job.answer_endpoint_id,
                    template_id=self.job.answer_template_id,
                )
                for item in created
            )
        GenerationJob.objects.filter(pk=self.job.pk).update(**updates)
        return follow_ups

    def apply_many(self, calls, together=True):
        answers = [call for call in calls if call.purpose == "answer"]
        applied = (
            answers_apply_many(answers, fallback=super().apply_many, together=together)
            if answers
            else Applied()
        )
        rest = super().apply_many([call for call in calls if call.purpose != "answer"])
        applied.follow_ups += rest.follow_ups
        applied.problems.update(rest.problems)
        return applied

    def on_failed(self, call):
        self._expect_answers(call, -1)

    def on_retry(self, call):
        self._expect_answers(call, +1)

    def _expect_answers(self, call, sign: int) -> None:
        """A batch of questions that fails will have no answer calls; one made again may."""
        if call.purpose.startswith("questions:") and self.job.answer_endpoint_id is not None:
            GenerationJob.objects.filter(pk=self.job.pk).update(
                total=F("total") + sign * self.batch_size(call)
            )


class DistractorsWork(Work):
    """Four typed distractors (METER) for an approved multiple-choice item; it goes back to review."""

    purpose = "distractors"

    def variables(self, call):
        variables = super().variables(call)
        variables.pop("class_description")
        variables["question_type"] = call.item.causal_class or "causal"
        variables["correct_option"] = correct_option_text(call.item)
        return variables

    def apply(self, call, parsed):
        item = Item.objects.get(pk=call.item_id)
        if has_distractors(item):
            raise NotApplied(f"item {item.pk} has distractors now; these were not added")
        correct = [
            {"text": option.text, "role": option.role, "rationale": option.rationale}
            for option in item.options.filter(role=Option.Role.CORRECT).order_by("position")
        ] or [{"text": item.reference_answer, "role": Option.Role.CORRECT, "rationale": ""}]
        distractors = [
            {"text": parsed[role]["option_text"], "role": role, "rationale": parsed[role]["reasoning"]}
            for role in DISTRACTOR_ROLES
        ]
        options = correct + distractors
        random.Random(item.pk).shuffle(options)  # the correct option's place says nothing; reruns agree
        item = item_revise(
            item=item,
            changes={},
            options=options,
            author=author_of(call),
            kind=Revision.Kind.MODEL,
            note=f"distractors by {call.endpoint.model}",
        )
        item_start_round(item=item)
        return []


def correct_option_text(item: Item) -> str:
    correct = [option.text for option in item.options.all() if option.role == Option.Role.CORRECT]
    return correct[0] if correct else item.reference_answer


def has_distractors(item: Item) -> bool:
    return item.options.filter(role__in=DISTRACTOR_ROLES).exists()


def items_needing_distractors(project):
    """Approved items of a multiple-choice project (or with options) that have a correct answer and no distractors."""
    items = Item.objects.filter(project=project, status=Item.Status.APPROVED)
    if project.answer_format != project.AnswerFormat.MULTIPLE_CHOICE:
        items = items.filter(options__role=Option.Role.CORRECT)
    return (
        items.exclude(options__role__in=DISTRACTOR_ROLES)
        .filter(~Q(reference_answer="") | Q(options__role=Option.Role.CORRECT))
        .distinct()
        .order_by("pk")
    )


class RevisionWork(Work):
    """Rewrite answers from the reviewers' feedback; the item then starts a new round.

    For a multiple-choice item the answer is its correct option: the option's text is rewritten (its
    role, rationale and letter stay), and the reference answer with it when the item has one."""

    purpose = "revision"
    calls_for_curators_only = True

    def variables(self, call):
        variables = super().variables(call)
        variables.pop("class_description")
        variables["answer"] = correct_option_text(call.item)
        variables["feedback"] = self.job.params.get("feedback", {}).get(str(call.item_id)) or "-"
        return variables

    def apply(self, call, parsed):
        item = Item.objects.get(pk=call.item_id)
        if item.status in FINAL:
            raise NotApplied(
                f"item {item.pk} is {item.get_status_display().lower()} now; its answer was not replaced"
            )
        answer = parsed["answer"]
        options = [
            {
                "text": answer if option.role == Option.Role.CORRECT else option.text,
                "role": option.role,
                "rationale": option.rationale,
            }
            for option in item.options.order_by("position")
        ]
        if not any(option["role"] == Option.Role.CORRECT for option in options):
            options = None
        changes = {"reference_answer": answer} if options is None or item.reference_answer else {}
        item = item_revise(
            item=item,
            changes=changes,
            options=options,
            author=author_of(call),
            kind=Revision.Kind.MODEL,
            note=(parsed.get("changes") or "").strip()[:2000],
        )
        item_start_round(item=item)
        return []


def work_class_for(kind: str) -> type[Work] | None:
    """The work class of a kind of model call (``generation.kinds``: a job kind's, or evaluation's)."""
    from ..kinds import call_kind

    registered = call_kind(kind)
    return registered.work if registered is not None else None


def call_readers(kind: str | None, project) -> str:
    """The lowest role that may read a call of ``kind`` in ``project``, as the kind's registry entry decides;
    a call of no job or of a kind nothing registers is for curators."""
    from annotation.permissions import Role

    work_class = work_class_for(kind) if kind else None
    return work_class.call_readers(project) if work_class is not None else Role.CURATOR


def work_for(job: GenerationJob) -> Work:
    return work_class_for(job.kind)(job)

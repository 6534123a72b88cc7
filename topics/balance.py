"""Class balance: how far each causal class is from its target, and "fill the gap" — one questions job
per short class in a topic, with the number needed and the cost estimated from the endpoint's prices.

Counts take every item not rejected (pending, in review, needing revision, gold): a question already
on its way to the gold collection should not be generated again. A topic with its own targets is
counted within the topic; otherwise the project's targets and project-wide counts apply.
"""

import math
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Count

from annotation.models import Item, Project
from generation.models import GenerationJob, ModelEndpoint, PromptTemplate
from generation.services.jobs import MAX_QUESTIONS, JobInvalid, job_create
from generation.services.templates import template_latest

from .models import Topic

Kind = PromptTemplate.Kind
# Rough token counts per call for the estimate (a token is about four characters).
CHARS_PER_TOKEN = 4
QUESTION_PROMPT_EXTRA_TOKENS = 600  # class definitions and up to 20 example questions
QUESTION_OUTPUT_TOKENS = 60  # a question and its rationale, as JSON
ANSWER_PROMPT_EXTRA_TOKENS = 60  # the question itself
ANSWER_OUTPUT_TOKENS = 300


@dataclass
class ClassGap:
    causal_class: str
    target: int | None
    have: int
    gold: int

    @property
    def needed(self) -> int:
        return max(0, (self.target or 0) - self.have)


@dataclass
class Proposal:
    causal_class: str
    count: int
    endpoint: ModelEndpoint
    template: PromptTemplate | None
    answer_endpoint: ModelEndpoint | None
    answer_template: PromptTemplate | None
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


def class_gaps(*, project: Project, topic: Topic | None = None) -> list[ClassGap]:
    """Per class of the project: its target, the items that count towards it, and how many are gold."""
    targets = (
        topic.class_targets if topic is not None and topic.class_targets else None
    ) or project.class_targets
    items = project.items.exclude(status=Item.Status.REJECTED)
    if topic is not None and topic.class_targets:
        items = items.filter(topic=topic)
    have: dict[str, int] = {}
    gold: dict[str, int] = {}
    for causal_class, status, n in (
        items.values_list("causal_class", "status").annotate(n=Count("pk")).order_by()
    ):
        have[causal_class] = have.get(causal_class, 0) + n
        if status == Item.Status.APPROVED:
            gold[causal_class] = gold.get(causal_class, 0) + n
    return [
        ClassGap(
            causal_class=label, target=targets.get(label), have=have.get(label, 0), gold=gold.get(label, 0)
        )
        for label in project.label_set
    ]


def _prompt_tokens(template: PromptTemplate | None) -> int:
    return len((template.system + template.user) if template else "") // CHARS_PER_TOKEN


def estimate(
    *, count: int, batch_size: int, template, endpoint, answer_template=None, answer_endpoint=None
) -> tuple[int, int, int, Decimal]:
    """(calls, input tokens, output tokens, cost) of asking ``count`` questions and, if given, their answers."""
    calls = math.ceil(count / batch_size) if count else 0
    tokens_in = calls * (_prompt_tokens(template) + QUESTION_PROMPT_EXTRA_TOKENS)
    tokens_out = count * QUESTION_OUTPUT_TOKENS
    cost = _price(endpoint, tokens_in, tokens_out)
    if answer_endpoint is not None:
        answer_in = count * (_prompt_tokens(answer_template) + ANSWER_PROMPT_EXTRA_TOKENS)
        answer_out = count * ANSWER_OUTPUT_TOKENS
        calls += count
        tokens_in += answer_in
        tokens_out += answer_out
        cost += _price(answer_endpoint, answer_in, answer_out)
    return calls, tokens_in, tokens_out, cost.quantize(Decimal("0.0001"))


def _price(endpoint: ModelEndpoint, tokens_in: int, tokens_out: int) -> Decimal:
    return (
        tokens_in * Decimal(endpoint.price_input_per_mtok)
        + tokens_out * Decimal(endpoint.price_output_per_mtok)
    ) / Decimal(1_000_000)


def gap_proposals(
    *,
    project: Project,
    topic: Topic | None,
    endpoint: ModelEndpoint,
    answer_endpoint: ModelEndpoint | None = None,
    answer_variant: str = "class-agnostic",
    batch_size: int = 10,
    counts: dict[str, int] | None = None,
) -> list[Proposal]:
    """A questions job per class short of its target (or per class of ``counts``, the curator's numbers)."""
    template = template_latest(kind=Kind.QUESTIONS, language=project.language)
    answer_template = (
        template_latest(kind=Kind.ANSWER, language=project.language, name=answer_variant)
        if answer_endpoint is not None
        else None
    )
    if counts is None:
        counts = {
            gap.causal_class: min(gap.needed, MAX_QUESTIONS)
            for gap in class_gaps(project=project, topic=topic)
        }
    proposals = []
    for causal_class, count in counts.items():
        if count <= 0:
            continue
        calls, tokens_in, tokens_out, cost = estimate(
            count=count,
            batch_size=min(batch_size, count),
            template=template,
            endpoint=endpoint,
            answer_template=answer_template,
            answer_endpoint=answer_endpoint,
        )
        proposals.append(
            Proposal(
                causal_class=causal_class,
                count=count,
                endpoint=endpoint,
                template=template,
                answer_endpoint=answer_endpoint,
                answer_template=answer_template,
                calls=calls,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost=cost,
            )
        )
    return proposals


def gap_jobs_start(
    *,
    project: Project,
    user,
    topic: Topic | None,
    endpoint: ModelEndpoint,
    counts: dict[str, int],
    answer_endpoint: ModelEndpoint | None = None,
    answer_variant: str = "class-agnostic",
    batch_size: int = 10,
) -> list[GenerationJob]:
    """Start the reviewed proposals: one questions job per class with a positive count, all or none.

    Raises ``JobInvalid`` naming the class whose job could not be made.
    """
    wanted = {label: count for label, count in counts.items() if count}
    if not wanted:
        raise JobInvalid({"counts": "ask for at least one question"})
    jobs = []
    with transaction.atomic():
        for causal_class, count in wanted.items():
            try:
                jobs.append(
                    job_create(
                        project=project,
                        kind=Kind.QUESTIONS,
                        endpoint=endpoint,
                        user=user,
                        count=count,
                        causal_class=causal_class,
                        topic=topic,
                        batch_size=batch_size,
                        answer_endpoint=answer_endpoint,
                        answer_variant=answer_variant,
                    )
                )
            except JobInvalid as exc:
                raise JobInvalid(
                    {f"{causal_class}: {field}": message for field, message in exc.errors.items()}
                ) from exc
    return jobs

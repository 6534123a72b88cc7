"""The CausalBench jobs (``designs.causalbench``): what each asks the model and what it writes.

- ``causalbench_expand``: an imported question — the model names its perspective and writes the
  other three questions of its scenario, each with a yes/no answer and an explanation.
- ``causalbench_scenario``: a new scenario of a domain (text, math, code) with all four questions.
- ``causalbench_check``: a second, independent answer to a question, from a model other than the
  one that wrote the first; it accepts the question or sends it to adjudication.
"""

from django.db.models import F

from annotation.models import Item, ItemGroup, Revision
from annotation.services import item_revise, item_start_round, items_create
from generation.models import GenerationJob, LLMCall
from generation.services.work import NotApplied, Work, author_of, provenance

from .checks import CheckRefused, check_record
from .design import (
    PERSPECTIVES,
    QUESTION_TYPES,
    ScenarioInvalid,
    normalise_answer,
    question_item,
    scenario_add,
)

MAX_EXAMPLES = 3


def perspectives_text() -> str:
    return "\n".join(f"- {key}: {label}" for key, label in QUESTION_TYPES.items())


def scenario_of(item: Item) -> str:
    return item.group.context if item.group_id and item.group.context else item.context


class CausalBenchExpandWork(Work):
    purpose = "causalbench_expand"
    calls_for_curators_only = True  # its prompt or output holds the answers the blind check compares

    def variables(self, call):
        item = call.item
        return {
            "scenario": scenario_of(item),
            "question": item.question,
            "answer": normalise_answer(item.reference_answer) or "",
            "domain": _domain_of(item, self.job),
            "perspectives": perspectives_text(),
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        item = Item.objects.select_related("group").get(pk=call.item_id)
        if item.group_id and item.group.items.count() > 1:
            raise NotApplied(f"item {item.pk}'s scenario has its questions already")
        others = parsed["questions"]
        perspectives = [parsed["perspective"]] + [question["perspective"] for question in others]
        if sorted(perspectives) != sorted(PERSPECTIVES):
            raise ValueError(f"the perspectives {', '.join(perspectives)} are not the four, once each")
        domain = _domain_of(item, self.job)
        author = author_of(call)
        group = item.group or ItemGroup.objects.create(
            project=self.project,
            kind="scenario",
            context=item.context,
            metadata={"domain": domain},
            external_id=f"{item.external_id}-scenario" if item.external_id else "",
        )
        changes = {"causal_class": parsed["perspective"], "context": ""}
        if normalise_answer(item.reference_answer) is None:
            changes["reference_answer"] = normalise_answer(parsed["answer"])
        item = item_revise(
            item=item,
            changes=changes,
            author=author,
            kind=Revision.Kind.MODEL,
            note=f"perspective by {call.endpoint.model}",
        )
        explanation = (item.metadata or {}).get("explanation") or parsed.get("explanation", "")
        Item.objects.filter(pk=item.pk).update(
            group=group,
            position_in_group=PERSPECTIVES.index(parsed["perspective"]),
            metadata={
                **(item.metadata or {}),
                "stage": "check",
                "perspective": parsed["perspective"],
                "domain": domain,
                "explanation": explanation,
            },
        )
        if item.status != Item.Status.IN_REVIEW:
            item_start_round(item=item)
        _create_questions(call, group, others, domain)
        return []


class CausalBenchScenarioWork(Work):
    purpose = "causalbench_scenario"
    calls_for_curators_only = True  # its prompt or output holds the answers the blind check compares

    def plan(self):
        return [
            self.new_call(purpose=f"scenario:{number}") for number in range(1, self.job.params["count"] + 1)
        ]

    def variables(self, call):
        domain = self.job.params["domain"]
        examples = (
            ItemGroup.objects.filter(project=self.project, kind="scenario", metadata__domain=domain)
            .order_by("-pk")
            .values_list("context", flat=True)[:MAX_EXAMPLES]
        )
        return {
            "domain": domain,
            "examples": "\n---\n".join(examples),
            "perspectives": perspectives_text(),
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        try:
            group = scenario_add(
                project=self.project,
                domain=self.job.params["domain"],
                context=parsed["scenario"],
                questions=parsed["questions"],
                cause=parsed.get("cause", ""),
                effect=parsed.get("effect", ""),
                origin=Item.Origin.GENERATED,
                source=f"model:{call.endpoint.model}",
                author=author_of(call),
                note=f"question by {call.endpoint.model}",
                metadata={"generation": provenance(call)},
            )
        except ScenarioInvalid as exc:
            raise ValueError(str(exc)) from exc
        created = group.items.count()
        GenerationJob.objects.filter(pk=self.job.pk).update(items_created=F("items_created") + created)
        return []


class CausalBenchCheckWork(Work):
    purpose = "causalbench_check"
    calls_for_curators_only = True  # its prompt or output holds the answers the blind check compares

    def variables(self, call):
        item = call.item
        return {
            "scenario": scenario_of(item),
            "question": item.question,
            "domain": _domain_of(item, self.job),
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        item = Item.objects.get(pk=call.item_id)
        if (item.answer_provenance or {}).get("model") == call.endpoint.model:
            raise NotApplied(
                f"item {item.pk}: {call.endpoint.model} wrote the first answer; a check needs another model"
            )
        try:
            check_record(
                item=item,
                answer=parsed["answer"],
                explanation=parsed.get("explanation", ""),
                model=call.endpoint.model,
                call_id=call.pk,
            )
        except CheckRefused as exc:
            raise NotApplied(f"item {item.pk}: {exc}") from exc
        return []


def _domain_of(item: Item, job: GenerationJob) -> str:
    group_domain = (item.group.metadata or {}).get("domain") if item.group_id else None
    return (item.metadata or {}).get("domain") or group_domain or job.params.get("domain") or "text"


def _create_questions(call: LLMCall, group: ItemGroup, questions: list[dict], domain: str) -> None:
    items = items_create(
        project=group.project,
        items=[
            question_item(
                group=group,
                question=question,
                position=PERSPECTIVES.index(question["perspective"]),
                domain=domain,
                origin=Item.Origin.GENERATED,
                source=f"model:{call.endpoint.model}",
                author=author_of(call),
                note=f"question by {call.endpoint.model}",
            )
            for question in questions
        ],
    )
    GenerationJob.objects.filter(pk=call.job_id).update(items_created=F("items_created") + len(items))

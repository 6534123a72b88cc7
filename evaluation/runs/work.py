"""The generation-job kinds of a benchmark run: models answer, the judge scores, the judge ranks.

Each is a ``generation`` ``Work``: it plans one ``LLMCall`` per thing to ask, fills the prompt
from the frozen release record (what was released, not what the item says today), and turns a
valid output into a row of the run — in the transaction that records the call, so exactly once.
A call that fails for good (after the runner's retries and re-asking) leaves a row with the error:
nothing is dropped silently.
"""

import copy
import random

from annotation.designs import design_for
from core.db.bulk import fast_insert
from generation.kinds import CallKind, call_kind_register
from generation.models import LLMCall
from generation.services.work import Applied, Work

from ..models import EvalResponse, EvalRun, JudgeScore, Ranking, ReleaseItem
from .choices import yes_no_gold
from .conditions import (
    REFERENCE,
    letter,
    options_text,
    question_of,
)
from .grading import response_grade
from .kinds import OUTPUT_KEYS, VARIABLES, Kind


class RunWork(Work):
    """What the three kinds share: the run, and the frozen records of its split."""

    def __init__(self, job):
        super().__init__(job)
        self.run = EvalRun.objects.select_related("release", "project").get(pk=job.params["eval_run"])
        self._records: dict[int, dict] | None = None

    @property
    def records(self) -> dict[int, dict]:
        if self._records is None:
            rows = ReleaseItem.objects.filter(release=self.run.release, split=self.run.split).order_by(
                "position"
            )
            self._records = {pk: data for pk, data in rows.values_list("pk", "data")}
        return self._records

    def planned(self, call: LLMCall) -> dict:
        return call.request.get("planned", {})

    def record(self, call: LLMCall) -> dict:
        return self.records[self.planned(call)["release_item"]]

    def base_variables(self, record: dict) -> dict:
        causal_class = record.get("causal_class", "")
        return {
            "question": record["question"],
            "context": record.get("context", ""),
            "causal_class": causal_class,
            "class_description": self.definitions.get(causal_class, causal_class),
            "language": self.project.language,
        }

    def new_run_call(self, *, purpose, item_id, template_id, planned) -> LLMCall:
        return LLMCall(
            job=self.job,
            item_id=item_id,
            purpose=purpose,
            endpoint_id=self.job.endpoint_id,
            template_id=template_id,
            request={"planned": planned},
        )

    def item_ids(self) -> dict[int, int | None]:
        return dict(
            ReleaseItem.objects.filter(release=self.run.release, split=self.run.split).values_list(
                "pk", "item_id"
            )
        )


class BenchmarkAnswerWork(RunWork):
    """The run's model (this job's endpoint) answers every item under every condition, ``repetitions`` times."""

    def __init__(self, job):
        super().__init__(job)
        self._train: list | None = None  # (id, record) of the train split, for few-shot examples

    def plan(self):
        run, calls = self.run, []
        item_ids = self.item_ids()
        for release_item in self.records:
            for condition in run.conditions:
                for repetition in range(1, run.repetitions + 1):
                    calls.append(
                        self.new_run_call(
                            purpose=f"answer:{release_item}:{condition}:{repetition}",
                            item_id=item_ids[release_item],
                            template_id=run.templates[condition],
                            planned={
                                "release_item": release_item,
                                "condition": condition,
                                "repetition": repetition,
                            },
                        )
                    )
        return calls

    def variables(self, call):
        record = self.record(call)
        variables = answer_variables(record, self.project, self.definitions)
        if self.planned(call)["condition"] == "few-shot":
            variables["examples"] = self.examples(self.planned(call)["release_item"])
        return variables

    def examples(self, release_item: int) -> str:
        """``few_shot`` solved items of the release's train split (never the item itself), seeded per item."""
        if self._train is None:
            self._train = list(
                ReleaseItem.objects.filter(release=self.run.release, split=ReleaseItem.Split.TRAIN)
                .order_by("position")
                .values_list("pk", "data")[:500]
            )
        pool = [data for pk, data in self._train if pk != release_item]
        random.Random(f"{self.run.seed}:{release_item}").shuffle(pool)
        blocks = []
        design = design_for(self.project)
        for record in pool[: self.run.few_shot]:
            asked = question_of(record, design, self.project.language)
            right = ",".join(sorted(asked["correct"])) or yes_no_gold(record) or record.get("answer", "")
            context = f"{record['context']}\n" if record.get("context") else ""
            options = f"{options_text(asked)}\n" if asked["options"] else ""
            blocks.append(f"{context}{asked['question']}\n{options}→ {right}")
        return "\n\n".join(blocks)

    def apply(self, call, parsed):
        response_for(self.run, call, self.record(call), parsed=parsed).save()
        return []

    def apply_many(self, calls, together=True):
        if not together:
            return super().apply_many(calls)
        # One executemany (COPY on PostgreSQL) of plain values: Django's bulk_create assembled the SQL of
        # every value of every row, the largest part of a benchmark run's CPU per call (profiled).
        responses = [response_for(self.run, call, self.record(call), parsed=call.parsed) for call in calls]
        fast_insert(
            EvalResponse,
            RESPONSE_FIELDS,
            [tuple(getattr(response, name) for name in RESPONSE_ATTRIBUTES) for response in responses],
        )
        return Applied()

    def on_failed(self, call):
        response_for(self.run, call, self.record(call), error=call.error or "failed").save()


def answer_variables(record: dict, project, definitions: dict) -> dict:
    """The variables of a benchmark-answer prompt for a released record (few-shot examples left empty): what a
    run's model is asked, and what the harness tasks of a release ask (``evaluation.releases.harnesses``)."""
    causal_class = record.get("causal_class", "")
    asked = question_of(record, design_for(project), project.language)
    letters = [option["letter"] for option in asked["options"]]
    return {
        "question": asked["question"],
        "context": record.get("context", ""),
        "causal_class": causal_class,
        "class_description": definitions.get(causal_class, causal_class),
        "language": project.language,
        "options": options_text(asked),
        "letters": ", ".join(letters),
        "examples": "",
    }


RESPONSE_FIELDS = [field.name for field in EvalResponse._meta.concrete_fields if not field.primary_key]
RESPONSE_ATTRIBUTES = [EvalResponse._meta.get_field(name).attname for name in RESPONSE_FIELDS]


def response_for(run: EvalRun, call: LLMCall, record: dict, *, parsed=None, error: str = "") -> EvalResponse:
    """The response row of an answer call: what was chosen, and whether it is right (closed formats)."""
    planned = call.request["planned"]
    response = EvalResponse(
        run=run,
        release_item_id=planned["release_item"],
        endpoint_id=call.endpoint_id,
        condition=planned["condition"],
        repetition=planned["repetition"],
        call_id=call.pk,
        error=error,
    )
    if parsed is None:
        return response
    response.text = str(parsed.get("answer", ""))
    response.reasoning = str(parsed.get("reasoning", ""))
    response_grade(response, record, design_for(run.project), run.project.language, run.answer_format)
    return response


class JudgeScoreWork(RunWork):
    """The judge scores every reference answer and every model response of the run, 1–5 per criterion."""

    calls_for_curators_only = True

    def plan(self):
        calls = []
        item_ids = self.item_ids()
        for release_item, record in self.records.items():
            if (record.get("answer") or "").strip():
                calls.append(
                    self.new_run_call(
                        purpose=f"score:{release_item}:reference",
                        item_id=item_ids[release_item],
                        template_id=self.job.template_id,
                        planned={"release_item": release_item, "response": None},
                    )
                )
        answered = (
            EvalResponse.objects.filter(run=self.run, error="")
            .exclude(text="")
            .order_by("pk")
            .values_list("pk", "release_item_id")
        )
        for response, release_item in answered:
            calls.append(
                self.new_run_call(
                    purpose=f"score:{release_item}:response:{response}",
                    item_id=item_ids.get(release_item),
                    template_id=self.job.template_id,
                    planned={"release_item": release_item, "response": response},
                )
            )
        return calls

    def variables(self, call):
        record, planned = self.record(call), self.planned(call)
        variables = self.base_variables(record)
        variables.pop("class_description")
        if planned["response"] is None:
            answer = record["answer"]
        else:
            answer = EvalResponse.objects.values_list("text", flat=True).get(pk=planned["response"])
        # The reference is not shown: the reference answer is scored too, and every answer alike.
        criteria = "\n".join(f"- {c['key']}: {c.get('label', c['key'])}" for c in self.project.criteria)
        variables.update(answer=answer, reference="", criteria=criteria)
        return variables

    def apply(self, call, parsed):
        self._row(call, scores=parsed["scores"], justifications=parsed.get("justifications") or {}).save()
        return []

    def on_failed(self, call):
        self._row(call, error=call.error or "failed").save()

    def _row(self, call, **fields) -> JudgeScore:
        planned = self.planned(call)
        return JudgeScore(
            run=self.run,
            release_item_id=planned["release_item"],
            response_id=planned["response"],
            call_id=call.pk,
            judge=self.job.params.get("judge", ""),
            **fields,
        )


class JudgeRankingWork(RunWork):
    """Per item, model and repetition: the judge ranks the reference and the model's open answers, best first.

    The answers are shown in a random order, seeded by the run's seed and the call, and that
    order is stored with the call (``planned.shown``) and the ranking; labels A, B, C… follow it.
    """

    calls_for_curators_only = True

    def plan(self):
        calls = []
        item_ids = self.item_ids()
        responses: dict[tuple, dict[str, int]] = {}
        rows = (
            EvalResponse.objects.filter(run=self.run, error="")
            .exclude(text="")
            .values_list("pk", "release_item_id", "endpoint_id", "repetition", "condition")
            .order_by("pk")
        )
        for pk, release_item, endpoint, repetition, condition in rows:
            responses.setdefault((release_item, endpoint, repetition), {})[condition] = pk
        for (release_item, endpoint, repetition), by_source in sorted(responses.items()):
            record = self.records.get(release_item)
            if record is None:
                continue
            sources = ([REFERENCE] if (record.get("answer") or "").strip() else []) + sorted(by_source)
            if len(sources) < 2:
                continue
            shown = shuffled(sources, seed=f"{self.run.seed}:{release_item}:{endpoint}:{repetition}")
            calls.append(
                self.new_run_call(
                    purpose=f"rank:{release_item}:{endpoint}:{repetition}",
                    item_id=item_ids.get(release_item),
                    template_id=self.job.template_id,
                    planned={
                        "release_item": release_item,
                        "endpoint": endpoint,
                        "repetition": repetition,
                        "shown": shown,
                        "responses": by_source,
                    },
                )
            )
        return calls

    def variables(self, call):
        record, planned = self.record(call), self.planned(call)
        variables = self.base_variables(record)
        variables.pop("class_description")
        texts = dict(
            EvalResponse.objects.filter(pk__in=planned["responses"].values()).values_list("condition", "text")
        )
        texts[REFERENCE] = record.get("answer", "")
        word = "Resposta" if self.project.language.startswith("pt") else "Answer"
        blocks = [
            f"{word} {letter(index)}:\n{texts[source]}" for index, source in enumerate(planned["shown"])
        ]
        variables.update(
            answers="\n\n".join(blocks),
            labels=", ".join(letter(index) for index in range(len(planned["shown"]))),
        )
        return variables

    def schema(self, call):
        """Exactly the labels shown, each once: a ranking that leaves one out or ties is asked again."""
        schema = copy.deepcopy(call.template.output_schema)
        ranking = schema.setdefault("properties", {}).setdefault("ranking", {"type": "array"})
        labels = [letter(index) for index in range(len(self.planned(call)["shown"]))]
        ranking["items"] = {"type": "string", "enum": labels}
        ranking["minItems"] = ranking["maxItems"] = len(labels)
        ranking["uniqueItems"] = True
        return schema

    def apply(self, call, parsed):
        shown = self.planned(call)["shown"]
        self._row(
            call, ranking=unshuffle(shown, parsed["ranking"]), justification=parsed.get("justification", "")
        ).save()
        return []

    def on_failed(self, call):
        self._row(call, error=call.error or "failed").save()

    def _row(self, call, **fields) -> Ranking:
        planned = self.planned(call)
        return Ranking(
            run=self.run,
            release_item_id=planned["release_item"],
            endpoint_id=planned["endpoint"],
            repetition=planned["repetition"],
            call_id=call.pk,
            judge=self.job.params.get("judge", ""),
            shown=planned["shown"],
            **fields,
        )


def shuffled(sources: list[str], *, seed: str) -> list[str]:
    order = list(sources)
    random.Random(seed).shuffle(order)
    return order


def unshuffle(shown: list[str], labels: list[str]) -> list[str]:
    """The judge's labels (best first) back to the sources they stood for."""
    return [shown[ord(label) - ord("A")] for label in labels]


WORK_KINDS = {
    Kind.BENCHMARK_ANSWER: BenchmarkAnswerWork,
    Kind.JUDGE_SCORE: JudgeScoreWork,
    Kind.JUDGE_RANKING: JudgeRankingWork,
}


def register() -> None:
    """Evaluation's kinds of model call, run by generation's runner and offered at no door."""
    for kind, work_class in WORK_KINDS.items():
        call_kind_register(
            CallKind(
                key=kind,
                label=kind.label,
                work=work_class,
                variables=frozenset(VARIABLES[kind]),
                output_keys=OUTPUT_KEYS[kind],
            )
        )

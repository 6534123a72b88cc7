"""The CausalBench design (`../shared/papers/causalbench.txt`): a scenario with four yes/no questions.

A *scenario* (an ``ItemGroup`` of kind "scenario", domain text, math or code) holds exactly four
questions, one per perspective: cause → effect, effect → cause, each without and with an
intervention. A question's causal class is its perspective (the project's label set is the four
perspectives, so class balancing and stratified splits work per perspective); its reference
answer is "yes" or "no" and ``item.metadata`` keeps the perspective, the domain and the explanation.

Answers are checked as in the paper (``designs.causalbench.checks``): a second,
independent answer — another model's, or an annotator's who does not see the first — accepts the
question when both agree and sends it to the curators' adjudication queue when they differ.
"""

import json
from pathlib import Path

from django.db import transaction
from django.db.models import Count, Q
from django.utils.translation import gettext_lazy as _

from annotation.designs.base import ExportFile, ProjectDesign, Stage, register
from annotation.models import Assignment, Item, ItemGroup, Project
from annotation.services import NOBODY, Author, NewItem, items_create

# Questions of a scenario in review still without their second, blind answer: the check queue's to hand out.
AWAITING_CHECK = Q(status=Item.Status.IN_REVIEW, group__kind="scenario") & ~Q(metadata__has_key="check")

DATA = Path(__file__).resolve().parent / "data"  # the example dataset

PERSPECTIVES = [
    "cause_to_effect",
    "effect_to_cause",
    "cause_to_effect_intervention",
    "effect_to_cause_intervention",
]
# CausalBench's own names of the perspectives ("Question Type") and of the domains' files and scenario columns.
QUESTION_TYPES = {
    "cause_to_effect": "Cause-to-Effect",
    "effect_to_cause": "Effect-to-Cause",
    "cause_to_effect_intervention": "Cause-to-Effect with Intervention",
    "effect_to_cause_intervention": "Effect-to-Cause with Intervention",
}
DOMAINS = ["text", "math", "code"]
ANSWERS = ("yes", "no")
ANSWER_CHECK = {
    "key": "answer_correct",
    "label": "The yes/no answer is right (1) or wrong (0)",
    "min": 0,
    "max": 1,
}


class ScenarioInvalid(ValueError):
    """A scenario that cannot be stored; the message names the scenario and what is wrong."""


# The perspectives as a reader reads them (QUESTION_TYPES stays CausalBench's own, for its files).
PERSPECTIVE_NAMES = {
    "cause_to_effect": _("Cause-to-Effect"),
    "effect_to_cause": _("Effect-to-Cause"),
    "cause_to_effect_intervention": _("Cause-to-Effect with Intervention"),
    "effect_to_cause_intervention": _("Effect-to-Cause with Intervention"),
}


def perspective_label(perspective: str) -> str:
    return str(PERSPECTIVE_NAMES.get(perspective, perspective))


def scenario_check(
    *, domain: str, context: str, questions: list[dict], where: str = "scenario", other_answers: bool = False
) -> None:
    """Raise ScenarioInvalid unless the scenario has a known domain, a context and one yes/no question per
    perspective, each with its explanation. ``other_answers``: an answer other than yes / no is taken as it
    is (a published part's Ground Truth is mostly, not only, Yes or No)."""
    if domain not in DOMAINS:
        raise ScenarioInvalid(f"{where}: domain must be one of {', '.join(DOMAINS)}, not {domain!r}")
    if not (context or "").strip():
        raise ScenarioInvalid(f"{where}: the scenario (context) is empty")
    perspectives = [question.get("perspective") for question in questions]
    if sorted(map(str, perspectives)) != sorted(PERSPECTIVES):
        raise ScenarioInvalid(
            f"{where}: needs exactly one question per perspective ({', '.join(PERSPECTIVES)}); "
            f"got {', '.join(map(str, perspectives)) or 'none'}"
        )
    for question in questions:
        label = f"{where}, {question['perspective']}"
        if not (question.get("question") or "").strip():
            raise ScenarioInvalid(f"{label}: the question is empty")
        if other_answers and str(question.get("answer") or "").strip():
            continue
        if normalise_answer(question.get("answer")) is None:
            raise ScenarioInvalid(f"{label}: the answer must be yes or no, not {question.get('answer')!r}")


def normalise_answer(value) -> str | None:
    text = str(value or "").strip().lower().rstrip(".")
    return {"yes": "yes", "sim": "yes", "no": "no", "não": "no", "nao": "no"}.get(text)


def question_item(
    *,
    group: ItemGroup,
    question: dict,
    position: int,
    domain: str,
    origin: str = Item.Origin.NATURAL,
    source: str = "",
    author: Author = NOBODY,
    external_id: str = "",
    note: str = "",
) -> NewItem:
    """One question of a scenario, in review (its answer waits to be checked): a person's answer unless
    ``author`` is a model."""
    return NewItem(
        group_id=group.pk,
        position_in_group=position,
        question=question["question"].strip(),
        causal_class=question["perspective"],
        reference_answer=normalise_answer(question["answer"]) or str(question["answer"]).strip(),
        origin=origin,
        source=source,
        author=author,
        external_id=external_id,
        review=True,
        note=note,
        metadata={
            "stage": "check",
            "perspective": question["perspective"],
            "domain": domain,
            "explanation": (question.get("explanation") or "").strip(),
            **({"published": question["published"]} if question.get("published") else {}),
        },
    )


@transaction.atomic
def scenario_add(
    *,
    project: Project,
    domain: str,
    context: str,
    questions: list[dict],
    external_id: str = "",
    cause: str = "",
    effect: str = "",
    origin: str = Item.Origin.NATURAL,
    source: str = "",
    author: Author = NOBODY,
    note: str = "",
    metadata: dict | None = None,
    other_answers: bool = False,
) -> ItemGroup:
    """A scenario and its four questions, checked first: all or nothing. ``author``: who wrote the questions
    and their answers (a model call), when not a person."""
    scenario_check(
        domain=domain,
        context=context,
        questions=questions,
        where=f"scenario {external_id or '(new)'}",
        other_answers=other_answers,
    )
    group = ItemGroup.objects.create(
        project=project,
        kind="scenario",
        external_id=external_id,
        context=context.strip("\n"),
        metadata={**(metadata or {}), "domain": domain, "cause": cause, "effect": effect},
    )
    ordered = sorted(questions, key=lambda question: PERSPECTIVES.index(question["perspective"]))
    items_create(
        project=project,
        items=[
            question_item(
                group=group,
                question=question,
                position=position,
                domain=domain,
                origin=origin,
                source=source,
                author=author,
                external_id=f"{external_id}-{question['perspective']}" if external_id else "",
                note=note,
            )
            for position, question in enumerate(ordered)
        ],
    )
    return group


def read_example(path=DATA / "causalbench.json") -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def example_scenarios_load(project: Project, data: dict) -> list[ItemGroup]:
    return [
        scenario_add(
            project=project,
            domain=spec["domain"],
            context=spec["context"],
            questions=spec["questions"],
            external_id=spec["external_id"],
            cause=spec.get("cause", ""),
            effect=spec.get("effect", ""),
            source="causalbench-example",
        )
        for spec in data["scenarios"]
    ]


@register
class CausalBenchDesign(ProjectDesign):
    key = "causalbench"
    name = "CausalBench"
    paper = "causalbench.txt"
    summary = _(
        "A scenario (text, math or code) with four yes/no questions: cause to effect and effect to cause, "
        "each with and without intervention; every answer checked by a second, independent answer."
    )
    answer_format = "yes_no"
    run_field_groups = ("levels",)
    example_file = "causalbench.json"
    published_examples = (
        "CausalBench_Text_Part.csv",
        "CausalBench_Math_Part.csv",
        "CausalBench_Code_Part.csv",
    )
    help_template = "designs/causalbench/causalbench_help.html"
    item_partial = "designs/causalbench/_causalbench_item.html"
    nav_partial = "designs/causalbench/_nav.html"
    answers_checked_blind = True
    project_partial = "designs/causalbench/_causalbench_project.html"  # the check report on the project page

    def label_names(self) -> dict:
        return PERSPECTIVE_NAMES

    def published_read(self, *, project, data, filename, batch=None):
        from .published import causalbench_part_import

        scenarios, report = causalbench_part_import(project=project, data=data, filename=filename)
        report.headline = f"{len(scenarios)} scenarios added, four questions each"
        return report

    def published_import(self, *, project, data, filename):
        return self.published_read(project=project, data=data, filename=filename).summary()

    def stages(self):
        return [
            Stage(
                "scenario",
                _("Scenario"),
                _(
                    "A scenario in text, math or code; imported with one question, or written by a model whole."
                ),
            ),
            Stage(
                "generation",
                _("Four perspectives"),
                _(
                    "A model classifies an imported question's perspective and writes the other three, or writes a "
                    "new scenario with all four, each with a yes/no answer and an explanation."
                ),
            ),
            Stage(
                "check",
                _("Answer check"),
                _(
                    "A second, independent answer (another model, or an annotator who does not see the first): "
                    "accepted when both agree, otherwise sent to adjudication."
                ),
            ),
            Stage("adjudication", _("Adjudication"), _("A curator settles the answers that disagree.")),
        ]

    def project_defaults(self):
        return {
            "answer_format": self.answer_format,
            "label_set": list(PERSPECTIVES),
            "overlap": 1,
            "design_settings": {"domains": list(DOMAINS)},
        }

    def judgment_criteria(self, item):
        """The annotator checks the yes/no answer; fluency or coherence of the word "yes" means nothing."""
        return [dict(ANSWER_CHECK)]

    def judgment_criteria_of_project(self, project):
        """Every question's judgment is the answer check (a yes/no rating, aggregated by the annotator models)."""
        return [dict(ANSWER_CHECK)]

    def item_shows_context(self, item):
        """The scenario is the partial's (rendered by its domain), printed once."""
        return not (item.group_id and item.group.context)

    def load_example(self, project, users):
        groups = example_scenarios_load(project, read_example())
        return {"scenarios": len(groups), "questions": 4 * len(groups)}

    def demo_example(self, project, users):
        """The example, and its last scenario checked blind by an annotator: work for the curator too."""
        counts = self.load_example(project, users)
        last = ItemGroup.objects.filter(project=project, kind="scenario").order_by("pk").last()
        counts["checked"] = self._demo_checks(last, users) if last is not None and users else 0
        return counts

    @staticmethod
    def _demo_checks(group, users) -> int:
        """The demo's last scenario checked blind by an annotator, through the check queue: two answers agree
        (approved), two differ and wait for the curator's adjudication."""
        from .checks import check_record

        checker = users.get("annotator2")
        if checker is None:
            return 0
        checked = 0
        for number, item in enumerate(group.items.order_by("pk")):
            Assignment.objects.update_or_create(
                item=item, annotator=checker, round=item.round, defaults={"status": Assignment.Status.ACTIVE}
            )
            first = normalise_answer(item.reference_answer) or "yes"
            other = "no" if first == "yes" else "yes"
            check_record(item=item, answer=first if number % 2 == 0 else other, checker=checker)
            checked += 1
        return checked

    def releasable(self, items):
        """Whole scenarios only: all four perspective questions approved, so that a benchmark's group
        accuracy ("all four correct") is measured on groups of four."""
        whole = (
            items.filter(group__isnull=False)
            .order_by()
            .values("group_id")
            .annotate(n=Count("pk"))
            .filter(n=len(PERSPECTIVES))
        )
        return items.filter(group_id__in=whole.values("group_id"))

    def hidden_from_annotators(self, item):
        # The second answer is blind: until it is in, annotators see neither the first answer nor its explanation;
        # who checked and what they answered stays with the curators.
        hidden = {"metadata.check"}
        if item.status == Item.Status.IN_REVIEW and "check" not in (item.metadata or {}):
            hidden |= {"reference_answer", "metadata.explanation"}
        return hidden

    def review_held_back(self):
        """The review queue leaves a question to the check queue until its blind second answer is in."""
        return AWAITING_CHECK

    def held_back_work(self):
        """The questions waiting for their blind check are work for annotators: the check queue hands them out."""
        return AWAITING_CHECK

    def item_warnings(self, item):
        warnings = []
        if normalise_answer(item.reference_answer) is None:
            warnings.append(_("The answer should be yes or no."))
        if item.group_id is None:
            return warnings + [_("This question belongs to no scenario.")]
        perspectives = list(
            Item.objects.filter(group_id=item.group_id).values_list("causal_class", flat=True)
        )
        if sorted(perspectives) != sorted(PERSPECTIVES):
            warnings.append(
                _("The scenario should have exactly one question per perspective; it has: %(list)s.")
                % {"list": ", ".join(perspective_label(p) for p in perspectives) or "—"}
            )
        return warnings

    def group_size(self):
        """A scenario is whole with its four perspective questions."""
        return len(PERSPECTIVES)

    def agreement_fields(self):
        return ["perspective", "domain"]

    def project_context(self, project):
        from .checks import check_report

        return {"check_report": check_report(project)}

    def export_files(self, release):
        from .checks import export_rows

        return [
            ExportFile("causalbench/CausalBench_Text_Part.csv", export_rows(release, "text"), TEXT_FIELDS),
            ExportFile("causalbench/CausalBench_Math_Part.csv", export_rows(release, "math"), MATH_FIELDS),
            ExportFile("causalbench/CausalBench_Code_Part.csv", export_rows(release, "code"), CODE_FIELDS),
        ]


# The columns of CausalBench's published files (huggingface.co/datasets/CCLV/CausalBench), one file per domain.
TEXT_FIELDS = ["Scenario and Question", "Question Type", "Ground Truth", "Explanation"]
MATH_FIELDS = ["Mathematical Scenario", "Question Type", "Question", "Ground Truth", "Explanation"]
CODE_FIELDS = ["Code", "Question Type", "Question", "Ground Truth", "Explanation"]

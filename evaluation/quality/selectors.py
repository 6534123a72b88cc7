"""Reads: what the annotator models make of a project's judgments, for every door (pages, API, card, queue).

A unit is an item in its current round (the judgments a curator decides on), every categorical question the
design asks (``ProjectDesign.quality_questions``) on its own. Judgments of one's own answer are left out, as
agreement leaves them out. Full figures (three methods, bootstrap intervals) are cached under the state of
the project's judgments and control items; the adaptive overlap asks after every judgment and uses the
project's chosen method refitted only when the judgments grew by a tenth (or 20) since the last fit.
"""

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import F
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotation.designs import design_for
from annotation.labels import criterion_label
from annotation.models import Item, Judgment, Project

from ..selectors.agreement import judgments_state
from .aggregation import METHODS, Aggregation, Row, aggregate, gold_accuracy, posterior, standing_alone

QUALITY_RESAMPLES = 1000
CACHE_SECONDS = 24 * 3600
REFIT_GROWTH = 0.1
REFIT_MIN = 20


@dataclass
class QuestionQuality:
    """One question of the design: its judgments and what each method makes of them."""

    key: str
    name: str
    source: str  # "vote", "causal_class" or "rating": how pages name its labels
    rows: list[Row]
    methods: dict[str, Aggregation]
    gold: dict = field(default_factory=dict)  # control item id → known label
    alone: dict = field(default_factory=dict)  # annotator id → items where they stand alone
    gold_accuracy: dict = field(default_factory=dict)  # annotator id → (right, n, share, low, high)

    def annotator_rows(self, names: dict, method: str) -> list[dict]:
        """One row per annotator: competence by each method with its interval, spam score, gold accuracy,
        and the items where they stand alone; the least competent (by ``method``) first."""
        annotators = sorted(
            {row.annotator for row in self.rows},
            key=lambda a: (self.methods[method].competence[a].value, str(names.get(a, a))),
        )
        result = []
        for annotator in annotators:
            competence = {m: self.methods[m].competence.get(annotator) for m in METHODS}
            result.append(
                {
                    "annotator_id": annotator,
                    "annotator": names.get(annotator, str(annotator)),
                    "judgments": competence[method].judgments,
                    "competence": competence,
                    "spam": competence["mace"].spam if competence["mace"] else None,
                    "gold": self.gold_accuracy.get(annotator),
                    "alone": sorted(self.alone.get(annotator, [])),
                }
            )
        return result

    def disagreements(self, method: str) -> list[int]:
        """Items whose label by ``method`` differs from the majority's."""
        model, majority = self.methods[method].labels, self.methods["majority"].labels
        return sorted(item for item, label in model.items() if majority.get(item) != label)


@dataclass
class ProjectQuality:
    method: str  # the project's chosen aggregation
    questions: list[QuestionQuality]
    names: dict  # annotator id → username

    def as_dict(self) -> dict:
        """For the API and the release card: per question, per method, each item's label and probability,
        and per annotator the competence with its interval."""
        return {
            "aggregation": self.method,
            "questions": [
                {
                    "key": question.key,
                    "name": question.name,
                    "judgments": len(question.rows),
                    "items": len(question.methods["majority"].labels),
                    "control_items": len(question.gold),
                    "model_differs_from_majority": {
                        method: len(question.disagreements(method))
                        for method in METHODS
                        if method != "majority"
                    },
                    "labels": [
                        {
                            "item": item,
                            "majority": question.methods["majority"].labels[item],
                            **{
                                method: {
                                    "label": question.methods[method].labels[item],
                                    "probability": round(question.methods[method].probability(item), 4),
                                }
                                for method in METHODS
                            },
                        }
                        for item in sorted(question.methods["majority"].labels)
                    ],
                    "annotators": [
                        {
                            "annotator": row["annotator"],
                            "judgments": row["judgments"],
                            "competence": {
                                method: {
                                    "value": round(c.value, 4),
                                    "low": round(c.low, 4),
                                    "high": round(c.high, 4),
                                }
                                for method, c in row["competence"].items()
                                if c is not None
                            },
                            "spam": None if row["spam"] is None else round(row["spam"], 4),
                            "control": None
                            if row["gold"] is None
                            else {
                                "right": row["gold"][0],
                                "answered": row["gold"][1],
                                "accuracy": round(row["gold"][2], 4),
                                "low": round(row["gold"][3], 4),
                                "high": round(row["gold"][4], 4),
                            },
                            "alone": row["alone"],
                        }
                        for row in question.annotator_rows(self.names, self.method)
                    ],
                }
                for question in self.questions
            ],
        }


def question_name(project: Project, question: dict) -> str:
    if question.get("name"):
        return str(question["name"])
    if question["source"] == "vote":
        return _("Vote")
    if question["source"] == "causal_class":
        return _("Causal class")
    criterion = next((c for c in project.criteria if c["key"] == question["criterion"]), None)
    if criterion is None:
        criterion = next(
            (
                c
                for c in design_for(project).judgment_criteria_of_project(project)
                if c["key"] == question["criterion"]
            ),
            {"key": question["criterion"]},
        )
    return str(criterion_label(criterion))


def judgment_label(judgment_values: dict, question: dict) -> str:
    """The label a judgment gives to the question ("" when it gives none)."""
    if question["source"] == "rating":
        value = (judgment_values.get("ratings") or {}).get(question["criterion"])
        return "" if value is None else str(value)
    return judgment_values.get(question["source"]) or ""


def question_rows(project: Project, items=None) -> tuple[list[dict], dict[str, list[Row]], dict]:
    """The design's questions, each question's rows (current rounds only, own answers left out), and the
    annotators' names; one query."""
    design = design_for(project)
    questions = design.quality_questions(project)
    judgments = Judgment.objects.filter(item__project=project, round=F("item__round"), own_answer=False)
    if items is not None:
        judgments = judgments.filter(item__in=items)
    values = judgments.order_by("item_id", "annotator_id").values(
        "item_id", "annotator_id", "annotator__username", "vote", "causal_class", "ratings", "item__metadata"
    )
    rows: dict[str, list[Row]] = {question["key"]: [] for question in questions}
    names = {}
    for value in values:
        names[value["annotator_id"]] = value["annotator__username"]
        for question in questions:
            if not design.quality_question_applies(question, value["item__metadata"] or {}):
                continue
            label = judgment_label(value, question)
            if label != "":
                rows[question["key"]].append(Row(value["item_id"], value["annotator_id"], label))
    return questions, rows, names


def control_answers(project: Project) -> dict[int, dict]:
    """The project's control items and their known answers."""
    return dict(
        Item.objects.filter(project=project, control_answers__isnull=False).values_list(
            "id", "control_answers"
        )
    )


def project_quality(project: Project, *, resamples: int = QUALITY_RESAMPLES) -> ProjectQuality:
    """Every method on every question of the project, with annotator competence (cached under the judgments'
    state, so an unchanged project costs two queries)."""
    controls = control_answers(project)
    # The questions and their names come from the design and the project's criteria, which a curator may
    # change while the judgments stay as they are.
    questions = [
        {**question, "name": question_name(project, question)}
        for question in design_for(project).quality_questions(project)
    ]
    fingerprint = hashlib.sha256(
        json.dumps(
            [repr(judgments_state(project)), sorted(controls.items()), resamples, questions], default=str
        ).encode()
    ).hexdigest()[:24]
    # The questions' names are in the page's language: one entry per language.
    key = f"quality:{project.pk}:{get_language()}:{fingerprint}"
    cached = cache.get(key)
    if cached is not None:
        cached.method = project.aggregation
        return cached
    questions, rows, names = question_rows(project)
    result = []
    for question in questions:
        question_rows_ = rows[question["key"]]
        if not question_rows_:
            continue
        gold = {
            item: str(answers[question["key"]])
            for item, answers in controls.items()
            if answers.get(question["key"]) not in (None, "")
        }
        methods = {
            method: aggregate(question_rows_, method=method, gold=gold, resamples=resamples)
            for method in METHODS
        }
        result.append(
            QuestionQuality(
                key=question["key"],
                name=question_name(project, question),
                source=question["source"],
                rows=question_rows_,
                methods=methods,
                gold=gold,
                alone=standing_alone(question_rows_),
                gold_accuracy=gold_accuracy(question_rows_, gold),
            )
        )
    quality = ProjectQuality(method=project.aggregation, questions=result, names=names)
    cache.set(key, quality, CACHE_SECONDS)
    return quality


def item_estimates(*, project: Project, items) -> dict[int, list[dict]]:
    """Per item: for each question it has judgments on, the majority, the chosen method's label and its
    probability, and every annotator model's label and probability (the review page shows the models
    whichever method proposes the labels)."""
    quality = project_quality(project)
    method_names = dict(Project._meta.get_field("aggregation").choices)
    ids = {item.pk if hasattr(item, "pk") else item for item in items}
    estimates: dict[int, list[dict]] = defaultdict(list)
    for question in quality.questions:
        chosen, majority = question.methods[quality.method], question.methods["majority"]
        for item in ids & set(chosen.labels):
            estimates[item].append(
                {
                    "question": question.name,
                    "source": question.source,
                    "majority": majority.labels[item],
                    "majority_share": majority.probability(item),
                    "method": quality.method,
                    "label": chosen.labels[item],
                    "probability": chosen.probability(item),
                    "differs": chosen.labels[item] != majority.labels[item],
                    "control": item in question.gold,
                    "models": [
                        {
                            "method": method,
                            "name": method_names[method],
                            "label": question.methods[method].labels[item],
                            "probability": question.methods[method].probability(item),
                            "differs": question.methods[method].labels[item] != majority.labels[item],
                            "chosen": method == quality.method,
                        }
                        for method in METHODS
                        if method != "majority"
                    ],
                }
            )
    return dict(estimates)


def _online_models(project: Project) -> dict:
    """The chosen method's annotator models per question, refitted once the judgments grew enough."""
    questions = sorted(question["key"] for question in design_for(project).quality_questions(project))
    key = f"quality-online:{project.pk}:{project.aggregation}:{hashlib.sha256(repr(questions).encode()).hexdigest()[:12]}"
    count = Judgment.objects.filter(item__project=project).count()
    fitted = cache.get(key)
    if fitted is not None and count < max(fitted["count"] * (1 + REFIT_GROWTH), fitted["count"] + REFIT_MIN):
        return fitted["models"]
    controls = control_answers(project)
    questions, rows, _names = question_rows(project)
    models = {}
    for question in questions:
        gold = {
            i: str(a[question["key"]])
            for i, a in controls.items()
            if a.get(question["key"]) not in (None, "")
        }
        result = aggregate(rows[question["key"]], method=project.aggregation, gold=gold, resamples=0)
        models[question["key"]] = (result.classes, result.priors, result.competence)
    cache.set(key, {"count": count, "models": models}, CACHE_SECONDS)
    return models


def round_confidence(*, item: Item, project: Project) -> float | None:
    """The probability of the item's least certain aggregated label in its current round (adaptive overlap)."""
    design = design_for(project)
    questions = design.quality_questions(project)
    values = Judgment.objects.filter(item=item, round=item.round, own_answer=False).values(
        "annotator_id", "vote", "causal_class", "ratings"
    )
    models = _online_models(project)
    lowest = None
    for question in questions:
        if not design.quality_question_applies(question, item.metadata or {}):
            continue
        labels = [(v["annotator_id"], judgment_label(v, question)) for v in values]
        labels = [(annotator, label) for annotator, label in labels if label != ""]
        if not labels:
            continue
        classes, priors, competence = models.get(question["key"], ([], {}, {}))
        dist = posterior(
            labels, classes=classes, method=project.aggregation, priors=priors, competence=competence
        )
        top = max(dist.values())
        lowest = top if lowest is None else min(lowest, top)
    return lowest


def quality_summary(project: Project) -> list[dict]:
    """Per question, a line for the dashboard and the release card: how many items, how many whose model label
    differs from the majority, the mean probability of the chosen labels, the least competent annotator."""
    quality = project_quality(project)
    lines = []
    for question in quality.questions:
        chosen = question.methods[quality.method]
        probabilities = [chosen.probability(item) for item in chosen.labels]
        rows = question.annotator_rows(quality.names, quality.method)
        lines.append(
            {
                "question": question.name,
                "source": question.source,
                "items": len(chosen.labels),
                "differs": {m: len(question.disagreements(m)) for m in METHODS if m != "majority"},
                "mean_probability": sum(probabilities) / len(probabilities) if probabilities else None,
                "least_competent": rows[0] if rows else None,
                "control_items": len(question.gold),
            }
        )
    return lines


def release_quality_facts(project: Project) -> dict:
    """For the release card (JSON): the aggregation that proposed the gold labels and, per question, what the
    annotator models made of the judgments when the release was cut."""
    lines = []
    for line in quality_summary(project):
        least = line["least_competent"]
        competence = least["competence"][project.aggregation] if least else None
        lines.append(
            {
                "question": str(line["question"]),
                "items": line["items"],
                "mean_probability": line["mean_probability"],
                "differs": line["differs"],
                "control_items": line["control_items"],
                "least_competent": None
                if competence is None
                else {
                    "annotator": least["annotator"],
                    "competence": round(competence.value, 4),
                    "low": round(competence.low, 4),
                    "high": round(competence.high, 4),
                },
            }
        )
    return {"method": project.aggregation, "questions": lines}

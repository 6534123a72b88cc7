"""The demo: one project per design, with the same people. Each holds its design's example dataset
(``designs/<key>/data``; the Causal_QA.PT one, the default, comes with a round of judgments), and then work for
every role (:func:`demo_work_for_every_role`): items waiting for an annotator, items whose round is complete
waiting for a curator, and an approved set with a cut release ``v1``.

``demo_load()`` is idempotent: users are created once, and a project that exists is left alone.
"""

import json
import random
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from ..designs import design_for, designs
from ..importing import questions_import
from ..models import (
    Assignment,
    Item,
    Judgment,
    Membership,
    Project,
    default_design,
)
from ..projects import project_create
from ..queue import items_recount_rounds
from ..services import NOBODY, Author, item_create, items_close

DEMO_DIR = Path(__file__).resolve().parent
CAUSAL_QA_PT_FILE = DEMO_DIR / "causal_qa_pt.json"

# (username, password, project role, expertise); documented in the README and printed by `make run`.
DEMO_USERS = [
    ("admin", "admin", Membership.Role.OWNER, []),
    ("curator", "curator", Membership.Role.CURATOR, []),
    ("annotator1", "annotator1", Membership.Role.ANNOTATOR, ["education"]),
    ("annotator2", "annotator2", Membership.Role.ANNOTATOR, ["technology"]),
    ("annotator3", "annotator3", Membership.Role.ANNOTATOR, ["animals"]),
    # Votes and labels at random: the annotator models (agreement page, dashboard) have someone to find.
    ("careless", "careless", Membership.Role.ANNOTATOR, []),
]
# The demo's model-written answers name the scripted demo model (generation.demo_model.DEMO_MODEL_NAME), which
# wrote them: no language model did.
DEMO_MODEL_NAME = "scripted demo (not a language model)"
OPTION_ORDER = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
# Items are tagged with the expertise of their topic (item.metadata["expertise"]), so the queue
# routes each demo annotator to their own topic first (see annotation.queue).
TOPIC_EXPERTISE = {
    "Educação e carreira": "education",
    "Tecnologia": "technology",
    "Animais de estimação": "animals",
}


@dataclass
class DemoResult:
    project: Project
    created: bool


def demo_users() -> dict:
    User = get_user_model()
    users = {}
    for username, password, role, _expertise in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.is_staff = user.is_superuser = role == Membership.Role.OWNER
            user.save()
        users[username] = user
    return users


@transaction.atomic
def demo_load(design_key: str = "") -> DemoResult:
    """The demo project of one design (Causal_QA.PT by default), with the demo users as members.

    The project is created with ``project_create`` (the design's defaults), then filled by the design's
    ``load_example``; a project that exists already is left alone.
    """
    users = demo_users()
    design = design_for(design_key or default_design())
    spec = design.demo_project()
    existing = Project.objects.filter(slug=spec["slug"]).first()
    if existing:
        return DemoResult(existing, created=False)
    project = project_create(
        name=spec["name"],
        slug=spec["slug"],
        design=design.key,
        language=spec.get("language"),
        description=spec.get("description", ""),
        created_by=users["admin"],
    )
    if spec.get("guidelines"):
        project.guidelines = spec["guidelines"]
        project.save(update_fields=["guidelines"])
    for username, _password, role, expertise in DEMO_USERS:
        Membership.objects.update_or_create(
            user=users[username], project=project, defaults={"role": role, "expertise": expertise}
        )
    design.demo_example(project, users)
    for path in design.published_example_paths():  # the authors' layouts, through the readers an upload meets
        questions_import(project=project, filename=path.name, path=path, user=users["admin"])
    demo_work_for_every_role(project, users)
    return DemoResult(project, created=True)


def demo_load_all() -> list[DemoResult]:
    """One demo project per design (``manage.py load_demo``, ``make run``)."""
    return [demo_load(design.key) for design in designs()]


def causal_qa_pt_project() -> dict:
    """Name, slug, language, description and guidelines of the Causal_QA.PT demo project."""
    return json.loads(CAUSAL_QA_PT_FILE.read_text(encoding="utf-8"))["project"]


def causal_qa_pt_load(project: Project, users: dict, seed: int = 7) -> dict:
    """The Causal_QA.PT example: topics, natural and generated questions, a round of judgments, some gold."""
    data = json.loads(CAUSAL_QA_PT_FILE.read_text(encoding="utf-8"))
    project.class_targets = {"associational": 20, "interventional": 20, "counterfactual": 20}
    project.save(update_fields=["class_targets"])
    topics = {
        spec["label"]: project.topics.create(
            label=spec["label"], top_words=spec["top_words"], selected=True, cluster=number
        )
        for number, spec in enumerate(data["topics"])
    }
    items = [_demo_item(project, topics, spec, users) for spec in data["items"]]
    for topic in topics.values():
        topic.size = sum(1 for item in items if item.topic_id == topic.pk)
        topic.save(update_fields=["size"])
    _demo_round(project, [item for item in items if item.reference_answer], users, random.Random(seed))
    items_recount_rounds(items=Item.objects.filter(project=project))
    return {"topics": len(topics), "items": len(items)}


def _demo_item(project, topics, spec, users) -> Item:
    answer = spec.get("answer") or ""
    author = NOBODY
    if answer and spec.get("answer_by") == "model":
        author = Author(
            by_model=True,
            provenance={"kind": "model", "model": DEMO_MODEL_NAME, "template": "answer/class-agnostic v1"},
        )
    elif answer:
        author = Author(user=users["annotator1"])
    options = spec.get("options") or []
    options = sorted(options, key=lambda option: OPTION_ORDER.index(option["role"]))
    # Letter positions are shuffled per item with a fixed seed, so the correct answer is not always A.
    positions = list(range(len(options)))
    random.Random(spec["external_id"]).shuffle(positions)
    topic = topics.get(spec.get("topic"))
    return item_create(
        project=project,
        question=spec["question"],
        context=spec.get("context", ""),
        causal_class=spec["causal_class"],
        topic_id=topic.pk if topic else None,
        origin=spec.get("origin", Item.Origin.NATURAL),
        source=spec.get("source", ""),
        external_id=spec["external_id"],
        reference_answer=answer,
        author=author,
        metadata={"expertise": TOPIC_EXPERTISE[spec["topic"]]}
        if spec.get("topic") in TOPIC_EXPERTISE
        else {},
        options=[
            {
                "text": option["text"],
                "role": option["role"],
                "rationale": option.get("rationale", ""),
                "position": position,
            }
            for option, position in zip(options, positions)
        ],
    )


def _demo_round(project, answered: list[Item], users, rng: random.Random) -> None:
    """Round 1: three annotators judge most answered items; the curator approves the clear ones."""
    annotators = [users["annotator1"], users["annotator2"], users["annotator3"]]
    now = timezone.now()
    judged = answered[: max(len(answered) * 2 // 3, 1)]
    for index, item in enumerate(judged):
        good = index % 4 != 3  # every fourth item draws criticism
        how_many = 3 if index % 5 else 2  # a few items are still waiting for their third judgment
        # The careless rater takes the third place on every other item.
        judges = [*annotators[:2], users["careless"]] if index % 2 == 0 else annotators
        for annotator in judges[:how_many]:
            careless = annotator == users["careless"]
            assignment = Assignment.objects.create(
                item=item, annotator=annotator, round=1, status=Assignment.Status.SUBMITTED, finished_at=now
            )
            ratings = {
                key: max(1, min(5, (4 if good else 2) + rng.choice([-1, 0, 0, 1])))
                for key in project.criterion_keys
            }
            vote = rng.choice(
                [Judgment.Vote.ACCEPT] * 4 + [Judgment.Vote.NEEDS_REVISION]
                if good
                else [Judgment.Vote.REJECT, Judgment.Vote.NEEDS_REVISION, Judgment.Vote.NEEDS_REVISION]
            )
            causal_class = item.causal_class if rng.random() > 0.15 else rng.choice(project.label_set)
            if careless:
                vote, causal_class = rng.choice(Judgment.Vote.values), rng.choice(project.label_set)
            Judgment.objects.create(
                item=item,
                annotator=annotator,
                assignment=assignment,
                round=1,
                ratings=ratings,
                vote=vote,
                causal_class=causal_class,
                comment=""
                if good and vote != Judgment.Vote.NEEDS_REVISION
                else "A resposta não explica o mecanismo causal.",
            )
    approved = [item for index, item in enumerate(judged) if index % 4 != 3 and index % 5][:6]
    items_close(item_ids=[item.pk for item in approved], curator=users["curator"], note="")


# How much of each demo project is decided, judged and left: enough of each for every role to find work.
DEMO_APPROVED_GROUPS = 1  # whole groups (a scenario, an entry, a seed, a pair) or, ungrouped, ...
DEMO_APPROVED_ITEMS = 6  # ... this many items
DEMO_COMPLETE_ROUNDS = 3  # items whose round the demo annotators complete, for the curator


def demo_work_for_every_role(project: Project, users: dict) -> dict:
    """Give every role of the demo something to do, through the services the pages use (whatever the design):

    - the curator approves a few whole groups (or items) still in review, and a release ``v1`` is cut from
      what the design lets a release hold (the approved items of earlier loading count too);
    - the demo annotators take what the queue hands them and judge it (top ratings, accept, the item's own
      class), until a few rounds are complete: those wait for the curator's decision;
    - a few approved items become control items, served at a rate, and the annotators answer them;
    - everything else stays in the queue for the annotators.
    """
    design = design_for(project)
    curator = users["curator"]
    in_review = Item.objects.filter(project=project, status=Item.Status.IN_REVIEW).order_by("pk")
    approved = Item.objects.filter(project=project, status=Item.Status.APPROVED)
    if not design.releasable(approved).exists():
        chosen = _whole_groups(in_review, DEMO_APPROVED_GROUPS) or list(
            in_review.values_list("pk", flat=True)[:DEMO_APPROVED_ITEMS]
        )
        if chosen:
            items_close(item_ids=chosen, curator=curator, note="")
    completed = _judge_until_complete(project, users, DEMO_COMPLETE_ROUNDS)
    _demo_control_items(project, users)
    released = None
    releasable = design.releasable(Item.objects.filter(project=project, status=Item.Status.APPROVED))
    if releasable.exists():
        for cut in DEMO_RELEASE_CUTTERS:
            released = cut(project=project, user=curator) or released
    return {"rounds_completed": completed, "release": released}


def _demo_control_items(project: Project, users: dict, seed: int = 11) -> int:
    """A few approved items become control items with their decision as the known answer, served at
    ``DEMO_CONTROL_RATE``; each demo annotator who has not judged one is handed it and answers it (the careless
    rater at random, the others as decided), so the agreement page shows each annotator's
    accuracy on control items with its interval. Returns how many judgments they gave."""
    from django.core.exceptions import ValidationError

    from ..control_items import item_mark_control
    from ..judging import AssignmentClosed, judgment_submit
    from ..queue import control_assignment_new

    design = design_for(project)
    approved = Item.objects.filter(project=project, status=Item.Status.APPROVED, round__gt=0).order_by("pk")
    controls = []
    for item in approved[: DEMO_CONTROL_ITEMS * 2]:
        try:
            controls.append(item_mark_control(item=item))
        except ValidationError:  # nothing of the item's decision is a question the models aggregate
            continue
        if len(controls) == DEMO_CONTROL_ITEMS:
            break
    if not controls:
        return 0
    project.control_rate = DEMO_CONTROL_RATE
    project.save(update_fields=["control_rate"])
    rng = random.Random(seed)
    annotators = [
        users[name] for name, _password, role, _expertise in DEMO_USERS if role == Membership.Role.ANNOTATOR
    ]
    given = 0
    for annotator in annotators:
        for _control in controls:
            assignment = control_assignment_new(project=project, annotator=annotator)
            if assignment is None:
                break
            item = assignment.item
            answers = item.control_answers
            labels = design.judgment_labels(item)
            vote = answers.get("vote", Judgment.Vote.ACCEPT)
            causal_class = item.causal_class if item.causal_class in labels else (labels[0] if labels else "")
            if users["careless"] == annotator:
                vote = rng.choice(Judgment.Vote.values)
                causal_class = rng.choice(labels) if labels else ""
            criteria = design.judgment_criteria(item)
            try:
                judgment_submit(
                    assignment=assignment,
                    ratings={criterion["key"]: int(criterion.get("max", 5)) for criterion in criteria},
                    vote=vote if design.judgment_asks_vote(item) else "",
                    causal_class=causal_class,
                )
            except (ValidationError, AssignmentClosed):
                Assignment.objects.filter(pk=assignment.pk).delete()
                continue
            given += 1
    return given


DEMO_CONTROL_ITEMS = 4  # approved items that become control items, where the design has approved ones
DEMO_CONTROL_RATE = 0.1  # the share of requests served a control item


# Who cuts the demo's first release: releases live in a layer above this one (evaluation registers at start).
DEMO_RELEASE_CUTTERS: list = []


def demo_release_register(cut) -> None:
    """``cut(project=, user=)`` cuts the project's first release if it has none; returns its version or None."""
    if cut not in DEMO_RELEASE_CUTTERS:
        DEMO_RELEASE_CUTTERS.append(cut)


def _whole_groups(items, how_many: int) -> list[int]:
    """The ids of the first ``how_many`` groups all of whose items are among ``items``."""
    chosen, groups = [], 0
    group_ids = list(dict.fromkeys(items.exclude(group=None).values_list("group_id", flat=True)))
    for group_id in group_ids:
        members = list(Item.objects.filter(group_id=group_id).values_list("pk", "status"))
        if all(status == Item.Status.IN_REVIEW for _pk, status in members):
            chosen += [pk for pk, _status in members]
            groups += 1
            if groups == how_many:
                break
    return chosen


def _judge_until_complete(project: Project, users: dict, rounds: int) -> int:
    """The demo annotators judge what the review queue hands them until ``rounds`` more rounds are complete,
    leaving the rest to the annotators; nothing when the demo's three annotators cannot complete a round."""
    from django.core.exceptions import ValidationError

    from ..judging import AssignmentClosed, judgment_submit
    from ..queue import REVIEW, assignment_next

    design = design_for(project)
    annotators = [
        users[name] for name, _password, role, _expertise in DEMO_USERS if role == Membership.Role.ANNOTATOR
    ]
    if project.overlap > len(annotators):
        return 0
    before = _complete_rounds(project)
    open_rounds = (
        Item.objects.filter(project=project, status=Item.Status.IN_REVIEW, round__gt=0).count() - before
    )
    target = min(rounds, open_rounds // 3)  # at least two thirds of the open work stays for the annotators
    judged_items: set[int] = set()
    for _attempt in range(4 * rounds):
        if _complete_rounds(project) - before >= target:
            break
        for annotator in annotators:
            assignment = assignment_next(project=project, annotator=annotator, kind=REVIEW)
            if assignment is None:
                continue
            item = assignment.item
            if item.pk not in judged_items and len(judged_items) >= target:
                assignment.delete()  # not started by the demo: it stays for a person
                continue
            criteria = design.judgment_criteria(item)
            labels = design.judgment_labels(item)
            try:
                judgment_submit(
                    assignment=assignment,
                    ratings={criterion["key"]: int(criterion.get("max", 5)) for criterion in criteria},
                    vote=Judgment.Vote.ACCEPT,
                    causal_class=item.causal_class
                    if item.causal_class in labels
                    else (labels[0] if labels else ""),
                )
            except (ValidationError, AssignmentClosed):  # a design wanting more: the item is left to a person
                Assignment.objects.filter(pk=assignment.pk).delete()
                continue
            judged_items.add(item.pk)
    return _complete_rounds(project) - before


def _complete_rounds(project: Project) -> int:
    """Items in review whose current round has all its judgments."""
    from django.db.models import Count, F, Q

    return (
        Item.objects.filter(project=project, status=Item.Status.IN_REVIEW, round__gt=0)
        .annotate(done=Count("judgments", filter=Q(judgments__round=F("round"))))
        .filter(done__gte=project.overlap)
        .count()
    )

"""One judging rule for every design and every door: each annotator and curator action — answer, skip, edit,
undo an edit, judge, change a judgment, decide, bulk decide — on each design's demo project, through the pages
and through the API. No action may answer with a server error, and every value sent must be the value stored.

The values sent are read from what the item's design asks (``judging.judgment_rules``), never from the design's
name: a sixth design joins the matrix by being installed.
"""

import re

import pytest
from django.urls import reverse

from annotation.demo import demo_load
from annotation.designs import design_for, designs
from annotation.judging import judgment_rules
from annotation.models import Assignment, CurationDecision, Item, Judgment, Membership
from tests.factories import ItemFactory, UserFactory, api_token_key

pytestmark = pytest.mark.django_db

DOORS = ("page", "api")


class Door:
    """Runs one action through the item pages or through the REST API, and checks it never answered 5xx."""

    def __init__(self, door, client, project):
        self.door, self.client, self.project, self.slug = door, client, project, project.slug
        self.seen: list[tuple[str, int]] = []

    def _check(self, action, response, *, ok=(200, 201, 204, 302)):
        self.seen.append((action, response.status_code))
        assert response.status_code < 500, f"{self.door} · {action}: server error {response.status_code}"
        assert response.status_code in ok, (
            f"{self.door} · {action}: {response.status_code} {response.content.decode()[:600]}"
        )
        return response

    def _api(self, method, path, data=None):
        url = f"/api/v1/projects/{self.slug}/{path}"
        return getattr(self.client, method)(url, data, content_type="application/json")

    def next(self, kind) -> Assignment | None:
        if self.door == "api":
            response = self._check(f"next {kind}", self._api("post", "assignments/next/", {"kind": kind}))
            return None if response.status_code == 204 else Assignment.objects.get(pk=response.json()["id"])
        response = self._check(
            f"next {kind}",
            self.client.post(reverse("annotation:queue_next", args=[self.slug]), {"kind": kind}),
        )
        found = re.search(r"/assignments/(\d+)/$", response["Location"])
        return Assignment.objects.get(pk=found.group(1)) if found else None

    def answer(self, assignment, text):
        item = assignment.item
        if self.door == "api":
            return self._check(
                "answer",
                self._api(
                    "post", f"assignments/{assignment.pk}/answer/", {"answer": text, "version": item.version}
                ),
            )
        url = reverse("annotation:assignment_answer", args=[self.slug, assignment.pk])
        return self._check(
            "answer", self.client.post(url, {"answer": text, "version": item.version}), ok=(302,)
        )

    def skip(self, assignment, reason):
        if self.door == "api":
            return self._check(
                "skip", self._api("post", f"assignments/{assignment.pk}/skip/", {"reason": reason})
            )
        url = reverse("annotation:assignment_skip", args=[self.slug, assignment.pk])
        return self._check("skip", self.client.post(url, {"reason": reason}), ok=(302,))

    def judge(self, assignment, values, *, change=False):
        action = "change a judgment" if change else "judge"
        if self.door == "api":
            body = {
                "ratings": values["ratings"],
                "comment": values["comment"],
                **({"vote": values["vote"]} if values["vote"] else {}),
                **({"causal_class": values["causal_class"]} if values["causal_class"] else {}),
            }
            method = "put" if change else "post"
            return self._check(action, self._api(method, f"assignments/{assignment.pk}/judgment/", body))
        data = {f"rating_{key}": str(value) for key, value in values["ratings"].items()}
        data.update(comment=values["comment"])
        if values["vote"]:
            data["vote"] = values["vote"]
        if values["causal_class"]:
            data["causal_class"] = values["causal_class"]
        name = "annotation:assignment_change" if change else "annotation:assignment_judge"
        return self._check(
            action, self.client.post(reverse(name, args=[self.slug, assignment.pk]), data), ok=(302,)
        )

    def edit(self, item, question):
        if self.door == "api":
            body = {"part": "question", "value": question, "version": item.version}
            return self._check("edit", self._api("post", f"items/{item.pk}/edit/", body))
        url = reverse("annotation:item_part", args=[self.slug, item.pk, "question"])
        return self._check(
            "edit",
            self.client.post(url, {"value": question, "version": item.version}, HTTP_HX_REQUEST="true"),
        )

    def undo(self, item, number):
        if self.door == "api":
            return self._check("undo", self._api("post", f"items/{item.pk}/revisions/{number}/undo/"))
        url = reverse("annotation:item_undo", args=[self.slug, item.pk, number])
        return self._check("undo", self.client.post(url))

    def decide(self, item, decision, note):
        if self.door == "api":
            return self._check(
                "decide",
                self._api("post", f"items/{item.pk}/decision/", {"decision": decision, "note": note}),
            )
        url = reverse("annotation:item_decide", args=[self.slug, item.pk])
        return self._check("decide", self.client.post(url, {"decision": decision, "note": note}), ok=(302,))

    def bulk_decide(self, items, decision, note):
        ids = [item.pk for item in items]
        if self.door == "api":
            body = {"decision": decision, "note": note, "item_ids": ids}
            return self._check("bulk decide", self._api("post", "decisions/", body))
        data = {"action": decision, "item": [str(pk) for pk in ids], "confirm": "1", "note": note}
        return self._check(
            "bulk decide",
            self.client.post(reverse("annotation:items_bulk", args=[self.slug]), data),
            ok=(302,),
        )


def client_as(client, door, user):
    if door == "api":
        client.logout()
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(user)}"
    else:
        client.defaults.pop("HTTP_AUTHORIZATION", None)
        client.force_login(user)
    return client


def judgment_values(item, *, shift=0, vote="accept", comment=""):
    """Values for every field the item's design asks, and nothing it does not (``shift`` picks other ratings)."""
    rules = judgment_rules(item)
    ratings = {}
    for criterion in rules.criteria:
        low, high = int(criterion.get("min", 1)), int(criterion.get("max", 5))
        ratings[criterion["key"]] = (
            low + (high - low + shift) // 2 if shift == 0 else (high if shift > 0 else low)
        )
    return {
        "ratings": ratings,
        "vote": vote if rules.asks_vote else "",
        "causal_class": rules.labels[-1 if shift else 0] if rules.labels else "",
        "comment": comment,
    }


def undecided_in_review(project, *, exclude=()):
    decided = CurationDecision.objects.filter(item__project=project).values_list("item_id", "round")
    decided = set(decided)
    return [
        item
        for item in Item.objects.filter(project=project, status=Item.Status.IN_REVIEW)
        .exclude(pk__in=exclude)
        .order_by("pk")
        if (item.pk, item.round) not in decided
    ]


def prepare(design_key, username):
    """The design's demo project, a new annotator, two questions waiting for their answer and three items in
    review (a demo may have none of either)."""
    project = demo_load(design_key).project
    project.overlap = 50  # one more judgment never completes a round here: changing it stays possible
    project.save(update_fields=["overlap"])
    annotator = UserFactory(username=username)
    Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    topic_item = project.items.exclude(topic=None).first()
    topic = topic_item.topic if topic_item else None
    for n in (1, 2):
        ItemFactory(
            project=project,
            status=Item.Status.PENDING,
            round=0,
            reference_answer="",
            answer_by=Item.AnswerBy.NOBODY,
            topic=topic,
            question=f"Por que a pergunta de teste {n} tem uma causa?",
        )
    for n in (1, 2, 3):
        ItemFactory(project=project, topic=topic, question=f"Por que o item em revisão {n} tem uma causa?")
    return project, annotator


@pytest.fixture
def demo(request):
    design_key, door = request.param
    project, annotator = prepare(design_key, f"matrix-{door}")
    return {"project": project, "door": door, "annotator": annotator}


CASES = [(design.key, door) for design in designs() for door in DOORS]


@pytest.mark.parametrize("demo", CASES, indirect=True, ids=[f"{key}-{door}" for key, door in CASES])
def test_every_action_persists_on_every_design_through_every_door(client, demo):
    project, door_name, annotator = demo["project"], demo["door"], demo["annotator"]
    where = f"{project.design} · {door_name}"
    door = Door(door_name, client_as(client, door_name, annotator), project)

    # Answer a question waiting for its answer, then skip the next one.
    answering = door.next("answer")
    assert answering is not None, f"{where}: a question waiting for its answer is handed out"
    door.answer(answering, "Porque a causa antecede o efeito e o explica.")
    answered = Item.objects.get(pk=answering.item_id)
    assert answered.reference_answer == "Porque a causa antecede o efeito e o explica.", f"{where}: answer"
    skipping = door.next("answer")
    assert skipping is not None and skipping.pk != answering.pk, f"{where}: a second question to skip"
    door.skip(skipping, "Exige conhecimento que não tenho.")
    skipping.refresh_from_db()
    assert (skipping.status, skipping.skip_reason) == ("skipped", "Exige conhecimento que não tenho."), where

    # Edit the item under review (the annotator holding it, or a curator where the design lets no annotator
    # edit), undo the edit, then judge it and change the judgment.
    reviewing = door.next("review")
    assert reviewing is not None, f"{where}: an item to review is handed out"
    item = Item.objects.select_related("project").get(pk=reviewing.item_id)
    original = item.question
    curator = project.memberships.filter(role=Membership.Role.CURATOR).first().user
    editor = annotator if design_for(project).annotators_edit(item) else curator
    edits = Door(door_name, client_as(client, door_name, editor), project)
    edits.edit(item, original + " (revista)")
    item.refresh_from_db()
    assert item.question == original + " (revista)", f"{where}: edit"
    edits.undo(item, item.version)
    item.refresh_from_db()
    assert item.question == original, f"{where}: undo of the edit"
    client_as(client, door_name, annotator)

    first = judgment_values(item, comment="Bom.")
    door.judge(reviewing, first)
    judgment = Judgment.objects.get(assignment=reviewing)
    stored = {
        "ratings": judgment.ratings,
        "vote": judgment.vote,
        "causal_class": judgment.causal_class,
        "comment": judgment.comment,
    }
    assert stored == first, f"{where}: judge"
    second = judgment_values(item, shift=1, vote="reject", comment="Reli: o mecanismo falta.")
    door.judge(reviewing, second, change=True)
    judgment.refresh_from_db()
    stored = {
        "ratings": judgment.ratings,
        "vote": judgment.vote,
        "causal_class": judgment.causal_class,
        "comment": judgment.comment,
    }
    assert stored == second, f"{where}: change a judgment"

    # A curator decides one item, then two at once.
    door = Door(door_name, client_as(client, door_name, curator), project)
    waiting = undecided_in_review(project, exclude=[item.pk])
    assert len(waiting) >= 3, f"{where}: the demo has items in review to decide"
    door.decide(waiting[0], "reject", "Fora do escopo.")
    decision = CurationDecision.objects.get(item=waiting[0], round=waiting[0].round)
    assert (decision.decision, decision.note) == ("reject", "Fora do escopo."), f"{where}: decide"
    assert Item.objects.get(pk=waiting[0].pk).status == Item.Status.REJECTED, f"{where}: decide"
    door.bulk_decide(waiting[1:3], "reject", "Duplicadas.")
    for other in waiting[1:3]:
        assert Item.objects.get(pk=other.pk).status == Item.Status.REJECTED, (
            f"{where}: bulk decide {other.pk}"
        )
    assert all(code < 500 for _, code in door.seen), door.seen


def test_an_explica_rater_changes_a_judgment_from_the_page(client):
    """The reported server error: *Change this judgment* read a vote the ExpliCa form does not have."""
    project, rater = prepare("explica", "rater")
    client.force_login(rater)
    door = Door("page", client, project)
    assignment = door.next("review")
    item = assignment.item
    door.judge(assignment, judgment_values(item))
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    assert "Change this judgment" in page
    changed = judgment_values(item, shift=1, comment="Mudei de ideia.")
    door.judge(assignment, changed, change=True)
    judgment = Judgment.objects.get(assignment=assignment)
    assert judgment.ratings == changed["ratings"]
    assert judgment.vote == ""


def test_the_api_refuses_a_vote_the_design_does_not_ask_for(client):
    project, rater = prepare("explica", "rater")
    door = Door("api", client_as(client, "api", rater), project)
    assignment = door.next("review")
    values = judgment_values(assignment.item)
    response = client.post(
        f"/api/v1/projects/{project.slug}/assignments/{assignment.pk}/judgment/",
        {"ratings": values["ratings"], "vote": "accept"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "vote" in response.json()
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_the_api_refuses_an_option_role_it_does_not_know(client, project, curator):
    item = ItemFactory(project=project)
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(curator)}"
    body = {
        "part": "options",
        "options": [{"text": "Uma opção", "role": "inventada"}],
        "version": item.version,
    }
    response = client.post(
        f"/api/v1/projects/{project.slug}/items/{item.pk}/edit/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "options" in response.json()
    assert not item.options.exists()


def test_numbers_past_the_databases_integers_are_refused_not_server_errors(client, project, curator):
    item = ItemFactory(project=project)
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(curator)}"
    huge = 2**70
    base = f"/api/v1/projects/{project.slug}"
    undo = client.post(f"{base}/items/{item.pk}/revisions/{huge}/undo/")
    assert undo.status_code == 409
    bulk = client.post(
        f"{base}/decisions/",
        {"decision": "reject", "item_ids": [item.pk, huge]},
        content_type="application/json",
    )
    assert bulk.status_code == 400
    as_text = client.post(
        f"{base}/decisions/",
        {"decision": "reject", "item_ids": [item.pk], "note": 0},
        content_type="application/json",
    )
    assert as_text.status_code == 400, "a number is not a note"
    assert client.get(f"{base}/assignments/{huge}/").status_code == 404


def test_an_assignment_page_past_the_databases_integers_is_a_404(client_for, project, annotator):
    response = client_for(annotator).get(reverse("annotation:assignment", args=[project.slug, 2**70]))
    assert response.status_code == 404

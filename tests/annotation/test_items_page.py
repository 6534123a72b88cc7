"""The items page: curators find any item by filter, search and sort, page through by cursor and act on a
selection or a whole filter; annotators see only what they judged."""

import json

import pytest
from django.urls import reverse

from annotation.item_browser import ItemQuery, items_matching, items_page
from annotation.models import CurationDecision, Item, Judgment
from annotation.queue import assignment_next
from tests.annotation.helpers import judge
from tests.factories import ItemFactory
from topics.models import Topic

pytestmark = pytest.mark.django_db


def url(project, name="items"):
    return reverse(f"annotation:{name}", args=[project.slug])


@pytest.fixture
def items(project, annotator):
    """Items the way Causal_QA.PT and METER projects hold them: Portuguese and English, several states."""
    health = Topic.objects.create(project=project, label="saúde")
    return {
        "evasion": ItemFactory(
            project=project,
            question="Por que a evasão escolar aumenta nas cidades pequenas?",
            reference_answer="Porque os jovens trabalham mais cedo.",
            topic=health,
            metadata={"stage": "verified"},
        ),
        "vaccine": ItemFactory(
            project=project,
            question="Would the outbreak have ended without the vaccine?",
            causal_class="counterfactual",
            origin=Item.Origin.GENERATED,
            answer_by=Item.AnswerBy.MODEL,
            answer_provenance={"model": "qwen2.5"},
            metadata={"stage": "draft"},
        ),
        "rain": ItemFactory(
            project=project,
            question="A chuva forte causa enchentes em São Paulo?",
            status=Item.Status.APPROVED,
            causal_class="interventional",
            context="Relatório da Defesa Civil sobre as chuvas de verão.",
        ),
        "pending": ItemFactory(
            project=project,
            question="O desemprego explica a queda no consumo?",
            status=Item.Status.PENDING,
            round=0,
            answer_by="",
            reference_answer="",
        ),
    }


def test_curator_sees_every_item_with_its_columns(client_for, curator, project, items):
    response = client_for(curator).get(url(project))
    assert response.status_code == 200
    page = response.content.decode()
    for item in items.values():
        assert f">{item.pk}</a>" in page, f"item {item.pk} is listed"
    assert "qwen2.5" in page, "the model that answered is named"
    assert "saúde" in page, "the topic is shown"
    assert "4 items match" in page


def test_annotators_get_only_what_they_judged(client_for, annotator, annotators, project, items):
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment)
    response = client_for(annotator).get(url(project))
    page = response.content.decode()
    assert response.status_code == 200
    assert "What I judged" in page
    assert assignment.item.question[:40] in page
    others = [item for item in items.values() if item.pk != assignment.item.pk]
    assert not any(item.question[:40] in page for item in others), "items they did not judge stay out"


def test_annotators_cannot_run_bulk_actions_or_export(client_for, annotator, project, items):
    client = client_for(annotator)
    assert (
        client.post(
            url(project, "items_bulk"), {"action": "approve", "item": [items["evasion"].pk]}
        ).status_code
        == 403
    )
    assert client.get(url(project, "items_export"), {"scope": "filter"}).status_code == 403


def test_outsiders_get_a_404(client_for, outsider, project, items):
    assert client_for(outsider).get(url(project)).status_code == 404


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status": ["in_review"]}, {"evasion", "vaccine"}),
        ({"causal_class": ["counterfactual", "interventional"]}, {"vaccine", "rain"}),
        ({"origin": "generated"}, {"vaccine"}),
        ({"answer_by": "none"}, {"pending"}),
        ({"answer_by": "model"}, {"vaccine"}),
        ({"topic": ["none"]}, {"vaccine", "rain", "pending"}),
        ({"round": "0"}, {"pending"}),
        ({"metadata_key": "stage", "metadata_value": "verified"}, {"evasion"}),
        ({"metadata_key": "stage"}, {"evasion", "vaccine"}),
        ({"q": "enchentes"}, {"rain"}),
        ({"q": "Defesa Civil"}, {"rain"}),
        ({"q": "vaccine outbreak"}, {"vaccine"}),
    ],
)
def test_each_filter_keeps_only_the_items_it_names(project, items, params, expected):
    from django.http import QueryDict

    data = QueryDict(mutable=True)
    for key, value in params.items():
        data.setlist(key, value if isinstance(value, list) else [value])
    found = set(items_matching(project, ItemQuery.from_params(data)).values_list("pk", flat=True))
    assert found == {items[name].pk for name in expected}


def test_search_finds_portuguese_words_by_their_stem_on_postgresql(project, items):
    from django.db import connection
    from django.http import QueryDict

    if connection.vendor != "postgresql":
        pytest.skip("stemming needs PostgreSQL's Portuguese configuration")
    found = items_matching(project, ItemQuery.from_params(QueryDict("q=enchente"))).values_list(
        "pk", flat=True
    )
    assert list(found) == [items["rain"].pk], "“enchente” finds “enchentes”"


def test_a_page_in_id_order_is_read_along_the_project_and_id_index_on_sqlite(project, items):
    """A page of 50 in id order is the first 50 matches along (project, id) (annotation migration 0002), whatever the
    filter: no sort of every item of the project. SQLite alone has that index (PostgreSQL walks its primary
    key for these pages); a later migration that rebuilds the items' table on SQLite must keep it."""
    from django.db import connection
    from django.http import QueryDict
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cursor:
        indexes = connection.introspection.get_constraints(cursor, "annotation_item")
    assert ("item_project_id" in indexes) is (connection.vendor == "sqlite")
    if connection.vendor != "sqlite":
        return
    for params in (
        "",
        "sort=-id",
        "status=in_review",
        "metadata_key=stage&metadata_value=verified",
        "q=evasão",
    ):
        query = ItemQuery.from_params(QueryDict(params))
        with CaptureQueriesContext(connection) as queries:
            items_page(items_matching(project, query), query)
        page_query = queries.captured_queries[-1]["sql"]
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {page_query}")
            plan = " | ".join(row[3] for row in cursor.fetchall())
        assert "item_project_id" in plan, f"{params or 'no filter'}: {plan}"
        assert "TEMP B-TREE FOR ORDER BY" not in plan, f"{params or 'no filter'}: {plan}"


def test_a_wrong_filter_is_named_and_nothing_breaks(client_for, curator, project, items):
    response = client_for(curator).get(url(project), {"disagreement_min": "muito"})
    assert response.status_code == 400
    assert "disagreement_min" in response.content.decode()
    response = client_for(curator).get(url(project), {"cursor": "not-a-cursor!"})
    assert response.status_code == 400
    assert "page link" in response.content.decode()


def test_the_cursor_walks_every_item_once_in_any_order(project):
    for n in range(23):
        ItemFactory(
            project=project,
            round=n % 4,
            round_judged=n % 3,
            round_assigned=3,
            round_disagreement=None if n % 5 == 0 else (n % 7) / 7,
        )
    from django.http import QueryDict

    for sort in ("id", "-id", "round", "-disagreement", "disagreement", "judgments", "-updated_at"):
        query = ItemQuery.from_params(QueryDict(f"sort={sort}"))
        seen, cursor = [], ""
        while True:
            page = items_page(items_matching(project, query), query, cursor=cursor, limit=5)
            seen += [item.pk for item in page.items]
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        assert len(seen) == 23, f"sorted by {sort}, every item comes once"
        assert len(set(seen)) == 23, f"sorted by {sort}, no item comes twice"


def test_column_choice_shows_only_the_chosen_columns(client_for, curator, project, items):
    page = client_for(curator).get(url(project), {"cols": ["question", "status"]}).content.decode()
    assert ">Status</th>" in page
    assert ">Topic</th>" not in page


def test_bulk_preview_says_how_many_items_the_action_takes(client_for, curator, project, items):
    chosen = [items["evasion"].pk, items["rain"].pk]
    response = client_for(curator).post(url(project, "items_bulk"), {"action": "approve", "item": chosen})
    assert response.status_code == 200
    assert "This takes 1 item of the 2 chosen." in response.content.decode()
    assert Item.objects.get(pk=items["evasion"].pk).status == Item.Status.IN_REVIEW, (
        "a preview changes nothing"
    )


def test_bulk_approval_of_a_whole_filter_goes_through_the_curation_service(
    client_for, curator, project, items
):
    response = client_for(curator).post(
        url(project, "items_bulk"),
        {"action": "approve", "scope": "filter", "status": "in_review", "confirm": "1"},
    )
    assert response.status_code == 302
    assert set(Item.objects.filter(status=Item.Status.APPROVED).values_list("pk", flat=True)) == {
        items["evasion"].pk,
        items["vaccine"].pk,
        items["rain"].pk,
    }
    decisions = CurationDecision.objects.filter(decision="approve")
    assert decisions.count() == 2, "one decision per item, as the item page makes them"
    assert set(decisions.values_list("curator__username", flat=True)) == {"curator"}


def test_sending_to_revision_needs_a_note(client_for, curator, project, items):
    client = client_for(curator)
    data = {"action": "revise", "item": [items["evasion"].pk], "confirm": "1", "note": ""}
    response = client.post(url(project, "items_bulk"), data)
    assert response.status_code == 400, "without a note the confirmation comes back with the error"
    assert Item.objects.get(pk=items["evasion"].pk).status == Item.Status.IN_REVIEW
    data["note"] = "Explique o mecanismo: renda, trabalho infantil."
    client.post(url(project, "items_bulk"), data)
    assert Item.objects.get(pk=items["evasion"].pk).status == Item.Status.NEEDS_REVISION


def test_bulk_reject_leaves_decided_items_alone(client_for, curator, project, items):
    client_for(curator).post(
        url(project, "items_bulk"),
        {"action": "reject", "item": [items["vaccine"].pk, items["rain"].pk], "confirm": "1"},
    )
    assert Item.objects.get(pk=items["vaccine"].pk).status == Item.Status.REJECTED
    assert Item.objects.get(pk=items["rain"].pk).status == Item.Status.APPROVED, (
        "an approved item stays approved"
    )


def test_moving_a_selection_to_a_topic_recounts_the_topics(client_for, curator, project, items):
    economy = Topic.objects.create(project=project, label="economia")
    chosen = [items["pending"].pk, items["evasion"].pk]
    client_for(curator).post(
        url(project, "items_bulk"), {"action": "move", "item": chosen, "topic": economy.pk, "confirm": "1"}
    )
    assert set(economy.items.values_list("pk", flat=True)) == set(chosen)
    economy.refresh_from_db()
    assert economy.size == 2
    assert Topic.objects.get(label="saúde").size == 0


def test_a_topic_of_another_project_is_refused(client_for, curator, project, items):
    from tests.factories import ProjectFactory

    elsewhere = Topic.objects.create(project=ProjectFactory(), label="outro")
    response = client_for(curator).post(
        url(project, "items_bulk"),
        {"action": "move", "item": [items["evasion"].pk], "topic": elsewhere.pk, "confirm": "1"},
    )
    assert response.status_code == 400
    assert Item.objects.get(pk=items["evasion"].pk).topic.label == "saúde"


def test_an_answer_job_starts_on_the_items_waiting_for_an_answer(client_for, curator, project, items):
    from generation.models import GenerationJob, ModelEndpoint
    from generation.services import prompt_templates_load

    prompt_templates_load()
    endpoint = ModelEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", model="qwen2.5")
    response = client_for(curator).post(
        url(project, "items_bulk"),
        {
            "action": "answer_job",
            "scope": "filter",
            "confirm": "1",
            "endpoint": endpoint.pk,
            "variant": "class-agnostic",
        },
    )
    assert response.status_code == 302
    job = GenerationJob.objects.get()
    assert job.params["item_ids"] == [items["pending"].pk], "only the item waiting for an answer"


def test_a_model_answers_them_with_no_model_says_how_to_get_one(client_for, curator, project, items):
    """Not an empty list and "This field is required.": the action says why no model can answer and where to
    connect one, both when it is offered and when it is sent."""
    from generation.models import GenerationJob, ModelEndpoint
    from generation.services import prompt_templates_load

    prompt_templates_load()
    ModelEndpoint.objects.all().delete()
    client = client_for(curator)
    for data in ({}, {"confirm": "1", "variant": "class-agnostic"}):
        response = client.post(
            url(project, "items_bulk"), {"action": "answer_job", "scope": "filter", **data}
        )
        body = response.content.decode()
        assert "No model endpoint is set up" in body and 'href="/generation/help/models/"' in body, data
        assert "This field is required." not in body, data
    assert not GenerationJob.objects.exists()


def test_export_writes_the_selection_as_csv_and_jsonl(client_for, curator, project, items):
    items["evasion"].question = '=HYPERLINK("http://x")'
    items["evasion"].save()
    client = client_for(curator)
    response = client.get(
        url(project, "items_export"), {"scope": "filter", "status": "in_review", "format": "csv"}
    )
    text = b"".join(response.streaming_content).decode()
    assert text.count("\n") == 3, "a header and two items"
    assert "'=HYPERLINK" in text, "formulas are neutralised"
    response = client.get(url(project, "items_export"), {"item": [items["rain"].pk], "format": "jsonl"})
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [row["question"] for row in rows] == [items["rain"].question]
    assert rows[0]["context"].startswith("Relatório")


def test_the_page_reads_in_a_fixed_number_of_queries(
    client_for, curator, project, items, django_assert_max_num_queries
):
    for _ in range(30):
        ItemFactory(project=project)
    client = client_for(curator)
    client.get(url(project))
    with django_assert_max_num_queries(12):
        client.get(url(project), {"status": "in_review"})


def test_judgment_kinds_are_listed_for_annotators_in_their_language(client_for, annotator, project, items):
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment, vote=Judgment.Vote.REJECT)
    client = client_for(annotator)
    page = client.get(url(project), HTTP_ACCEPT_LANGUAGE="pt-br").content.decode()
    assert "Rejeitar" in page or "Rejeita" in page

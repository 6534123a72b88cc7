"""The benchmark-run form shows only the fields of the project's design: an open-answer project gets the judge and
BERTScore, a CausalityCheck project the task and variant keys, a METER project the level keys — never another
design's. What it does not show takes its default."""

import pytest
from django.urls import reverse

from annotation.designs import design_for
from evaluation.forms import RUN_FIELD_GROUPS, RunForm
from evaluation.models import Release
from evaluation.runs.conditions import CONDITIONS
from generation.models import ModelEndpoint

pytestmark = pytest.mark.django_db

EVERY_OPTIONAL = {name for names in RUN_FIELD_GROUPS.values() for name in names}


@pytest.mark.parametrize(
    ("design", "shown"),
    [
        ("causal_qa_pt", {"judge_endpoint", "bertscore_model", "bertscore_layer", "bertscore_idf"}),
        ("causalitycheck", {"task_key", "variant_key", "differences"}),
        ("meter", {"level_key", "type_key"}),
        ("causalbench", {"level_key", "type_key"}),
        ("explica", set()),
    ],
)
def test_each_design_gets_only_its_own_run_fields(design, shown):
    form = RunForm(
        releases=Release.objects.none(),
        endpoints=ModelEndpoint.objects.none(),
        conditions=["zero-shot"],
        field_groups=design_for(design).run_field_groups,
    )
    assert set(form.fields) & EVERY_OPTIONAL == shown


def test_the_run_page_of_an_open_answer_project_asks_nothing_of_the_other_designs(
    project, client_for, curator
):
    html = client_for(curator).get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    assert project.answer_format in CONDITIONS
    assert 'name="judge_endpoint"' in html
    for name in ("level_key", "type_key", "task_key", "variant_key", "differences"):
        assert f'name="{name}"' not in html, name


def test_fields_not_shown_take_their_defaults(project, endpoint):
    release = Release.objects.create(project=project, version=1, status=Release.Status.READY)
    form = RunForm(
        {
            "release": release.pk,
            "split": "test",
            "endpoints": [endpoint.pk],
            "conditions": ["zero-shot"],
            "repetitions": 1,
            "seed": 13,
            "few_shot": 3,
        },
        releases=Release.objects.all(),
        endpoints=type(endpoint).objects.all(),
        conditions=["zero-shot"],
        field_groups=(),
    )
    assert form.is_valid(), form.errors
    options = form.run_options()
    assert options["judge_endpoint"] is None
    assert options["differences"] == ""
    assert options["metadata_keys"] == {
        "level": "level",
        "type": "perspective",
        "task": "task",
        "variant": "variant",
    }

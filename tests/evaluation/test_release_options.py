"""The same release options at every door: the page, the API and the ``release`` command offer the options of
``RELEASE_OPTIONS`` with its defaults, refuse the same things, and all cut through ``release_create`` (the page
and the API through ``release_request``, which also hands the build to a worker)."""

from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.forms import ReleaseForm
from evaluation.models import Release
from evaluation.releases.options import RELEASE_OPTIONS, TEXT_MAX_LENGTH
from evaluation.releases.splits import parse_ratios
from evaluation.serializers import ReleaseCreateInputSerializer
from evaluation.services import ReleaseError, release_create
from tests.evaluation.helpers import approved_items
from tests.factories import api_token_key

pytestmark = pytest.mark.django_db

CHOSEN = {
    "seed": 7,
    "split_ratios": {"train": 0.5, "dev": 0.25, "test": 0.25},
    "license": "mit",
    "citation": "@misc{demo, title={Demo}}",
    "notes": "primeira versão",
    "subsample": {"field": "cell", "max_per_stratum": 2},
}
PAGE_FORM = {
    "seed": 7,
    "train": 0.5,
    "dev": 0.25,
    "test": 0.25,
    "license": "mit",
    "citation": CHOSEN["citation"],
    "notes": CHOSEN["notes"],
    "stratify_by": "cell",
    "max_per_stratum": 2,
}
API_BODY = {
    "seed": 7,
    "splits": CHOSEN["split_ratios"],
    "license": "mit",
    "citation": CHOSEN["citation"],
    "notes": CHOSEN["notes"],
    "subsample": CHOSEN["subsample"],
}
COMMAND_ARGS = [
    "--seed=7",
    "--splits=0.5,0.25,0.25",
    "--license=mit",
    f"--citation={CHOSEN['citation']}",
    f"--notes={CHOSEN['notes']}",
    "--stratify-by=cell",
    "--max-per-stratum=2",
]


def _page_options(data: dict) -> dict:
    form = ReleaseForm(data)
    assert form.is_valid(), form.errors
    return form.options()


def _api_options(data: dict) -> dict:
    serializer = ReleaseCreateInputSerializer(data=data)
    assert serializer.is_valid(), serializer.errors
    return serializer.options()


def _command_options(project, *args) -> dict:
    with mock.patch("evaluation.management.commands.release.release_create") as create:
        create.side_effect = ReleaseError("stop here")
        with pytest.raises(CommandError, match="stop here"):
            call_command("release", project.slug, *args, verbosity=0)
    options = dict(create.call_args.kwargs)
    options.pop("project")
    return options


def test_every_door_offers_every_option_with_the_same_defaults(project):
    initial = {
        name: field.initial for name, field in ReleaseForm().fields.items() if field.initial is not None
    }
    assert _page_options({**initial, "citation": "", "notes": ""}) == RELEASE_OPTIONS
    assert _api_options({}) == RELEASE_OPTIONS
    command = _command_options(project)
    command["split_ratios"] = parse_ratios(command["split_ratios"])
    assert command == RELEASE_OPTIONS


def test_every_door_passes_every_option_on(project):
    assert _page_options(PAGE_FORM) == CHOSEN
    assert _api_options(API_BODY) == CHOSEN
    command = _command_options(project, *COMMAND_ARGS)
    assert command.pop("split_ratios") == "0.5,0.25,0.25"
    assert command == {name: value for name, value in CHOSEN.items() if name != "split_ratios"}


@pytest.mark.parametrize(
    ("page", "api", "service"),
    [
        (
            {"max_per_stratum": 0},
            {"subsample": {"field": "cell", "max_per_stratum": 0}},
            {"subsample": {"field": "cell", "max_per_stratum": 0}},
        ),
        ({"stratify_by": ""}, {"subsample": {"max_per_stratum": 2}}, {"subsample": {"max_per_stratum": 2}}),
        (
            {"citation": "x" * (TEXT_MAX_LENGTH + 1)},
            {"citation": "x" * (TEXT_MAX_LENGTH + 1)},
            {"citation": "x" * (TEXT_MAX_LENGTH + 1)},
        ),
        ({"license": "x" * 65}, {"license": "x" * 65}, {"license": "x" * 65}),
        ({"seed": 2**31}, {"seed": 2**31}, {"seed": 2**31}),
    ],
)
def test_every_door_refuses_the_same_options(project, page, api, service):
    approved_items(project, {"associational": 4})
    assert not ReleaseForm({**PAGE_FORM, **page}).is_valid()
    assert not ReleaseCreateInputSerializer(data={**API_BODY, **api}).is_valid()
    with pytest.raises(ReleaseError):
        release_create(project=project, **{**CHOSEN, **service})
    assert not Release.objects.exists()


def test_the_page_and_the_api_cut_through_the_service_that_enqueues_the_build(
    project, client_for, client, curator, django_capture_on_commit_callbacks
):
    approved_items(project, {"associational": 6, "counterfactual": 6})
    for item in project.items.all():
        item.metadata = {**item.metadata, "cell": item.causal_class}
        item.save(update_fields=["metadata"])
    with mock.patch("evaluation.tasks.release_build_task.delay") as delay:
        with django_capture_on_commit_callbacks(execute=True):
            page = client_for(curator).post(
                reverse("evaluation:release_list", args=[project.slug]), PAGE_FORM
            )
        with django_capture_on_commit_callbacks(execute=True):
            api = client.post(
                f"/api/v1/projects/{project.slug}/releases/",
                API_BODY,
                content_type="application/json",
                headers={"Authorization": f"Token {api_token_key(curator)}"},
            )
    assert page.status_code == 302 and api.status_code == 202, api.content
    first, second = Release.objects.order_by("version")
    assert [call.args for call in delay.call_args_list] == [(first.pk,), (second.pk,)]
    for release in (first, second):
        assert (release.seed, release.split_ratios, release.license, release.citation, release.notes) == (
            7,
            CHOSEN["split_ratios"],
            "mit",
            CHOSEN["citation"],
            CHOSEN["notes"],
        )
        assert release.subsample == CHOSEN["subsample"] and release.status == Release.Status.QUEUED

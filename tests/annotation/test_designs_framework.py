"""The design framework: project creation, the help page, the demo's five projects, and every hook wired
into the platform (item pages, project page, agreement page, release export)."""

import hashlib
import io
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.demo import DEMO_USERS, demo_load_all
from annotation.designs import ExportFile, Stage, design_for, designs
from annotation.models import Assignment, Membership, Project
from evaluation.releases.export import export_release
from evaluation.services import release_cut
from tests.evaluation.helpers import approved_items, judge
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_every_installed_design_app_is_registered_in_the_order_of_installed_apps():
    from django.conf import settings

    installed = [
        app.removeprefix("designs.") for app in settings.INSTALLED_APPS if app.startswith("designs.")
    ]
    assert [design.key for design in designs()] == installed
    assert all(design.name for design in designs())


def test_staff_create_a_project_of_a_design_and_become_its_owner(client_for):
    staff = UserFactory(username="staff", is_staff=True)
    client = client_for(staff)
    page = client.get(reverse("annotation:project_new"))
    body = page.content.decode()
    assert page.status_code == 200
    for design in designs():
        assert design.name in body and f'#design-{design.key}"' in body
    response = client.post(
        reverse("annotation:project_new"),
        {
            "name": "Meu METER",
            "slug": "meu-meter",
            "language": "pt-BR",
            "design": "meter",
            "description": "",
        },
    )
    project = Project.objects.get(slug="meu-meter")
    assert response.status_code == 302 and response["Location"] == reverse(
        "annotation:project_detail", args=["meu-meter"]
    )
    assert project.design == "meter" and project.created_by == staff
    for field, value in design_for("meter").project_defaults().items():
        assert getattr(project, field) == value
    assert Membership.objects.get(project=project).role == Membership.Role.OWNER


def test_a_taken_slug_is_refused_with_the_field_named(client_for, project, owner):
    response = client_for(owner).post(
        reverse("annotation:project_new"),
        {
            "name": "Again",
            "slug": project.slug,
            "language": "en",
            "design": "causal_qa_pt",
        },
    )
    assert response.status_code == 200
    assert "A project with this slug already exists." in response.content.decode()
    assert Project.objects.filter(slug=project.slug).count() == 1


def test_people_who_own_nothing_cannot_create_projects(client_for, project, annotator, outsider):
    for user in (annotator, outsider):
        client = client_for(user)
        assert client.get(reverse("annotation:project_new")).status_code == 403
        assert (
            client.post(
                reverse("annotation:project_new"),
                {"name": "X", "slug": "x", "language": "en", "design": "meter"},
            ).status_code
            == 403
        )
    assert not Project.objects.filter(slug="x").exists()
    assert "New project" not in client_for(annotator).get(reverse("annotation:home")).content.decode()


def test_the_create_project_command_applies_the_design_defaults(owner):
    call_command("create_project", "cli-meter", "CLI METER", "--design", "meter", "--owner", "owner")
    project = Project.objects.get(slug="cli-meter")
    assert project.answer_format == design_for("meter").project_defaults()["answer_format"]
    assert project.memberships.get().user == owner


def test_the_help_page_describes_every_design(client_for, annotator):
    body = client_for(annotator).get(reverse("annotation:designs_help")).content.decode()
    for design in designs():
        assert f'id="design-{design.key}"' in body and design.name in body
        for stage in design.stages():
            assert str(stage.label) in body


def test_the_demo_loads_one_project_per_design_with_the_demo_users_and_is_idempotent():
    first = demo_load_all()
    second = demo_load_all()
    assert all(result.created for result in first) and not any(result.created for result in second)
    projects = Project.objects.all()
    assert sorted(projects.values_list("design", flat=True)) == sorted(design.key for design in designs())
    usernames = {username for username, *_ in DEMO_USERS}
    for project in projects:
        members = set(project.memberships.values_list("user__username", flat=True))
        # The demo users are in every project; an example may bring its own raters (ExpliCa's fifteen).
        assert usernames <= members, project.design
        assert all(name.startswith(f"{project.design}-") for name in members - usernames), project.design
    assert Project.objects.get(design="causal_qa_pt").items.count() >= 35
    # Every design's example dataset is loaded, not only its project.
    for design in [design.key for design in designs()]:
        assert Project.objects.get(design=design).groups.exists() or design == "causal_qa_pt", design


def test_item_pages_show_the_design_warnings_and_partial(
    client_for, project, curator, annotator, monkeypatch, settings, tmp_path
):
    (tmp_path / "partial.html").write_text('<div data-test-partial="{{ item.pk }}">{{ design.name }}</div>')
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], tmp_path]}]
    design = design_for(project)
    monkeypatch.setattr(type(design), "item_warnings", lambda self, item: [f"<b>check</b> {item.pk}"])
    monkeypatch.setattr(type(design), "item_partial", "partial.html", raising=False)
    item = ItemFactory(project=project)
    body = (
        client_for(curator)
        .get(reverse("annotation:item_review", args=[project.slug, item.pk]))
        .content.decode()
    )
    assert f"&lt;b&gt;check&lt;/b&gt; {item.pk}" in body  # escaped: warnings may quote model text
    assert f'data-test-partial="{item.pk}"' in body
    assignment = Assignment.objects.create(item=item, annotator=annotator, round=item.round)
    page = client_for(annotator).get(reverse("annotation:assignment", args=[project.slug, assignment.pk]))
    assert f"&lt;b&gt;check&lt;/b&gt; {item.pk}" in page.content.decode()
    assert f'data-test-partial="{item.pk}"' in page.content.decode()


def test_the_project_page_counts_items_per_design_stage(client_for, project, curator, monkeypatch):
    design = design_for(project)
    monkeypatch.setattr(
        type(design), "stages", lambda self: [Stage("draft", "Drafting"), Stage("check", "Checking")]
    )
    ItemFactory.create_batch(2, project=project, metadata={"stage": "draft"})
    ItemFactory(project=project, metadata={"stage": "check"})
    ItemFactory(project=project)
    assert design.stage_counts(project) == {"draft": 2, "check": 1}
    body = client_for(curator).get(reverse("annotation:project_detail", args=[project.slug])).content.decode()
    assert 'class="tile stage-draft"' in body and "Drafting" in body and "Checking" in body


def test_the_agreement_page_offers_and_starts_with_the_design_breakdown(
    client_for, project, curator, annotators, monkeypatch
):
    design = design_for(project)
    monkeypatch.setattr(type(design), "agreement_fields", lambda self: ["cell"])
    for index in range(4):
        item = ItemFactory(project=project, metadata={"cell": f"c{index % 2}"})
        for annotator in annotators:
            judge(item, annotator)
    body = client_for(curator).get(reverse("evaluation:agreement", args=[project.slug])).content.decode()
    assert '<option value="meta:cell" selected>' in body
    assert "c0" in body and "c1" in body


def _design_file(release):
    rows = (
        {"id": record.data["id"], "question": record.data["question"], "formula": "=1+1"}
        for record in release.items.order_by("split", "position")
    )
    return [
        ExportFile("design/items.jsonl", rows),
        ExportFile(
            "design/items.csv",
            (
                {"id": record.data["id"], "question": record.data["question"], "formula": "=1+1"}
                for record in release.items.order_by("split", "position")
            ),
            fields=["id", "question", "formula"],
        ),
    ]


def test_the_export_adds_the_design_files_and_checksums_cover_them(
    client_for, project, curator, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        type(design_for(project)), "export_files", lambda self, release: _design_file(release)
    )
    approved_items(project, {"associational": 6})
    release = release_cut(project=project)
    export_release(release, tmp_path / "out", ("jsonl",))
    sums = dict(
        reversed(line.split("  ")) for line in (tmp_path / "out/checksums.txt").read_text().splitlines()
    )
    jsonl = (tmp_path / "out/design/items.jsonl").read_bytes()
    assert sums["design/items.jsonl"] == hashlib.sha256(jsonl).hexdigest()
    assert len(jsonl.splitlines()) == 6
    csv_text = (tmp_path / "out/design/items.csv").read_text()
    assert csv_text.splitlines()[0] == "id,question,formula" and "'=1+1" in csv_text

    client = client_for(curator)
    response = client.get(reverse("evaluation:release_download", args=[project.slug, release.version]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    root = f"{project.slug}-{release.tag}"
    assert archive.read(f"{root}/design/items.jsonl") == jsonl
    assert "design/items.csv" in archive.read(f"{root}/checksums.txt").decode()

    api = client.get(f"/api/v1/projects/{project.slug}/releases/{release.tag}/files/design/items.jsonl")
    assert api.status_code == 200 and b"".join(api.streaming_content) == jsonl
    missing = client.get(f"/api/v1/projects/{project.slug}/releases/{release.tag}/files/nope.jsonl")
    assert missing.status_code == 404


def test_a_design_file_outside_the_release_is_refused(project, tmp_path, monkeypatch):
    monkeypatch.setattr(
        type(design_for(project)),
        "export_files",
        lambda self, release: [ExportFile("../escape.jsonl", iter([]))],
    )
    approved_items(project, {"associational": 2})
    release = release_cut(project=project)
    with pytest.raises(ValueError, match="must be relative"):
        export_release(release, tmp_path / "out", ("jsonl",))
    assert not (tmp_path / "escape.jsonl").exists()

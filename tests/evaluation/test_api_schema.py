"""The OpenAPI schema is valid, its documentation works offline, and schemathesis finds no server error."""

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from annotation.models import Item
from evaluation.services import release_cut
from tests.evaluation.helpers import approved_items, judge
from tests.factories import ItemFactory, api_token_key

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def test_the_schema_is_valid_openapi_3_without_warnings(db):
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schema = yaml.safe_load(out.getvalue())
    assert schema["openapi"].startswith("3.")
    assert {
        "/api/v1/projects/",
        "/api/v1/projects/{slug}/",
        "/api/v1/projects/{slug}/items/",
        "/api/v1/projects/{slug}/releases/",
        "/api/v1/projects/{slug}/releases/{version}/",
        "/api/v1/projects/{slug}/releases/{version}/{split}/",
        "/api/v1/projects/{slug}/agreement/",
        "/api/v1/projects/{slug}/quality/",
    } <= set(schema["paths"])
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_the_documentation_pages_load_nothing_from_other_hosts(client, db, page):
    body = client.get(page, follow=True).content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', body)
    # Links inside the page ("#main") and paths of this site only: nothing from another host.
    assert sources and all(source.startswith(("/", "#")) for source in sources), sources


@pytest.mark.services
def test_schemathesis_finds_no_server_error(
    celery_worker_process, live_server, project, owner, annotators, tmp_path
):
    items = approved_items(project, {"associational": 8, "counterfactual": 4})
    for item in items[:6]:
        for annotator in annotators:
            judge(item, annotator)
    ItemFactory(project=project, status=Item.Status.IN_REVIEW, metadata={"task": "t1"})
    release_cut(project=project)
    key = api_token_key(owner)
    # Point the path parameters at real data so the generated requests reach past the 404s.
    (tmp_path / "schemathesis.toml").write_text(
        '[parameters]\n"path.slug" = "causal-qa"\n"path.version" = "v1"\n"path.split" = "train"\n'
    )
    result = subprocess.run(
        [
            str(SCHEMATHESIS),
            "--config-file",
            str(tmp_path / "schemathesis.toml"),
            "run",
            f"{live_server.url}/api/schema/",
            "-H",
            f"Authorization: Token {key}",
            "--checks",
            "not_a_server_error",
            "--max-examples",
            "8",
            "--seed",
            "1",
            "--workers",
            "1",
            "--generation-database",
            "none",
            "--no-color",
            "--request-timeout",
            "60",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    summary = result.stdout[-3000:]
    assert result.returncode == 0, summary
    selected = re.search(r"Selected: (\d+)/(\d+)", result.stdout)
    assert selected and selected[1] == selected[2] and int(selected[1]) >= 8, summary
    assert " failed" not in summary.split("Test cases:")[-1], summary

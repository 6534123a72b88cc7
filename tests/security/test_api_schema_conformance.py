"""The OpenAPI schema says what the API answers: schemathesis with every check (status codes, content types,
response bodies and headers against the schema, valid requests accepted and invalid ones refused, 405s and
their Allow header, authentication not ignored, and the stateful phase over the links it infers) against a live
server of the project, with a fixed generation (deterministic mode) so the run is the same each time."""

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from annotation.models import Item
from evaluation.runs.services import run_create
from generation.services import job_create
from tests.evaluation.helpers import judge
from tests.evaluation.runs import open_items, release_of, run_here
from tests.factories import ItemFactory, api_token_key
from tests.generation.conftest import run_now

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")

# Three bodies carry rules a schema cannot state: ids and names that must exist in the project (endpoints,
# templates, topics, items, models), a job kind's own options, and split shares that add up to 1. A well-formed
# body that breaks one is refused with a 400 naming the field, so for these three operations only, and for the
# "valid data is accepted" check only, a 400 is an accepted answer. Every other check runs on them unchanged.
SEMANTIC_BODIES = ("jobs_create", "runs_create", "releases_create")
# The annotator's and curator's actions carry the rules of the item's state as well: an assignment that is not
# the caller's or no longer open, a round decided meanwhile, a version that moved on, an edit to undo that a
# later one covers. Refused with a 400 naming the field or a 409 saying why.
SEMANTIC_BODIES += (
    "assignments_next",
    "assignments_answer",
    "assignments_skip",
    "assignments_unskip",
    "assignments_judge",
    "assignments_judgment_change",
    "items_edit",
    "items_revision_undo",
    "items_decide",
    "items_decide_bulk",
)
# A control item's known answers name the questions its design asks: a rule of the design, not of the schema.
SEMANTIC_BODIES += ("item_control_create",)
# A saved view's query is the items page's query string, read as the page reads it: a bad filter is a 400.
SEMANTIC_BODIES += ("item_views_create",)
# A judge asked for a finished run names an endpoint of the project, and the run must have open answers that
# judge has not scored yet.
SEMANTIC_BODIES += ("run_judge",)


def config(project, items, job, run) -> str:
    lines = [
        "[parameters]",
        f'"path.slug" = "{project.slug}"',
        '"path.version" = "v1"',
        '"path.split" = "test"',
        f'"path.item_id" = {items[0].pk}',
        '"path.assignment_id" = 1',
        '"path.number" = 2',
        '"path.view_id" = 1',
        f'"path.job_id" = {job.pk}',
        f'"path.run_id" = {run.pk}',
    ]
    for operation_id in SEMANTIC_BODIES:
        lines += [
            "",
            "[[operations]]",
            f'include-operation-id = "{operation_id}"',
            'checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]',
        ]
    return "\n".join(lines) + "\n"


@pytest.mark.services
def test_schemathesis_with_every_check_finds_nothing(
    celery_worker_process, live_server, project, owner, annotators, endpoint, tmp_path
):
    items = open_items(project, 8)
    for item in items[:4]:
        for annotator in annotators:
            judge(item, annotator)
    ItemFactory(project=project, status=Item.Status.IN_REVIEW, metadata={"task": "t1"})
    release = release_of(project)
    # A run without a judge (its `judge` is null) and a finished job with calls, for the reads to reach.
    run = run_create(project=project, release=release, endpoints=[endpoint], user=owner, enqueue=False)
    run_here(run)
    job = job_create(
        project=project,
        kind="questions",
        endpoint=endpoint,
        user=owner,
        count=2,
        causal_class="associational",
        enqueue=False,
    )
    run_now(job)
    (tmp_path / "schemathesis.toml").write_text(config(project, items, job, run))
    key = api_token_key(owner)
    # The schema as the server serves it, fetched here with time to spare (schemathesis gives up after 10 s,
    # which a loaded machine can take to generate it).
    schema = httpx.get(
        f"{live_server.url}/api/schema/?format=json", headers={"Authorization": f"Token {key}"}, timeout=120
    )
    assert schema.status_code == 200
    (tmp_path / "openapi.json").write_bytes(schema.content)
    result = subprocess.run(
        [
            str(SCHEMATHESIS),
            "--config-file",
            str(tmp_path / "schemathesis.toml"),
            "run",
            str(tmp_path / "openapi.json"),
            "--url",
            live_server.url,
            "-H",
            f"Authorization: Token {key}",
            "--checks",
            "all",
            "--max-examples",
            "10",
            "--generation-deterministic",
            "--workers",
            "1",
            "--no-color",
            "--request-timeout",
            "60",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    out = result.stdout
    print(out[out.find("API Operations") :])  # the figures, with `pytest -s`
    failures = out[out.find("FAILURES") :] if "FAILURES" in out else out[-3000:]
    assert result.returncode == 0, failures[:6000]
    selected = re.search(r"Selected: (\d+)/(\d+)", out)
    assert selected and selected[1] == selected[2] and int(selected[1]) >= 23, out[-3000:]
    assert re.search(r"Test cases:\s+\d+ generated, \d+ passed", out), out[-3000:]

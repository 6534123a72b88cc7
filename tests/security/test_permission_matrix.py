"""The permission matrix, generated from the URLconf: every URL has a rule here, so a new URL without one fails;
each URL that needs only the project is then requested by every role and must answer as its rule says."""

import pytest
from django.urls import get_resolver, reverse

from tests.factories import api_token_key

# The least a caller needs: public, signed in, a project role, staff, or a design's own project (checked there).
PUBLIC, SIGNED_IN, ANNOTATOR, CURATOR, OWNER, STAFF, DESIGN = (
    "public",
    "signed in",
    "annotator",
    "curator",
    "owner",
    "staff",
    "design",
)
RULES = {
    "login": PUBLIC,
    "logout": PUBLIC,
    "set_language": PUBLIC,
    "javascript-catalog": PUBLIC,
    "password_change": SIGNED_IN,
    "password_change_done": SIGNED_IN,
    "api-schema": SIGNED_IN,
    "api-docs": PUBLIC,
    "api-redoc": PUBLIC,
    "favicon": PUBLIC,
    "annotation:home": SIGNED_IN,
    "annotation:healthz": PUBLIC,
    "annotation:project_new": SIGNED_IN,
    "annotation:designs_help": SIGNED_IN,
    "annotation:project_detail": ANNOTATOR,
    "annotation:import_list": CURATOR,
    "annotation:import_detail": CURATOR,
    "annotation:import_dropped_csv": CURATOR,
    "annotation:queue": ANNOTATOR,
    "annotation:queue_next": ANNOTATOR,
    "annotation:assignment": ANNOTATOR,
    "annotation:assignment_judge": ANNOTATOR,
    "annotation:assignment_answer": ANNOTATOR,
    "annotation:assignment_skip": ANNOTATOR,
    "annotation:item_part": ANNOTATOR,
    "annotation:item_undo": ANNOTATOR,
    "annotation:assignment_unskip": ANNOTATOR,
    "annotation:guidelines": ANNOTATOR,
    "annotation:revision_list": ANNOTATOR,
    "annotation:item_revise": CURATOR,
    "annotation:item_return": CURATOR,
    "annotation:review_queue": CURATOR,
    "annotation:bulk_approve": CURATOR,
    "annotation:item_review": CURATOR,
    "annotation:item_decide": CURATOR,
    "annotation:item_control": CURATOR,
    "annotation:item_history": CURATOR,
    "annotation:dashboard": CURATOR,
    "generation:project": CURATOR,
    "generation:job_start": CURATOR,
    "generation:job_detail": CURATOR,
    "generation:job_cancel": CURATOR,
    "generation:job_retry": CURATOR,
    "generation:endpoint_list": OWNER,
    "generation:endpoint_edit": OWNER,
    "generation:endpoint_test": OWNER,
    "generation:models_help": PUBLIC,
    "generation:call_detail": ANNOTATOR,
    "topics:topics": ANNOTATOR,
    "topics:topic_run_start": CURATOR,
    "topics:topic_run_progress": CURATOR,
    "topics:topics_merge": CURATOR,
    "topics:topics_select": CURATOR,
    "topics:topic_detail": CURATOR,
    "topics:topic_rename": CURATOR,
    "topics:item_move": CURATOR,
    "topics:near_duplicate_resolve": CURATOR,
    "topics:balance": CURATOR,
    "topics:balance_start": CURATOR,
    "topics:balance_targets": CURATOR,
    "evaluation:agreement": CURATOR,
    "evaluation:agreement_cells": DESIGN,
    "evaluation:release_list": ANNOTATOR,
    "evaluation:release_detail": ANNOTATOR,
    "evaluation:release_download": ANNOTATOR,
    "evaluation:release_harness_download": ANNOTATOR,
    "evaluation:run_list": ANNOTATOR,
    "evaluation:run_compare": ANNOTATOR,
    "evaluation:run_detail": ANNOTATOR,
    "evaluation:run_cancel": CURATOR,
    "evaluation:run_judge": CURATOR,
    "evaluation:run_export": ANNOTATOR,
    "evaluation:run_table_csv": ANNOTATOR,
    "evaluation:api_tokens": OWNER,
    "evaluation:api_token_issue": OWNER,
    "evaluation:api_token_revoke": OWNER,
    "evaluation:my_api_token": SIGNED_IN,
    "evaluation:my_api_token_revoke": SIGNED_IN,
    "api-project-list": SIGNED_IN,
    "api-project-detail": ANNOTATOR,
    "api-item-list": ANNOTATOR,
    "api-item-judgments": ANNOTATOR,
    "api-assignment-next": ANNOTATOR,
    "api-assignment-detail": ANNOTATOR,
    "api-assignment-answer": ANNOTATOR,
    "api-assignment-skip": ANNOTATOR,
    "api-assignment-unskip": ANNOTATOR,
    "api-assignment-judgment": ANNOTATOR,
    "api-item-edit": ANNOTATOR,
    "api-item-undo": ANNOTATOR,
    "api-item-decision": CURATOR,
    "api-bulk-decision": CURATOR,
    "api-bulk-decision-run": CURATOR,
    "api-item-control": CURATOR,
    "api-item-view-list": CURATOR,
    "api-item-view-detail": CURATOR,
    "api-job-list": CURATOR,
    "api-job-detail": CURATOR,
    "api-job-cancel": CURATOR,
    "api-job-retry": CURATOR,
    "api-job-calls": CURATOR,
    "api-endpoint-list": CURATOR,
    "api-template-list": SIGNED_IN,
    "api-release-list": ANNOTATOR,
    "api-release-detail": ANNOTATOR,
    "api-release-design-file": ANNOTATOR,
    "api-release-split": ANNOTATOR,
    "api-release-harness": ANNOTATOR,
    "api-agreement": CURATOR,
    "api-quality": CURATOR,
    "api-run-list": ANNOTATOR,
    "api-run-detail": ANNOTATOR,
    "api-run-cancel": CURATOR,
    "api-run-judge": CURATOR,
    "api-run-export": ANNOTATOR,
    "designs:causalbench_check": DESIGN,
    "designs:causalbench_adjudication": DESIGN,
    "designs:causalbench_adjudicate": DESIGN,
    "designs:explica": DESIGN,
    "designs:explica_aggregate": DESIGN,
    "designs:explica_pairs": DESIGN,
    "designs:explica_settings": DESIGN,
    "designs:explica_tie": DESIGN,
    "annotation:preferences": SIGNED_IN,
    "annotation:language_set": PUBLIC,
    "evaluation:metrics_help": SIGNED_IN,
    "annotation:import_preview": CURATOR,
    "annotation:assignment_draft": ANNOTATOR,
    "annotation:assignment_change": ANNOTATOR,
    "annotation:judgment_previous": ANNOTATOR,
    "annotation:items": ANNOTATOR,
    "annotation:items_bulk": CURATOR,
    "annotation:items_bulk_run": CURATOR,
    "annotation:items_export": CURATOR,
    "annotation:items_view_save": CURATOR,
    "annotation:items_view_delete": CURATOR,
    "annotation:members": OWNER,
    "annotation:invitation_withdraw": OWNER,
    "annotation:invitation_accept": PUBLIC,
    "annotation:member_update": OWNER,
    "annotation:member_remove": OWNER,
    "annotation:project_settings": OWNER,
    "annotation:guidelines_preview": OWNER,
    "annotation:project_history": CURATOR,
    "evaluation:run_import": CURATOR,
    "evaluation:run_import_preview": CURATOR,
    "evaluation:results_import_detail": CURATOR,
    "topics:topic_run_apply": CURATOR,
    "topics:topic_run_discard": CURATOR,
    "topics:topic_run_undo": CURATOR,
}
RANK = {ANNOTATOR: 1, CURATOR: 2, OWNER: 3}


def url_patterns(resolver=None, prefix=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if hasattr(pattern, "url_patterns"):
            if pattern.namespace == "admin":
                continue  # Django's admin: staff only, by the admin site itself
            yield from url_patterns(pattern, f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix)
        else:
            yield f"{prefix}{pattern.name}", pattern


def test_every_url_has_a_permission_rule():
    names = {name for name, _pattern in url_patterns()}
    assert names - set(RULES) == set(), "URLs without a rule in the permission matrix"
    assert set(RULES) - names == set(), "rules for URLs that no longer exist"


def project_only_urls():
    return sorted(
        name
        for name, pattern in url_patterns()
        if set(pattern.pattern.converters) == {"slug"} and RULES[name] in RANK
    )


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["outsider", "annotator", "curator", "owner"])
def test_each_project_url_answers_each_role_as_its_rule_says(request, client, project, who):
    user = request.getfixturevalue(who)
    rank = {"outsider": 0, "annotator": 1, "curator": 2, "owner": 3}[who]
    client.force_login(user)
    headers = {"Authorization": f"Token {api_token_key(user)}"}
    wrong = {}
    for name in project_only_urls():
        url = reverse(name, kwargs={"slug": project.slug})
        response = client.get(url, headers=headers if url.startswith("/api/") else {})
        if response.status_code == 405:
            response = client.post(url, {}, headers=headers if url.startswith("/api/") else {})
        needed = RANK[RULES[name]]
        if rank == 0:
            expected_ok = response.status_code == 404
        elif rank < needed:
            expected_ok = response.status_code == 403
        else:
            expected_ok = response.status_code not in (401, 403, 404) and response.status_code < 500
        if not expected_ok:
            wrong[name] = response.status_code
    assert wrong == {}, f"{who}: answers that break the rule"


@pytest.mark.django_db
def test_anonymous_callers_are_sent_to_sign_in_or_get_401(client, project):
    for name in project_only_urls():
        url = reverse(name, kwargs={"slug": project.slug})
        response = client.get(url)
        if url.startswith("/api/"):
            assert response.status_code == 401, name
        else:
            assert response.status_code in (302, 405), name
            if response.status_code == 302:
                assert response["Location"].startswith(reverse("login")), name

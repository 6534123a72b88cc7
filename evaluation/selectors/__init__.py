"""Reads of the evaluation app, for pages, the API, commands and the dataset card."""

from .agreement import (
    AGREEMENT_BOOTSTRAP,
    METADATA_PREFIX,
    AgreementRow,
    AgreementSection,
    Criterion,
    agreement_breakdowns,
    agreement_criteria,
    judgments_state,
    project_agreement,
)
from .releases import api_example_target, release_for_user, release_split_texts, releases_for_project
from .runs import (
    EmptyResponses,
    RunProgress,
    empty_responses,
    results_imports_for_project,
    run_for_project,
    run_progress,
    runs_for_project,
)

__all__ = [
    "AGREEMENT_BOOTSTRAP",
    "METADATA_PREFIX",
    "AgreementRow",
    "AgreementSection",
    "Criterion",
    "agreement_breakdowns",
    "agreement_criteria",
    "judgments_state",
    "project_agreement",
    "api_example_target",
    "release_for_user",
    "release_split_texts",
    "releases_for_project",
    "EmptyResponses",
    "RunProgress",
    "empty_responses",
    "run_for_project",
    "run_progress",
    "results_imports_for_project",
    "runs_for_project",
]

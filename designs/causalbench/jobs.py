"""The CausalBench job kinds and their card on the generation page (registered when the app is ready)."""

from django.db.models import Count
from django.utils.translation import gettext_lazy as _

from annotation.models import Item
from generation.kinds import JobKind, JobPage, job_kind_register, job_page_register
from generation.options import JobOptions, TextOption
from generation.services.jobs import MAX_ITEMS, MAX_QUESTIONS, checked_items

from .checks import questions_to_check
from .design import DOMAINS
from .forms import CausalBenchJobForm
from .work import CausalBenchCheckWork, CausalBenchExpandWork, CausalBenchScenarioWork

EXPAND = "causalbench_expand"
SCENARIO = "causalbench_scenario"
CHECK = "causalbench_check"
FINAL = (Item.Status.APPROVED, Item.Status.REJECTED)


class DomainOptions(JobOptions):
    domain = TextOption(
        required=False,
        default="",
        allow_blank=True,
        help_text="The domain of what is written (new scenarios).",
    )


def runs_on(kind: str):
    def check(project) -> str | None:
        if project.design != "causalbench":
            return f"{kind} jobs belong to CausalBench projects; {project.slug} is {project.design}"
        return None

    return check


def scenario_params(project, errors, options) -> dict:
    count, domain = options["count"], options["domain"]
    if not isinstance(count, int) or not 1 <= count <= MAX_QUESTIONS:
        errors["count"] = f"ask for 1 to {MAX_QUESTIONS} scenarios"
    if domain not in DOMAINS:
        errors["domain"] = f"choose a domain: {', '.join(DOMAINS)}"
    return {"count": count, "domain": domain}


def expand_params(project, errors, options) -> dict:
    """Imported questions to expand; by default every open question not yet in a scenario."""
    item_ids = options["item_ids"]
    if item_ids is None:
        item_ids = list(
            Item.objects.filter(project=project, group__isnull=True)
            .exclude(status__in=FINAL)
            .order_by("pk")
            .values_list("pk", flat=True)[:MAX_ITEMS]
        )
    ids = checked_items(project, errors, item_ids, excluded=FINAL, required=True)
    grouped = list(
        Item.objects.filter(pk__in=ids, group__isnull=False)
        .annotate(siblings=Count("group__items"))
        .filter(siblings__gt=1)
        .values_list("pk", flat=True)
    )
    if grouped and "item_ids" not in errors:
        errors["item_ids"] = f"these items' scenarios have more than one question already: {grouped[:20]}"
    params = {"item_ids": ids}
    if options["domain"]:
        params["domain"] = options["domain"]
    return params


def check_params(project, errors, options) -> dict:
    """Questions to answer a second time; by default every one without its second answer whose first answer
    was not written by the job's model."""
    endpoint, item_ids = options["endpoint"], options["item_ids"]
    if item_ids is None:
        rows = questions_to_check(project).values_list("pk", "answer_provenance").order_by("pk")[:MAX_ITEMS]
        item_ids = [pk for pk, provenance in rows if (provenance or {}).get("model") != endpoint.model]
    ids = checked_items(project, errors, item_ids, allowed=(Item.Status.IN_REVIEW,), required=True)
    same = [
        pk
        for pk, prov in Item.objects.filter(pk__in=ids).values_list("pk", "answer_provenance")
        if isinstance(prov, dict) and prov.get("model") == endpoint.model
    ]
    if same and "item_ids" not in errors:
        errors["item_ids"] = (
            f"{endpoint.model} wrote the answers of items {same[:20]}; the check must come from another model"
        )
    return {"item_ids": ids}


def page_arguments(project, data) -> dict:
    """The page's form picks the kind (``mode``); only new scenarios take a domain and a count."""
    if data["mode"] == SCENARIO:
        return {"kind": SCENARIO, "domain": data["domain"], "count": data["count"]}
    return {"kind": data["mode"]}


JOB_KINDS = [
    JobKind(
        key=EXPAND,
        label=_("CausalBench: classify a question, write the other perspectives"),
        work=CausalBenchExpandWork,
        params=expand_params,
        runs_on=runs_on(EXPAND),
        variables=frozenset({"scenario", "question", "answer", "domain", "perspectives", "language"}),
        output_keys=("perspective", "questions"),
        options=DomainOptions,
    ),
    JobKind(
        key=SCENARIO,
        label=_("CausalBench: a new scenario with four questions"),
        command="causalbench-scenarios",
        work=CausalBenchScenarioWork,
        params=scenario_params,
        runs_on=runs_on(SCENARIO),
        variables=frozenset({"domain", "examples", "perspectives", "language"}),
        output_keys=("scenario", "questions"),
        options=DomainOptions,
    ),
    JobKind(
        key=CHECK,
        label=_("CausalBench: a second, independent answer"),
        work=CausalBenchCheckWork,
        params=check_params,
        runs_on=runs_on(CHECK),
        variables=frozenset({"scenario", "question", "domain", "language"}),
        output_keys=("answer",),
    ),
]
JOB_PAGES = [
    JobPage(
        key="causalbench",
        form=CausalBenchJobForm,
        template="designs/causalbench/_job_causalbench.html",
        kinds=(SCENARIO, EXPAND, CHECK),
        arguments=page_arguments,
    ),
]

for kind in JOB_KINDS:
    job_kind_register(kind)
for page in JOB_PAGES:
    job_page_register(page)

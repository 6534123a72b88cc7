"""CausalityCheck's job kind (the checklist texts of seeds) and its card on the generation page."""

from django.utils.translation import gettext_lazy as _

from generation.kinds import JobKind, JobPage, job_kind_register, job_page_register
from generation.options import FlagOption, GroupIdsField, JobOptions
from generation.services.jobs import id_list
from generation.services.templates import template_latest

from . import seeds as checklist
from .forms import ChecklistJobForm
from .work import CHECKLIST_TEMPLATES, ChecklistWork

CHECKLIST = "checklist"


class ChecklistOptions(JobOptions):
    group_ids = GroupIdsField(
        command_flags=("--groups", "--seeds"),
        help_text="The seeds (item groups), by id; default every seed without its checklist.",
        command_help="seeds by external id or id, separated by commas; default all waiting",
    )
    double_prompt = FlagOption(
        required=False,
        default=True,
        command_flags=("--single-prompt",),
        help_text="Ask for the correct and the corrupted versions in one request.",
        command_help="correct and corrupted versions in separate requests",
    )


def runs_on(project) -> str | None:
    if project.design != "causalitycheck":
        return f"checklist jobs are for CausalityCheck projects; this one is {project.design_name}"
    return None


def checklist_params(project, errors, options) -> dict:
    group_ids = options["group_ids"]
    seeds = checklist.seeds_of(project)
    waiting = list(seeds.filter(items__isnull=True).distinct().values_list("pk", flat=True))
    if group_ids is None:
        group_ids = waiting
        if not group_ids:
            errors["group_ids"] = "no seed of this project lacks its checklist"
    else:
        try:
            group_ids = list(dict.fromkeys(int(pk) for pk in group_ids))
        except (TypeError, ValueError):
            errors["group_ids"] = "seed ids must be whole numbers"
            group_ids = []
        wrong = [pk for pk in group_ids if pk not in set(waiting)]
        if not group_ids:
            errors["group_ids"] = "choose at least one seed"
        elif wrong:
            errors["group_ids"] = f"not a seed of this project without its checklist: {id_list(wrong)}"
    templates = {
        name: template_latest(kind=CHECKLIST, language=project.language, name=name)
        for name in CHECKLIST_TEMPLATES
    }
    absent = [name for name, template in templates.items() if template is None]
    if absent:
        errors["template"] = (
            f"no checklist prompt template {', '.join(absent)}; run `python manage.py load_prompt_templates`"
        )
    return {
        "group_ids": group_ids,
        "double_prompt": bool(options["double_prompt"]),
        "templates": {name: template.pk for name, template in templates.items() if template is not None},
    }


def waiting(project) -> dict | None:
    seeds = checklist.seeds_of(project).filter(items__isnull=True).distinct().count()
    return {"seeds": seeds} if seeds else None


JOB_KINDS = [
    JobKind(
        key=CHECKLIST,
        label=_("CausalityCheck: checklist texts of a seed"),
        work=ChecklistWork,
        params=checklist_params,
        runs_on=runs_on,
        default_template="chains-double",
        variables=frozenset(
            {
                "context",
                "question",
                "options",
                "answer",
                "source_context",
                "chain",
                "verdict",
                "verdict_definition",
                "verdict_definitions",
                "language",
            }
        ),
        options=ChecklistOptions,
    ),
]
JOB_PAGES = [
    JobPage(
        key=CHECKLIST,
        form=ChecklistJobForm,
        template="designs/causalitycheck/_job_checklist.html",
        kinds=(CHECKLIST,),
        context=waiting,
        arguments=lambda project, data: {"kind": CHECKLIST, "double_prompt": data["double_prompt"]},
    ),
]

for kind in JOB_KINDS:
    job_kind_register(kind)
for page in JOB_PAGES:
    job_page_register(page)

"""METER's job kinds and their cards on the generation page (registered when the app is ready)."""

from django.utils.translation import gettext_lazy as _

from generation.kinds import JobKind, JobPage, job_kind_register, job_page_register
from generation.options import EndpointsField, GroupIdsField, JobOptions
from generation.services.jobs import MAX_ITEMS, endpoint_usable, id_list

from . import pipeline as meter
from . import stems as meter_stems
from .forms import DecontaminationJobForm, MeterQuestionJobForm
from .work import DecontaminationWork, MeterQuestionWork

DECONTAMINATION = "decontamination"
METER_QUESTION = "meter_question"
# The entry stages each METER kind works on.
ENTRY_STAGES = {DECONTAMINATION: ("pair", "decontamination"), METER_QUESTION: ("generation",)}


def runs_on(kind: str):
    def check(project) -> str | None:
        if project.design != "meter":
            return f"{kind} jobs are for METER projects; this one is {project.design_name}"
        return None

    return check


def entry_params(kind: str):
    def params(project, errors, options) -> dict:
        group_ids = options["group_ids"]
        eligible = meter.entries(project, *ENTRY_STAGES[kind])
        if group_ids is None:
            ids = list(eligible.order_by("pk").values_list("pk", flat=True)[: MAX_ITEMS + 1])
        else:
            try:
                ids = list(dict.fromkeys(int(pk) for pk in group_ids))
            except (TypeError, ValueError):
                errors["group_ids"] = "entry ids must be whole numbers"
                return {}
            found = set(eligible.filter(pk__in=ids).values_list("pk", flat=True))
            if missing := [pk for pk in ids if pk not in found]:
                stages = " or ".join(ENTRY_STAGES[kind])
                errors["group_ids"] = f"not entries of this project at stage {stages}: {id_list(missing)}"
        if not ids and "group_ids" not in errors:
            errors["group_ids"] = f"no entry waits for {kind}"
        if len(ids) > MAX_ITEMS:
            errors["group_ids"] = f"at most {MAX_ITEMS:,} entries per job"
        params = {"group_ids": ids}
        if kind == DECONTAMINATION:
            models = list(dict.fromkeys([options["endpoint"], *(options["voters"] or [])]))
            if any(not endpoint_usable(voter, project) for voter in models):
                errors["voters"] = "choose active model endpoints of this project or of the site"
            params["endpoint_ids"] = [voter.pk for voter in models if voter is not None]
        return params

    return params


class EntryOptions(JobOptions):
    group_ids = GroupIdsField(
        command_flags=("--groups",),
        help_text="The entries (item groups), by id; default every entry waiting for the step.",
        command_help="entries by external id or id, separated by commas; default all waiting",
    )


class DecontaminationOptions(EntryOptions):
    voters = EndpointsField(
        each="voter",
        help_text="The endpoints asked besides `endpoint`, by id.",
        command_help="endpoint names asked besides --model, separated by commas",
    )


def waiting(project) -> dict:
    """How many entries wait for each generation step."""
    counts = meter.stage_counts(project)
    return {
        "decontamination": counts.get("pair", 0) + counts.get("decontamination", 0),
        "generation": counts.get("generation", 0),
    }


JOB_KINDS = [
    JobKind(
        key=DECONTAMINATION,
        label=_("De-contamination: does A cause B, without the context?"),
        work=DecontaminationWork,
        params=entry_params(DECONTAMINATION),
        runs_on=runs_on(DECONTAMINATION),
        planned_calls=lambda params: len(params["group_ids"]) * len(params["endpoint_ids"]),
        variables=frozenset({"cause", "effect", "language"}),
        output_keys=("causal",),
        options=DecontaminationOptions,
    ),
    JobKind(
        key=METER_QUESTION,
        label=_("METER: a question of one level with its answer and distractors"),
        work=MeterQuestionWork,
        params=entry_params(METER_QUESTION),
        runs_on=runs_on(METER_QUESTION),
        planned_calls=lambda params: len(params["group_ids"]) * len(meter_stems.LEVELS),
        variables=frozenset({"context", "cause", "effect", "level", "level_definition", "stem", "language"}),
        output_keys=("question", "answer"),
        options=EntryOptions,
    ),
]
JOB_PAGES = [
    JobPage(
        key=DECONTAMINATION,
        form=DecontaminationJobForm,
        template="designs/meter/_job_decontamination.html",
        kinds=(DECONTAMINATION,),
        context=waiting,
        arguments=lambda project, data: {"kind": DECONTAMINATION, "voters": list(data["voters"])},
    ),
    JobPage(
        key=METER_QUESTION,
        form=MeterQuestionJobForm,
        template="designs/meter/_job_meter_question.html",
        kinds=(METER_QUESTION,),
        context=waiting,
        arguments=lambda project, data: {"kind": METER_QUESTION},
    ),
]

for kind in JOB_KINDS:
    job_kind_register(kind)
for page in JOB_PAGES:
    job_page_register(page)

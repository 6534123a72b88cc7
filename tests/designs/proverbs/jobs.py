"""The design's one job kind: a model explains the causal reading of each proverb, in the tone the job asks for,
started from the API, the ``generate`` command or its card on the generation page."""

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from annotation.models import Item
from annotation.services import item_revise, item_start_round
from generation.kinds import JobKind, JobPage, job_kind_register, job_page_register
from generation.options import JobOptions
from generation.services.jobs import checked_items
from generation.services.work import NotApplied, Work, author_of

EXPLAIN = "proverb_explain"
TONES = ("plain", "poetic")


class ExplainOptions(JobOptions):
    tone = serializers.ChoiceField(
        choices=TONES, required=False, default="plain", label=_("Tone"), help_text=_("How to explain.")
    )


class ExplainWork(Work):
    purpose = "explain"

    def variables(self, call):
        return {
            "proverb": call.item.question,
            "cause": call.item.metadata["cause"],
            "effect": call.item.metadata["effect"],
            "tone": self.job.params["tone"],
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        item = Item.objects.get(pk=call.item_id)
        if item.status != Item.Status.PENDING:
            raise NotApplied(f"item {item.pk} is not waiting")
        item = item_revise(
            item=item,
            changes={"reference_answer": parsed["explanation"]},
            author=author_of(call),
            kind="model",
        )
        item_start_round(item=item)
        return []


def explain_params(project, errors, options):
    item_ids = options["item_ids"]
    if item_ids is None:
        item_ids = list(project.items.filter(reference_answer="").order_by("pk").values_list("pk", flat=True))
    return {
        "item_ids": checked_items(project, errors, item_ids, allowed=(Item.Status.PENDING,), required=True),
        "tone": options["tone"],
    }


def proverbs_only(project):
    return None if project.design == "proverbs" else f"{EXPLAIN} jobs are for proverb projects"


job_kind_register(
    JobKind(
        key=EXPLAIN,
        label=_("Explain a proverb"),
        work=ExplainWork,
        params=explain_params,
        runs_on=proverbs_only,
        variables=frozenset({"proverb", "cause", "effect", "tone", "language"}),
        output_keys=("explanation",),
        options=ExplainOptions,
    )
)
# Its card on the generation page: the shared form, with a field for the kind's option.
job_page_register(JobPage(key=EXPLAIN, kinds=(EXPLAIN,)))

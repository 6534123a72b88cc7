"""The generation app's bulk action on the items page: a model answers the chosen items (one job)."""

from django import forms
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.item_actions import MAX_ITEMS_PER_ACTION, BulkAction, register

from . import selectors
from .forms import VARIANT_CHOICES, EndpointChoiceField
from .models import ModelEndpoint
from .services import JobInvalid, job_create
from .services.work import ANSWERABLE


class AnswerJobActionForm(forms.Form):
    endpoint = EndpointChoiceField(queryset=ModelEndpoint.objects.none(), label=_("Model"), empty_label=None)
    variant = forms.ChoiceField(label=_("Answer prompt"), choices=VARIANT_CHOICES)

    def __init__(self, project, data=None):
        super().__init__(data)
        self.fields["endpoint"].queryset = endpoints = selectors.endpoints_for_project(project)
        if not endpoints.exists():
            # Not an empty list and "This field is required.": say why there is no model and how to get one.
            none = gettext(
                "No model endpoint is set up, so no model can answer: a site admin or the project's owner "
                "connects one."
            )
            self.fields["endpoint"].help_text = format_html(
                '{} <a href="{}">{}</a>',
                none,
                reverse("generation:models_help"),
                gettext("How to connect a model"),
            )
            self.fields["endpoint"].error_messages["required"] = none


def _answerable(project, chosen):
    return chosen.filter(status__in=ANSWERABLE)


def _start_answer_job(*, project, user, items, data, progress=None) -> str:
    ids = list(items.order_by("pk").values_list("pk", flat=True)[:MAX_ITEMS_PER_ACTION])
    try:
        job = job_create(
            project=project,
            kind="answer",
            endpoint=data["endpoint"],
            user=user,
            item_ids=ids,
            answer_variant=data["variant"],
        )
    except JobInvalid as invalid:
        raise ValidationError(invalid.errors) from None
    return gettext("Generation job #%(job)s is queued for %(n)s items.") % {"job": job.pk, "n": len(ids)}


def register_actions() -> None:
    register(
        BulkAction(
            "answer_job",
            _("Start a generation job: a model answers them"),
            _answerable,
            AnswerJobActionForm,
            _start_answer_job,
        )
    )

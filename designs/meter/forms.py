"""The forms of METER's jobs on the generation page."""

from django import forms
from django.utils.translation import gettext_lazy as _

from generation.forms import JobForm
from generation.models import ModelEndpoint


class EndpointsChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, endpoint):
        return endpoint.label


class DecontaminationJobForm(JobForm):
    """METER: ask several models, without the context, whether each waiting pair is causal."""

    voters = EndpointsChoiceField(
        queryset=ModelEndpoint.objects.none(),
        required=False,
        label=_("Also ask"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("The paper asked three models; a pair stays only if every model answers no."),
    )

    def __init__(self, *args, project, endpoints, **kwargs):
        super().__init__(*args, project=project, endpoints=endpoints, **kwargs)
        self.fields["voters"].queryset = endpoints


class MeterQuestionJobForm(JobForm):
    """METER: the L1, L2 and L3 questions of every verified entry, with answers and distractors."""

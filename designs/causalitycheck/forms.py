"""The form of CausalityCheck's checklist job on the generation page."""

from django import forms
from django.utils.translation import gettext_lazy as _

from generation.forms import JobForm


class ChecklistJobForm(JobForm):
    double_prompt = forms.BooleanField(
        label=_("Double prompt"),
        required=False,
        initial=True,
        help_text=_(
            "Correct and corrupted versions in one request (the paper's pass rate rose from 0.29–0.51 to "
            "0.82–0.92)."
        ),
    )

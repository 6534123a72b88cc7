"""The form of the CausalBench jobs on the generation page."""

from django import forms
from django.utils.translation import gettext_lazy as _

from generation.forms import JobForm
from generation.services.jobs import MAX_QUESTIONS


class CausalBenchJobForm(JobForm):
    """One form for the three CausalBench jobs; the items of expansions and checks are chosen for the curator."""

    MODES = [
        ("causalbench_scenario", _("New scenarios, each with its four questions")),
        ("causalbench_expand", _("Imported questions: name the perspective and write the other three")),
        ("causalbench_check", _("A second answer to every question not yet checked (another model)")),
    ]
    mode = forms.ChoiceField(label=_("What to do"), choices=MODES)
    domain = forms.ChoiceField(
        label=_("Domain (new scenarios)"), choices=[("text", "text"), ("math", "math"), ("code", "code")]
    )
    count = forms.IntegerField(
        label=_("How many scenarios"), min_value=1, max_value=MAX_QUESTIONS, initial=5, required=False
    )

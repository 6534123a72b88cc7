from django import forms
from django.utils.translation import gettext_lazy as _

from .releases.splits import SplitRatioError, parse_ratios


class ReleaseForm(forms.Form):
    seed = forms.IntegerField(label=_("Seed"), initial=13, min_value=-(2**31), max_value=2**31 - 1,
                              help_text=_("The same seed and items give the same splits and checksum."))
    train = forms.FloatField(label=_("Train share"), initial=0.8, min_value=0, max_value=1)
    dev = forms.FloatField(label=_("Dev share"), initial=0.1, min_value=0, max_value=1)
    test = forms.FloatField(label=_("Test share"), initial=0.1, min_value=0, max_value=1)
    license = forms.CharField(label=_("License"), initial="cc-by-4.0", max_length=64,
                              help_text=_("A Hugging Face license id, e.g. cc-by-4.0, mit or other."))
    notes = forms.CharField(label=_("Notes for the card"), required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean(self):
        data = super().clean()
        if all(name in data for name in ("train", "dev", "test")):
            try:
                data["split_ratios"] = parse_ratios([data["train"], data["dev"], data["test"]])
            except SplitRatioError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data


class AgreementFilterForm(forms.Form):
    round = forms.TypedChoiceField(label=_("Round"), required=False, coerce=int, empty_value=None)
    by = forms.ChoiceField(label=_("Break down by"), required=False)
    level = forms.ChoiceField(
        label=_("Ratings are"),
        required=False,
        choices=[("ordinal", _("ordinal")), ("interval", _("interval")), ("ratio", _("ratio"))],
    )

    def __init__(self, *args, rounds: list[int], breakdowns: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["round"].choices = [("", _("All rounds"))] + [(n, str(n)) for n in rounds]
        self.fields["by"].choices = [("", _("Nothing"))] + breakdowns

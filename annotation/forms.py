from django import forms
from django.utils.translation import gettext_lazy as _

MAX_IMPORT_BYTES = 200 * 1024 * 1024


class ImportForm(forms.Form):
    file = forms.FileField(
        label=_("File (CSV or JSONL, UTF-8)"),
        help_text=_("Columns: question (required), causal_class, is_causal, source, topic, id, context, answer."),
    )
    skip_invalid = forms.BooleanField(
        label=_("Skip invalid rows"),
        required=False,
        help_text=_("Import the valid rows and list the invalid ones, instead of refusing the whole file."),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size == 0:
            raise forms.ValidationError(_("The file is empty."))
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(_("The file is larger than 200 MB."))
        return upload

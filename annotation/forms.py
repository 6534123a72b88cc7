from django import forms
from django.utils.translation import gettext_lazy as _

from .designs import designs
from .importing.mapping import FIELDS, Mapping, MappingError, parse_values
from .labels import class_label, criterion_label
from .models import Project, default_design

MAX_IMPORT_BYTES = 200 * 1024 * 1024


class ImportForm(forms.Form):
    """The file, and the mapping step the page shows once the file is read (``column_<field>``, ``keep``,
    ``values``); without a mapping posted, the proposal from the column names applies."""

    file = forms.FileField(
        label=_("File"),
        help_text=_(
            "CSV or TSV (UTF-8), JSONL, XLSX, Parquet, or a .zip of a Hugging Face dataset folder "
            "(save_to_disk, or parquet / jsonl splits)."
        ),
    )
    sheet = forms.CharField(
        label=_("Sheet"),
        required=False,
        max_length=200,
        help_text=_("Spreadsheets: the sheet to read (empty: the first)."),
    )
    skip_invalid = forms.BooleanField(
        label=_("Skip invalid rows"),
        required=False,
        help_text=_("Import the valid rows and list the invalid ones, instead of refusing the whole file."),
    )
    as_gold = forms.BooleanField(
        label=_("These items are already reviewed"),
        required=False,
        help_text=_("Import them as approved gold; each gets a curation decision in your name."),
    )
    no_length_bounds = forms.BooleanField(
        label=_("Keep questions of every length"),
        required=False,
        help_text=_("For a curated dataset: no question is dropped as too short or too long."),
    )
    mapping_shown = forms.BooleanField(required=False, widget=forms.HiddenInput)
    values = forms.CharField(
        label=_("The file's own values"),
        required=False,
        max_length=5000,
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": "causal_class:Assoc=associational, Inter=interventional"}
        ),
        help_text=_(
            "FIELD:VALUE=MEANING, separated by commas, e.g. causal_class:Assoc=associational or "
            "answer_by:H=person."
        ),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size == 0:
            raise forms.ValidationError(_("The file is empty."))
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(_("The file is larger than 200 MB."))
        return upload

    def clean_values(self):
        try:
            return parse_values(self.cleaned_data["values"])
        except MappingError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def mapping(self) -> Mapping | None:
        """The mapping the curator chose on the page, or None when the page showed none."""
        if not self.cleaned_data.get("mapping_shown"):
            return None
        columns = {name: self.data.get(f"column_{name}", "") for name in FIELDS}
        return Mapping(
            columns={name: column for name, column in columns.items() if column},
            values=self.cleaned_data["values"],
            keep=self.data.getlist("keep"),
        )


def rating_keys(criterion: dict) -> dict[str, str]:
    """The key that ticks each value of a criterion's scale: the design's (``criterion["keys"]``, ExpliCa's 0 for
    10), else each one-digit value its own digit."""
    low, high = int(criterion.get("min", 1)), int(criterion.get("max", 5))
    keys = {str(value): str(value) for value in range(max(low, 0), min(high, 9) + 1)}
    return {**keys, **{str(value): str(key) for value, key in (criterion.get("keys") or {}).items()}}


class JudgmentForm(forms.Form):
    """Ratings for each of the project's criteria (fields ``rating_<key>``), a vote, a class label, a comment."""

    vote = forms.ChoiceField(label=_("Vote"), widget=forms.RadioSelect)
    causal_class = forms.ChoiceField(label=_("Causal class"), widget=forms.RadioSelect)
    comment = forms.CharField(label=_("Comment"), required=False, max_length=5000, widget=forms.Textarea)

    def __init__(
        self,
        *args,
        project,
        criteria: list[dict] | None = None,
        labels: list[str] | None = None,
        asks_vote: bool = True,
        **kwargs,
    ):
        from .models import Judgment

        super().__init__(*args, **kwargs)
        self.project = project
        self.asks_vote = asks_vote
        self.criteria = project.criteria if criteria is None else criteria
        self.labels = project.label_set if labels is None else labels
        self.fields["vote"].choices = Judgment.Vote.choices
        if not asks_vote:
            del self.fields["vote"]
        self.fields["causal_class"].choices = [(label, class_label(project, label)) for label in self.labels]
        self.fields["causal_class"].required = bool(self.labels)
        for criterion in self.criteria:
            low, high = int(criterion.get("min", 1)), int(criterion.get("max", 5))
            self.fields[f"rating_{criterion['key']}"] = forms.TypedChoiceField(
                label=criterion_label(criterion),
                choices=[(n, str(n)) for n in range(low, high + 1)],
                coerce=int,
                widget=forms.RadioSelect,
                error_messages={"required": _("Rate this criterion.")},
            )

    def criterion_rows(self) -> list[dict]:
        """Each criterion with its choices and which is ticked, ready for the template (and the keyboard)."""
        rows = []
        for number, criterion in enumerate(self.criteria, start=1):
            name = f"rating_{criterion['key']}"
            rows.append(
                {
                    "number": number,
                    "name": name,
                    "key": criterion["key"],
                    **self._choice_row(name, keys=rating_keys(criterion)),
                }
            )
        return rows

    def vote_row(self) -> dict:
        return self._choice_row("vote", keys={"accept": "a", "reject": "r", "needs_revision": "n"})

    def class_row(self) -> dict:
        return self._choice_row(
            "causal_class", keys={label: f"⇧{n}" for n, label in enumerate(self.labels, 1)}
        )

    def _choice_row(self, name: str, keys: dict | None = None) -> dict:
        field = self.fields[name]
        value = self[name].value()
        chosen = "" if value is None else str(value)
        return {
            "name": name,
            "label": field.label,
            "errors": self.errors.get(name, []) if self.is_bound else [],
            "choices": [
                {
                    "value": str(choice),
                    "label": label,
                    "checked": str(choice) == chosen,
                    "id": f"id_{name}_{choice}",
                    "key": (keys or {}).get(str(choice), ""),
                }
                for choice, label in field.choices
            ],
        }

    def ratings(self) -> dict[str, int]:
        return {
            criterion["key"]: self.cleaned_data[f"rating_{criterion['key']}"] for criterion in self.criteria
        }


class AnswerForm(forms.Form):
    answer = forms.CharField(
        label=_("Your answer"), max_length=20000, widget=forms.Textarea(attrs={"rows": 8})
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class SkipForm(forms.Form):
    reason = forms.CharField(
        label=_("Why skip it?"),
        max_length=1000,
        help_text=_("For example: needs expertise I do not have, or the question is unclear."),
        error_messages={"required": _("Say why you skip the question.")},
    )


class PartForm(forms.Form):
    """One text part of an item edited in place (question, context or answer)."""

    value = forms.CharField(
        required=False, max_length=20000, widget=forms.Textarea(attrs={"rows": 4}), strip=True
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args, part: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.part = part

    def clean_value(self):
        value = self.cleaned_data["value"]
        if self.part in ("question", "answer") and not value:
            raise forms.ValidationError(_("This cannot be empty."))
        return value


def options_from_post(data) -> tuple[list[dict], dict[int, str]]:
    """The options of an options edit form (``option-<n>-text/role/rationale``) and errors by position."""
    from .models import Option

    count = 0
    while f"option-{count}-text" in data and count < 26:
        count += 1
    options, errors = [], {}
    for position in range(count):
        text = data.get(f"option-{position}-text", "").strip()
        role = data.get(f"option-{position}-role", Option.Role.OTHER)
        rationale = data.get(f"option-{position}-rationale", "").strip()
        if not text:
            errors[position] = _("An option needs its text.")
        if role not in Option.Role.values:
            errors[position] = _("Unknown role.")
        options.append(
            {
                "text": text,
                "role": role,
                "rationale": rationale,
                "position": position,
                "letter": chr(ord("A") + position),
            }
        )
    return options, errors


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(label=_("Decision"), widget=forms.RadioSelect)
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Required for “revise”: what should change. The rewrite starts from it."),
    )

    def __init__(self, *args, **kwargs):
        from .models import CurationDecision

        super().__init__(*args, **kwargs)
        self.fields["decision"].choices = CurationDecision.Decision.choices

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("decision") == "revise" and not cleaned.get("note", "").strip():
            self.add_error("note", _("Say what should be revised."))
        return cleaned


class ApprovalRuleForm(forms.Form):
    votes = forms.ChoiceField(
        label=_("Votes"),
        choices=[
            ("all_accept", _("every vote is “accept”")),
            ("majority_accept", _("the majority votes “accept”")),
        ],
        initial="all_accept",
    )
    min_mean_rating = forms.FloatField(
        label=_("Every criterion's mean rating at least"),
        required=False,
        min_value=0,
        max_value=100,
        initial=4,
    )
    class_agreed = forms.BooleanField(label=_("Every class label matches the item's class"), required=False)

    def rule(self):
        from .curation import ApprovalRule

        return ApprovalRule(
            votes=self.cleaned_data["votes"],
            min_mean_rating=self.cleaned_data["min_mean_rating"],
            class_agreed=self.cleaned_data["class_agreed"],
        )


PEARL_LABEL_NAMES = {
    "associational": _("associational"),
    "interventional": _("interventional"),
    "counterfactual": _("counterfactual"),
}


class ProjectCreateForm(forms.Form):
    """The "New project" page: a name, a slug, a language and the benchmark design to follow."""

    name = forms.CharField(label=_("Name"), max_length=200)
    slug = forms.SlugField(
        label=_("Slug"),
        max_length=80,
        help_text=_("Letters, digits and hyphens; it names the project in addresses and the API."),
    )
    language = forms.ChoiceField(
        label=_("Language of the items"),
        choices=[("", _("The design's own")), ("pt-BR", "Português (pt-BR)"), ("en", "English (en)")],
        required=False,
        help_text=_("By default, the design's: English for ExpliCa, Portuguese for the others."),
    )
    description = forms.CharField(
        label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    design = forms.ChoiceField(label=_("Design"), widget=forms.RadioSelect)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["design"].choices = [(design.key, design.name) for design in designs()]
        self.fields["design"].initial = default_design()

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if Project.objects.filter(slug=slug).exists():
            raise forms.ValidationError(_("A project with this slug already exists."))
        return slug

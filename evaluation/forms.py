from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.permissions import projects_for_user

from .models import default_metadata_keys
from .releases.options import (
    LICENSE_MAX_LENGTH,
    RELEASE_OPTIONS,
    SEED_MAX,
    SEED_MIN,
    STRATUM_FIELD_MAX_LENGTH,
    TEXT_MAX_LENGTH,
)
from .releases.splits import SplitRatioError, parse_ratios
from .runs.options import RUN_OPTIONS, run_option_bounds
from .runs.reading import condition_name
from .runs.services import template_versions_parse


class ReleaseForm(forms.Form):
    """The options of ``evaluation.releases.options.RELEASE_OPTIONS``, as the API and the command offer them."""

    seed = forms.IntegerField(
        label=_("Seed"),
        initial=RELEASE_OPTIONS["seed"],
        min_value=SEED_MIN,
        max_value=SEED_MAX,
        help_text=_("The same seed and items give the same splits and checksum."),
    )
    train = forms.FloatField(
        label=_("Train share"), initial=RELEASE_OPTIONS["split_ratios"]["train"], min_value=0, max_value=1
    )
    dev = forms.FloatField(
        label=_("Dev share"), initial=RELEASE_OPTIONS["split_ratios"]["dev"], min_value=0, max_value=1
    )
    test = forms.FloatField(
        label=_("Test share"), initial=RELEASE_OPTIONS["split_ratios"]["test"], min_value=0, max_value=1
    )
    license = forms.CharField(
        label=_("License"),
        initial=RELEASE_OPTIONS["license"],
        max_length=LICENSE_MAX_LENGTH,
        help_text=_("A Hugging Face license id, e.g. cc-by-4.0, mit or other."),
    )
    stratify_by = forms.CharField(
        label=_("Subsample: stratify by"),
        required=False,
        max_length=STRATUM_FIELD_MAX_LENGTH,
        help_text=_("An item metadata field, e.g. cell; empty: release every approved item."),
    )
    max_per_stratum = forms.IntegerField(
        label=_("Subsample: items per stratum"),
        required=False,
        min_value=1,
        help_text=_("At most this many items per value of that field, drawn with the seed."),
    )
    citation = forms.CharField(
        label=_("How to cite (BibTeX)"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    notes = forms.CharField(
        label=_("Notes for the card"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def clean(self):
        data = super().clean()
        field, limit = (data.get("stratify_by") or "").strip(), data.get("max_per_stratum")
        if bool(field) != (limit is not None):
            raise forms.ValidationError(
                _("To subsample, give both the field and the number of items per stratum.")
            )
        data["subsample"] = {"field": field, "max_per_stratum": limit} if field else None
        if all(name in data for name in ("train", "dev", "test")):
            try:
                data["split_ratios"] = parse_ratios([data["train"], data["dev"], data["test"]])
            except SplitRatioError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data

    def options(self) -> dict:
        """The cleaned options, named as ``release_create`` takes them."""
        return {name: self.cleaned_data[name] for name in RELEASE_OPTIONS}


class AgreementFilterForm(forms.Form):
    round = forms.TypedChoiceField(label=_("Round"), required=False, coerce=int, empty_value=None)
    by = forms.ChoiceField(label=_("Break down by"), required=False)
    level = forms.ChoiceField(
        label=_("Ratings are"),
        required=False,
        choices=[("ordinal", _("ordinal")), ("interval", _("interval")), ("ratio", _("ratio"))],
    )
    include_own = forms.BooleanField(label=_("Count people's judgments of their own answers"), required=False)

    def __init__(self, *args, rounds: list[int], breakdowns: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["round"].choices = [("", _("All rounds"))] + [(n, str(n)) for n in rounds]
        self.fields["by"].choices = [("", _("Nothing"))] + breakdowns


# The run form's optional fields by group; a design names the groups its runs use (ProjectDesign.run_field_groups).
RUN_FIELD_GROUPS = {
    "judge": ("judge_endpoint",),
    "bertscore": ("bertscore_model", "bertscore_layer", "bertscore_idf"),
    "levels": ("level_key", "type_key"),
    "cells": ("task_key", "variant_key", "differences"),
}


class RunForm(forms.Form):
    """A benchmark run: which release and split, which models, under which conditions, judged by whom."""

    release = forms.ModelChoiceField(label=_("Release"), queryset=None, empty_label=None)
    split = forms.ChoiceField(
        label=_("Split"), choices=[("test", "test"), ("dev", "dev"), ("train", "train")]
    )
    endpoints = forms.ModelMultipleChoiceField(
        label=_("Models to evaluate"), queryset=None, widget=forms.CheckboxSelectMultiple
    )
    conditions = forms.MultipleChoiceField(
        label=_("Prompting conditions"), widget=forms.CheckboxSelectMultiple
    )
    judge_endpoint = forms.ModelChoiceField(
        label=_("Judge"),
        queryset=None,
        required=False,
        empty_label=_("No judge"),
        help_text=_("Open answers: scores each answer and ranks them."),
    )
    repetitions = forms.IntegerField(
        label=_("Repetitions"),
        initial=RUN_OPTIONS["repetitions"],
        **run_option_bounds("repetitions"),
        help_text=_("Each question is asked this many times; figures average them."),
    )
    temperature = forms.FloatField(label=_("Temperature"), required=False, min_value=0, max_value=2)
    max_tokens = forms.IntegerField(label=_("Max tokens"), required=False, min_value=1)
    seed = forms.IntegerField(
        label=_("Seed"),
        initial=RUN_OPTIONS["seed"],
        **run_option_bounds("seed"),
        help_text=_("Seeds the order of answers shown to the judge."),
    )
    few_shot = forms.IntegerField(
        label=_("Few-shot examples"), initial=RUN_OPTIONS["few_shot"], **run_option_bounds("few_shot")
    )
    template_versions = forms.CharField(
        label=_("Template versions"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "One per line, e.g. class-informed = 2. Empty: the latest version of each condition's template."
        ),
    )
    bertscore_model = forms.CharField(
        label=_("BERTScore model directory"),
        required=False,
        help_text=_(
            "A local Hugging Face BERT directory, e.g. a Portuguese BERT; remembered for the project. "
            "Empty: the packaged all-MiniLM-L6-v2, which is English."
        ),
    )
    bertscore_layer = forms.IntegerField(
        label=_("BERTScore layer"),
        required=False,
        **run_option_bounds("bertscore_layer"),
        help_text=_("The hidden layer whose token embeddings are matched. Empty: the model's last."),
    )
    bertscore_idf = forms.BooleanField(
        label=_("BERTScore idf weighting"),
        required=False,
        help_text=_("Weight each token by its idf over the references."),
    )
    level_key = forms.CharField(label=_("Metadata key of the level"), initial="level")
    type_key = forms.CharField(label=_("Metadata key of the question type"), initial="perspective")
    task_key = forms.CharField(label=_("Metadata key of the task"), initial="task")
    variant_key = forms.CharField(label=_("Metadata key of the variant"), initial="variant")
    differences = forms.CharField(
        label=_("Differences between cells"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("One per line, e.g. Challenge 1 = AJ - PJ"),
    )

    def __init__(
        self,
        *args,
        releases,
        endpoints,
        conditions: list[str],
        field_groups=tuple(RUN_FIELD_GROUPS),
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        for group, names in RUN_FIELD_GROUPS.items():
            if group not in field_groups:
                for name in names:
                    del self.fields[name]
        self.fields["release"].queryset = releases
        self.fields["release"].label_from_instance = lambda release: release.tag
        self.fields["endpoints"].queryset = endpoints
        if "judge_endpoint" in self.fields:
            self.fields["judge_endpoint"].queryset = endpoints
        self.fields["conditions"].choices = [(name, condition_name(name)) for name in conditions]
        self.fields["conditions"].initial = (
            conditions[:2] if "class-informed" in conditions else conditions[:1]
        )

    def clean_template_versions(self) -> dict[str, int]:
        try:
            versions = template_versions_parse(self.cleaned_data["template_versions"].splitlines())
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        unknown = sorted(set(versions) - {name for name, _label in self.fields["conditions"].choices})
        if unknown:
            raise forms.ValidationError(_("no such condition: %(names)s") % {"names": ", ".join(unknown)})
        return versions

    def run_options(self) -> dict:
        """The keyword arguments of ``run_create`` this form gathered (defaults for the fields it did not show)."""
        keys = default_metadata_keys()
        data = {
            "judge_endpoint": None,
            "bertscore_model": "",
            "bertscore_layer": None,
            "bertscore_idf": False,
            "differences": "",
            "level_key": keys["level"],
            "type_key": keys["type"],
            "task_key": keys["task"],
            "variant_key": keys["variant"],
            **self.cleaned_data,
        }
        return {
            "release": data["release"],
            "split": data["split"],
            "endpoints": list(data["endpoints"]),
            "conditions": data["conditions"],
            "judge_endpoint": data["judge_endpoint"],
            "repetitions": data["repetitions"],
            "seed": data["seed"],
            "few_shot": data["few_shot"],
            "decoding": {"temperature": data["temperature"], "max_tokens": data["max_tokens"]},
            "template_versions": data["template_versions"],
            "bertscore_model": data["bertscore_model"],
            "bertscore_layer": data["bertscore_layer"],
            "bertscore_idf": data["bertscore_idf"],
            "differences": data["differences"],
            "metadata_keys": {
                "level": data["level_key"],
                "type": data["type_key"],
                "task": data["task_key"],
                "variant": data["variant_key"],
            },
        }


class ResultsImportForm(forms.Form):
    """Results from elsewhere: files of responses, judge scores and rankings become a run (runs.imported)."""

    release = forms.ModelChoiceField(label=_("Release"), queryset=None, empty_label=None)
    split = forms.ChoiceField(
        label=_("Split"), initial="test", choices=[("test", "test"), ("dev", "dev"), ("train", "train")]
    )
    name = forms.CharField(
        label=_("Name"), max_length=200, help_text=_("Where the results come from, e.g. the paper's title.")
    )
    responses = forms.FileField(
        label=_("Responses"),
        help_text=_("item (id or question), model, condition, response; optional repetition."),
    )
    scores = forms.FileField(
        label=_("Judge scores"),
        required=False,
        help_text=_(
            "item, whose answer (a model · condition, or reference), a score per "
            "criterion (or criterion and score), justification, judge."
        ),
    )
    rankings = forms.FileField(
        label=_("Rankings"),
        required=False,
        help_text=_(
            "item, model, the ranking (reference > class-informed > …, or 1st, 2nd, "
            "… columns), optional order shown, judge."
        ),
    )
    columns = forms.CharField(
        label=_("Columns"),
        required=False,
        max_length=1000,
        help_text=_(
            "Only where the names do not tell: ROLE=COLUMN, separated by commas. Roles: item, question, model, "
            "condition, response, repetition, target (whose answer was scored), criterion, score, "
            "justification, judge, ranking, shown. Kept for the project's next import of results."
        ),
    )
    conflicts = forms.ChoiceField(
        label=_("Rows that collide"),
        required=False,
        choices=[
            ("", _("List them and import nothing")),
            ("first", _("Keep the first")),
            ("last", _("Keep the last")),
            ("both", _("Keep both (the later as a judge of its own)")),
        ],
        help_text=_(
            "A row that says otherwise than an earlier row about the same answer (the same judge, criterion, "
            "model and condition). An exact repeat is stored once."
        ),
    )

    def __init__(self, *args, releases=None, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["release"].queryset = releases
        if project is not None:
            from django.urls import reverse

            from annotation.importing.mapping import RESULTS, remembered

            given = remembered(project, RESULTS).get("columns") or {}
            self.fields["columns"].initial = ", ".join(f"{role}={column}" for role, column in given.items())
            # Choosing a file shows the mapping step (evaluation/_results_mapping.html) under the form.
            preview = {
                "hx-post": reverse("evaluation:run_import_preview", args=[project.slug]),
                "hx-trigger": "change",
                "hx-target": "#results-mapping",
                "hx-encoding": "multipart/form-data",
                "hx-include": "#import-results-form",
            }
            for name in ("responses", "scores", "rankings", "columns"):
                self.fields[name].widget.attrs.update(preview)

    def result_uploads(self) -> list:
        """The files chosen, each with its kind, as uploaded (stored as they are; a worker reads them)."""
        from .runs.results_import import ResultUpload

        return [
            ResultUpload(kind=kind, file=upload, name=upload.name[:255])
            for kind in ("responses", "scores", "rankings")
            if (upload := self.cleaned_data.get(kind))
        ]


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        required=False,
        help_text=_("What the token is for, e.g. the script that uses it."),
    )
    projects = forms.ModelMultipleChoiceField(
        label=_("Projects"),
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("The token reaches only these, with your role in each."),
    )
    days = forms.TypedChoiceField(
        label=_("Expires after"),
        coerce=int,
        initial=90,
        choices=[(30, _("30 days")), (90, _("90 days")), (365, _("365 days"))],
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["projects"].queryset = projects_for_user(user).order_by("name")

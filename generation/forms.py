import re

from django import forms
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.fields import empty

from .models import API_KEY_ENV_NAME, ModelEndpoint, ProjectGenerationSettings
from .options import EndpointsField, GroupIdsField, option_fields, options_resolve
from .services.endpoints import key_may_be_sent, project_endpoint_refusal
from .services.jobs import ANSWER_VARIANTS, MAX_BATCH, MAX_QUESTIONS

VARIANT_CHOICES = [
    ("class-agnostic", _("Class-agnostic (the question only)")),
    ("class-informed", _("Class-informed (the causal class and its description added)")),
]
assert [value for value, _label in VARIANT_CHOICES] == list(ANSWER_VARIANTS)


class EndpointChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, endpoint):
        return endpoint.label


class EndpointsChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, endpoint):
        return endpoint.label


def option_form_field(option, *, endpoints) -> forms.Field | None:
    """The page's field for one of a kind's options (``generation.options``), labelled and bounded as the option
    says; None for item groups, which a page leaves to the kind's default (every group waiting)."""
    if isinstance(option, GroupIdsField):
        return None
    default = None if option.default is empty else option.default
    common = {
        "label": capfirst(option.label or option.field_name.replace("_", " ")),
        "help_text": option.help_text or "",
        "initial": default() if callable(default) else default,
    }
    if isinstance(option, EndpointsField):
        return EndpointsChoiceField(
            queryset=endpoints, required=False, widget=forms.CheckboxSelectMultiple, **common
        )
    if isinstance(option, serializers.BooleanField):
        return forms.BooleanField(required=False, **common)
    if isinstance(option, serializers.ChoiceField):
        return forms.ChoiceField(choices=list(option.choices.items()), required=option.required, **common)
    if isinstance(option, serializers.IntegerField):
        bounds = {"min_value": option.min_value, "max_value": option.max_value}
        return forms.IntegerField(required=option.required, **bounds, **common)
    return forms.CharField(required=option.required, **common)


class JobForm(forms.Form):
    """A card's form: the model, the card's own fields, and a field for each option of the card's job kinds that
    the card does not ask itself, built from the kind's options (``JobKind.options``) and checked by them, so the
    page takes what the API and the ``generate`` command take, with the same rules."""

    endpoint = EndpointChoiceField(queryset=ModelEndpoint.objects.none(), label=_("Model"), empty_label=None)

    def __init__(self, *args, project, endpoints, options=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["endpoint"].queryset = endpoints
        # The options classes of the card's kinds; the fields each adds, by option name.
        self.options = [options_class for options_class in options if options_class is not None]
        self.option_names: list[str] = []
        for options_class in self.options:
            for name, option in option_fields(options_class).items():
                option.bind(name, None)
                field = option_form_field(option, endpoints=endpoints)
                if field is not None and name not in self.fields:
                    self.fields[name] = field
                    self.option_names.append(name)

    def clean(self):
        cleaned = super().clean()
        self.resolved_options = {}
        for options_class in self.options:
            names = [name for name in option_fields(options_class) if name in self.option_names]
            given = {name: self._option_value(cleaned[name]) for name in names if name in cleaned}
            given = {name: value for name, value in given.items() if value not in ("", None)}
            checked = options_class(data=given)
            if not checked.is_valid():
                for name, messages in checked.errors.items():
                    self.add_error(
                        name if name in self.fields else None, [str(message) for message in messages]
                    )
                continue
            errors: dict = {}
            values = {name: value for name, value in checked.validated_data.items() if name in given}
            self.resolved_options[options_class] = options_resolve(
                options_class, self.project, values, errors
            )
            for name, message in errors.items():
                self.add_error(name if name in self.fields else None, message)
        return cleaned

    @staticmethod
    def _option_value(value):
        """A field's value as the API sends it (endpoints as ids)."""
        if hasattr(value, "values_list"):
            return list(value.values_list("pk", flat=True))
        return value

    def option_arguments(self, options_class) -> dict:
        """``job_create``'s arguments for the options of one kind that this valid form asks, resolved as the API
        resolves them; an option left empty is left out, so the kind's default applies."""
        return self.resolved_options.get(options_class, {})


class QuestionsJobForm(JobForm):
    causal_class = forms.ChoiceField(label=_("Causal class"))
    topic = forms.ModelChoiceField(
        queryset=None, required=False, label=_("Topic"), empty_label=_("Any subject")
    )
    count = forms.IntegerField(
        label=_("How many questions"), min_value=1, max_value=MAX_QUESTIONS, initial=10
    )
    batch_size = forms.IntegerField(
        label=_("Questions per call"),
        min_value=1,
        max_value=MAX_BATCH,
        initial=10,
        help_text=_("Large requests are split into calls of this size."),
    )
    answer_endpoint = EndpointChoiceField(
        queryset=ModelEndpoint.objects.none(),
        required=False,
        label=_("Answered by"),
        empty_label=_("Nobody yet (the questions wait for an answer)"),
    )
    answer_variant = forms.ChoiceField(label=_("Answer prompt"), choices=VARIANT_CHOICES)

    def __init__(self, *args, project, endpoints, **kwargs):
        super().__init__(*args, project=project, endpoints=endpoints, **kwargs)
        self.fields["causal_class"].choices = [(label, label) for label in project.label_set]
        self.fields["topic"].queryset = project.topics.order_by("label")
        self.fields["answer_endpoint"].queryset = endpoints


class AnswerJobForm(JobForm):
    variant = forms.ChoiceField(label=_("Answer prompt"), choices=VARIANT_CHOICES)
    item_ids = forms.CharField(
        label=_("Items"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Item numbers separated by commas or spaces; empty: every item waiting for an answer."),
    )

    def clean_item_ids(self):
        text = self.cleaned_data["item_ids"].strip()
        if not text:
            return None
        parts = [part for part in re.split(r"[\s,;]+", text) if part]
        bad = [part for part in parts if not part.isdigit()]
        if bad:
            raise forms.ValidationError(_("Not an item number: %(bad)s"), params={"bad": ", ".join(bad[:5])})
        return [int(part) for part in parts]


class DistractorsJobForm(JobForm):
    pass


class EndpointForm(forms.ModelForm):
    class Meta:
        model = ModelEndpoint
        fields = [
            "name",
            "base_url",
            "model",
            "api_key_env",
            "default_params",
            "supports_json_schema",
            "max_concurrency",
            "requests_per_minute",
            "timeout_seconds",
            "max_attempts",
            "max_retries",
            "price_input_per_mtok",
            "price_output_per_mtok",
            "is_active",
        ]
        widgets = {"default_params": forms.Textarea(attrs={"rows": 2})}

    site_wide = forms.BooleanField(
        label=_("Site-wide: offer it to every project"),
        required=False,
        initial=True,
        help_text=_(
            "Site-wide endpoints may use loopback and private addresses: a server on this machine or your "
            "network (Ollama at http://localhost:11434/v1, vLLM, llama.cpp's server)."
        ),
    )

    def __init__(self, *args, project, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        # Only a site admin adds site-wide endpoints, and only when adding (an existing one keeps its scope).
        self.site_admin = bool(user is not None and user.is_superuser and self.instance.pk is None)
        if not self.site_admin:
            del self.fields["site_wide"]
        else:
            self.order_fields(["site_wide", *[name for name in self.fields if name != "site_wide"]])

    @property
    def address_rule(self) -> str:
        """Which address rule applies to the person filling the form, and how to change it."""
        if self.site_admin:
            return _(
                "As a site admin you may add a site-wide endpoint on any address, loopback and private ones "
                "included; an endpoint of this project alone may reach only the addresses the site allows "
                "project endpoints (LLM_ALLOWED_HOSTS)."
            )
        return _(
            "A project's endpoint may reach public addresses only, unless the site lists others in "
            "LLM_ALLOWED_HOSTS. For a server on this machine or a private network (Ollama, vLLM, llama.cpp), "
            "ask a site admin to add it as a site-wide endpoint."
        )

    def is_site_wide(self) -> bool:
        return self.site_admin and bool(self.cleaned_data.get("site_wide"))

    def clean_default_params(self):
        params = self.cleaned_data["default_params"] or {}
        if not isinstance(params, dict):
            raise forms.ValidationError(_('Enter a JSON object, such as {"temperature": 0.7}.'))
        return params

    def clean(self):
        cleaned = self._clean_key()
        base_url = cleaned.get("base_url")
        if base_url and not self.is_site_wide():
            refusal = project_endpoint_refusal(base_url)
            if refusal:
                message = _("This address cannot be used by a project's endpoint: %(reason)s.") % {
                    "reason": refusal
                }
                if self.site_admin:
                    message = f"{message} " + _("Tick “Site-wide” to add it for every project.")
                self.add_error("base_url", message)
        return cleaned

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if self.is_site_wide():
            if ModelEndpoint.objects.filter(project=None, name=name).exists():
                raise forms.ValidationError(_("A site-wide endpoint already has this name."))
            return name
        taken = ModelEndpoint.objects.filter(project=self.project, name=name).exclude(pk=self.instance.pk)
        if taken.exists():
            raise forms.ValidationError(_("This project already has an endpoint with this name."))
        return name

    def _clean_key(self):
        cleaned = super().clean()
        variable, base_url = cleaned.get("api_key_env"), cleaned.get("base_url")
        if variable and not API_KEY_ENV_NAME.regex.match(variable):
            return cleaned  # the field's own validator says what is wrong with the name
        if (
            variable
            and base_url
            and not key_may_be_sent(
                project_id=None if self.is_site_wide() else self.project.pk,
                base_url=base_url,
                api_key_env=variable,
            )
        ):
            self.add_error(
                "api_key_env",
                _(
                    "The server's key in %(variable)s may only go to the addresses an administrator set up for it. "
                    "Leave this empty, or ask an administrator to add a site-wide endpoint for %(url)s."
                )
                % {"variable": variable, "url": base_url},
            )
        return cleaned


class RevisionSettingsForm(forms.ModelForm):
    class Meta:
        model = ProjectGenerationSettings
        fields = ["revise_automatically", "revision_endpoint"]

    def __init__(self, *args, endpoints, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["revision_endpoint"].queryset = endpoints
        self.fields["revision_endpoint"].label_from_instance = lambda endpoint: endpoint.label
        self.fields["revision_endpoint"].empty_label = _("The endpoint from the environment, if any")


def _questions_arguments(project, data) -> dict:
    return {
        "kind": "questions",
        "causal_class": data["causal_class"],
        "topic": data["topic"],
        "count": data["count"],
        "batch_size": data["batch_size"],
        "answer_endpoint": data["answer_endpoint"],
        "answer_variant": data["answer_variant"],
    }


def core_job_pages() -> list:
    """The cards generation itself puts on its page (registered when its app is ready)."""
    from .kinds import JobPage
    from .selectors import distractor_candidates, items_waiting_for_answer

    return [
        JobPage(
            key="questions",
            form=QuestionsJobForm,
            template="generation/jobs/_questions.html",
            kinds=("questions",),
            arguments=_questions_arguments,
        ),
        JobPage(
            key="answer",
            form=AnswerJobForm,
            template="generation/jobs/_answer.html",
            kinds=("answer",),
            context=lambda project: {"waiting": items_waiting_for_answer(project).count()},
            arguments=lambda project, data: {
                "kind": "answer",
                "item_ids": data["item_ids"],
                "answer_variant": data["variant"],
            },
        ),
        JobPage(
            key="distractors",
            form=DistractorsJobForm,
            template="generation/jobs/_distractors.html",
            kinds=("distractors",),
            context=lambda project: {"candidates": distractor_candidates(project).count()},
            arguments=lambda project, data: {"kind": "distractors"},
        ),
    ]

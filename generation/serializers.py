from rest_framework import serializers

from core.api.strict import StrictInputSerializer

from .kinds import job_kinds
from .models import GenerationJob, LLMCall, ModelEndpoint, PromptTemplate
from .options import ID, option_fields
from .services.jobs import ANSWER_VARIANTS


class EndpointOutputSerializer(serializers.ModelSerializer):
    site_wide = serializers.SerializerMethodField()

    class Meta:
        model = ModelEndpoint
        # The key's variable name is shown to owners on their page; the API leaves it out entirely.
        fields = [
            "id",
            "name",
            "model",
            "base_url",
            "supports_json_schema",
            "max_concurrency",
            "requests_per_minute",
            "price_input_per_mtok",
            "price_output_per_mtok",
            "is_active",
            "site_wide",
        ]

    def get_site_wide(self, endpoint) -> bool:
        return endpoint.project_id is None


class TemplateFilterInputSerializer(StrictInputSerializer):
    kind = serializers.CharField(required=False, allow_blank=True, max_length=32, help_text="Only this kind.")
    language = serializers.CharField(
        required=False, allow_blank=True, max_length=16, help_text="Only this language (pt-BR, en…)."
    )
    name = serializers.CharField(
        required=False, allow_blank=True, max_length=100, help_text="Only this variant."
    )


class TemplateOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = PromptTemplate
        fields = [
            "id",
            "kind",
            "name",
            "language",
            "version",
            "system",
            "user",
            "output_schema",
            "notes",
            "created_at",
        ]


class _EndpointRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelEndpoint
        fields = ["id", "name", "model"]


class _TemplateRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = PromptTemplate
        fields = ["id", "kind", "name", "language", "version"]


class JobOutputSerializer(serializers.ModelSerializer):
    endpoint = _EndpointRefSerializer()
    template = _TemplateRefSerializer()
    answer_endpoint = _EndpointRefSerializer(allow_null=True)
    answer_template = _TemplateRefSerializer(allow_null=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    percent = serializers.IntegerField()

    class Meta:
        model = GenerationJob
        fields = [
            "id",
            "kind",
            "status",
            "endpoint",
            "template",
            "answer_endpoint",
            "answer_template",
            "params",
            "total",
            "done",
            "failed",
            "retried",
            "percent",
            "tokens_in",
            "tokens_out",
            "cost",
            "items_created",
            "duplicates_skipped",
            "error",
            "cancel_requested",
            "resumed",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]


# Counts stay within the database's integers, as ids do (``ID``): a larger number is a 400, never an overflow.
NUMBER = {"min_value": -(2**31), "max_value": 2**31 - 1}


class JobCreateInputSerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(
        choices=[], help_text="A registered job kind (generation's and the designs')."
    )
    endpoint = serializers.IntegerField(
        **ID, help_text="Id of a model endpoint of the project or of the site."
    )
    template = serializers.IntegerField(
        **ID, required=False, help_text="Prompt template id; default: the latest of the kind."
    )
    count = serializers.IntegerField(**NUMBER, required=False, help_text="questions: how many to write.")
    causal_class = serializers.CharField(
        required=False, default="", help_text="questions: one of the project's labels."
    )
    topic = serializers.IntegerField(
        **ID, required=False, allow_null=True, help_text="questions: a topic id."
    )
    batch_size = serializers.IntegerField(
        **NUMBER, required=False, default=10, help_text="questions: questions per call."
    )
    answer_endpoint = serializers.IntegerField(
        **ID,
        required=False,
        allow_null=True,
        help_text="questions: an endpoint that answers the new questions.",
    )
    answer_variant = serializers.ChoiceField(
        choices=list(ANSWER_VARIANTS), required=False, default="class-agnostic"
    )
    item_ids = serializers.ListField(
        child=serializers.IntegerField(**ID),
        required=False,
        allow_null=True,
        help_text="The items; default every eligible item (answer: those waiting; distractors: those without).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(kind.key, str(kind.label)) for kind in job_kinds()]
        # each kind's own options (``JobKind.options``); kinds that share an option share its field
        for kind in job_kinds():
            for name, field in option_fields(kind.options).items():
                if name not in self.fields:
                    self.fields[name] = field


class CallOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = LLMCall
        fields = [
            "id",
            "item",
            "purpose",
            "status",
            "n_attempts",
            "tokens_in",
            "tokens_out",
            "cost",
            "latency_ms",
            "parsed",
            "error",
            "finished_at",
        ]

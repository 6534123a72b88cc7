"""Serializers of the evaluation API: separate input and output, and shapes for the documentation."""

from django.core.validators import RegexValidator
from django.urls import reverse
from rest_framework import serializers

from core.api.strict import StrictInputSerializer, cursor_query_field

from .agreement import LEVELS
from .models import Release
from .releases.options import (
    LICENSE_MAX_LENGTH,
    RELEASE_OPTIONS,
    SEED_MAX,
    SEED_MIN,
    STRATUM_FIELD_MAX_LENGTH,
    TEXT_MAX_LENGTH,
)
from .releases.records import FIELDS, OPTION_FIELDS
from .releases.splits import SPLITS, SplitRatioError, parse_ratios
from .runs.options import RUN_OPTIONS, run_option_bounds


class ReleaseOutputSerializer(serializers.ModelSerializer):
    tag = serializers.CharField(read_only=True)
    created_by = serializers.CharField(
        source="created_by.get_username", default=None, allow_null=True, read_only=True
    )
    n_items = serializers.SerializerMethodField()
    splits = serializers.SerializerMethodField(help_text="Items per split.")
    url = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Release
        fields = [
            "version",
            "tag",
            "status",
            "seed",
            "split_ratios",
            "checksum",
            "license",
            "n_items",
            "splits",
            "progress",
            "error",
            "created_by",
            "created_at",
            "finished_at",
            "url",
        ]

    def get_n_items(self, release) -> int:
        return int(release.counts.get("n_items", 0))

    def get_splits(self, release) -> dict[str, int]:
        return {split: int(release.counts.get("splits", {}).get(split, 0)) for split in SPLITS}

    def get_progress(self, release) -> dict:
        return {"stage": release.stage, "items_done": release.done, "items_total": release.total}

    def get_url(self, release) -> str:
        path = reverse("api-release-detail", args=[release.project.slug, release.tag])
        return self.context["request"].build_absolute_uri(path)


class ReleaseDetailOutputSerializer(ReleaseOutputSerializer):
    counts = serializers.JSONField(
        read_only=True, help_text="The card's figures, frozen when the release was cut."
    )
    split_urls = serializers.SerializerMethodField()

    class Meta(ReleaseOutputSerializer.Meta):
        fields = [*ReleaseOutputSerializer.Meta.fields, "notes", "citation", "card", "counts", "split_urls"]

    def get_split_urls(self, release) -> dict[str, str]:
        request = self.context["request"]
        return {
            split: request.build_absolute_uri(
                reverse("api-release-split", args=[release.project.slug, release.tag, split])
            )
            for split in SPLITS
        }


class SplitRatiosInputSerializer(StrictInputSerializer):
    train = serializers.FloatField(min_value=0, max_value=1)
    dev = serializers.FloatField(min_value=0, max_value=1)
    test = serializers.FloatField(min_value=0, max_value=1)


class SubsampleInputSerializer(StrictInputSerializer):
    field = serializers.CharField(
        max_length=STRATUM_FIELD_MAX_LENGTH, help_text="The item metadata field to stratify by, e.g. cell."
    )
    max_per_stratum = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        help_text="At most this many items per value of that field, drawn with the seed.",
    )


class ReleaseCreateInputSerializer(StrictInputSerializer):
    """The options of ``evaluation.releases.options.RELEASE_OPTIONS``, as the page and the command offer them."""

    seed = serializers.IntegerField(
        required=False, default=RELEASE_OPTIONS["seed"], min_value=SEED_MIN, max_value=SEED_MAX
    )
    splits = SplitRatiosInputSerializer(
        required=False, help_text="Shares of train, dev and test; they add up to 1 (default 0.8, 0.1, 0.1)."
    )
    license = serializers.CharField(
        required=False, default=RELEASE_OPTIONS["license"], max_length=LICENSE_MAX_LENGTH
    )
    citation = serializers.CharField(
        required=False, default=RELEASE_OPTIONS["citation"], allow_blank=True, max_length=TEXT_MAX_LENGTH
    )
    notes = serializers.CharField(
        required=False, default=RELEASE_OPTIONS["notes"], allow_blank=True, max_length=TEXT_MAX_LENGTH
    )
    subsample = SubsampleInputSerializer(
        required=False,
        allow_null=True,
        default=RELEASE_OPTIONS["subsample"],
        help_text="Keep at most max_per_stratum approved items per value of an item metadata field.",
    )

    def validate_splits(self, value):
        try:
            return parse_ratios(value)
        except SplitRatioError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def options(self) -> dict:
        """The validated options, named as ``release_create`` takes them."""
        data = dict(self.validated_data)
        data["split_ratios"] = data.pop("splits", None) or dict(RELEASE_OPTIONS["split_ratios"])
        return data


class OptionRecordSerializer(serializers.Serializer):
    letter = serializers.CharField()
    text = serializers.CharField()
    role = serializers.CharField()
    rationale = serializers.CharField()


class ReleaseRecordSerializer(serializers.Serializer):
    """One frozen item, exactly as the release's files hold it."""

    id = serializers.CharField()
    question = serializers.CharField()
    context = serializers.CharField()
    answer = serializers.CharField()
    answer_by = serializers.CharField()
    answer_model = serializers.CharField()
    answer_prompt = serializers.CharField()
    causal_class = serializers.CharField()
    topic = serializers.CharField()
    origin = serializers.CharField()
    source = serializers.CharField()
    group = serializers.CharField()
    position_in_group = serializers.IntegerField()
    options = OptionRecordSerializer(many=True)
    correct_option = serializers.CharField()
    review_rounds = serializers.IntegerField()
    metadata = serializers.CharField(help_text="Other item fields as a JSON object in a string.")

    def to_representation(self, instance):
        return instance.data  # the frozen record, untouched


assert (
    list(ReleaseRecordSerializer().fields) == FIELDS
    and list(OptionRecordSerializer().fields) == OPTION_FIELDS
)


class SplitQueryInputSerializer(StrictInputSerializer):
    format = serializers.ChoiceField(
        choices=["json", "jsonl"], required=False, help_text="`jsonl` streams the whole split as JSON lines."
    )
    cursor = cursor_query_field()
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=1000)


class AgreementQueryInputSerializer(StrictInputSerializer):
    round = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=1_000_000,
        help_text="Only this review round (default: all rounds).",
    )
    by = serializers.CharField(
        required=False,
        max_length=200,
        validators=[
            RegexValidator(
                r"^(round|causal_class|origin|topic|answer_by|meta:.+)$",
                message="Unknown breakdown %(value)r. Choose from: round, causal_class, origin, topic, "
                "answer_by or meta:<key> (an item metadata key).",
            )
        ],
        help_text="Break down by round, causal_class, origin, topic, answer_by or meta:<key> (an item metadata "
        "key; items without it are grouped under —).",
    )
    level = serializers.ChoiceField(
        choices=[level for level in LEVELS if level != "nominal"],
        required=False,
        default="ordinal",
        help_text="Level of measurement of the rating criteria.",
    )


class EstimateSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    ci95 = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    reading = serializers.CharField()
    n_units = serializers.IntegerField()
    note = serializers.CharField()


class PairSerializer(serializers.Serializer):
    raters = serializers.ListField(child=serializers.CharField())
    kappa = serializers.FloatField(allow_null=True)
    ci95 = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    reading = serializers.CharField()
    n_units = serializers.IntegerField()
    note = serializers.CharField()


class CohenSerializer(serializers.Serializer):
    mean = serializers.FloatField(allow_null=True)
    ci95 = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    reading = serializers.CharField()
    n_units = serializers.IntegerField()
    note = serializers.CharField()
    weights = serializers.CharField(allow_null=True)
    pairs = PairSerializer(many=True)


class AgreementRowSerializer(serializers.Serializer):
    criterion = serializers.CharField()
    label = serializers.CharField()
    level = serializers.CharField()
    scale = serializers.ListField(
        child=serializers.JSONField(),
        allow_null=True,
        help_text="The ordered values of the scale, used or not.",
    )
    scale_source = serializers.CharField(help_text="Where the scale came from.")
    n_units = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    krippendorff_alpha = EstimateSerializer()
    fleiss_kappa = EstimateSerializer()
    cohen_kappa = CohenSerializer()


class AgreementSectionSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    n_items = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    rows = AgreementRowSerializer(many=True)


class AgreementOutputSerializer(serializers.Serializer):
    project = serializers.CharField()
    round = serializers.IntegerField(allow_null=True)
    by = serializers.CharField(allow_null=True)
    rating_level = serializers.CharField()
    bootstrap = serializers.JSONField()
    breakdowns = serializers.ListField(child=serializers.CharField())
    sections = AgreementSectionSerializer(many=True)


# --- benchmark runs -----------------------------------------------------------------------------------


class RunCreateInputSerializer(StrictInputSerializer):
    release = serializers.RegexField(
        r"^v?[0-9]{1,9}$", max_length=10, help_text="The release to evaluate on: `v3` or `3`."
    )
    split = serializers.ChoiceField(choices=list(SPLITS), default="test", required=False)
    models = serializers.ListField(
        child=serializers.CharField(max_length=100),
        min_length=1,
        max_length=20,
        help_text="Names (or ids) of the model endpoints to evaluate.",
    )
    conditions = serializers.ListField(
        child=serializers.CharField(max_length=32),
        required=False,
        max_length=5,
        help_text="Open answers: class-agnostic, class-informed; multiple choice: zero-shot, few-shot, "
        "chain-of-thought; yes/no: zero-shot, chain-of-thought. Default: the format's usual ones.",
    )
    judge = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Name (or id) of the judge endpoint (open answers).",
    )
    repetitions = serializers.IntegerField(
        required=False, default=RUN_OPTIONS["repetitions"], **run_option_bounds("repetitions")
    )
    decoding = serializers.DictField(
        required=False,
        default=dict,
        help_text="temperature, top_p, max_tokens, seed for the evaluated models.",
    )
    seed = serializers.IntegerField(required=False, default=RUN_OPTIONS["seed"], **run_option_bounds("seed"))
    few_shot = serializers.IntegerField(
        required=False, default=RUN_OPTIONS["few_shot"], **run_option_bounds("few_shot")
    )
    template_versions = serializers.DictField(
        child=serializers.IntegerField(min_value=1, max_value=2**31 - 1),
        required=False,
        default=dict,
        help_text="Condition → version of its prompt template (default: latest).",
    )
    bertscore_model = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=500,
        help_text="Local BERT directory (default: the project's, else the packaged English MiniLM).",
    )
    bertscore_layer = serializers.IntegerField(
        required=False,
        default=RUN_OPTIONS["bertscore_layer"],
        allow_null=True,
        **run_option_bounds("bertscore_layer"),
        help_text="Hidden layer (default: the model's last).",
    )
    bertscore_idf = serializers.BooleanField(
        required=False, default=False, help_text="Weight tokens by their idf over the references."
    )
    metadata_keys = serializers.DictField(
        child=serializers.CharField(max_length=100),
        required=False,
        default=dict,
        help_text="Item metadata keys of level, type, task and variant.",
    )
    differences = serializers.CharField(required=False, default="", allow_blank=True, max_length=5000)


class RunJudgeInputSerializer(StrictInputSerializer):
    judge = serializers.CharField(
        max_length=100,
        help_text="Name (or id) of the judge endpoint that scores and ranks the run's open answers.",
    )


class RunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    stage = serializers.CharField()
    release = serializers.CharField(source="release.tag")
    split = serializers.CharField()
    answer_format = serializers.CharField()
    conditions = serializers.ListField(child=serializers.CharField())
    models = serializers.SerializerMethodField()
    judge = serializers.CharField(source="judge_endpoint.label", default=None, allow_null=True)
    repetitions = serializers.IntegerField()
    decoding = serializers.DictField()
    seed = serializers.IntegerField()
    error = serializers.CharField()
    bertscore = serializers.JSONField(
        source="bertscore_used",
        help_text="How BERTScore was computed: model, "
        "layer, layers, idf, window, windowed (texts read in windows).",
    )
    notes = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()

    def get_models(self, run) -> list[str]:
        return [endpoint.label for endpoint in run.endpoints.all()]

    def get_url(self, run) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("api-run-detail", args=[run.project.slug, run.pk])
        )


class ReportTableSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField())
    note = serializers.CharField()


class RunDetailOutputSerializer(RunOutputSerializer):
    progress = serializers.DictField(help_text="Calls done and failed, tokens and cost so far, per job.")
    tables = ReportTableSerializer(many=True, help_text="The report's tables, as on the run's page.")
    export_url = serializers.SerializerMethodField()

    def get_export_url(self, run) -> str:
        path = reverse("api-run-export", args=[run.project.slug, run.pk])
        return self.context["request"].build_absolute_uri(path)

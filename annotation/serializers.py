from rest_framework import serializers

from core.api.strict import StrictInputSerializer, cursor_query_field

from .control_items import status_seen
from .designs import design_for, unseen_before_judging
from .models import Item, Judgment, Option, Project
from .permissions import Role, has_role, project_role


class ProjectOutputSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "slug",
            "name",
            "description",
            "language",
            "design",
            "answer_format",
            "label_set",
            "criteria",
            "overlap",
            "overlap_max",
            "overlap_threshold",
            "aggregation",
            "control_rate",
            "class_targets",
            "created_at",
            "role",
        ]

    def get_role(self, project) -> str | None:
        return project_role(self.context["request"].user, project)


class ProjectDetailOutputSerializer(ProjectOutputSerializer):
    item_counts = serializers.SerializerMethodField(help_text="Items by status.")
    class_counts = serializers.SerializerMethodField(help_text="Items by causal class.")
    answer_counts = serializers.SerializerMethodField(
        help_text="The paper's Table 3: per class, items not rejected (count) and who wrote their reference "
        "answer (human, model, or unanswered)."
    )
    origin_counts = serializers.SerializerMethodField(
        help_text="Next to answer_counts: per class, questions not rejected that are natural and those a model "
        "generated (made here, or imported with their origin)."
    )

    class Meta(ProjectOutputSerializer.Meta):
        fields = [
            *ProjectOutputSerializer.Meta.fields,
            "item_counts",
            "class_counts",
            "answer_counts",
            "origin_counts",
        ]

    def get_item_counts(self, project) -> dict[str, int]:
        counts = self.context["counts"]["status"]
        return {value: counts.get(value, 0) for value, _label in Item.Status.choices}

    def get_class_counts(self, project) -> dict[str, int]:
        return self.context["counts"]["class"]

    def get_answer_counts(self, project) -> dict[str, dict[str, int]]:
        return self.context["counts"]["answers"]

    def get_origin_counts(self, project) -> dict[str, dict[str, int]]:
        return self.context["counts"].get("origins", {})


class OptionOutputSerializer(serializers.ModelSerializer):
    letter = serializers.CharField(read_only=True)

    class Meta:
        model = Option
        fields = ["letter", "text", "role", "rationale"]


class JudgmentOutputSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.get_username", read_only=True)

    class Meta:
        model = Judgment
        fields = [
            "id",
            "item",
            "round",
            "annotator",
            "ratings",
            "vote",
            "causal_class",
            "comment",
            "edited",
            "created_at",
        ]


class ItemOutputSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.label", default="", read_only=True)
    group = serializers.SerializerMethodField()
    options = OptionOutputSerializer(many=True, read_only=True)

    class Meta:
        model = Item
        fields = [
            "id",
            "external_id",
            "question",
            "context",
            "causal_class",
            "topic",
            "origin",
            "source",
            "group",
            "position_in_group",
            "reference_answer",
            "answer_by",
            "status",
            "round",
            "version",
            "metadata",
            "options",
            "created_at",
            "updated_at",
        ]

    def get_group(self, item) -> str:
        if item.group is None:
            return ""
        return item.group.external_id or f"group-{item.group_id}"

    def to_representation(self, item):
        data = super().to_representation(item)
        if not self.hides_for_annotators:
            return data
        data["status"] = status_seen(item, curator=self._curator(item))
        hidden = design_for(item.project).hidden_from_annotators(item) | self._unseen(item)
        if "causal_class" in hidden:
            data["causal_class"] = ""
        if "options.role" in hidden:
            data["options"] = [{**option, "role": "", "rationale": ""} for option in data.get("options", [])]
        if "reference_answer" in hidden:
            data["reference_answer"] = ""
        metadata_hidden = {name.removeprefix("metadata.") for name in hidden if name.startswith("metadata.")}
        if metadata_hidden and isinstance(data.get("metadata"), dict):
            data["metadata"] = {
                key: value for key, value in data["metadata"].items() if key not in metadata_hidden
            }
        return data

    hides_for_annotators = True  # annotators get this serializer; curators the one with judgments

    def _curator(self, item) -> bool:
        request = self.context.get("request")
        return request is not None and has_role(request.user, item.project, Role.CURATOR)

    def _unseen(self, item) -> set[str]:
        """The fields the caller is asked to judge and has not judged yet (``judged_item_ids`` in the context)."""
        request = self.context.get("request")
        if request is None:
            return set()
        judged = item.pk in self.context.get("judged_item_ids", ())
        return unseen_before_judging(project=item.project, item=item, user=request.user, judged=judged)


class ItemWithJudgmentsOutputSerializer(ItemOutputSerializer):
    """Curators and owners see every judgment; annotators never get this serializer."""

    judgments = JudgmentOutputSerializer(many=True, read_only=True)
    hides_for_annotators = False

    class Meta(ItemOutputSerializer.Meta):
        fields = [*ItemOutputSerializer.Meta.fields, "judgments"]


class ItemFilterInputSerializer(StrictInputSerializer):
    status = serializers.ChoiceField(choices=Item.Status.choices, required=False)
    # Matched as given: a filter is an exact value, so nothing is trimmed from it (a class or label of spaces
    # alone matches nothing, and is not taken for a missing value).
    causal_class = serializers.CharField(required=False, max_length=64, trim_whitespace=False)
    topic = serializers.CharField(
        required=False, max_length=200, trim_whitespace=False, help_text="A topic label."
    )
    origin = serializers.ChoiceField(choices=Item.Origin.choices, required=False)
    round = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
    cursor = cursor_query_field()
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=1000)

from rest_framework import serializers

from .models import Judgment, Project
from .permissions import project_role


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
            "class_targets",
            "created_at",
            "role",
        ]

    def get_role(self, project) -> str | None:
        return project_role(self.context["request"].user, project)


class JudgmentOutputSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.get_username", read_only=True)

    class Meta:
        model = Judgment
        fields = ["id", "item", "round", "annotator", "ratings", "vote", "causal_class", "comment", "edited",
                  "created_at"]

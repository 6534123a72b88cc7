from rest_framework import serializers

from .models import Project
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

"""REST endpoints of the annotation app. Permission checks go through ``annotation.permissions``."""

from rest_framework import generics
from rest_framework.pagination import CursorPagination

from .models import Judgment
from .permissions import Role, get_item_for_user, get_project_for_user, has_role, projects_for_user
from .serializers import JudgmentOutputSerializer, ProjectOutputSerializer


class BySlugPagination(CursorPagination):
    ordering = "slug"


class ProjectListApi(generics.ListAPIView):
    """The projects the caller belongs to."""

    serializer_class = ProjectOutputSerializer
    pagination_class = BySlugPagination

    def get_queryset(self):
        return projects_for_user(self.request.user).order_by("slug")


class ProjectDetailApi(generics.RetrieveAPIView):
    serializer_class = ProjectOutputSerializer

    def get_object(self):
        return get_project_for_user(self.request.user, self.kwargs["slug"])


class ByIdPagination(CursorPagination):
    ordering = "id"


class ItemJudgmentListApi(generics.ListAPIView):
    """Judgments of one item. Blind: an annotator sees only their own judgments; curators and owners see all."""

    serializer_class = JudgmentOutputSerializer
    pagination_class = ByIdPagination

    def get_queryset(self):
        user = self.request.user
        project = get_project_for_user(user, self.kwargs["slug"])
        item = get_item_for_user(user, project, self.kwargs["item_id"])
        judgments = Judgment.objects.filter(item=item).select_related("annotator")
        if not has_role(user, project, Role.CURATOR):
            judgments = judgments.filter(annotator=user)
        return judgments

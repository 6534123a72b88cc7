"""REST endpoints of the annotation app. Permission checks go through ``annotation.permissions``."""

from rest_framework import generics
from rest_framework.pagination import CursorPagination

from .permissions import get_project_for_user, projects_for_user
from .serializers import ProjectOutputSerializer


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

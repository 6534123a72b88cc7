"""REST endpoints of the annotation app. Permission checks go through ``annotation.permissions``."""

from django.db.models import Count, Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from . import selectors
from .api_permissions import ProjectRole
from .api_strict import CheckedCursorPagination, StrictApiMixin
from .models import Judgment
from .permissions import Role, get_item_for_user, get_project_for_user, has_role, projects_for_user
from .serializers import (
    ItemFilterInputSerializer,
    ItemOutputSerializer,
    ItemWithJudgmentsOutputSerializer,
    JudgmentOutputSerializer,
    ProjectDetailOutputSerializer,
    ProjectOutputSerializer,
)


class BySlugPagination(CheckedCursorPagination):
    ordering = "slug"


class ByIdPagination(CheckedCursorPagination):
    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ProjectListApi(StrictApiMixin, generics.ListAPIView):
    """The projects the caller belongs to."""

    serializer_class = ProjectOutputSerializer
    pagination_class = BySlugPagination

    def get_queryset(self):
        return projects_for_user(self.request.user).order_by("slug")


class ProjectDetailApi(StrictApiMixin, generics.RetrieveAPIView):
    """One project, with its items counted by status and by causal class."""

    serializer_class = ProjectDetailOutputSerializer

    def retrieve(self, request, *args, **kwargs):
        project = get_project_for_user(request.user, kwargs["slug"])
        items = project.items.order_by()
        counts = {
            "status": dict(items.values_list("status").annotate(n=Count("id"))),
            "class": dict(items.values_list("causal_class").annotate(n=Count("id"))),
            "answers": selectors.answer_counts(project),
            "origins": selectors.origin_counts(project),
        }
        context = {**self.get_serializer_context(), "counts": counts}
        return Response(self.get_serializer_class()(project, context=context).data)


@extend_schema(
    responses=ItemWithJudgmentsOutputSerializer(many=True),
    description="Items of the project, oldest first, with cursor pagination. Filters: status, causal_class, "
    "topic (label), origin, round. Curators and owners also get every judgment of each item; annotators "
    "never see judgments here.",
)
class ItemListApi(StrictApiMixin, generics.ListAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    pagination_class = ByIdPagination
    query_serializer_class = ItemFilterInputSerializer

    def get_serializer_class(self):
        if getattr(self, "swagger_fake_view", False):
            return ItemWithJudgmentsOutputSerializer
        if has_role(self.request.user, self.project, Role.CURATOR):
            return ItemWithJudgmentsOutputSerializer
        return ItemOutputSerializer

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False) and not has_role(
            self.request.user, self.project, Role.CURATOR
        ):
            # An annotator sees the fields they are asked to judge only on the items they judged (no anchoring).
            judged = Judgment.objects.filter(item__project=self.project, annotator=self.request.user)
            context["judged_item_ids"] = set(judged.values_list("item_id", flat=True))
        return context

    def get_queryset(self):
        wanted = self.validated_query()
        items = self.project.items.select_related("topic", "group").prefetch_related("options")
        if has_role(self.request.user, self.project, Role.CURATOR):
            items = items.prefetch_related(
                Prefetch(
                    "judgments", queryset=Judgment.objects.select_related("annotator").order_by("round", "id")
                )
            )
        for name in ("status", "causal_class", "origin", "round"):
            if name in wanted:
                items = items.filter(**{name: wanted[name]})
        if "topic" in wanted:
            items = items.filter(topic__label=wanted["topic"])
        return items


class ItemJudgmentListApi(StrictApiMixin, generics.ListAPIView):
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

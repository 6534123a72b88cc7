"""REST endpoints of the annotation app. Permission checks go through ``annotation.permissions``."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count, Prefetch
from django.http import QueryDict
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.strict import CheckedCursorPagination, JsonBoolean, StrictApiMixin, StrictInputSerializer

from . import selectors
from .api_permissions import ProjectRole
from .control_items import item_mark_control, item_unmark_control, with_status_seen
from .models import Judgment, SavedItemView
from .permissions import Role, get_item_for_user, get_project_for_user, has_role, projects_for_user
from .saved_views import saved_view_delete, saved_view_save, saved_views_for
from .serializers import (
    ItemFilterInputSerializer,
    ItemOutputSerializer,
    ItemWithJudgmentsOutputSerializer,
    JudgmentOutputSerializer,
    ProjectDetailOutputSerializer,
    ProjectOutputSerializer,
)
from .work_api import Text


class BySlugPagination(CheckedCursorPagination):
    ordering = "slug"
    position_kind = "slug"


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
        seen = with_status_seen(items, curator=has_role(request.user, project, Role.CURATOR))
        counts = {
            "status": dict(seen.values_list("status_seen").annotate(n=Count("id"))),
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
        if "status" in wanted:  # as the caller sees it: an annotator sees a control item in review
            items = with_status_seen(items, curator=has_role(self.request.user, self.project, Role.CURATOR))
            items = items.filter(status_seen=wanted["status"])
        for name in ("causal_class", "origin", "round"):
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


class ControlItemInputSerializer(serializers.Serializer):
    answers = serializers.DictField(
        child=serializers.CharField(max_length=64),
        required=False,
        help_text="The known answer of each question by key (vote, causal_class, rating:<criterion>); "
        "left out: the item's decision (vote accept, its causal class).",
    )


class ControlItemOutputSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    control_answers = serializers.DictField(child=serializers.CharField(), allow_null=True)


@extend_schema_view(
    post=extend_schema(
        operation_id="item_control_create",
        responses=ControlItemOutputSerializer,
        description="Make an approved item a control item (gold question), served unannounced at the project's "
        "rate. Curators and owners only.",
    ),
    delete=extend_schema(
        operation_id="item_control_destroy",
        responses={200: ControlItemOutputSerializer},
        description="Stop using the item as a control item. Curators and owners only.",
    ),
)
class ItemControlApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"POST": Role.CURATOR, "DELETE": Role.CURATOR}
    body_serializer_classes = {"POST": ControlItemInputSerializer}

    def post(self, request, slug, item_id):
        item = get_item_for_user(request.user, self.project, item_id)
        answers = self.validated_body().get("answers")
        try:
            item = item_mark_control(item=item, answers=answers)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from error
        return Response({"item": item.pk, "control_answers": item.control_answers})

    def delete(self, request, slug, item_id):
        item = item_unmark_control(item=get_item_for_user(request.user, self.project, item_id))
        return Response({"item": item.pk, "control_answers": item.control_answers})


# --- saved views of the items page (annotation.saved_views, the same service as the page) -------------------


class SavedViewInputSerializer(StrictInputSerializer):
    name = Text(max_length=200, help_text="Saving under a name you already use replaces that view.")
    query = Text(
        max_length=4000,
        allow_blank=True,
        help_text="The items page's query string (filter, sort, cols), as in its address after the '?'.",
    )
    shared = JsonBoolean(required=False, default=False, help_text="Offered to the whole project.")


class SavedViewOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username")
    mine = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = SavedItemView
        fields = ["id", "name", "query", "shared", "owner", "mine", "url", "created_at"]

    def get_mine(self, view) -> bool:
        return view.owner_id == self.context["request"].user.pk

    def get_url(self, view) -> str:
        """The items page opened on this view."""
        page = reverse("annotation:items", args=[self.context["project"].slug])
        return self.context["request"].build_absolute_uri(f"{page}?{view.query}" if view.query else page)


@extend_schema_view(
    get=extend_schema(
        operation_id="item_views_list",
        responses=SavedViewOutputSerializer(many=True),
        description="The saved views of the items page the caller can open here: their own and those others "
        "shared with the project. Curators and owners only, as the items page.",
    ),
    post=extend_schema(
        operation_id="item_views_create",
        responses={201: SavedViewOutputSerializer},
        description="Save a view of the items page (replacing the caller's view of the same name). The query is "
        "checked as the page reads it: a bad filter is a 400 naming it.",
    ),
)
class SavedViewListApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.CURATOR, "HEAD": Role.CURATOR, "POST": Role.CURATOR}
    body_serializer_classes = {"POST": SavedViewInputSerializer}

    def get(self, request, slug):
        views = saved_views_for(self.project, request.user)
        return Response(
            SavedViewOutputSerializer(
                views, many=True, context={"request": request, "project": self.project}
            ).data
        )

    def post(self, request, slug):
        data = self.validated_body()
        try:
            view = saved_view_save(
                project=self.project,
                user=request.user,
                name=data["name"],
                params=QueryDict(data["query"]),
                shared=data["shared"],
            )
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from error
        return Response(
            SavedViewOutputSerializer(view, context={"request": request, "project": self.project}).data,
            status=status.HTTP_201_CREATED,
        )


@extend_schema_view(
    delete=extend_schema(
        operation_id="item_views_destroy",
        responses={204: None},
        description="Delete one of the caller's own saved views (a view someone else shared is a 404).",
    ),
)
class SavedViewDetailApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"DELETE": Role.CURATOR}

    def delete(self, request, slug, view_id):
        try:
            saved_view_delete(project=self.project, user=request.user, view_id=view_id)
        except DjangoValidationError as error:
            raise NotFound(error.message_dict["view"][0]) from error
        return Response(status=status.HTTP_204_NO_CONTENT)

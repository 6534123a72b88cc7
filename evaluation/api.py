"""REST endpoints for releases, their splits and agreement. Roles are checked by ``annotation.api_permissions``."""

import json

from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api_permissions import ProjectRole
from annotation.api_strict import StrictQueryMixin
from annotation.permissions import Role

from .models import Release, ReleaseItem
from .releases.export import split_jsonl_stream
from .releases.splits import SPLITS, SplitRatioError
from .selectors import AGREEMENT_BOOTSTRAP, agreement_breakdowns, project_agreement, release_for_user
from .serializers import (
    AgreementOutputSerializer,
    AgreementQueryInputSerializer,
    ReleaseCreateInputSerializer,
    ReleaseDetailOutputSerializer,
    ReleaseOutputSerializer,
    ReleaseRecordSerializer,
    SplitQueryInputSerializer,
)
from .services import ReleaseError, release_create
from .tasks import release_build_task


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the state of the resource."
    default_code = "conflict"


class JSONLinesRenderer(BaseRenderer):
    """``?format=jsonl``: the view streams the records itself; this renders only errors, as one JSON line."""

    media_type = "application/x-ndjson"
    format = "jsonl"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")


class ByVersionPagination(CursorPagination):
    ordering = "-version"
    page_size = 50


class ByPositionPagination(CursorPagination):
    ordering = "position"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


@extend_schema_view(
    get=extend_schema(operation_id="releases_list", responses=ReleaseOutputSerializer(many=True),
                      description="The project's releases, newest first. Any member may read them."),
    post=extend_schema(
        operation_id="releases_create",
        request=ReleaseCreateInputSerializer,
        responses={202: ReleaseOutputSerializer, 409: OpenApiResponse(description="Nothing approved to release.")},
        description="Cut the next release (curators and owners). It is built in the background: poll its URL "
        "until `status` is `ready`.",
    ),
)
class ReleaseListApi(StrictQueryMixin, generics.ListCreateAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.ANNOTATOR, "POST": Role.CURATOR}
    pagination_class = ByVersionPagination
    serializer_class = ReleaseOutputSerializer
    query_params_allowed = {"cursor"}

    def get_queryset(self):
        return Release.objects.filter(project=self.project).select_related("project", "created_by")

    def create(self, request, *args, **kwargs):
        data = ReleaseCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        options["split_ratios"] = options.pop("splits", None)
        try:
            with transaction.atomic():
                release = release_create(project=self.project, user=request.user, **options)
                transaction.on_commit(lambda: release_build_task.delay(release.pk))
        except ReleaseError as exc:
            raise Conflict(str(exc)) from exc
        except SplitRatioError as exc:
            raise ValidationError({"splits": [str(exc)]}) from exc
        body = ReleaseOutputSerializer(release, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


@extend_schema_view(get=extend_schema(
    operation_id="release_retrieve", responses=ReleaseDetailOutputSerializer,
    description="One release (`v3` or `3`): its card, its frozen figures and its checksum.",
))
class ReleaseDetailApi(StrictQueryMixin, generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    serializer_class = ReleaseDetailOutputSerializer

    def get_object(self):
        return release_for_user(self.project, self.kwargs["version"])


@extend_schema_view(get=extend_schema(
    operation_id="release_split_list",
    parameters=[SplitQueryInputSerializer],
    responses={(200, "application/json"): ReleaseRecordSerializer(many=True),
               (200, "application/x-ndjson"): OpenApiTypes.STR},
    description="The frozen records of one split (train, dev or test), paginated; `?format=jsonl` streams the "
    "whole split as JSON lines, byte for byte the release's JSONL file.",
))
class ReleaseSplitApi(StrictQueryMixin, generics.ListAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    serializer_class = ReleaseRecordSerializer
    pagination_class = ByPositionPagination
    renderer_classes = [JSONRenderer, JSONLinesRenderer, BrowsableAPIRenderer]
    query_params_allowed = set(SplitQueryInputSerializer().fields)

    def release_and_split(self) -> tuple[Release, str]:
        split = self.kwargs["split"]
        if split not in SPLITS:
            raise Http404(f"No split {split!r}: the splits are {', '.join(SPLITS)}.")
        release = release_for_user(self.project, self.kwargs["version"])
        if not release.is_ready:
            raise Conflict(f"{release.tag} is {release.get_status_display().lower()}; its splits are not available.")
        return release, split

    def get_queryset(self):
        SplitQueryInputSerializer(data=self.request.query_params).is_valid(raise_exception=True)
        release, split = self.release_and_split()
        return ReleaseItem.objects.filter(release=release, split=split).only("data", "position")

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format == "jsonl":
            release, split = self.release_and_split()
            response = StreamingHttpResponse(split_jsonl_stream(release, split), content_type="application/x-ndjson")
            response["Content-Disposition"] = f'inline; filename="{release.project.slug}-{release.tag}-{split}.jsonl"'
            return response
        return super().list(request, *args, **kwargs)


@extend_schema_view(get=extend_schema(
    operation_id="agreement_retrieve",
    parameters=[AgreementQueryInputSerializer],
    responses=AgreementOutputSerializer,
    description="Agreement between annotators per criterion (vote, class label, each rating), over all rounds "
    "or one, optionally broken down by an item field. Curators and owners only.",
))
class AgreementApi(StrictQueryMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.CURATOR}
    query_params_allowed = set(AgreementQueryInputSerializer().fields)

    def get(self, request, slug):
        query = AgreementQueryInputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        wanted = query.validated_data
        breakdowns = [key for key, _label in agreement_breakdowns(self.project)]
        by = wanted.get("by")
        if by and by not in breakdowns:
            raise ValidationError({"by": [f"Unknown breakdown {by!r}. Choose from: {', '.join(breakdowns)}."]})
        sections = project_agreement(self.project, round=wanted.get("round"), by=by, rating_level=wanted["level"])
        body = {
            "project": self.project.slug,
            "round": wanted.get("round"),
            "by": by,
            "rating_level": wanted["level"],
            "bootstrap": AGREEMENT_BOOTSTRAP.as_dict(),
            "breakdowns": breakdowns,
            "sections": [section.as_dict() for section in sections],
        }
        return Response(AgreementOutputSerializer(body).data)

"""REST endpoints for releases, their splits and agreement. Roles are checked by ``annotation.api_permissions``."""

import json

from django.http import Http404, HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api_permissions import ProjectRole
from annotation.permissions import Role
from core.api.schema import ErrorOutputSerializer
from core.api.strict import CheckedCursorPagination, StrictApiMixin
from generation.selectors import endpoint_named

from .models import Release, ReleaseItem
from .quality.aggregation import METHODS
from .quality.selectors import project_quality
from .releases.export import ExportError, design_file_chunks, design_files, harness_zip, split_jsonl_stream
from .releases.harnesses import HARNESSES
from .releases.splits import SPLITS, SplitRatioError
from .runs.export import run_jsonl
from .runs.report import report_tables
from .runs.services import RunInvalid, run_cancel, run_create, run_judge
from .selectors import (
    AGREEMENT_BOOTSTRAP,
    agreement_breakdowns,
    project_agreement,
    release_for_user,
    run_for_project,
    run_progress,
    runs_for_project,
)
from .serializers import (
    AgreementOutputSerializer,
    AgreementQueryInputSerializer,
    ReleaseCreateInputSerializer,
    ReleaseDetailOutputSerializer,
    ReleaseOutputSerializer,
    ReleaseRecordSerializer,
    RunCreateInputSerializer,
    RunDetailOutputSerializer,
    RunJudgeInputSerializer,
    RunOutputSerializer,
    SplitQueryInputSerializer,
)
from .services import ReleaseError, release_request


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


NOT_READY = OpenApiResponse(
    ErrorOutputSerializer, description="The release is not built (yet, or it failed)."
)


class ByVersionPagination(CheckedCursorPagination):
    ordering = "-version"
    page_size = 50


class ByPositionPagination(CheckedCursorPagination):
    ordering = "position"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


@extend_schema_view(
    get=extend_schema(
        operation_id="releases_list",
        responses=ReleaseOutputSerializer(many=True),
        description="The project's releases, newest first. Any member may read them.",
    ),
    post=extend_schema(
        operation_id="releases_create",
        responses={
            202: ReleaseOutputSerializer,
            409: OpenApiResponse(ErrorOutputSerializer, description="Nothing approved to release."),
        },
        description="Cut the next release (curators and owners). It is built in the background: poll its URL "
        "until `status` is `ready`.",
    ),
)
class ReleaseListApi(StrictApiMixin, generics.ListCreateAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.ANNOTATOR, "POST": Role.CURATOR}
    pagination_class = ByVersionPagination
    serializer_class = ReleaseOutputSerializer
    body_serializer_classes = {"POST": ReleaseCreateInputSerializer}

    def get_queryset(self):
        return Release.objects.filter(project=self.project).select_related("project", "created_by")

    def create(self, request, *args, **kwargs):
        data = self.body_serializer_classes["POST"](data=request.data)
        data.is_valid(raise_exception=True)
        try:
            release = release_request(project=self.project, user=request.user, **data.options())
        except ReleaseError as exc:
            raise Conflict(str(exc)) from exc
        except SplitRatioError as exc:
            raise ValidationError({"splits": [str(exc)]}) from exc
        body = ReleaseOutputSerializer(release, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


@extend_schema_view(
    get=extend_schema(
        operation_id="release_retrieve",
        responses=ReleaseDetailOutputSerializer,
        description="One release (`v3` or `3`): its card, its frozen figures and its checksum.",
    )
)
class ReleaseDetailApi(StrictApiMixin, generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    serializer_class = ReleaseDetailOutputSerializer

    def get_object(self):
        return release_for_user(self.project, self.kwargs["version"])


@extend_schema_view(
    get=extend_schema(
        operation_id="release_split_list",
        responses={
            (200, "application/json"): ReleaseRecordSerializer(many=True),
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            409: NOT_READY,
        },
        description="The frozen records of one split (train, dev or test), paginated; `?format=jsonl` streams the "
        "whole split as JSON lines, byte for byte the release's JSONL file.",
    )
)
class ReleaseSplitApi(StrictApiMixin, generics.ListAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    serializer_class = ReleaseRecordSerializer
    pagination_class = ByPositionPagination
    renderer_classes = [JSONRenderer, JSONLinesRenderer, BrowsableAPIRenderer]
    query_serializer_class = SplitQueryInputSerializer

    def release_and_split(self) -> tuple[Release, str]:
        split = self.kwargs["split"]
        if split not in SPLITS:
            raise Http404(f"No split {split!r}: the splits are {', '.join(SPLITS)}.")
        release = release_for_user(self.project, self.kwargs["version"])
        if not release.is_ready:
            raise Conflict(
                f"{release.tag} is {release.get_status_display().lower()}; its splits are not available."
            )
        return release, split

    def get_queryset(self):
        self.validated_query()
        release, split = self.release_and_split()
        return ReleaseItem.objects.filter(release=release, split=split).only("data", "position")

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format == "jsonl":
            release, split = self.release_and_split()
            response = StreamingHttpResponse(
                split_jsonl_stream(release, split), content_type="application/x-ndjson"
            )
            response["Content-Disposition"] = (
                f'inline; filename="{release.project.slug}-{release.tag}-{split}.jsonl"'
            )
            return response
        return super().list(request, *args, **kwargs)


@extend_schema_view(
    get=extend_schema(
        operation_id="agreement_retrieve",
        responses=AgreementOutputSerializer,
        description="Agreement between annotators per criterion (vote, class label, each rating), over all rounds "
        "or one, optionally broken down by an item field. Curators and owners only.",
    )
)
class AgreementApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.CURATOR}
    query_serializer_class = AgreementQueryInputSerializer

    def get(self, request, slug):
        wanted = self.validated_query()
        breakdowns = [key for key, _label in agreement_breakdowns(self.project)]
        by = wanted.get("by")
        sections = project_agreement(
            self.project, round=wanted.get("round"), by=by, rating_level=wanted["level"]
        )
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


@extend_schema_view(
    get=extend_schema(
        operation_id="release_design_file_retrieve",
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            409: NOT_READY,
        },
        description="One file of the project's design (for METER `meter/<split>.jsonl` with the paper's field "
        "names), byte for byte the file in the release's zip and its checksums.",
    )
)
class ReleaseDesignFileApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]

    def get(self, request, slug, version, path):
        release = release_for_user(self.project, version)
        if not release.is_ready:
            raise Conflict(
                f"{release.tag} is {release.get_status_display().lower()}; its files are not available."
            )
        files = {export_file.path: export_file for export_file in design_files(release)}
        if path not in files:
            known = ", ".join(files) or "none"
            raise Http404(f"{release.tag} has no design file {path!r}; its design files: {known}.")
        content_type = "application/x-ndjson" if path.endswith(".jsonl") else "text/csv; charset=utf-8"
        response = StreamingHttpResponse(design_file_chunks(files[path]), content_type=content_type)
        filename = f"{release.project.slug}-{release.tag}-{path.replace('/', '-')}"
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        return response


@extend_schema_view(
    get=extend_schema(
        operation_id="release_harness_retrieve",
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            404: ErrorOutputSerializer,
            409: NOT_READY,
        },
        description="The release as an lm-evaluation-harness (`lm-eval`) or Inspect (`inspect`) task folder, zipped: "
        "byte for byte that folder of the release's zip.",
    )
)
class ReleaseHarnessApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]

    def get(self, request, slug, version, harness):
        release = release_for_user(self.project, version)
        if not release.is_ready:
            raise Conflict(
                f"{release.tag} is {release.get_status_display().lower()}; its files are not available."
            )
        if harness not in HARNESSES:
            raise Http404(f"no harness {harness!r}; choose {', '.join(HARNESSES)}.")
        try:
            data = harness_zip(release, harness)
        except ExportError as exc:
            raise Conflict(f"{release.tag} cannot be run in a harness: {exc}") from exc
        response = HttpResponse(data, content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="{self.project.slug}-{release.tag}-{harness}.zip"'
        )
        return response


# --- benchmark runs -----------------------------------------------------------------------------------


class NewestFirstPagination(CheckedCursorPagination):
    # Ids grow with creation: newest first, with a cursor of whole numbers.
    ordering = "-id"
    page_size = 50


def _endpoint_named(project, name: str, field: str):
    try:
        return endpoint_named(project, name)
    except LookupError as exc:
        raise ValidationError({field: [f"{str(exc)[0].upper()}{str(exc)[1:]}."]}) from exc


@extend_schema_view(
    get=extend_schema(
        operation_id="runs_list",
        responses=RunOutputSerializer(many=True),
        description="The project's benchmark runs, newest first. Any member may read them.",
    ),
    post=extend_schema(
        operation_id="runs_create",
        responses={202: RunOutputSerializer},
        description="Start a benchmark run (curators and owners): the models answer the release split under the "
        "conditions, a judge scores and ranks open answers. It runs in the background: poll its URL.",
    ),
)
class RunListApi(StrictApiMixin, generics.ListCreateAPIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.ANNOTATOR, "POST": Role.CURATOR}
    pagination_class = NewestFirstPagination
    serializer_class = RunOutputSerializer
    body_serializer_classes = {"POST": RunCreateInputSerializer}

    def get_queryset(self):
        return runs_for_project(self.project).select_related("project")

    def create(self, request, *args, **kwargs):
        options = dict(self.validated_body())
        release = release_for_user(self.project, options.pop("release"))
        models = [_endpoint_named(self.project, name, "models") for name in options.pop("models")]
        judge = options.pop("judge", "")
        try:
            run = run_create(
                project=self.project,
                release=release,
                endpoints=models,
                user=request.user,
                judge_endpoint=_endpoint_named(self.project, judge, "judge") if judge else None,
                **options,
            )
        except RunInvalid as exc:
            raise ValidationError({field: [message] for field, message in exc.errors.items()}) from exc
        body = RunOutputSerializer(run, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


@extend_schema_view(
    get=extend_schema(
        operation_id="run_retrieve",
        responses=RunDetailOutputSerializer,
        description="One run: its settings, progress and cost so far, and the report's tables (as on its page).",
    )
)
class RunDetailApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]

    def get(self, request, slug, run_id):
        run = run_for_project(self.project, run_id)
        run.progress = run_progress(run).as_dict()
        run.tables = [table.as_dict() for table in report_tables([run])]
        return Response(RunDetailOutputSerializer(run, context={"request": request}).data)


@extend_schema_view(
    post=extend_schema(
        operation_id="run_cancel",
        responses=RunOutputSerializer,
        description="Cancel a run (curators and owners): calls under way finish, no new call is made.",
    )
)
class RunCancelApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"POST": Role.CURATOR}

    def post(self, request, slug, run_id):
        run = run_cancel(run=run_for_project(self.project, run_id))
        return Response(RunOutputSerializer(run, context={"request": request}).data)


@extend_schema_view(
    post=extend_schema(
        operation_id="run_judge",
        request=RunJudgeInputSerializer,
        responses={202: RunOutputSerializer},
        description="Judge a finished run's open answers (curators and owners) — one imported from a harness's "
        "logs or a results file, or one made without a judge: the judge scores and ranks them in the "
        "background, as in a run started with it; poll the run's URL. Refused (400) when the run has no open "
        "answers, is not finished, or already carries this judge's scores.",
    )
)
class RunJudgeApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"POST": Role.CURATOR}
    body_serializer_classes = {"POST": RunJudgeInputSerializer}

    def post(self, request, slug, run_id):
        run = run_for_project(self.project, run_id)
        judge = _endpoint_named(self.project, self.validated_body()["judge"], "judge")
        try:
            run = run_judge(run=run, judge_endpoint=judge, user=request.user)
        except RunInvalid as exc:
            raise ValidationError(
                {
                    "judge" if field == "judge_endpoint" else field: [message]
                    for field, message in exc.errors.items()
                }
            ) from exc
        body = RunOutputSerializer(run, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


@extend_schema_view(
    get=extend_schema(
        operation_id="run_export",
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
        description="The whole run as JSON lines: the run, then every response, judge score and ranking with its call.",
    )
)
class RunExportApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    renderer_classes = [JSONLinesRenderer, JSONRenderer]

    def get(self, request, slug, run_id):
        run = run_for_project(self.project, run_id)
        response = StreamingHttpResponse(run_jsonl(run), content_type="application/x-ndjson")
        response["Content-Disposition"] = f'inline; filename="{run.project.slug}-run{run.pk}.jsonl"'
        return response


class QualityOutputSerializer(serializers.Serializer):
    project = serializers.CharField()
    aggregation = serializers.CharField(
        help_text="The project's aggregation proposing the labels: " + ", ".join(METHODS) + "."
    )
    questions = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per question: items, judgments, control items; per item the majority and each method's label "
        "with its probability; per annotator the competence by each method with its 95% interval, MACE's spam "
        "score, accuracy on control items and the items where they stand alone.",
    )


@extend_schema_view(
    get=extend_schema(
        operation_id="quality_retrieve",
        responses=QualityOutputSerializer,
        description="Label aggregation with annotator models (majority vote, Dawid–Skene, MACE) for every "
        "categorical question of the project's design, over each item's current round. Curators and owners only.",
    )
)
class QualityApi(StrictApiMixin, APIView):
    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {"GET": Role.CURATOR}

    def get(self, request, slug):
        body = {"project": self.project.slug, **project_quality(self.project).as_dict()}
        return Response(QualityOutputSerializer(body).data)

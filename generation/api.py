"""REST endpoints of the generation app: jobs (start, follow, cancel), their calls, endpoints, templates."""

from django.db.models import Q
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.permissions import Role, get_project_for_user
from core.api.strict import CheckedCursorPagination, StrictApiMixin

from . import selectors
from .kinds import job_kind as job_kind_for
from .models import ModelEndpoint, PromptTemplate
from .options import options_resolve
from .serializers import (
    CallOutputSerializer,
    EndpointOutputSerializer,
    JobCreateInputSerializer,
    JobOutputSerializer,
    TemplateFilterInputSerializer,
    TemplateOutputSerializer,
)
from .services import JobInvalid, job_cancel, job_create, job_retry_failed


class NewestFirst(CheckedCursorPagination):
    ordering = "-pk"


class OldestFirst(CheckedCursorPagination):
    ordering = "pk"


class JobListCreateApi(StrictApiMixin, generics.ListAPIView):
    """A project's generation jobs (newest first); POST starts one. Curators and owners."""

    serializer_class = JobOutputSerializer
    pagination_class = NewestFirst

    def get_queryset(self):
        project = get_project_for_user(self.request.user, self.kwargs["slug"], Role.CURATOR)
        return selectors.jobs_for_project(project).select_related("answer_template")

    body_serializer_classes = {"POST": JobCreateInputSerializer}

    @extend_schema(operation_id="jobs_create", responses={201: JobOutputSerializer})
    def post(self, request, slug):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        data = self.validated_body()
        usable = selectors.endpoints_for_project(project)
        errors = {}
        endpoint = usable.filter(pk=data["endpoint"]).first()
        answer_endpoint = None
        if data.get("answer_endpoint") is not None:
            answer_endpoint = usable.filter(pk=data["answer_endpoint"]).first()
            if answer_endpoint is None:
                errors["answer_endpoint"] = ["no active endpoint with this id for the project"]
        job_kind = job_kind_for(data["kind"])
        own = options_resolve(job_kind.options, project, data, errors)
        template = None
        if data.get("template") is not None:
            template = PromptTemplate.objects.filter(pk=data["template"]).first()
            if template is None:
                errors["template"] = ["no prompt template with this id"]
        topic = None
        if data.get("topic") is not None:
            topic = project.topics.filter(pk=data["topic"]).first()
            if topic is None:
                errors["topic"] = ["no topic with this id in the project"]
        if endpoint is None:
            errors["endpoint"] = ["no active endpoint with this id for the project"]
        if errors:
            return Response(
                {
                    field: problem if isinstance(problem, list) else [problem]
                    for field, problem in errors.items()
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            job = job_create(
                project=project,
                kind=data["kind"],
                endpoint=endpoint,
                user=request.user,
                template=template,
                count=data.get("count"),
                causal_class=data["causal_class"],
                topic=topic,
                batch_size=data["batch_size"],
                item_ids=data.get("item_ids"),
                answer_endpoint=answer_endpoint,
                answer_variant=data["answer_variant"],
                **own,
            )
        except JobInvalid as exc:
            return Response(
                {field: [message] for field, message in exc.errors.items()},
                status=status.HTTP_400_BAD_REQUEST,
            )
        job = selectors.job_for_project(project, job.pk)
        return Response(JobOutputSerializer(job).data, status=status.HTTP_201_CREATED)


class JobDetailApi(StrictApiMixin, generics.RetrieveAPIView):
    serializer_class = JobOutputSerializer

    def get_object(self):
        project = get_project_for_user(self.request.user, self.kwargs["slug"], Role.CURATOR)
        return selectors.job_for_project(project, self.kwargs["job_id"])


class JobCancelApi(StrictApiMixin, APIView):
    """Stop a job: a queued one at once, a running one makes no new calls."""

    @extend_schema(responses={200: JobOutputSerializer})
    def post(self, request, slug, job_id):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        job = job_cancel(job=selectors.job_for_project(project, job_id))
        return Response(JobOutputSerializer(selectors.job_for_project(project, job.pk)).data)


class JobRetryApi(StrictApiMixin, APIView):
    """Make a finished job's failed and unmade calls; ``retried`` says how many (0: running, or all done)."""

    @extend_schema(responses={200: JobOutputSerializer})
    def post(self, request, slug, job_id):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        retried = job_retry_failed(job=selectors.job_for_project(project, job_id))
        data = JobOutputSerializer(selectors.job_for_project(project, job_id)).data
        return Response({**data, "retried": retried})


class JobCallListApi(StrictApiMixin, generics.ListAPIView):
    """The model calls of a job, with their parsed outputs (the call page has prompts and raw output)."""

    serializer_class = CallOutputSerializer
    pagination_class = OldestFirst

    def get_queryset(self):
        project = get_project_for_user(self.request.user, self.kwargs["slug"], Role.CURATOR)
        job = selectors.job_for_project(project, self.kwargs["job_id"])
        return job.calls.defer("request", "attempts", "raw_response")


class EndpointListApi(StrictApiMixin, generics.ListAPIView):
    """The active model endpoints a project's jobs may use (its own and the site's)."""

    serializer_class = EndpointOutputSerializer
    pagination_class = OldestFirst

    def get_queryset(self):
        project = get_project_for_user(self.request.user, self.kwargs["slug"], Role.CURATOR)
        return ModelEndpoint.objects.filter(Q(project__isnull=True) | Q(project=project), is_active=True)


class TemplateListApi(StrictApiMixin, generics.ListAPIView):
    """Every version of every prompt template; filter with ?kind=…&language=…."""

    serializer_class = TemplateOutputSerializer
    pagination_class = OldestFirst
    query_serializer_class = TemplateFilterInputSerializer

    def get_queryset(self):
        templates = PromptTemplate.objects.all()
        for name, value in self.validated_query().items():
            if value:
                templates = templates.filter(**{name: value})
        return templates

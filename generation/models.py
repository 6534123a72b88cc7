"""Model endpoints, prompt templates, generation jobs and the record of every model call."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Project


class ModelEndpoint(models.Model):
    """Any server that speaks the OpenAI chat-completions API. The key stays in the environment."""

    name = models.CharField(max_length=100, unique=True)
    base_url = models.URLField(max_length=500)
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        _("environment variable holding the API key"), max_length=100, blank=True, default="LLM_API_KEY"
    )
    default_params = models.JSONField(
        default=dict, blank=True, help_text=_('For example {"temperature": 0.7, "max_tokens": 1024, "seed": 1}.')
    )
    supports_json_schema = models.BooleanField(
        _("supports structured output"), default=True, help_text=_("Send response_format with the JSON schema.")
    )
    max_concurrency = models.PositiveIntegerField(default=4)
    requests_per_minute = models.PositiveIntegerField(default=600)
    timeout_seconds = models.FloatField(default=60.0)
    price_input_per_mtok = models.DecimalField(
        _("price per million input tokens"), max_digits=10, decimal_places=4, default=Decimal("0")
    )
    price_output_per_mtok = models.DecimalField(
        _("price per million output tokens"), max_digits=10, decimal_places=4, default=Decimal("0")
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_positive")]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"


class PromptTemplate(models.Model):
    """One immutable version of a prompt; a change is a new version, and every call names its version."""

    class Kind(models.TextChoices):
        QUESTIONS = "questions", _("New questions of a class")
        ANSWER = "answer", _("Answer a question")
        DISTRACTORS = "distractors", _("Distractors")
        REVISION = "revision", _("Revise an answer from feedback")
        BENCHMARK_ANSWER = "benchmark_answer", _("Benchmark answer")
        JUDGE_SCORE = "judge_score", _("Judge: score an answer")
        JUDGE_RANKING = "judge_ranking", _("Judge: rank answers")
        OTHER = "other", _("Other")

    kind = models.CharField(max_length=32, choices=Kind.choices)
    name = models.CharField(max_length=100, help_text=_("Variant within a kind, e.g. class-agnostic."))
    language = models.CharField(max_length=16, default="pt-BR")
    version = models.PositiveIntegerField(default=1)
    system = models.TextField(blank=True)
    user = models.TextField()
    output_schema = models.JSONField(default=dict, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name", "language", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "name", "language", "version"], name="prompt_template_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}/{self.name} [{self.language}] v{self.version}"


class GenerationJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="generation_jobs")
    kind = models.CharField(max_length=32, choices=PromptTemplate.Kind.choices)
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="jobs")
    template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="jobs")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    retried = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat")]

    def __str__(self) -> str:
        return f"{self.kind} job #{self.pk} ({self.status})"


class LLMCall(models.Model):
    """One model call and all its attempts. Unique per (job, item, purpose): never paid for twice."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    job = models.ForeignKey(GenerationJob, null=True, blank=True, on_delete=models.CASCADE, related_name="calls")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls")
    purpose = models.CharField(max_length=100)
    endpoint = models.ForeignKey(ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="calls")
    template = models.ForeignKey(PromptTemplate, null=True, on_delete=models.SET_NULL, related_name="calls")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    request = models.JSONField(default=dict, blank=True)
    attempts = models.JSONField(default=list, blank=True, help_text=_("Raw response or error of every attempt."))
    raw_response = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    n_attempts = models.PositiveSmallIntegerField(default=0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["job", "status"], name="llmcall_job_status")]
        constraints = [
            models.UniqueConstraint(fields=["job", "item", "purpose"], name="llmcall_unique_job_item_purpose"),
            # NULL items are distinct in a plain unique index; this keeps item-less calls unique too.
            models.UniqueConstraint(
                fields=["job", "purpose"], condition=Q(item__isnull=True), name="llmcall_unique_job_purpose_no_item"
            ),
        ]

    def __str__(self) -> str:
        return f"call #{self.pk} {self.purpose}"

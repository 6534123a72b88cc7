"""Model endpoints, prompt templates, generation jobs and the record of every model call."""

from decimal import Decimal
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from annotation.models import Item, Project
from core.background import BackgroundWork, WorkProgress

# Only variables named like API keys may be named, so an endpoint cannot be pointed at
# SECRET_KEY, DATABASE_URL or any other secret of the site and send it to a server.
API_KEY_ENV_NAME = RegexValidator(
    r"^([A-Z][A-Z0-9_]*API_KEY)?$",
    _("Use the name of an environment variable ending in API_KEY, such as LLM_API_KEY or OPENAI_API_KEY."),
)


def validate_base_url(value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(_("Enter an http:// or https:// address, such as http://localhost:8000/v1."))


class ModelEndpoint(models.Model):
    """Any server that speaks the OpenAI chat-completions API. The key stays in the environment.

    An endpoint without a project is available to every project (an admin sets it up, or the
    environment does: LLM_BASE_URL, LLM_MODEL, LLM_API_KEY); a project's owners may add their own.
    """

    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="model_endpoints",
        help_text=_("Empty: available to every project."),
    )
    name = models.CharField(_("name"), max_length=100)
    # Not a URLField: its validator refuses host names without a dot, such as a compose service "vllm".
    base_url = models.CharField(
        _("base URL"),
        max_length=500,
        validators=[validate_base_url],
        help_text=_("For example https://api.openai.com/v1 or http://localhost:11434/v1."),
    )
    model = models.CharField(_("model"), max_length=200)
    api_key_env = models.CharField(
        _("environment variable holding the API key"),
        max_length=100,
        blank=True,
        default="LLM_API_KEY",
        validators=[API_KEY_ENV_NAME],
        help_text=_("The key itself is never stored; leave empty for servers that need none."),
    )
    default_params = models.JSONField(
        _("default parameters"),
        default=dict,
        blank=True,
        help_text=_('For example {"temperature": 0.7, "max_tokens": 1024, "seed": 1}.'),
    )
    supports_json_schema = models.BooleanField(
        _("supports structured output"),
        default=True,
        help_text=_("Send response_format with the JSON schema."),
    )
    max_concurrency = models.PositiveIntegerField(
        _("max concurrent calls"), default=4, validators=[MinValueValidator(1)]
    )
    requests_per_minute = models.PositiveIntegerField(
        _("requests per minute"), default=600, help_text=_("0 means no limit.")
    )
    timeout_seconds = models.FloatField(
        _("timeout (seconds)"), default=60.0, validators=[MinValueValidator(0.1)]
    )
    max_attempts = models.PositiveSmallIntegerField(
        _("answers per call"),
        default=3,
        validators=[MinValueValidator(1)],
        help_text=_("How many times the model may answer when its output does not match the schema."),
    )
    max_retries = models.PositiveSmallIntegerField(
        _("retries of temporary failures"),
        default=6,
        help_text=_("Rate limits, server errors, timeouts and connection errors, with exponential backoff."),
    )
    price_input_per_mtok = models.DecimalField(
        _("price per million input tokens"), max_digits=10, decimal_places=4, default=Decimal("0")
    )
    price_output_per_mtok = models.DecimalField(
        _("price per million output tokens"), max_digits=10, decimal_places=4, default=Decimal("0")
    )
    is_active = models.BooleanField(_("active"), default=True)
    from_environment = models.BooleanField(
        default=False, editable=False, help_text=_("Created from LLM_BASE_URL / LLM_MODEL / LLM_API_KEY.")
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("model endpoint")
        verbose_name_plural = _("model endpoints")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_positive"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="endpoint_attempts_positive"),
            models.UniqueConstraint(fields=["project", "name"], name="endpoint_unique_project_name"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(project__isnull=True), name="endpoint_unique_site_name"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @property
    def label(self) -> str:
        return self.name if self.name == self.model else f"{self.name} · {self.model}"


class PromptTemplate(models.Model):
    """One immutable version of a prompt; a change is a new version, and every call names its version."""

    class Kind(models.TextChoices):
        """The kinds generation uses itself; evaluation and the designs register theirs (``generation.kinds``).
        The field is plain text, checked against the call-kind registry when a template is stored."""

        QUESTIONS = "questions", _("New questions of a class")
        ANSWER = "answer", _("Answer a question")
        DISTRACTORS = "distractors", _("Distractors")
        REVISION = "revision", _("Revise an answer from feedback")
        OTHER = "other", pgettext_lazy("kind of prompt template", "Other")

    kind = models.CharField(max_length=32)
    name = models.CharField(max_length=100, help_text=_("Variant within a kind, e.g. class-agnostic."))
    language = models.CharField(max_length=16, default="pt-BR")
    version = models.PositiveIntegerField(default=1)
    system = models.TextField(blank=True)
    user = models.TextField()
    output_schema = models.JSONField(default=dict, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("prompt template")
        verbose_name_plural = _("prompt templates")
        ordering = ["kind", "name", "language", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "name", "language", "version"], name="prompt_template_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}/{self.name} [{self.language}] v{self.version}"

    @property
    def label(self) -> str:
        return str(self)


class GenerationJob(BackgroundWork, WorkProgress):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="generation_jobs")
    kind = models.CharField(max_length=32)  # a job kind of ``generation.kinds`` (or one evaluation runs)
    # RESTRICT: a project's endpoint with jobs cannot be deleted alone, but goes with its project.
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.RESTRICT, related_name="jobs")
    template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="jobs")
    # A questions job may have its new questions answered by a second model in the same job.
    answer_endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.RESTRICT, related_name="answer_jobs"
    )
    answer_template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="answer_jobs"
    )
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    failed = models.PositiveIntegerField(default=0)
    retried = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    items_created = models.PositiveIntegerField(default=0)
    duplicates_skipped = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("generation job")
        verbose_name_plural = _("generation jobs")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat")]

    def __str__(self) -> str:
        return f"{self.kind} job #{self.pk} ({self.status})"

    @property
    def kind_label(self) -> str:
        from .kinds import job_kind_label

        return job_kind_label(self.kind)

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.is_finished else 0
        return min(100, int(100 * (self.done + self.failed) / self.total))


class LLMCall(models.Model):
    """One model call and all its attempts. Unique per (job, item, purpose): never paid for twice."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    job = models.ForeignKey(
        GenerationJob, null=True, blank=True, on_delete=models.CASCADE, related_name="calls"
    )
    # A call about an item goes with it: set to NULL it would collide with the job's other calls of the same
    # purpose under the constraint for item-less calls.
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.CASCADE, related_name="llm_calls")
    purpose = models.CharField(max_length=100)
    endpoint = models.ForeignKey(ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="calls")
    template = models.ForeignKey(PromptTemplate, null=True, on_delete=models.SET_NULL, related_name="calls")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    request = models.JSONField(default=dict, blank=True)
    attempts = models.JSONField(
        default=list, blank=True, help_text=_("Raw response or error of every attempt.")
    )
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
        verbose_name = _("LLM call")
        verbose_name_plural = _("LLM calls")
        ordering = ["id"]
        indexes = [models.Index(fields=["job", "status"], name="llmcall_job_status")]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "item", "purpose"], name="llmcall_unique_job_item_purpose"
            ),
            # NULL items are distinct in a plain unique index; this keeps item-less calls unique too.
            models.UniqueConstraint(
                fields=["job", "purpose"],
                condition=Q(item__isnull=True),
                name="llmcall_unique_job_purpose_no_item",
            ),
        ]

    def __str__(self) -> str:
        return f"call #{self.pk} {self.purpose}"


class ProjectGenerationSettings(models.Model):
    """Per project: which endpoint rewrites answers when a curator asks for a revision."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="generation_settings")
    revision_endpoint = models.ForeignKey(
        ModelEndpoint,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("revision endpoint"),
        help_text=_("Empty: the endpoint set up from the environment, if there is one."),
    )
    revise_automatically = models.BooleanField(
        _("revise automatically"),
        default=True,
        help_text=_("When a curator sends an item back for revision, ask a model to rewrite the answer."),
    )

    class Meta:
        verbose_name = _("generation settings")
        verbose_name_plural = _("generation settings of projects")

    def __str__(self) -> str:
        return f"generation settings of {self.project}"

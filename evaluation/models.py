"""Gold releases (immutable snapshots with splits) and benchmark runs of models on them."""

from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransformFactory
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Project
from core.background import BackgroundWork, WorkProgress
from core.db.json import TextJSONKeyTransform


def default_split_ratios() -> dict:
    return {"train": 0.8, "dev": 0.1, "test": 0.1}


class Release(BackgroundWork, WorkProgress):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        BUILDING = "building", _("Building")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    # A release is immutable, not undeletable: it goes with its project (a run on it goes with the project too).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="releases")
    version = models.PositiveIntegerField()
    seed = models.IntegerField(default=13)
    split_ratios = models.JSONField(default=default_split_ratios)
    # {"field": metadata key, "max_per_stratum": N}: at most N approved items per value of that field, drawn with
    # the seed (CausalityCheck: per task × variant cell). Empty: every approved item.
    subsample = models.JSONField(_("subsample"), default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    checksum = models.CharField(_("SHA-256 of the canonical content"), max_length=64, blank=True)
    card = models.TextField(_("dataset card (Markdown)"), blank=True)
    # The figures of the card, frozen when the release is cut: counts, answers, agreement, funnel, models.
    counts = models.JSONField(default=dict, blank=True)
    notes = models.TextField(blank=True)
    license = models.CharField(
        _("license"),
        max_length=64,
        default="cc-by-4.0",
        help_text=_("A Hugging Face license identifier, e.g. cc-by-4.0, mit, other."),
    )
    citation = models.TextField(_("how to cite (BibTeX)"), blank=True)
    stage = models.CharField(max_length=32, blank=True, help_text=_("What the build is doing now."))

    class Meta:
        verbose_name = _("release")
        verbose_name_plural = _("releases")
        ordering = ["project", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="release_unique_project_version"),
            models.CheckConstraint(condition=Q(version__gte=1), name="release_version_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} v{self.version}"

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY


class FrozenRecordField(models.JSONField):
    """A frozen record, stored as the JSON text it was frozen as: a text column on both databases.

    The build writes what orjson made, so the database has nothing to check or parse: on PostgreSQL ``jsonb``
    parsed every record into a tree nobody searches (0.6 s of a 100,000-item cut, measured), and ``json`` still
    checked its syntax (0.1–0.4 s of server time more than ``text``); on SQLite ``JSONField``'s ``JSON_VALID``
    check cost 0.2 s. Exports read the text; lookups into it (``data__key``) work on both."""

    def db_type(self, connection):
        return "text"

    def db_check(self, connection):
        return None

    def from_db_value(self, value, expression, connection):
        if value is not None and not isinstance(value, str):
            return value  # a key's value (``data__key``), decoded by the driver from jsonb
        return super().from_db_value(value, expression, connection)

    def get_transform(self, name):
        transform = super().get_transform(name)
        if isinstance(transform, KeyTransformFactory):
            return FrozenKeyTransformFactory(name)
        return transform


class FrozenKeyTransformFactory(KeyTransformFactory):
    def __call__(self, *args, **kwargs):
        return TextJSONKeyTransform(self.key_name, *args, **kwargs)


class ReleaseItem(models.Model):
    """An item frozen into a release: ``data`` is the exported record and never changes."""

    class Split(models.TextChoices):
        TRAIN = "train", "train"
        DEV = "dev", "dev"
        TEST = "test", "test"

    # No index of its own: both unique constraints below begin with the release (each index is written for
    # every one of a release's 100,000 items). No database constraint either: PostgreSQL checked it for each
    # record when the cut's COPY committed, after the records were all sent, 0.7 s of a 100,000-item cut
    # (measured alternately: 2.52–3.47 s without it, 3.21–3.46 s with it). Only the build writes records, under
    # its claim on the release; Django deletes them with their release (CASCADE), and a build whose release was
    # deleted while it froze removes the records it had committed (``release_build``).
    release = models.ForeignKey(
        Release, on_delete=models.CASCADE, related_name="items", db_index=False, db_constraint=False
    )
    # The item this record was frozen from: provenance only (the record stands on its own), so no database
    # constraint, as for an item's import batch: checking it for each of a release's 100,000 records cost half
    # a second of the cut on PostgreSQL. Django still nulls it when the item is deleted.
    item = models.ForeignKey(
        Item,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="release_items",
        db_constraint=False,
    )
    split = models.CharField(max_length=8, choices=Split.choices)
    position = models.PositiveIntegerField()
    causal_class = models.CharField(max_length=64, blank=True)
    data = FrozenRecordField()

    class Meta:
        verbose_name = _("release item")
        verbose_name_plural = _("release items")
        ordering = ["release", "split", "position"]
        # A split's items in order are read through releaseitem_unique_position.
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="releaseitem_unique_item"),
            models.UniqueConstraint(
                fields=["release", "split", "position"], name="releaseitem_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.split} #{self.position} of release {self.release_id}"


# --- benchmark runs ----------------------------------------------------------------------------------


def default_metadata_keys() -> dict:
    """Which key of an item's metadata holds its causal level, question type, task and variant."""
    return {"level": "level", "type": "perspective", "task": "task", "variant": "variant"}


class EvalRun(BackgroundWork):
    """Models answer the items of a release split under prompting conditions; judges and metrics follow.

    The model calls are generation jobs owned by the run (``jobs``), so they get the runner's
    concurrency, limits, retries, re-asking, resumption and cost records.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    class Stage(models.TextChoices):
        ANSWERING = "answering", _("Models answer")
        JUDGING = "judging", _("The judge scores and ranks")
        SCORING = "scoring", _("Computing BERTScore")
        DONE = "done", _("Done")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="eval_runs")
    # RESTRICT, not PROTECT: a release with runs cannot be deleted alone, but goes when its project does.
    release = models.ForeignKey(Release, on_delete=models.RESTRICT, related_name="eval_runs")
    split = models.CharField(max_length=8, choices=ReleaseItem.Split.choices, default=ReleaseItem.Split.TEST)
    answer_format = models.CharField(max_length=32, choices=Project.AnswerFormat.choices)
    conditions = models.JSONField(default=list, help_text=_("Prompting conditions, e.g. class-agnostic."))
    endpoints = models.ManyToManyField("generation.ModelEndpoint", related_name="eval_runs")
    # condition → the id of the benchmark-answer template version used
    templates = models.JSONField(default=dict)
    judge_endpoint = models.ForeignKey(
        "generation.ModelEndpoint",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="judged_runs",
    )
    judge_score_template = models.ForeignKey(
        "generation.PromptTemplate", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    judge_ranking_template = models.ForeignKey(
        "generation.PromptTemplate", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decoding = models.JSONField(default=dict, blank=True, help_text=_("temperature, max_tokens, top_p, seed"))
    repetitions = models.PositiveSmallIntegerField(default=1)
    seed = models.IntegerField(default=13, help_text=_("Seeds the order of the answers the judge ranks."))
    few_shot = models.PositiveSmallIntegerField(
        default=3, help_text=_("Solved examples in few-shot prompts.")
    )
    bertscore_model = models.CharField(
        max_length=500, blank=True, help_text=_("Local model directory; empty: the packaged MiniLM.")
    )
    bertscore_layer = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text=_("Hidden layer whose token embeddings are matched; empty: the last."),
    )
    bertscore_idf = models.BooleanField(
        default=False, help_text=_("Weight tokens by their idf over the references.")
    )
    # What BERTScore used, as computed: model, layer, layers, idf, window; windowed = responses read in windows.
    bertscore_used = models.JSONField(default=dict, blank=True)
    metadata_keys = models.JSONField(default=default_metadata_keys, blank=True)
    differences = models.TextField(
        blank=True,
        help_text=_("One per line, e.g. Challenge 1 = AJ - PJ; Challenge 2 = VCR - mean(PS, PU, ID)."),
    )
    jobs = models.ManyToManyField("generation.GenerationJob", related_name="eval_runs", blank=True)
    # A run made from files (evaluation.runs.imported): {"name", "files": [{"name", "kind", "sha256", "rows"}],
    # "imported_at", "by"}. Empty for runs whose answers the platform asked for.
    imported = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.ANSWERING)
    notes = models.TextField(
        blank=True, help_text=_("What the run could not do, e.g. BERTScore without the ml extra.")
    )
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(repetitions__gte=1), name="evalrun_repetitions_positive")
        ]

    def __str__(self) -> str:
        return f"run #{self.pk} on {self.release} {self.split}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)


class ResultsImport(BackgroundWork):
    """An import of results made elsewhere (model responses, judge scores, rankings) into a new run of a release,
    done by a worker (``evaluation.runs.results_import``): its files are kept until it is over; its report says,
    per file, the rows read, stored, conflicting and refused, or lists every problem when nothing was imported."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="results_imports")
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="results_imports")
    split = models.CharField(max_length=8, choices=ReleaseItem.Split.choices, default=ReleaseItem.Split.TEST)
    name = models.CharField(max_length=200)
    # The import's choices: columns (role=COLUMN, …) and what to keep of rows that collide (first, last, both).
    columns = models.TextField(blank=True)
    conflicts = models.CharField(max_length=8, blank=True)
    # [{"name", "kind", "path"}]: each uploaded file as stored until the import is over.
    files = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=200, blank=True, help_text=_("What the worker is doing now."))
    run = models.ForeignKey(EvalRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Refused: [{"file", "line", "field", "reason"}] (the first ones) and how many rows collide.
    errors = models.JSONField(default=list, blank=True)
    report = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = _("results import")
        verbose_name_plural = _("results imports")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} → {self.release}"


class EvalResponse(models.Model):
    """A model's answer to a released item under a condition, with what was read from it."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="responses")
    release_item = models.ForeignKey(ReleaseItem, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey("generation.ModelEndpoint", on_delete=models.RESTRICT, related_name="+")
    condition = models.CharField(max_length=32)
    repetition = models.PositiveSmallIntegerField(default=1)
    call = models.ForeignKey("generation.LLMCall", null=True, on_delete=models.SET_NULL, related_name="+")
    text = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    choice = models.CharField(
        max_length=8, blank=True, help_text=_("Letter, or yes / no, read from the answer.")
    )
    correct = models.BooleanField(
        null=True, help_text=_("Closed formats; empty for open answers or failed calls.")
    )
    unparsed = models.BooleanField(
        default=False, help_text=_("A closed answer whose choice could not be read.")
    )
    error = models.TextField(blank=True, help_text=_("The call failed for good: why."))
    bertscore_precision = models.FloatField(null=True, blank=True)
    bertscore_recall = models.FloatField(null=True, blank=True)
    bertscore_f1 = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name = _("evaluated response")
        verbose_name_plural = _("evaluated responses")
        ordering = ["run", "release_item", "endpoint", "condition", "repetition"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "release_item", "endpoint", "condition", "repetition"],
                name="evalresponse_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.condition} answer to release item {self.release_item_id} (run {self.run_id})"


class JudgeScore(models.Model):
    """The judge's 1–5 scores of one answer: a model's response, or (no response) the reference answer."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="judge_scores")
    release_item = models.ForeignKey(ReleaseItem, on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(
        EvalResponse, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_scores"
    )
    call = models.ForeignKey("generation.LLMCall", null=True, on_delete=models.SET_NULL, related_name="+")
    # Who scored: empty for the run's own judge; an imported file's judge name (several judges may score one
    # answer: each is a row of its own).
    judge = models.CharField(max_length=100, blank=True, default="")
    # A reference answer scored within one model's evaluation (a published file may score the reference
    # once per evaluated model): that model; empty when the reference was scored once for the run.
    under = models.ForeignKey(
        "generation.ModelEndpoint", null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    scores = models.JSONField(default=dict, blank=True)
    justifications = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        verbose_name = _("judge score")
        verbose_name_plural = _("judge scores")
        ordering = ["run", "release_item", "response"]
        constraints = [
            models.UniqueConstraint(fields=["run", "response", "judge"], name="judgescore_unique_response"),
            models.UniqueConstraint(
                fields=["run", "release_item", "judge"],
                condition=Q(response__isnull=True, under__isnull=True),
                name="judgescore_unique_reference",
            ),
            models.UniqueConstraint(
                fields=["run", "release_item", "under", "judge"],
                condition=Q(response__isnull=True, under__isnull=False),
                name="judgescore_unique_reference_under",
            ),
        ]

    def __str__(self) -> str:
        return f"judge score of release item {self.release_item_id} (run {self.run_id})"


class Ranking(models.Model):
    """The judge's order, best first, of the reference and one model's answers to a question.

    ``shown`` is the order the answers were shown in (labels A, B, C… in this order), by source;
    ``ranking`` the judge's order by source, so the shuffle is undone and can be checked.
    """

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="rankings")
    release_item = models.ForeignKey(ReleaseItem, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey("generation.ModelEndpoint", on_delete=models.RESTRICT, related_name="+")
    repetition = models.PositiveSmallIntegerField(default=1)
    call = models.ForeignKey("generation.LLMCall", null=True, on_delete=models.SET_NULL, related_name="+")
    # Who ranked: empty for the run's own judge; an imported file's judge name.
    judge = models.CharField(max_length=100, blank=True, default="")
    shown = models.JSONField(default=list)
    ranking = models.JSONField(default=list, blank=True)
    justification = models.TextField(blank=True)
    error = models.TextField(blank=True)

    class Meta:
        verbose_name = _("ranking")
        verbose_name_plural = _("rankings")
        ordering = ["run", "release_item", "endpoint", "repetition"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "release_item", "endpoint", "repetition", "judge"], name="ranking_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"ranking of release item {self.release_item_id} (run {self.run_id})"

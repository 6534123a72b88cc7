"""Topics of a project's questions and the topic-modelling that finds them: runs, stored embeddings and
near-duplicate pairs. The tables keep the names of the apps that created them (``db_table``): the topic's is
annotation's, the others' generation's, and migrations never rename them."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Project
from core.background import BackgroundWork, WorkProgress


class Topic(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="topics")
    label = models.CharField(max_length=200)
    cluster = models.IntegerField(
        null=True, blank=True, help_text=_("Cluster number; -1 is the residual topic.")
    )
    top_words = models.JSONField(default=list, blank=True)
    seed_words = models.JSONField(default=list, blank=True)
    size = models.PositiveIntegerField(default=0)
    is_residual = models.BooleanField(default=False)
    selected = models.BooleanField(_("selected for annotation"), default=False)
    class_targets = models.JSONField(
        _("target count per causal class in this topic"),
        default=dict,
        blank=True,
        help_text=_("Empty: the project's targets apply."),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_topic"
        verbose_name = _("topic")
        verbose_name_plural = _("topics")
        ordering = ["project", "-size", "label"]
        constraints = [models.UniqueConstraint(fields=["project", "label"], name="topic_unique_label")]

    def __str__(self) -> str:
        return self.label


class QuestionEmbedding(models.Model):
    """An item's question as a vector of one embedding model, kept so re-clustering never embeds again.

    ``text_key`` is the item's text key when it was embedded: an edited question is embedded anew.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="embeddings")
    model_name = models.CharField(max_length=300)
    text_key = models.CharField(max_length=40)
    dimensions = models.PositiveIntegerField()
    vector = models.BinaryField(help_text=_("float32, little-endian"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "generation_questionembedding"
        verbose_name = _("question embedding")
        verbose_name_plural = _("question embeddings")
        constraints = [
            models.UniqueConstraint(fields=["item", "model_name"], name="embedding_unique_item_model")
        ]

    def __str__(self) -> str:
        return f"{self.item_id} · {self.model_name}"


class TopicRun(BackgroundWork, WorkProgress):
    """One topic-modelling run over a project's questions: embed, reduce, cluster, describe."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    class Stage(models.TextChoices):
        WAITING = "waiting", _("Waiting for a worker")
        EMBEDDING = "embedding", _("Embedding the questions")
        CLUSTERING = "clustering", _("Clustering")
        DESCRIBING = "describing", _("Finding each topic's words")
        SAVING = "saving", _("Saving the topics")
        DONE = "done", _("Done")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="topic_runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.WAITING)
    params = models.JSONField(default=dict, blank=True)
    embedding_model = models.CharField(max_length=300, blank=True)
    total = models.PositiveIntegerField(default=0, help_text=_("Questions to embed in this run."))
    reused = models.PositiveIntegerField(default=0, help_text=_("Questions whose stored embedding was used."))
    n_topics = models.PositiveIntegerField(default=0)
    n_residual = models.PositiveIntegerField(default=0)
    n_duplicates = models.PositiveIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True, help_text=_("Seconds per stage."))
    # The 2-D map of the questions: [[item id, x, y, cluster], ...].
    map_points = models.JSONField(default=list, blank=True)
    # What the run found, kept so it can be applied (or applied again to go back): {"labels": {item id:
    # cluster}, "words": {cluster: [[word, weight]]}, "seeds": {cluster: [[seed topic, word, n]]}}.
    proposal = models.JSONField(default=dict, blank=True)
    applied_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When its topics became the project's.")
    )
    discarded_at = models.DateTimeField(null=True, blank=True)
    # The project's topics as they were just before this run was applied, exactly (see
    # ``topics.proposal.topics_snapshot``), so applying can always be undone, even the first time.
    replaced = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "generation_topicrun"
        verbose_name = _("topic run")
        verbose_name_plural = _("topic runs")
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"topic run #{self.pk} of {self.project} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)

    @property
    def percent(self) -> int:
        if self.is_finished:
            return 100
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def residual_percent(self) -> int:
        """The share of the run's questions (every one was embedded or reused) left in the residual topic."""
        questions = self.total + self.reused
        return round(100 * self.n_residual / questions) if questions else 0


class NearDuplicate(models.Model):
    """Two questions whose embeddings are closer than the run's threshold, for a curator to merge or keep."""

    class Status(models.TextChoices):
        OPEN = "open", _("To decide")
        KEPT = "kept", _("Kept both")
        MERGED = "merged", _("Merged")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="near_duplicates")
    first = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    similarity = models.FloatField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "generation_nearduplicate"
        verbose_name = _("near duplicate")
        verbose_name_plural = _("near duplicates")
        ordering = ["-similarity", "pk"]
        indexes = [models.Index(fields=["project", "status"], name="near_duplicate_project_status")]
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="near_duplicate_unique_pair"),
            models.CheckConstraint(condition=Q(first__lt=F("second")), name="near_duplicate_ordered_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.first_id} ≈ {self.second_id} ({self.similarity:.3f})"

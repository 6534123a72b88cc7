"""Gold releases (immutable snapshots with splits); evaluation runs come with their own issue."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Project


def default_split_ratios() -> dict:
    return {"train": 0.8, "dev": 0.1, "test": 0.1}


class Release(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        BUILDING = "building", _("Building")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.PositiveIntegerField()
    seed = models.IntegerField(default=13)
    split_ratios = models.JSONField(default=default_split_ratios)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    checksum = models.CharField(_("SHA-256 of the canonical content"), max_length=64, blank=True)
    card = models.TextField(_("dataset card (Markdown)"), blank=True)
    # The figures of the card, frozen when the release is cut: counts, answers, agreement, funnel, models.
    counts = models.JSONField(default=dict, blank=True)
    notes = models.TextField(blank=True)
    license = models.CharField(_("license"), max_length=64, default="cc-by-4.0",
                               help_text=_("A Hugging Face license identifier, e.g. cc-by-4.0, mit, other."))
    citation = models.TextField(_("how to cite (BibTeX)"), blank=True)
    stage = models.CharField(max_length=32, blank=True, help_text=_("What the build is doing now."))
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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

    @property
    def progress_percent(self) -> int:
        return int(100 * self.items_done / self.items_total) if self.items_total else 0


class ReleaseItem(models.Model):
    """An item frozen into a release: ``data`` is the exported record and never changes."""

    class Split(models.TextChoices):
        TRAIN = "train", "train"
        DEV = "dev", "dev"
        TEST = "test", "test"

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="release_items")
    split = models.CharField(max_length=8, choices=Split.choices)
    position = models.PositiveIntegerField()
    causal_class = models.CharField(max_length=64, blank=True)
    data = models.JSONField()

    class Meta:
        ordering = ["release", "split", "position"]
        indexes = [models.Index(fields=["release", "split", "position"], name="releaseitem_split_position")]
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="releaseitem_unique_item"),
            models.UniqueConstraint(fields=["release", "split", "position"], name="releaseitem_unique_position"),
        ]

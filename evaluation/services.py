"""Writes of the evaluation app: cutting releases (issuing API tokens: ``evaluation.tokens``). Pages, the API, tasks and commands
all call these."""

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone, translation

from annotation.models import Item, Project
from core.background import work_claim, work_heartbeat, work_owner_token

from .models import Release, ReleaseItem
from .quality.selectors import release_quality_facts
from .releases.archive import release_archive_keep
from .releases.build import (
    approved_units,
    freeze_items,
    plan_positions,
    releasable_items,
    release_facts,
)
from .releases.card import render_card
from .releases.options import (
    LICENSE_MAX_LENGTH,
    RELEASE_OPTIONS,
    SEED_MAX,
    SEED_MIN,
    STRATUM_FIELD_MAX_LENGTH,
    TEXT_MAX_LENGTH,
)
from .releases.splits import assign_splits, parse_ratios
from .selectors import AGREEMENT_BOOTSTRAP, project_agreement

logger = logging.getLogger(__name__)


class ReleaseError(Exception):
    """A release cannot be cut; the message says why."""


def release_create(
    *,
    project: Project,
    user=None,
    seed: int = RELEASE_OPTIONS["seed"],
    split_ratios: dict | str | list | None = None,
    license: str = RELEASE_OPTIONS["license"],
    citation: str = RELEASE_OPTIONS["citation"],
    notes: str = RELEASE_OPTIONS["notes"],
    subsample: dict | None = RELEASE_OPTIONS["subsample"],
) -> Release:
    """Reserve the next version (``vN``) of the project's release; ``release_build`` fills it.

    The options are ``evaluation.releases.options.RELEASE_OPTIONS``, checked here for every door.
    ``subsample`` ({"field": metadata key, "max_per_stratum": N}) keeps at most N approved items per value
    of that field (CausalityCheck: per cell). Raises ``ReleaseError`` when the project has no approved item
    or an option is out of bounds, ``SplitRatioError`` for bad ratios.
    """
    ratios = parse_ratios(split_ratios if split_ratios is not None else RELEASE_OPTIONS["split_ratios"])
    subsample = _checked_subsample(subsample)
    license, citation, notes = _checked_texts(seed, license, citation, notes)
    if not releasable_items(project).exists():
        raise ReleaseError(f"{project.slug} has no approved items to release")
    with transaction.atomic():
        # Two curators cutting at once get consecutive versions: the project row serialises them.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        version = (Release.objects.filter(project=project).aggregate(last=Max("version"))["last"] or 0) + 1
        return Release.objects.create(
            project=project,
            version=version,
            seed=seed,
            split_ratios=ratios,
            status=Release.Status.QUEUED,
            license=license,
            citation=citation,
            notes=notes,
            subsample=subsample,
            created_by=user,
        )


def release_request(*, project: Project, user=None, **options) -> Release:
    """Cut the next release in the background: ``release_create`` (the same options and checks as every
    door), and once committed its build is handed to a worker. The page and the API call this."""
    with transaction.atomic():
        release = release_create(project=project, user=user, **options)
        # robust: with the broker down the release stays queued and the periodic sweep sends it again.
        transaction.on_commit(lambda: release_enqueue(release.pk), robust=True)
    return release


def release_enqueue(release_id: int) -> None:
    from .tasks import release_build_task

    release_build_task.delay(release_id)


def _checked_texts(seed, license, citation, notes) -> tuple[str, str, str]:
    if not isinstance(seed, int) or isinstance(seed, bool) or not SEED_MIN <= seed <= SEED_MAX:
        raise ReleaseError(f"the seed must be a whole number from {SEED_MIN} to {SEED_MAX}")
    license = (license or "").strip() or "other"
    if len(license) > LICENSE_MAX_LENGTH:
        raise ReleaseError(f"the license id has at most {LICENSE_MAX_LENGTH} characters")
    for name, text in (("citation", citation), ("notes", notes)):
        if len(text or "") > TEXT_MAX_LENGTH:
            raise ReleaseError(f"the {name} has at most {TEXT_MAX_LENGTH} characters")
    return license, citation or "", notes or ""


def _checked_subsample(subsample: dict | None) -> dict:
    if not subsample:
        return {}
    field, limit = subsample.get("field"), subsample.get("max_per_stratum")
    if not isinstance(field, str) or not field.strip():
        raise ReleaseError("subsample: name the item metadata field to stratify by (e.g. cell)")
    if len(field.strip()) > STRATUM_FIELD_MAX_LENGTH:
        raise ReleaseError(f"subsample: the field name has at most {STRATUM_FIELD_MAX_LENGTH} characters")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ReleaseError("subsample: max_per_stratum must be a whole number of at least 1")
    return {"field": field.strip(), "max_per_stratum": limit}


def release_build(*, release: Release, on_progress: Callable[[Release], None] | None = None) -> Release:
    """Freeze the approved items into ``release`` with their splits, checksum and card.

    Claims the release (queued → building), so a duplicate task does nothing. On failure every
    frozen item is removed and the release is marked failed with the error. Every progress write checks
    the claim: a build resumed elsewhere while this one was silent (``releases_resume_stale``) is the new
    owner's, and this one stops without touching it.
    """
    owner = work_owner_token()
    claimed = work_claim(
        Release,
        pk=release.pk,
        owner=owner,
        queued=Release.Status.QUEUED,
        running=Release.Status.BUILDING,
        stage="planning",
    )
    release.refresh_from_db()
    if not claimed:
        return release
    report = on_progress or (lambda release: None)

    def _progress(release: Release, **fields) -> None:
        if not work_heartbeat(Release, pk=release.pk, owner=owner, running=Release.Status.BUILDING, **fields):
            raise _BuildTakenOver
        for name, value in fields.items():
            setattr(release, name, value)

    try:
        ReleaseItem.objects.filter(release=release).delete()
        # the units are not kept: at 100,000 items they hold tens of MB the freezing needs
        units = approved_units(release.project, release.subsample or None, release.seed)
        placement = plan_positions(*units, release.split_ratios, release.seed)
        del units
        _progress(release, stage="freezing", total=len(placement), done=0)
        report(release)

        def frozen(done: int) -> None:
            _progress(release, done=done)
            report(release)

        tally = freeze_items(release, placement, frozen)
        _progress(release, stage="checksum")
        report(release)
        release.checksum = tally["checksum"]
        _progress(release, stage="card")
        report(release)
        with translation.override("en"):
            facts = release_facts(release, tally, release_agreement(release))
            facts["agreement_bootstrap"] = AGREEMENT_BOOTSTRAP.as_dict()
            facts["label_aggregation"] = release_quality_facts(release.project)
            if release.subsample:
                facts["subsample"] = release.subsample
            release.counts = facts
            release.card = render_card(release, facts)
        finished = _own(release, owner).update(
            checksum=release.checksum,
            counts=release.counts,
            card=release.card,
            status=Release.Status.READY,
            stage="",
            finished_at=timezone.now(),
        )
        if not finished:
            raise _BuildTakenOver
        release.refresh_from_db()
    except _BuildTakenOver:
        if _deleted_meanwhile(release):
            return release
        release.refresh_from_db()  # the build that took it over owns its items now
        return release
    except Exception as exc:
        if _deleted_meanwhile(release):
            raise
        with transaction.atomic():
            if _own(release, owner).select_for_update().exists():
                ReleaseItem.objects.filter(release=release).delete()
                _own(release, owner).update(
                    status=Release.Status.FAILED,
                    stage="",
                    error=f"{type(exc).__name__}: {exc}",
                    finished_at=timezone.now(),
                )
        release.refresh_from_db()
        raise
    report(release)
    return release


def release_build_and_keep(*, release: Release, on_progress=None) -> Release:
    """Build a queued release, then keep its zip, which its downloads send: the worker's task and the ``release``
    command both cut this way."""
    release = release_build(release=release, on_progress=on_progress)
    release_archive_keep(release=release)
    return release


def release_cut(*, project: Project, user=None, on_progress=None, **options) -> Release:
    """Create and build the next release in this process, without keeping its zip (the demo's and the
    benchmarks' way: its downloads stream it)."""
    release = release_create(project=project, user=user, **options)
    return release_build(release=release, on_progress=on_progress)


def demo_release(*, project: Project, user=None) -> int | None:
    """The demo's first release of ``project``, cut if it has none yet; its version, or None."""
    if Release.objects.filter(project=project).exists():
        return None
    # The default ratios, unless they would leave the test split empty (an example of one group, whole groups
    # being split units): then every item is in it, so the demo's runs and harness tasks have items to ask.
    ratios = parse_ratios(RELEASE_OPTIONS["split_ratios"])
    units, _item_ids = approved_units(project)
    assignment, _order = assign_splits(units, ratios, RELEASE_OPTIONS["seed"])
    if "test" not in assignment.values():
        ratios = {"train": 0.0, "dev": 0.0, "test": 1.0}
    return release_cut(project=project, user=user, notes="Demo release.", split_ratios=ratios).version


def release_agreement(release: Release) -> list[dict]:
    """Agreement on the released items (all rounds), as the card reports it."""
    items = Item.objects.filter(release_items__release=release)
    section = project_agreement(release.project, items=items, bootstrap=AGREEMENT_BOOTSTRAP)[0]
    rows = []
    for row in section.rows:
        summary = row.summary.as_dict()
        cohen = summary["cohen_kappa"]
        rows.append(
            {
                "criterion": row.criterion.key,
                "label": str(row.criterion.label),
                "level": row.criterion.level,
                "units": summary["krippendorff_alpha"]["n_units"],
                "n_judgments": row.summary.n_judgments,
                "krippendorff_alpha": summary["krippendorff_alpha"],
                "fleiss_kappa": summary["fleiss_kappa"],
                "cohen_kappa": {
                    "value": cohen["mean"],
                    **{key: cohen[key] for key in ("ci95", "reading", "n_units", "note")},
                },
            }
        )
    return rows


class _BuildTakenOver(Exception):
    """The release is no longer this build's: resumed by another worker while this one was silent."""


def _deleted_meanwhile(release: Release) -> bool:
    """Whether ``release`` was deleted while it was built (its project was); then the records this build
    committed after the deletion had removed the release's records are removed too (no database constraint
    ties them to their release: ``ReleaseItem.release``)."""
    if Release.objects.filter(pk=release.pk).exists():
        return False
    ReleaseItem.objects.filter(release_id=release.pk).delete()
    return True


def _own(release: Release, owner: str):
    """The release, while it is still being built by ``owner``."""
    return Release.objects.filter(pk=release.pk, owner=owner, status=Release.Status.BUILDING)


def releases_resume_stale() -> list[int]:
    """Start again every build whose worker died (silent for RELEASE_STALE_SECONDS) and every queued
    release nobody picked up for as long (its message was lost). Returns their ids.

    A dead build's frozen items are removed first, so the new build starts from nothing: a release is
    either whole or not ready, never half-written.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.RELEASE_STALE_SECONDS)
    stale = Release.objects.filter(
        Q(status=Release.Status.BUILDING) | Q(status=Release.Status.QUEUED),
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff),
    )
    resumed = []
    for release_id, status in stale.values_list("pk", "status"):
        with transaction.atomic():
            taken = (
                Release.objects.filter(pk=release_id, status=status)
                .filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))
                .update(
                    status=Release.Status.QUEUED,
                    owner="",
                    stage="",
                    done=0,
                    heartbeat_at=timezone.now(),
                    resumed=F("resumed") + (1 if status == Release.Status.BUILDING else 0),
                )
            )
            if not taken:
                continue
            if status == Release.Status.BUILDING:
                ReleaseItem.objects.filter(release_id=release_id).delete()
                logger.warning("release %s lost its worker while building; it starts again", release_id)
            transaction.on_commit(lambda release_id=release_id: release_enqueue(release_id))
        resumed.append(release_id)
    return resumed

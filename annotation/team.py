"""An owner's changes to a project's team and settings; each is recorded (who, when, what) as a ProjectChange.

Every door (the Members and Settings pages, the admin, commands) calls these. They raise
ValidationError naming the field and the reason; nothing is half-written.
"""

import re

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from .models import Judgment, Membership, Project, ProjectChange

Role = Membership.Role
MAX_TAGS = 30
# What the Settings page may change, and how a value is compared and recorded.
SETTINGS_FIELDS = (
    "language",
    "overlap",
    "overlap_max",
    "overlap_threshold",
    "aggregation",
    "control_rate",
    "assignment_timeout_minutes",
    "guidelines",
    "criteria",
    "label_set",
    "label_names",
    "class_targets",
    "allow_self_review",
)
# Settings kept in ``Project.design_settings``: whether annotators see the fields they judge before judging.
DESIGN_SETTINGS_FIELDS = ("show_judged_fields",)
LANGUAGES = ("pt-BR", "en")


def tags_parse(text: str) -> list[str]:
    """``"saúde, economia; saúde"`` → ``["saúde", "economia"]``: commas or semicolons, order kept, no repeats."""
    tags = []
    for part in re.split(r"[,;\n]", text or ""):
        tag = " ".join(part.split())
        if tag and tag.lower() not in (known.lower() for known in tags):
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise ValidationError({"expertise": _("At most %(n)s expertise tags.") % {"n": MAX_TAGS}})
    if any(len(tag) > 64 for tag in tags):
        raise ValidationError({"expertise": _("An expertise tag has at most 64 characters.")})
    return tags


def _record(
    project: Project, by, kind: str, *, subject: str = "", details: dict | None = None
) -> ProjectChange:
    return ProjectChange.objects.create(
        project=project, user=by, kind=kind, subject=subject, details=details or {}
    )


@transaction.atomic
def membership_add(*, project: Project, by, identifier: str, role: str, expertise: list[str]) -> Membership:
    """Add the user named by username or e-mail address to the project."""
    identifier = (identifier or "").strip()
    if role not in Role.values:
        raise ValidationError({"role": _("Choose annotator, curator or owner.")})
    users = (
        list(
            get_user_model().objects.filter(Q(username__iexact=identifier) | Q(email__iexact=identifier))[:2]
        )
        if identifier
        else []
    )
    if not users:
        raise ValidationError(
            {
                "user": _("Nobody is called “%(name)s” (username or e-mail address).")
                % {"name": identifier[:100]}
            }
        )
    if len(users) > 1:
        raise ValidationError(
            {
                "user": _("More than one person has the e-mail address “%(name)s”; use the username.")
                % {"name": identifier[:100]}
            }
        )
    user = users[0]
    if Membership.objects.filter(project=project, user=user).exists():
        raise ValidationError({"user": _("%(name)s is already a member.") % {"name": user.get_username()}})
    membership = Membership.objects.create(project=project, user=user, role=role, expertise=expertise)
    _record(
        project,
        by,
        ProjectChange.Kind.MEMBER_ADDED,
        subject=user.get_username(),
        details={"role": [None, role], "expertise": [None, expertise]},
    )
    return membership


@transaction.atomic
def membership_update(*, membership: Membership, by, role: str, expertise: list[str]) -> Membership:
    if role not in Role.values:
        raise ValidationError({"role": _("Choose annotator, curator or owner.")})
    _lock_memberships(membership.project_id)
    membership = Membership.objects.select_related("user").get(pk=membership.pk)
    if membership.role == Role.OWNER and role != Role.OWNER:
        _keep_an_owner(membership)
    details = {}
    if membership.role != role:
        details["role"] = [membership.role, role]
    if membership.expertise != expertise:
        details["expertise"] = [membership.expertise, expertise]
    if details:
        membership.role, membership.expertise = role, expertise
        membership.save(update_fields=["role", "expertise"])
        _record(
            membership.project,
            by,
            ProjectChange.Kind.MEMBER_CHANGED,
            subject=membership.user.get_username(),
            details=details,
        )
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, by) -> None:
    """Remove a member; their judgments stay (they are part of the record). The last owner stays."""
    _lock_memberships(membership.project_id)
    membership = Membership.objects.select_related("user", "project").get(pk=membership.pk)
    if membership.role == Role.OWNER:
        _keep_an_owner(membership)
    _record(
        membership.project,
        by,
        ProjectChange.Kind.MEMBER_REMOVED,
        subject=membership.user.get_username(),
        details={"role": [membership.role, None]},
    )
    membership.delete()


def _lock_memberships(project_id: int) -> None:
    """Lock every membership of the project, in the order of their ids, before reading any of them: two owners
    demoting each other at once then queue one behind the other instead of each holding the row the other waits
    for (a deadlock), and the second sees the first's change (so the project never ends with no owner)."""
    list(
        Membership.objects.select_for_update().filter(project_id=project_id).order_by("pk").values_list("pk")
    )


def _keep_an_owner(membership: Membership) -> None:
    owners = Membership.objects.filter(project_id=membership.project_id, role=Role.OWNER)
    if not owners.exclude(pk=membership.pk).exists():
        raise ValidationError(
            {"role": _("A project keeps at least one owner; make someone else owner first.")}
        )


def criteria_parse(text: str) -> list[dict]:
    """One criterion a line: ``key; English name; nome em português; min; max`` (min and max default 1 and 5)."""
    criteria, keys = [], set()
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split(";")]
        if len(parts) < 3 or len(parts) > 5:
            raise ValidationError(
                {
                    "criteria": _("line %(n)s: write key; English name; nome em português; min; max")
                    % {"n": number}
                }
            )
        key, label, label_pt = parts[:3]
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", key):
            raise ValidationError(
                {
                    "criteria": _(
                        "line %(n)s: the key “%(key)s” must be lower-case letters, digits "
                        "or “_”, starting with a letter"
                    )
                    % {"n": number, "key": key[:40]}
                }
            )
        if key in keys:
            raise ValidationError(
                {"criteria": _("line %(n)s: the key “%(key)s” comes twice") % {"n": number, "key": key}}
            )
        if not label or not label_pt:
            raise ValidationError(
                {"criteria": _("line %(n)s: give the name in English and in Portuguese") % {"n": number}}
            )
        try:
            low, high = (int(parts[3]) if len(parts) > 3 else 1), (int(parts[4]) if len(parts) > 4 else 5)
        except ValueError:
            raise ValidationError(
                {"criteria": _("line %(n)s: min and max are whole numbers") % {"n": number}}
            ) from None
        if not 0 <= low < high <= 10:
            raise ValidationError(
                {"criteria": _("line %(n)s: min must be below max, both between 0 and 10") % {"n": number}}
            )
        keys.add(key)
        criteria.append(
            {"key": key, "label": label[:200], "label_pt": label_pt[:200], "min": low, "max": high}
        )
    if not criteria:
        raise ValidationError({"criteria": _("give at least one criterion")})
    return criteria


def criteria_text(criteria: list[dict]) -> str:
    return "\n".join(
        f"{c['key']}; {c.get('label', c['key'])}; {c.get('label_pt') or c.get('label', c['key'])}; "
        f"{c.get('min', 1)}; {c.get('max', 5)}"
        for c in criteria
    )


def labels_parse(text: str) -> tuple[list[str], dict]:
    """One class label a line: ``key; English name; nome em português`` (names optional)."""
    labels, names = [], {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split(";")]
        key = parts[0]
        if not key or len(key) > 64 or len(parts) > 3:
            raise ValidationError(
                {"label_set": _("line %(n)s: write key; English name; nome em português") % {"n": number}}
            )
        if key in labels:
            raise ValidationError(
                {
                    "label_set": _("line %(n)s: the label “%(key)s” comes twice")
                    % {"n": number, "key": key[:64]}
                }
            )
        labels.append(key)
        named = {language: name[:200] for language, name in zip(LANGUAGES[::-1], parts[1:]) if name}
        if named:
            names[key] = named
    return labels, names


def labels_text(project: Project) -> str:
    lines = []
    for label in project.label_set:
        names = project.label_names.get(label, {})
        lines.append("; ".join([label, names.get("en", ""), names.get("pt-BR", "")]).rstrip("; "))
    return "\n".join(lines)


@transaction.atomic
def project_settings_update(*, project: Project, by, **changes) -> dict:
    """Change the named settings (``SETTINGS_FIELDS``); returns {field: [before, after]} of what changed.

    Criteria and class labels already used by judgments cannot be removed (their ratings and labels
    would lose their meaning); names may change and new ones may be added.
    """
    unknown = set(changes) - set(SETTINGS_FIELDS) - set(DESIGN_SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"not a project setting: {', '.join(sorted(unknown))}")
    project = Project.objects.select_for_update().get(pk=project.pk)
    design_changes = {name: changes.pop(name) for name in DESIGN_SETTINGS_FIELDS if name in changes}
    for name, value in design_changes.items():
        if not isinstance(value, bool):
            raise ValidationError({name: _("on or off")})
    if "language" in changes and changes["language"] not in LANGUAGES:
        raise ValidationError({"language": _("Choose pt-BR or en.")})
    for name, low, high in (("overlap", 1, 50), ("assignment_timeout_minutes", 1, 7 * 24 * 60)):
        if name in changes and not (isinstance(changes[name], int) and low <= changes[name] <= high):
            raise ValidationError(
                {name: _("a whole number from %(low)s to %(high)s") % {"low": low, "high": high}}
            )
    _check_quality_settings(project, changes)
    judged = Judgment.objects.filter(item__project=project)
    if "criteria" in changes:
        removed = set(project.criterion_keys) - {c["key"] for c in changes["criteria"]}
        used = sorted(key for key in removed if judged.filter(ratings__has_key=key).exists())
        if used:
            raise ValidationError(
                {
                    "criteria": _("judgments already rate “%(keys)s”: keep it (you may rename it)")
                    % {"keys": "”, “".join(used)}
                }
            )
    if "label_set" in changes:
        if not changes["label_set"]:
            raise ValidationError({"label_set": _("give at least one class label")})
        removed = set(project.label_set) - set(changes["label_set"])
        used = sorted(
            set(judged.filter(causal_class__in=removed).values_list("causal_class", flat=True))
            | set(project.items.filter(causal_class__in=removed).values_list("causal_class", flat=True))
        )
        if used:
            raise ValidationError(
                {
                    "label_set": _("items or judgments already use “%(keys)s”: keep it (you may rename it)")
                    % {"keys": "”, “".join(used)}
                }
            )
    if "label_set" in changes and "class_targets" not in changes:
        # A class taken out of the set takes its target with it (targets are set on the class balance page).
        changes["class_targets"] = {
            label: n for label, n in project.class_targets.items() if label in changes["label_set"]
        }
    if "class_targets" in changes:
        probe = Project(label_set=changes.get("label_set", project.label_set))
        changes["class_targets"] = class_targets_check(probe, changes["class_targets"])
    changed = {
        name: [getattr(project, name), value]
        for name, value in changes.items()
        if getattr(project, name) != value
    }
    design_settings = dict(project.design_settings or {})
    for name, value in design_changes.items():
        if bool(design_settings.get(name, False)) != value:
            changed[name] = [bool(design_settings.get(name, False)), value]
            design_settings[name] = value
    if changed:
        fields = [name for name in changed if name not in DESIGN_SETTINGS_FIELDS]
        for name in fields:
            setattr(project, name, changed[name][1])
        if set(changed) & set(DESIGN_SETTINGS_FIELDS):
            project.design_settings = design_settings
            fields.append("design_settings")
        project.save(update_fields=fields)
        _record(project, by, ProjectChange.Kind.SETTINGS, details=changed)
    return changed


def project_history(project: Project, limit: int = 200):
    return project.changes.select_related("user")[:limit]


def _check_quality_settings(project: Project, changes: dict) -> None:
    """The adaptive overlap's maximum is at least the overlap; the threshold a probability; the aggregation known."""
    overlap = changes.get("overlap", project.overlap)
    overlap_max = changes.get("overlap_max", project.overlap_max)
    if overlap_max is not None and not (isinstance(overlap_max, int) and overlap <= overlap_max <= 50):
        raise ValidationError(
            {
                "overlap_max": _("a whole number from the judgments per item (%(low)s) to 50")
                % {"low": overlap}
            }
        )
    threshold = changes.get("overlap_threshold", project.overlap_threshold)
    if not 0.5 <= threshold <= 1:
        raise ValidationError({"overlap_threshold": _("a probability from 0.5 to 1")})
    rate = changes.get("control_rate", project.control_rate)
    if not 0 <= rate <= 0.5:
        raise ValidationError({"control_rate": _("a share from 0 to 0.5")})
    methods = [key for key, _label in Project._meta.get_field("aggregation").choices]
    if changes.get("aggregation", project.aggregation) not in methods:
        raise ValidationError(
            {"aggregation": _("choose one of: %(methods)s") % {"methods": ", ".join(methods)}}
        )


def class_targets_check(project: Project, targets: dict) -> dict[str, int]:
    """Targets by class: whole numbers ≥ 0 for the project's classes; 0 or empty drops a class's target."""
    checked = {}
    for label, value in targets.items():
        if label not in project.label_set:
            raise ValidationError(
                {"targets": _("“%(label)s” is not one of the project's classes.") % {"label": label}}
            )
        if value in (None, ""):
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = -1
        if number < 0 or number > 1_000_000 or str(value).strip() not in (str(number), f"{number}.0"):
            raise ValidationError(
                {"targets": _("The target of “%(label)s” must be a whole number from 0.") % {"label": label}}
            )
        if number:
            checked[label] = number
    return checked

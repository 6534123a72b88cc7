"""The options a job kind takes besides the shared ones, declared once by the kind and offered by every door.

A kind's ``options`` is a ``JobOptions`` serializer: its fields join the API's job request, each becomes a flag of
the ``generate`` command, and their defaults are what ``job_create`` passes the kind when a door leaves them out
(a page's form names them itself). Shared code names no option of a design: it reads the kind's fields.

    class ChecklistOptions(JobOptions):
        group_ids = GroupIdsField(command_flags=("--groups", "--seeds"), help_text="The seeds; default all waiting.")
        double_prompt = FlagOption(required=False, default=True, command_flags=("--single-prompt",))

The option fields here know how the command line spells their values (group external ids, endpoint names) and
how a door turns ids into the rows ``job_create`` takes (``options_resolve``).
"""

import copy

from rest_framework import serializers
from rest_framework.fields import empty

# Ids stay within the database's integers: a larger number is a 400, never an overflow.
ID = {"min_value": 1, "max_value": 2**63 - 1}


class OptionField:
    """A field of a kind's options; ``command_flags`` (default ``--the-name``) and ``command_help`` spell it on
    the command line."""

    def __init__(self, *args, command_flags=(), command_help="", **kwargs):
        self.command_flags = tuple(command_flags)
        self.command_help = command_help
        super().__init__(*args, **kwargs)

    def from_command(self, project, text):
        """The command line's text as the API would send it; ValueError says what is wrong."""
        return text

    def resolve(self, project, value):
        """The validated value as ``job_create`` takes it; ValueError says what is wrong."""
        return value


class TextOption(OptionField, serializers.CharField):
    pass


class FlagOption(OptionField, serializers.BooleanField):
    """A yes/no option; on the command line a flag that turns its default over."""


class GroupIdsField(OptionField, serializers.ListField):
    """Item groups of the project (a design's entries or seeds): ids in the API; ids or external ids, separated
    by commas, on the command line. Absent: the kind's default groups."""

    def __init__(self, **kwargs):
        kwargs.setdefault("child", serializers.IntegerField(**ID))
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def from_command(self, project, text):
        wanted = [part.strip() for part in text.split(",") if part.strip()]
        by_external_id = dict(project.groups.filter(external_id__in=wanted).values_list("external_id", "pk"))
        numbers = [int(name) for name in wanted if name.isdigit()]
        by_id = {str(pk): pk for pk in project.groups.filter(pk__in=numbers).values_list("pk", flat=True)}
        unknown = [name for name in wanted if name not in by_external_id and name not in by_id]
        if unknown:
            raise ValueError(f"no item group {', '.join(map(repr, unknown))} in {project.slug}")
        return [by_external_id.get(name) or by_id[name] for name in wanted]


class EndpointsField(OptionField, serializers.ListField):
    """Model endpoints of the project or of the site: ids in the API, names separated by commas on the command
    line; ``job_create`` takes the endpoints."""

    def __init__(self, *, each="endpoint", **kwargs):
        self.each = each  # what one of them is called in an error ("voter")
        kwargs.setdefault("child", serializers.IntegerField(**ID))
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", list)
        super().__init__(**kwargs)

    def from_command(self, project, text):
        from .selectors import endpoint_named

        names = [name.strip() for name in text.split(",") if name.strip()]
        try:
            return [endpoint_named(project, name).pk for name in names]
        except LookupError as exc:
            raise ValueError(str(exc)) from exc

    def resolve(self, project, value):
        from .selectors import endpoints_for_project

        wanted = value or []
        found = list(endpoints_for_project(project).filter(pk__in=wanted))
        if len(found) != len(set(wanted)):
            raise ValueError(f"every {self.each} must be an active endpoint of the project or of the site")
        return found


class JobOptions(serializers.Serializer):
    """The options of one job kind (``JobKind.options``)."""


def command_flags(name: str, field) -> tuple[str, ...]:
    """How the ``generate`` command spells an option: the field's ``command_flags``, or ``--the-name``."""
    return getattr(field, "command_flags", ()) or (f"--{name.replace('_', '-')}",)


def command_help(field) -> str:
    return getattr(field, "command_help", "") or str(field.help_text or "")


def option_fields(options_class) -> dict:
    """The kind's option fields by name (fresh copies, safe to bind to another serializer)."""
    if options_class is None:
        return {}
    return {name: copy.deepcopy(field) for name, field in options_class._declared_fields.items()}


def option_defaults(options_class) -> dict:
    """What ``job_create`` passes the kind for each option a door leaves out."""
    defaults = {}
    for name, field in option_fields(options_class).items():
        default = field.default
        defaults[name] = None if default is empty else (default() if callable(default) else default)
    return defaults


def options_resolve(options_class, project, data: dict, errors: dict) -> dict:
    """The kind's options among a door's validated ``data``, each resolved for the project (endpoint ids become
    endpoints); what is wrong goes into ``errors`` by field. Options absent from ``data`` are left out."""
    resolved = {}
    for name, field in option_fields(options_class).items():
        if name not in data:
            continue
        try:
            resolved[name] = (
                field.resolve(project, data[name]) if isinstance(field, OptionField) else data[name]
            )
        except ValueError as exc:
            errors[name] = str(exc)
    return resolved

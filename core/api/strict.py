"""Input the API does not know is refused, never silently ignored: unknown body fields and query parameters;
malformed cursors and over-nested JSON are 4xx, never server errors."""

import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from rest_framework import serializers
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.mixins import ListModelMixin
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.utils.urls import replace_query_param

# Parameters DRF itself reads on every view (content negotiation).
ALWAYS_ALLOWED = {"format"}
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class StrictInputSerializer(serializers.Serializer):
    """An input serializer that names every unknown field instead of dropping it."""

    def to_internal_value(self, data):
        if hasattr(data, "keys"):
            unknown = sorted(set(data.keys()) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {
                        name: [f"Unknown field. Accepted fields: {', '.join(self.fields) or 'none'}."]
                        for name in unknown
                    }
                )
        return super().to_internal_value(data)


class JsonBoolean(serializers.BooleanField):
    """A JSON true or false, and only that: 0, 1, "true" or "on" are refused, not read as a boolean."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class LimitedDepthJSONParser(JSONParser):
    """DRF's JSON parser, refusing a body nested too deeply to parse with a 400 instead of a RecursionError."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the JSON is nested too deeply.") from None


def check_query_params(request, allowed: set[str]) -> None:
    unknown = sorted(set(request.query_params) - set(allowed) - ALWAYS_ALLOWED)
    if unknown:
        accepted = ", ".join(sorted(set(allowed))) or "none"
        raise ParseError(f"Unknown query parameter(s): {', '.join(unknown)}. Accepted: {accepted}.")


def check_body_fields(data, serializer_class) -> None:
    """A body may hold only the fields of ``serializer_class``; without one, the endpoint takes no body."""
    if serializer_class is None:
        if data:
            if hasattr(data, "keys"):
                raise ValidationError(
                    {name: ["Unknown field. This endpoint takes no body."] for name in sorted(data.keys())}
                )
            raise ParseError("This endpoint takes no body.")
        return
    if hasattr(data, "keys"):
        fields = serializer_class().fields
        unknown = sorted(set(data.keys()) - set(fields))
        if unknown:
            accepted = ", ".join(fields) or "none"
            raise ValidationError(
                {name: [f"Unknown field. Accepted fields: {accepted}."] for name in unknown}
            )


class StrictApiMixin:
    """The base of every REST API view: what the API does not know is refused (400, naming it), never ignored.

    Query parameters: the fields of ``query_serializer_class`` (filters), the paginator's (cursor, page size) on a
    list, and ``extra_query_params``. Body fields: those of ``body_serializer_classes[method]``; a method without
    one takes no body. Bodies are JSON. The schema generator (``core.api.schema.StrictAutoSchema``) documents
    the same parameters and bodies from the same attributes, so the documentation and the check cannot drift apart.
    """

    parser_classes = [LimitedDepthJSONParser]
    query_serializer_class: type[serializers.Serializer] | None = None
    extra_query_params: frozenset[str] = frozenset()
    body_serializer_classes: dict[str, type[serializers.Serializer]] = {}

    def get_parsers(self):
        # A body is JSON. A method that takes none also reads forms, only to refuse what they hold (an empty form,
        # as some clients send with a bare POST, passes).
        if self.body_serializer_classes.get(getattr(self.request, "method", None)) is None:
            return [parser() for parser in (LimitedDepthJSONParser, FormParser, MultiPartParser)]
        return super().get_parsers()

    def allowed_query_params(self) -> set[str]:
        allowed = set(self.extra_query_params)
        if self.query_serializer_class is not None:
            allowed |= set(self.query_serializer_class().fields)
        if isinstance(self, ListModelMixin) and self.request.method in ("GET", "HEAD"):
            paginator = getattr(self, "paginator", None)
            if paginator is not None:
                allowed |= {
                    parameter["name"] for parameter in paginator.get_schema_operation_parameters(self)
                }
        return allowed

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication, permissions and throttles come first
        if not hasattr(self, request.method.lower()):
            return  # a method the view does not answer: 405, whatever it carries
        check_query_params(request, self.allowed_query_params())
        if request.query_params.get("format") == "":  # DRF would read it as "not given"
            raise ValidationError({"format": ["An empty format: leave it out, or name one."]})
        if request.method in BODY_METHODS:
            check_body_fields(request.data, self.body_serializer_classes.get(request.method))

    def validated_query(self) -> dict:
        if self.query_serializer_class is None:
            return {}
        # A plain dict, so an empty value is a value (DRF reads ``?topic=`` in a QueryDict as "not given").
        fields = self.query_serializer_class().fields
        given = {name: value for name, value in self.request.query_params.items() if name in fields}
        query = self.query_serializer_class(data=given)
        query.is_valid(raise_exception=True)
        return query.validated_data

    def validated_body(self) -> dict:
        body = self.body_serializer_classes[self.request.method](data=self.request.data)
        body.is_valid(raise_exception=True)
        return body.validated_data


# What a cursor's position may be, by what the ordering field holds: every value of the pattern is one the
# database takes (ids and counts fit its integers; a slug is one of a slug's characters).
CURSOR_POSITIONS = {"integer": r"[0-9]{1,18}", "slug": r"[-a-zA-Z0-9_]{1,100}"}


def cursor_pattern(position_kind: str) -> str:
    return rf"^[nr][0-9]{{1,4}}(\.{CURSOR_POSITIONS[position_kind]})?$"


CURSOR_HELP = "Where the page starts: the cursor of a page's next or previous link, as it is."


def cursor_query_field(position_kind: str = "integer") -> serializers.RegexField:
    """The ``cursor`` of a view whose filters are a serializer: the same shape its paginator declares."""
    return serializers.RegexField(
        cursor_pattern(position_kind),
        required=False,
        help_text=CURSOR_HELP,
        error_messages={"invalid": CheckedCursorPagination.invalid_cursor_message},
    )


class CheckedCursorPagination(CursorPagination):
    """Cursor pagination with a cursor of a declared shape: ``n`` (forward) or ``r`` (backward), the offset, and
    after a dot the position (the ordering field's value where the page starts), as ``n0.1234``. The schema
    states the shape as a pattern, so a client (or a generator of test requests) knows every cursor it may send;
    one of any other shape is a 400 naming ``cursor``, never a server error or silently the first page."""

    # What the ordering field holds: "integer" (ids, versions, positions) or "slug".
    position_kind = "integer"
    invalid_cursor_message = "Invalid cursor: use the next or previous link of a page."

    def cursor_pattern(self) -> str:
        return cursor_pattern(self.position_kind)

    def decode_cursor(self, request):
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        if not re.fullmatch(self.cursor_pattern()[1:-1], encoded):
            raise ValidationError({self.cursor_query_param: [self.invalid_cursor_message]})
        offset, _, position = encoded[1:].partition(".")
        return Cursor(
            offset=min(int(offset), self.offset_cutoff), reverse=encoded[0] == "r", position=position or None
        )

    def encode_cursor(self, cursor):
        encoded = f"{'r' if cursor.reverse else 'n'}{cursor.offset}"
        if cursor.position is not None:
            encoded += f".{cursor.position}"
        return replace_query_param(self.base_url, self.cursor_query_param, encoded)

    def get_page_size(self, request):
        """A page size that is not a whole number from 1 up is a 400 naming it, not silently the default."""
        if self.page_size_query_param and self.page_size_query_param in request.query_params:
            given = request.query_params[self.page_size_query_param]
            if not given.isascii() or not given.isdigit() or int(given) < 1:
                raise ValidationError({self.page_size_query_param: ["A whole number from 1 up is required."]})
        return super().get_page_size(request)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 1}
            if parameter["name"] == self.cursor_query_param:
                parameter["schema"] = {**parameter["schema"], "pattern": self.cursor_pattern()}
                parameter["description"] = CURSOR_HELP
        return parameters

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except (ValueError, TypeError, OverflowError, DjangoValidationError, DataError):
            if request.query_params.get(self.cursor_query_param) is None:
                raise
            raise ValidationError({self.cursor_query_param: [self.invalid_cursor_message]}) from None

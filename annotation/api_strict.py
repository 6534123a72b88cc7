"""Input the API does not know is refused, never silently ignored: unknown body fields and query parameters;
malformed cursors and over-nested JSON are 4xx, never server errors."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.pagination import CursorPagination
from rest_framework.parsers import JSONParser

# Parameters DRF itself reads on every view (content negotiation).
ALWAYS_ALLOWED = {"format"}


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


def check_query_params(request, allowed: set[str]) -> None:
    unknown = sorted(set(request.query_params) - set(allowed) - ALWAYS_ALLOWED)
    if unknown:
        accepted = ", ".join(sorted(set(allowed))) or "none"
        raise ParseError(f"Unknown query parameter(s): {', '.join(unknown)}. Accepted: {accepted}.")


class StrictQueryMixin:
    """Views list ``query_params_allowed``; anything else in the query string is a 400."""

    query_params_allowed: set[str] = set()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        check_query_params(request, self.query_params_allowed)


class CheckedCursorPagination(CursorPagination):
    """Cursor pagination whose cursor, when it does not fit the ordering (a made-up position, a number past the
    database's integers), is a 404 "Invalid cursor" like an undecodable one, never a server error."""

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except (ValueError, TypeError, OverflowError, DjangoValidationError, DataError):
            if request.query_params.get(self.cursor_query_param) is None:
                raise
            raise NotFound(self.invalid_cursor_message) from None


class LimitedDepthJSONParser(JSONParser):
    """DRF's JSON parser, refusing a body nested too deeply to parse with a 400 instead of a RecursionError."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the JSON is nested too deeply.") from None

"""Input the API does not know is refused, never silently ignored: unknown body fields and query parameters."""

from rest_framework import serializers
from rest_framework.exceptions import ParseError

# Parameters DRF itself reads on every view (content negotiation).
ALWAYS_ALLOWED = {"format"}


class StrictInputSerializer(serializers.Serializer):
    """An input serializer that names every unknown field instead of dropping it."""

    def to_internal_value(self, data):
        if hasattr(data, "keys"):
            unknown = sorted(set(data.keys()) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"Unknown field. Accepted fields: {', '.join(self.fields) or 'none'}."] for name in unknown}
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

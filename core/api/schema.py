"""The OpenAPI schema of the REST API says what the API answers, errors included.

``StrictAutoSchema`` (``DEFAULT_SCHEMA_CLASS``) reads the same attributes the views' ``StrictApiMixin`` checks:
the filters of ``query_serializer_class`` become query parameters, ``body_serializer_classes`` the request bodies
(closed: ``additionalProperties: false``, since unknown fields are refused), and every operation documents the
errors it can answer in one place here: 400 (an unknown or invalid parameter or field), 401, 403 (where a
project role is needed), 404 (an outsider, an unknown object), 415 (a body that is not JSON)
and 429 (with ``Retry-After``).
"""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from core.api.strict import BODY_METHODS, StrictApiMixin, StrictInputSerializer


class ErrorOutputSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in words.")


# A 400 names what is wrong: ``detail`` (an unknown query parameter, a malformed body), or each field at fault
# with its messages (a list, or an object for a nested field such as ``splits``).
VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": {
        "oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}],
    },
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "required": True,
        "schema": {"type": "integer"},
    }
}


class StrictAutoSchema(AutoSchema):
    def _strict_view(self) -> bool:
        return isinstance(self.view, StrictApiMixin)

    def get_request_serializer(self):
        if not self._strict_view():
            return super().get_request_serializer()
        body = self.view.body_serializer_classes.get(self.method) if self.method in BODY_METHODS else None
        return body() if body is not None else None

    def get_override_parameters(self):
        parameters = list(super().get_override_parameters())
        query = getattr(self.view, "query_serializer_class", None)
        if self._strict_view() and query is not None and self.method == "GET":
            parameters.append(query)
        return parameters

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictInputSerializer):
            schema["additionalProperties"] = False
        return schema

    def error_responses(self) -> dict[str, OpenApiResponse]:
        errors = {
            "400": OpenApiResponse(
                VALIDATION_ERROR_SCHEMA, "An unknown query parameter or body field, or an invalid value."
            ),
            "401": OpenApiResponse(ErrorOutputSerializer, "No valid token or session."),
            "404": OpenApiResponse(ErrorOutputSerializer, "Not found, or not a project of the caller's."),
            "429": OpenApiResponse(ErrorOutputSerializer, "Too many requests: see Retry-After."),
        }
        if "{slug}" in self.path:
            errors["403"] = OpenApiResponse(
                ErrorOutputSerializer, "The caller's role in the project is not enough."
            )
        if self.get_request_serializer() is not None:
            errors["415"] = OpenApiResponse(ErrorOutputSerializer, "The body is not JSON.")
        return errors

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if not self._strict_view():
            return responses
        for code, response in self.error_responses().items():
            if code not in responses:
                responses[code] = self._get_response_for_code(response, code, direction=direction)
        if "429" in responses:
            responses["429"]["headers"] = {**responses["429"].get("headers", {}), **RETRY_AFTER}
        return dict(sorted(responses.items()))

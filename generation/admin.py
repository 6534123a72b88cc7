from django import forms
from django.contrib import admin

from .models import GenerationJob, LLMCall, ModelEndpoint, ProjectGenerationSettings, PromptTemplate
from .services import TemplateProblem, prompt_template_add_version
from .services.templates import template_check


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "project",
        "model",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "requests_per_minute",
        "is_active",
        "from_environment",
    ]
    list_filter = ["is_active", "supports_json_schema", "from_environment"]
    search_fields = ["name", "model", "base_url"]
    raw_id_fields = ["project"]


class PromptTemplateForm(forms.ModelForm):
    class Meta:
        model = PromptTemplate
        fields = ["kind", "name", "language", "system", "user", "output_schema", "notes"]

    def clean(self):
        data = super().clean()
        kind = data.get("kind") or getattr(self.instance, "kind", "")
        try:
            template_check(
                kind=kind,
                system=data.get("system", ""),
                user=data.get("user", ""),
                output_schema=data.get("output_schema"),
            )
        except TemplateProblem as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    """Saving a template never changes the version shown: it stores the next version (versions are immutable)."""

    form = PromptTemplateForm
    list_display = ["kind", "name", "language", "version", "created_at"]
    list_filter = ["kind", "language"]
    search_fields = ["name", "system", "user"]

    def get_readonly_fields(self, request, obj=None):
        return ["kind", "name", "language", "version", "created_at"] if obj is not None else ["version"]

    def save_model(self, request, obj, form, change):
        new = prompt_template_add_version(
            kind=obj.kind,
            name=obj.name,
            language=obj.language,
            system=obj.system,
            user=obj.user,
            output_schema=obj.output_schema,
            notes=obj.notes,
        )
        # The edited version stays as it was in the database; the page goes on with the new one.
        obj.pk, obj.version, obj.created_at = new.pk, new.version, new.created_at

    def has_delete_permission(self, request, obj=None):
        return obj is None or not obj.calls.exists()


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "kind",
        "endpoint",
        "status",
        "done",
        "failed",
        "total",
        "cost",
        "created_at",
    ]
    list_filter = ["status", "kind", "project"]
    raw_id_fields = ["template", "answer_template", "created_by"]
    readonly_fields = ["owner", "heartbeat_at", "resumed"]


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "job",
        "item",
        "purpose",
        "status",
        "n_attempts",
        "tokens_in",
        "tokens_out",
        "latency_ms",
    ]
    list_filter = ["status", "purpose"]
    raw_id_fields = ["job", "item", "endpoint", "template"]
    search_fields = ["purpose", "error"]


@admin.register(ProjectGenerationSettings)
class ProjectGenerationSettingsAdmin(admin.ModelAdmin):
    list_display = ["project", "revision_endpoint", "revise_automatically"]

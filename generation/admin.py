from django.contrib import admin

from .models import GenerationJob, LLMCall, ModelEndpoint, PromptTemplate


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "model", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "is_active"]
    list_filter = ["is_active", "supports_json_schema"]
    search_fields = ["name", "model", "base_url"]


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["kind", "name", "language", "version", "created_at"]
    list_filter = ["kind", "language"]
    search_fields = ["name", "system", "user"]

    def get_readonly_fields(self, request, obj=None):
        # A version is immutable once saved; change it by adding a new version.
        if obj is not None:
            return [field.name for field in obj._meta.fields]
        return []


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "kind", "endpoint", "status", "done", "failed", "total", "cost", "created_at"]
    list_filter = ["status", "kind", "project"]
    raw_id_fields = ["template"]


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = ["id", "job", "item", "purpose", "status", "n_attempts", "tokens_in", "tokens_out", "latency_ms"]
    list_filter = ["status", "purpose"]
    raw_id_fields = ["job", "item", "endpoint", "template"]
    search_fields = ["purpose", "error"]

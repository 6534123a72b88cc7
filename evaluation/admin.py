from django.contrib import admin

from .models import Release, ReleaseItem


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = ["project", "version", "status", "seed", "checksum", "created_by", "created_at"]
    list_filter = ["project", "status"]
    readonly_fields = ["checksum", "counts", "card", "created_at"]

    def has_change_permission(self, request, obj=None):
        return False  # a release is immutable; cut a new one instead


@admin.register(ReleaseItem)
class ReleaseItemAdmin(admin.ModelAdmin):
    list_display = ["release", "split", "position", "causal_class", "item"]
    list_filter = ["release", "split", "causal_class"]
    raw_id_fields = ["release", "item"]

    def has_change_permission(self, request, obj=None):
        return False  # frozen

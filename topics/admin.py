from django.contrib import admin

from .models import Topic


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["label", "project", "cluster", "size", "selected", "is_residual"]
    list_filter = ["project", "selected", "is_residual"]
    search_fields = ["label"]

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .models import (
    Assignment,
    CurationDecision,
    DroppedRow,
    ImportBatch,
    Item,
    ItemGroup,
    Judgment,
    Membership,
    Option,
    Project,
    Revision,
)


class MembershipAdminForm(forms.ModelForm):
    """Expertise tags typed as "saúde, economia", not as JSON."""

    expertise = forms.CharField(
        label=_("expertise tags"), required=False, help_text=_("Separated by commas, e.g. saúde, economia")
    )

    class Meta:
        model = Membership
        fields = ["user", "project", "role", "expertise"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["expertise"] = ", ".join(self.instance.expertise)

    def clean_expertise(self):
        from .team import tags_parse

        try:
            return tags_parse(self.cleaned_data["expertise"])
        except ValidationError as error:
            raise forms.ValidationError(error.messages) from None


class MembershipInline(admin.TabularInline):
    model = Membership
    form = MembershipAdminForm
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "design", "answer_format", "language", "overlap", "created_at"]
    list_filter = ["design", "answer_format", "language"]
    search_fields = ["name", "slug", "description"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipAdminForm
    list_display = ["user", "project", "role", "expertise"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__name"]
    autocomplete_fields = ["user", "project"]


@admin.register(ItemGroup)
class ItemGroupAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "kind", "external_id"]
    list_filter = ["project", "kind"]
    search_fields = ["external_id", "context"]


class OptionInline(admin.TabularInline):
    model = Option
    extra = 0


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "short_question",
        "project",
        "causal_class",
        "origin",
        "status",
        "round",
        "answer_by",
        "topic",
    ]
    list_filter = ["project", "status", "causal_class", "origin", "answer_by", "round"]
    search_fields = ["question", "external_id", "reference_answer"]
    list_select_related = ["project", "topic"]
    raw_id_fields = ["group", "topic", "answer_author", "import_batch"]
    readonly_fields = ["text_key", "version", "created_at", "updated_at"]
    inlines = [OptionInline]
    list_per_page = 50

    @admin.display(description="question")
    def short_question(self, obj):
        return obj.question[:90]


@admin.register(Revision)
class RevisionAdmin(admin.ModelAdmin):
    list_display = ["item", "number", "round", "kind", "author", "llm_call_id", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["item", "author"]

    def has_change_permission(self, request, obj=None):
        return False  # revisions are append-only


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "round", "status", "assigned_at", "expires_at"]
    list_filter = ["status", "round"]
    raw_id_fields = ["item", "annotator"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "round", "vote", "causal_class", "edited", "created_at"]
    list_filter = ["vote", "round", "edited"]
    raw_id_fields = ["item", "annotator", "assignment"]
    search_fields = ["comment"]


@admin.register(CurationDecision)
class CurationDecisionAdmin(admin.ModelAdmin):
    list_display = ["item", "round", "decision", "curator", "created_at"]
    list_filter = ["decision"]
    raw_id_fields = ["item", "curator"]


class DroppedRowInline(admin.TabularInline):
    model = DroppedRow
    extra = 0
    can_delete = False
    readonly_fields = ["line", "stage", "field", "reason", "question", "external_id"]
    max_num = 0


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["filename", "project", "status", "created_by", "created_at"]
    list_filter = ["status", "project"]
    readonly_fields = ["funnel", "errors", "created_at", "finished_at"]

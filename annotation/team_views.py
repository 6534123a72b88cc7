"""The owner's pages: Members (add, change role and expertise, remove) and Settings; the project's history.

Views only read forms and call annotation.team; every change is recorded there.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from . import team
from .guidelines import render_markdown
from .invitations import (
    invitation_accept,
    invitation_create,
    invitation_open,
    invitation_withdraw,
    invitations_open,
)
from .models import Membership, Project
from .permissions import Role, get_project_for_user

ROLE_CHOICES = Membership.Role.choices


class MemberAddForm(forms.Form):
    user = forms.CharField(label=gettext_lazy("Username or e-mail address"), max_length=254)
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=ROLE_CHOICES)
    expertise = forms.CharField(
        label=gettext_lazy("Expertise tags"),
        required=False,
        max_length=2000,
        help_text=gettext_lazy("Separated by commas, e.g. saúde, economia"),
    )


class InvitationAcceptForm(forms.Form):
    username = forms.CharField(label=gettext_lazy("Username"), max_length=150)
    password1 = forms.CharField(
        label=gettext_lazy("Password"), widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label=gettext_lazy("The password again"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ."))
        return data


class MemberForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=ROLE_CHOICES)
    expertise = forms.CharField(label=gettext_lazy("Expertise tags"), required=False, max_length=2000)


class SettingsForm(forms.Form):
    language = forms.ChoiceField(
        label=gettext_lazy("Language of the items"),
        choices=[("pt-BR", "Português (pt-BR)"), ("en", "English (en)")],
    )
    overlap = forms.IntegerField(
        label=gettext_lazy("Judgments per item per round"), min_value=1, max_value=50
    )
    overlap_max = forms.IntegerField(
        label=gettext_lazy("Adaptive overlap: at most this many judgments"),
        min_value=1,
        max_value=50,
        required=False,
        help_text=gettext_lazy(
            "Empty: every item gets exactly the judgments above. Set: the judgments above are the least, and an "
            "item gets more while its label's probability is below the threshold."
        ),
    )
    overlap_threshold = forms.FloatField(
        label=gettext_lazy("Adaptive overlap: label probability to reach"),
        min_value=0.5,
        max_value=1.0,
        required=False,
    )
    aggregation = forms.ChoiceField(
        label=gettext_lazy("Aggregation proposing the labels"),
        choices=Project._meta.get_field("aggregation").choices,
        required=False,
        help_text=gettext_lazy(
            "Shown beside the majority on the review page; a curator still decides every item."
        ),
    )
    control_rate = forms.FloatField(
        label=gettext_lazy("Share of control items served"),
        min_value=0.0,
        max_value=0.5,
        required=False,
        help_text=gettext_lazy(
            "0 to 0.5: how often an annotator is served an approved control item unannounced."
        ),
    )
    assignment_timeout_minutes = forms.IntegerField(
        label=gettext_lazy("Assignment timeout (minutes)"),
        min_value=1,
        max_value=7 * 24 * 60,
        help_text=gettext_lazy("An item left alone this long goes back to the pool."),
    )
    allow_self_review = forms.BooleanField(
        label=gettext_lazy("Authors may review their own answers when nothing else is left for them"),
        required=False,
        help_text=gettext_lazy("Such judgments are marked and left out of the agreement figures by default."),
    )
    show_judged_fields = forms.BooleanField(
        label=gettext_lazy("Show annotators the item's class before they judge it"),
        required=False,
        help_text=gettext_lazy(
            "Off (recommended): an annotator sees the item's class, and any other field they are asked to judge, "
            "only after judging the item, so it cannot anchor their label. Curators always see it."
        ),
    )
    criteria = forms.CharField(
        label=gettext_lazy("Rating criteria"),
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=gettext_lazy("One a line: key; English name; nome em português; min; max"),
    )
    label_set = forms.CharField(
        label=gettext_lazy("Causal labels"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=gettext_lazy("One a line: key; English name; nome em português"),
    )
    guidelines = forms.CharField(
        label=gettext_lazy("Guidelines (Markdown)"), required=False, widget=forms.Textarea(attrs={"rows": 12})
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project

    @classmethod
    def for_project(cls, project, data=None):
        initial = {
            "language": project.language,
            "overlap": project.overlap,
            "overlap_max": project.overlap_max,
            "overlap_threshold": project.overlap_threshold,
            "aggregation": project.aggregation,
            "control_rate": project.control_rate,
            "assignment_timeout_minutes": project.assignment_timeout_minutes,
            "allow_self_review": project.allow_self_review,
            "show_judged_fields": bool((project.design_settings or {}).get("show_judged_fields")),
            "criteria": team.criteria_text(project.criteria),
            "label_set": team.labels_text(project),
            "guidelines": project.guidelines,
        }
        return cls(data, project=project, initial=initial)

    def changes(self) -> dict:
        """The settings as annotation.team.project_settings_update takes them (raises ValidationError)."""
        data = self.cleaned_data
        label_set, label_names = team.labels_parse(data["label_set"])
        return {
            "language": data["language"],
            "overlap": data["overlap"],
            "overlap_max": data["overlap_max"],
            # Left out of the form (an older client): as they are.
            "overlap_threshold": _given(data["overlap_threshold"], self.project.overlap_threshold),
            "aggregation": data["aggregation"] or self.project.aggregation,
            "control_rate": _given(data["control_rate"], self.project.control_rate),
            "assignment_timeout_minutes": data["assignment_timeout_minutes"],
            "allow_self_review": data["allow_self_review"],
            "show_judged_fields": data["show_judged_fields"],
            "criteria": team.criteria_parse(data["criteria"]),
            "label_set": label_set,
            "label_names": label_names,
            "guidelines": data["guidelines"],
        }


def _given(value, current):
    return current if value is None else value


def _add_errors(form, error: ValidationError) -> None:
    for field, errors in error.message_dict.items():
        form.add_error(field if field in form.fields else None, errors)


@login_required
@require_http_methods(["GET", "POST"])
def members(request, slug):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    form = MemberAddForm(request.POST or None, prefix="add")
    if request.method == "POST" and form.is_valid() and _invites(form.cleaned_data["user"]):
        try:
            invitation, link = invitation_create(
                project=project,
                by=request.user,
                email=form.cleaned_data["user"],
                role=form.cleaned_data["role"],
                expertise=team.tags_parse(form.cleaned_data["expertise"]),
                link_for=lambda token: request.build_absolute_uri(
                    reverse("annotation:invitation_accept", args=[token])
                ),
            )
        except ValidationError as error:
            _add_errors(form, error)
        else:
            # The link is shown on this response only (like a new API token), for an owner without a mail server.
            return _members_page(request, project, MemberAddForm(prefix="add"), invited=(invitation, link))
    elif request.method == "POST" and form.is_valid():
        try:
            added = team.membership_add(
                project=project,
                by=request.user,
                identifier=form.cleaned_data["user"],
                role=form.cleaned_data["role"],
                expertise=team.tags_parse(form.cleaned_data["expertise"]),
            )
        except ValidationError as error:
            _add_errors(form, error)
        else:
            messages.success(request, _("%(name)s added.") % {"name": added.user.get_username()})
            return redirect("annotation:members", slug=project.slug)
    return _members_page(request, project, form, status=400 if form.errors else 200)


def _invites(identifier: str) -> bool:
    """An e-mail address no account has: the person is invited rather than added."""
    identifier = identifier.strip()
    return "@" in identifier and not get_user_model().objects.filter(email__iexact=identifier).exists()


def _members_page(request, project, add_form, status=200, failed=None, invited=None):
    rows = []
    for membership in project.memberships.select_related("user").order_by("user__username"):
        if failed is not None and failed[0] == membership.pk:
            row_form = failed[1]
        else:
            row_form = MemberForm(
                initial={"role": membership.role, "expertise": ", ".join(membership.expertise)},
                prefix=f"m{membership.pk}",
            )
        rows.append({"membership": membership, "form": row_form})
    context = {
        "project": project,
        "add_form": add_form,
        "rows": rows,
        "invitations": invitations_open(project),
        "invited": invited,
    }
    return render(request, "annotation/members.html", context, status=status)


@login_required
@require_POST
def invitation_withdraw_view(request, slug, invitation_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    try:
        email = invitation_withdraw(project=project, invitation_id=invitation_id)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, _("The invitation of %(email)s was withdrawn.") % {"email": email})
    return redirect("annotation:members", slug=project.slug)


def invitation_accept_view(request, token):
    """Open to anyone holding the link: choose a username and a password; the account joins the project."""
    try:
        invitation = invitation_open(token)
    except ValidationError as error:
        return render(
            request, "annotation/invitation.html", {"problem": " ".join(error.messages)}, status=410
        )
    form = InvitationAcceptForm(request.POST or None)
    if request.method == "POST" and not request.user.is_authenticated and form.is_valid():
        try:
            user = invitation_accept(
                token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
            )
        except ValidationError as error:
            if hasattr(error, "error_dict"):
                _add_errors(form, error)
            else:
                form.add_error(None, error)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, _("Welcome to %(project)s.") % {"project": invitation.project.name})
            return redirect("annotation:project_detail", slug=invitation.project.slug)
    context = {"invitation": invitation, "form": form}
    return render(request, "annotation/invitation.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def member_update(request, slug, membership_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    membership = get_object_or_404(
        Membership.objects.select_related("user"), project=project, pk=membership_id
    )
    form = MemberForm(request.POST, prefix=f"m{membership.pk}")
    if form.is_valid():
        try:
            team.membership_update(
                membership=membership,
                by=request.user,
                role=form.cleaned_data["role"],
                expertise=team.tags_parse(form.cleaned_data["expertise"]),
            )
        except ValidationError as error:
            _add_errors(form, error)
        else:
            messages.success(request, _("%(name)s saved.") % {"name": membership.user.get_username()})
            return redirect("annotation:members", slug=project.slug)
    return _members_page(
        request, project, MemberAddForm(prefix="add"), status=400, failed=(membership.pk, form)
    )


@login_required
@require_POST
def member_remove(request, slug, membership_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    membership = get_object_or_404(
        Membership.objects.select_related("user"), project=project, pk=membership_id
    )
    try:
        team.membership_remove(membership=membership, by=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, _("%(name)s removed.") % {"name": membership.user.get_username()})
    return redirect("annotation:members", slug=project.slug)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request, slug):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    form = SettingsForm.for_project(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            changed = team.project_settings_update(project=project, by=request.user, **form.changes())
        except ValidationError as error:
            _add_errors(form, error)
        else:
            if changed:
                messages.success(request, _("Settings saved: %(fields)s.") % {"fields": ", ".join(changed)})
            else:
                messages.info(request, _("Nothing changed."))
            return redirect("annotation:project_settings", slug=project.slug)
    context = {"project": project, "form": form}
    return render(request, "annotation/project_settings.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def guidelines_preview(request, slug):
    """The guidelines as annotators will read them (sanitised Markdown); writes nothing."""
    get_project_for_user(request.user, slug, Role.OWNER)
    html = render_markdown(request.POST.get("guidelines", "")[:100_000])
    return render(request, "annotation/_guidelines_preview.html", {"html": html})


@login_required
def project_history(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    return render(
        request,
        "annotation/project_history.html",
        {"project": project, "changes": team.project_history(project)},
    )

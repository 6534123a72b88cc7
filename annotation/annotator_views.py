"""The annotator's pages: the queue, the item page (judge, answer or skip), edits in place, guidelines,
and items that need revision by hand. Views stay thin: annotation.queue and annotation.judging do the work.

Blind: nothing here renders anybody else's judgment; an annotator sees only the item and their own work.
"""

import hashlib
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from . import queue, services
from .curation import item_return_to_review
from .designs import design_for, design_item_context, unseen_before_judging
from .drafts import draft_for, draft_save
from .forms import AnswerForm, JudgmentForm, PartForm, SkipForm, options_from_post
from .guidelines import render_markdown
from .judging import (
    EDIT_PARTS,
    AssignmentClosed,
    JudgmentLocked,
    answer_reopenable,
    answer_rewrite,
    answer_submit,
    item_edit,
    judgment_change,
    judgment_last,
    judgment_rules,
    judgment_submit,
)
from .keyboard import keyboard_for
from .models import Assignment, CurationDecision, Item, Option
from .permissions import (
    Role,
    can_edit_item,
    get_assignment_for_user,
    get_item_for_editing,
    get_item_for_user,
    get_project_for_user,
    has_role,
    may_edit_item,
)
from .services import Author, DecisionRefused, EditConflict, UndoRefused


@login_required
def queue_page(request, slug):
    """Where an annotator starts in a project: what waits for them and the "Next item" button."""
    project = get_project_for_user(request.user, slug)
    context = {
        "project": project,
        "waiting": queue.waiting_counts(request.user, [project])[project.pk],
        "today": queue.done_today(request.user, [project]).get(project.pk, {}),
        "current": queue.active_assignment(project=project, annotator=request.user),
        "needs_revision": project.items.filter(status=Item.Status.NEEDS_REVISION).count(),
    }
    return render(request, "annotation/queue.html", context)


@login_required
@require_POST
def queue_next(request, slug):
    project = get_project_for_user(request.user, slug)
    kind = request.POST.get("kind") or None
    if kind not in (None, *queue.KINDS):
        kind = None
    return _go_to_next(request, project, kind)


def _go_to_next(request, project, *kinds):
    """Hand out the next item (trying ``kinds`` in order, then any) and go to it, or back to the queue."""
    for kind in (*kinds, None):
        assignment = queue.assignment_next(project=project, annotator=request.user, kind=kind)
        if assignment is not None:
            return redirect("annotation:assignment", slug=project.slug, assignment_id=assignment.pk)
    messages.info(request, _("Nothing waits for you in this project right now. Thank you!"))
    return redirect("annotation:queue", slug=project.slug)


@login_required
def assignment_page(request, slug, assignment_id):
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    item = assignment.item
    context = _item_context(request, project, item, assignment)
    draft = draft_for(assignment)
    context["draft_json"] = json.dumps(draft, ensure_ascii=False) if draft else ""
    if assignment.round == 0:
        answer = draft.get("answer") or item.reference_answer
        context["answer_form"] = AnswerForm(initial={"version": item.version, "answer": answer})
        context["skip_form"] = SkipForm()
        context["answer_reopenable"] = answer_reopenable(assignment=assignment, item=item)
    elif assignment.status != Assignment.Status.SUBMITTED:
        # Built only when the cached HTML of the empty form is missing (see annotate.html).
        context["form"] = SimpleLazyObject(lambda: _judgment_form(project, item))
        context["form_is_bound"] = False
    return render(request, "annotation/annotate.html", context)


@login_required
@require_POST
def assignment_draft(request, slug, assignment_id):
    """Keep what the annotator typed so far (JSON body); 204, or 409 when the assignment is closed.

    Typing keeps the assignment from expiring (reading its page writes nothing: no GET writes)."""
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id, with_item=False)
    queue.assignment_touch(assignment=assignment, project=project)
    try:
        data = json.loads(request.body or b"{}")
        saved = draft_save(assignment=assignment, data=data)
    except (ValueError, ValidationError):
        return HttpResponse(status=400)
    return HttpResponse(status=204 if saved is not None else 409)


def _judgment_form(project, item, data=None, initial=None) -> JudgmentForm:
    """The judgment form for this item: what its design asks (``judging.judgment_rules``, the rule the services
    check too), for submitting and for changing a judgment alike."""
    item.project = project  # already loaded: the hooks read it
    rules = judgment_rules(item)
    return JudgmentForm(
        data,
        project=project,
        criteria=rules.criteria,
        labels=rules.labels,
        asks_vote=rules.asks_vote,
        initial=initial,
    )


def _form_key(project, item) -> str:
    """Changes whenever what the judgment form shows changes (criteria, labels), for its cached HTML."""
    design = design_for(project)
    item.project = project
    shown = [
        design.judgment_criteria(item),
        design.judgment_labels(item),
        design.judgment_asks_vote(item),
        project.label_names,
    ]
    return hashlib.sha1(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:16]


@login_required
@require_POST
def assignment_judge(request, slug, assignment_id):
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    form = _judgment_form(project, assignment.item, request.POST)
    if form.is_valid():
        try:
            judgment_submit(
                assignment=assignment,
                ratings=form.ratings(),
                vote=form.cleaned_data.get("vote", ""),
                causal_class=form.cleaned_data["causal_class"],
                comment=form.cleaned_data["comment"],
            )
        except ValidationError as error:
            _add_errors(form, error)
        except AssignmentClosed as closed:
            form.add_error(None, str(closed))
        else:
            messages.success(request, _("Judgment saved."))
            return _go_to_next(request, project)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    context = {
        **_item_context(request, project, assignment.item, assignment),
        "form": form,
        "form_is_bound": True,
    }
    return render(request, "annotation/annotate.html", context, status=400)


@login_required
@require_POST
def assignment_change(request, slug, assignment_id):
    """*Previous*: change the judgment of a submitted assignment while its round is open."""
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    judgment = getattr(assignment, "judgment", None)
    if judgment is None:
        raise Http404("No judgment to change.")
    form = _judgment_form(project, assignment.item, request.POST)
    if form.is_valid():
        try:
            judgment_change(
                judgment=judgment,
                ratings=form.ratings(),
                vote=form.cleaned_data.get("vote", ""),
                causal_class=form.cleaned_data["causal_class"],
                comment=form.cleaned_data["comment"],
            )
        except ValidationError as error:
            _add_errors(form, error)
        except JudgmentLocked as locked:
            form.add_error(None, str(locked))
        else:
            messages.success(request, _("Judgment changed; the earlier version is kept."))
            return redirect("annotation:assignment", slug=project.slug, assignment_id=assignment.pk)
    context = {**_item_context(request, project, assignment.item, assignment), "change_form": form}
    return render(request, "annotation/annotate.html", context, status=400)


@login_required
def judgment_previous(request, slug):
    """*Previous*: the page of the annotator's last judgment in the project (to see or change it)."""
    project = get_project_for_user(request.user, slug)
    judgment = judgment_last(project=project, annotator=request.user)
    if judgment is None:
        messages.info(request, _("You have not judged anything in this project yet."))
        return redirect("annotation:queue", slug=project.slug)
    return redirect("annotation:assignment", slug=project.slug, assignment_id=judgment.assignment_id)


@login_required
@require_POST
def assignment_answer(request, slug, assignment_id):
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    form = AnswerForm(request.POST)
    conflict = None
    reopening = assignment.status == Assignment.Status.SUBMITTED  # the author rewrites the answer they wrote
    if form.is_valid():
        try:
            (answer_rewrite if reopening else answer_submit)(
                assignment=assignment,
                answer=form.cleaned_data["answer"],
                expected_version=form.cleaned_data["version"],
            )
        except ValidationError as error:
            _add_errors(form, error)
        except AssignmentClosed as closed:
            form.add_error(None, str(closed))
        except EditConflict as edit_conflict:
            conflict = edit_conflict.current
            # Keep what the person typed; the next save is based on the version they have now seen.
            form = AnswerForm({"answer": form.cleaned_data["answer"], "version": conflict.version})
        else:
            if reopening:
                messages.success(request, _("Answer rewritten; the earlier text is kept in the history."))
                return redirect("annotation:assignment", slug=project.slug, assignment_id=assignment.pk)
            messages.success(request, _("Answer saved; the question now goes to review."))
            return _go_to_next(request, project, queue.ANSWER)
    assignment.refresh_from_db()
    item = conflict or assignment.item
    context = {
        **_item_context(request, project, item, assignment),
        "answer_form": form,
        "skip_form": SkipForm(),
        "answer_conflict": conflict,
        "answer_reopenable": reopening,
    }
    return render(request, "annotation/annotate.html", context, status=409 if conflict else 400)


@login_required
@require_POST
def assignment_skip(request, slug, assignment_id):
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    form = SkipForm(request.POST)
    if form.is_valid():
        try:
            queue.assignment_skip(assignment=assignment, reason=form.cleaned_data["reason"])
        except ValidationError as error:
            _add_errors(form, error)
        else:
            messages.info(request, _("Question skipped."))
            return _go_to_next(request, project, queue.ANSWER)
    answer_form = AnswerForm(initial={"version": assignment.item.version})
    context = {
        **_item_context(request, project, assignment.item, assignment),
        "answer_form": answer_form,
        "skip_form": form,
        "skip_open": True,
    }
    return render(request, "annotation/annotate.html", context, status=400)


@login_required
@require_POST
def assignment_unskip(request, slug, assignment_id):
    """Undo a skip: the question is the annotator's again, if nobody else took it meanwhile."""
    project = get_project_for_user(request.user, slug)
    assignment = get_assignment_for_user(request.user, project, assignment_id)
    try:
        queue.assignment_unskip(assignment=assignment)
    except queue.SkipUndoRefused as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, _("Skip undone: the question is yours again."))
    return redirect("annotation:assignment", slug=project.slug, assignment_id=assignment.pk)


@login_required
@require_http_methods(["GET", "POST"])
def item_part(request, slug, item_id, part):
    """One part of an item (question, context, answer, options): shown, edited in place, saved (htmx)."""
    if part not in EDIT_PARTS:
        raise Http404("No such part.")
    project = get_project_for_user(request.user, slug)
    editing = request.method == "POST" or request.GET.get("edit") == "1"
    if not editing:
        item = get_item_for_user(request.user, project, item_id)
        _refuse_hidden_part(request.user, project, item, part)
        return _render_part(request, project, item, part, "part")
    item = get_item_for_editing(request.user, project, item_id)
    _refuse_hidden_part(request.user, project, item, part)
    if request.method == "GET":
        return _render_part(request, project, item, part, "part_form", base_version=item.version)

    values, errors, version = _read_part(request.POST, part)
    if errors:
        return _render_part(
            request,
            project,
            item,
            part,
            "part_form",
            draft=values,
            errors=errors,
            base_version=version or item.version,
        )
    try:
        saved = item_edit(item=item, user=request.user, part=part, values=values, base_version=version)
    except EditConflict as conflict:
        return _render_part(
            request,
            project,
            conflict.current,
            part,
            "part_conflict",
            draft=values,
            base_version=conflict.current.version,
        )
    # Undo is offered only when this save made a revision (saving an unchanged text makes none).
    undo = saved.version if saved.version != item.version else None
    return _render_part(request, project, saved, part, "part_saved", can_edit=True, undo_number=undo)


@login_required
@require_POST
def item_undo(request, slug, item_id, number):
    """Undo one saved revision of the item (a new revision puts back what it changed): from the item page's
    "Saved. Undo" (htmx, the part comes back re-rendered) or the item's history (a plain form)."""
    project = get_project_for_user(request.user, slug)
    item = get_item_for_editing(request.user, project, item_id)
    part = request.POST.get("part", "")
    try:
        undone = services.item_undo(item=item, number=number, author=Author(user=request.user))
    except UndoRefused as refused:
        if request.htmx and part in EDIT_PARTS:
            item.refresh_from_db()
            return _render_part(request, project, item, part, "undo_refused", message=str(refused))
        messages.error(request, str(refused))
        return redirect(_back(request, project, item))
    if request.htmx and part in EDIT_PARTS:
        return _render_part(
            request,
            project,
            undone,
            part,
            "part_saved",
            can_edit=True,
            undo_number=undone.version,
            undone=True,
        )
    messages.success(
        request,
        _("Revision %(n)s undone: revision %(new)s puts back what it changed.")
        % {
            "n": number,
            "new": undone.version,
        },
    )
    return redirect(_back(request, project, item))


def _back(request, project, item) -> str:
    """Where a plain form goes back to: its ``next`` when it is one of this site's pages, else the item's history."""
    wanted = request.POST.get("next", "")
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}):
        return wanted
    return reverse("annotation:item_history", args=[project.slug, item.pk])


def _refuse_hidden_part(user, project, item, part: str) -> None:
    """A part the design hides from annotators now (CausalBench's first answer before the blind check), or one
    that states the label they are asked for before they judged the item (no anchoring), is a 404."""
    if has_role(user, project, Role.CURATOR):
        return
    item.project = project
    if set(EDIT_PARTS[part]) & (
        design_for(project).hidden_from_annotators(item) | _unseen(user, project, item)
    ):
        raise Http404("No such part.")


@login_required
def guidelines(request, slug):
    project = get_project_for_user(request.user, slug)
    context = {"project": project, "guidelines_html": render_markdown(project.guidelines)}
    template = "annotation/guidelines.html#guidelines" if request.htmx else "annotation/guidelines.html"
    return render(request, template, context)


@login_required
def revision_list(request, slug):
    """Items that a curator sent back for revision, with the curator's note, for whoever rewrites them."""
    project = get_project_for_user(request.user, slug)
    items = list(project.items.filter(status=Item.Status.NEEDS_REVISION).order_by("updated_at", "id")[:200])
    notes = dict(
        CurationDecision.objects.filter(item__in=items, decision=CurationDecision.Decision.REVISE)
        .order_by("item_id", "round")
        .values_list("item_id", "note")
    )
    rows = [{"item": item, "note": notes.get(item.pk, "")} for item in items]
    return render(request, "annotation/revision_list.html", {"project": project, "rows": rows})


@login_required
def item_revise(request, slug, item_id):
    """Rewrite an item that needs revision by hand, then send it back to review."""
    project = get_project_for_user(request.user, slug)
    item = get_item_for_editing(request.user, project, item_id)
    decision = item.decisions.filter(round=item.round).select_related("curator").first()
    context = {
        **_item_context(request, project, item, None),
        "decision": decision,
        "can_return": item.status == Item.Status.NEEDS_REVISION,
    }
    if has_role(request.user, project, Role.CURATOR):
        # Curators see the closed round's comments; annotators only the curator's note (they may judge later rounds).
        context["comments"] = list(
            item.judgments.filter(round=item.round).exclude(comment="").select_related("annotator")
        )
    return render(request, "annotation/revise.html", context)


@login_required
@require_POST
def item_return(request, slug, item_id):
    project = get_project_for_user(request.user, slug)
    item = get_item_for_editing(request.user, project, item_id)
    try:
        item = item_return_to_review(item=item)
    except DecisionRefused as refused:
        messages.error(request, str(refused))
        return redirect("annotation:item_revise", slug=project.slug, item_id=item.pk)
    messages.success(request, _("Sent back to review: round %(round)s begins.") % {"round": item.round})
    return redirect("annotation:revision_list", slug=project.slug)


# --- helpers ---------------------------------------------------------------------------------


def _item_context(request, project, item, assignment) -> dict:
    options = list(item.options.all())
    own = getattr(assignment, "judgment", None) if assignment and assignment.status == "submitted" else None
    change_form = (
        _judgment_form(project, item, initial=_judgment_initial(own)) if _may_change(own, item) else None
    )
    return {
        "unseen": _unseen(request.user, project, item),
        "neighbours": queue.history_neighbours(assignment=assignment) if assignment else {},
        "keyboard": keyboard_for(project, item, assignment=assignment, change_form=change_form),
        **design_item_context(project, item),
        "project": project,
        "item": item,
        "assignment": assignment,
        "options": options,
        "show_options": bool(options) or project.answer_format == project.AnswerFormat.MULTIPLE_CHOICE,
        "can_edit": may_edit_item(
            request.user,
            project,
            item,
            lambda: assignment is None or assignment.status == Assignment.Status.ACTIVE,
        ),
        "is_curator": has_role(request.user, project, Role.CURATOR),
        "role_choices": Option.Role.choices,
        "form_key": _form_key(project, item),
        "own_judgment": own,
        "change_form": change_form,
    }


def _unseen(user, project, item) -> set[str]:
    """What of the item the person may not see yet: the fields they are asked to judge, until they judged it."""
    if has_role(user, project, Role.CURATOR):
        return set()
    judged = item.judgments.filter(annotator=user).exists()
    return unseen_before_judging(project=project, item=item, user=user, judged=judged)


def _judgment_initial(judgment) -> dict:
    initial = {f"rating_{key}": value for key, value in (judgment.ratings or {}).items()}
    return {
        **initial,
        "vote": judgment.vote,
        "causal_class": judgment.causal_class,
        "comment": judgment.comment,
    }


def _may_change(judgment, item) -> bool:
    return judgment is not None and item.round == judgment.round and item.status == Item.Status.IN_REVIEW


def _read_part(post, part):
    version = _int(post.get("version"))
    if part == "options":
        options, errors = options_from_post(post)
        return options, errors, version
    form = PartForm(post, part=part)
    if not form.is_valid():
        return post.get("value", ""), form.errors, version
    return form.cleaned_data["value"], {}, form.cleaned_data["version"]


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _render_part(
    request,
    project,
    item,
    part,
    partial,
    *,
    draft=None,
    errors=None,
    base_version=None,
    can_edit=None,
    undo_number=None,
    undone=False,
    message="",
):
    context = {
        "unseen": _unseen(request.user, project, item),
        "message": message,
        "undo_number": undo_number,
        "undone": undone,
        "project": project,
        "item": item,
        "part": part,
        "options": list(item.options.all()) if part == "options" else [],
        "can_edit": can_edit if can_edit is not None else can_edit_item(request.user, project, item),
        "is_curator": has_role(request.user, project, Role.CURATOR),
        "draft": draft,
        "errors": errors or {},
        "base_version": base_version,
        "role_choices": Option.Role.choices,
    }
    status = 422 if errors else 409 if partial == "part_conflict" else 200
    return render(request, f"annotation/_part.html#{partial}", context, status=status)


def _add_errors(form, error: ValidationError) -> None:
    for field, messages_ in error.message_dict.items():
        form.add_error(field if field in form.fields else None, messages_)

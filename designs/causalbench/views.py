"""CausalBench's pages: the blind answer check (annotators) and the adjudication queue with the check report
(curators). Views stay thin: ``causalbench_checks`` does the work."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.permissions import Role, get_item_for_user, get_project_for_user

from .checks import (
    CheckRefused,
    adjudication_queue,
    check_adjudicate,
    check_assignment_held,
    check_assignment_next,
    check_record,
    check_report,
    next_question_for,
)


def _causalbench_project(user, slug, minimum):
    project = get_project_for_user(user, slug, minimum)
    if project.design != "causalbench":
        raise Http404("not a CausalBench project")
    return project


@login_required
@require_http_methods(["GET", "POST"])
def check_page(request, slug):
    """The question the check queue handed the annotator, without its answer or explanation: they answer yes or
    no. A POST with ``take`` asks the queue for the next one; a POST with an answer answers the one held."""
    project = _causalbench_project(request.user, slug, Role.ANNOTATOR)
    if request.method == "POST" and "take" in request.POST:
        if check_assignment_next(project=project, user=request.user) is None:
            messages.info(request, _("No question waits for a second answer from you."))
        return redirect("designs:causalbench_check", slug=project.slug)
    held = check_assignment_held(project, request.user)
    if request.method == "POST":
        posted = request.POST.get("item", "")
        if held is None or str(held.item_id) != posted.strip():
            messages.warning(request, _("This question was not handed to you by the check queue."))
            return redirect("designs:causalbench_check", slug=project.slug)
        try:
            check_record(
                item=held.item,
                answer=request.POST.get("answer", ""),
                explanation=request.POST.get("explanation", ""),
                checker=request.user,
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        except CheckRefused as exc:
            messages.warning(request, str(exc))
        else:
            messages.success(request, _("Your answer was recorded."))
        return redirect("designs:causalbench_check", slug=project.slug)
    waiting = held is None and next_question_for(project, request.user) is not None
    return render(
        request,
        "designs/causalbench/causalbench_check.html",
        {"project": project, "item": held.item if held else None, "waiting": waiting, "blind": True},
    )


@login_required
def adjudication_page(request, slug):
    project = _causalbench_project(request.user, slug, Role.CURATOR)
    items = list(adjudication_queue(project)[:100])
    return render(
        request,
        "designs/causalbench/causalbench_adjudication.html",
        {"project": project, "items": items, "report": check_report(project)},
    )


@login_required
@require_POST
def adjudicate(request, slug, item_id):
    project = _causalbench_project(request.user, slug, Role.CURATOR)
    item = get_item_for_user(request.user, project, item_id)
    try:
        check_adjudicate(
            item=item,
            curator=request.user,
            answer=request.POST.get("answer", ""),
            note=request.POST.get("note", ""),
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    except CheckRefused as exc:
        messages.warning(request, str(exc))
    else:
        messages.success(request, _("Question %(id)s settled.") % {"id": item.pk})
    return redirect("designs:causalbench_adjudication", slug=project.slug)

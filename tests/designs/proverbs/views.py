from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.permissions import Role, get_project_for_user


@login_required
def proverbs_page(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    items = project.items.order_by("pk")
    return render(request, "proverbs/page.html", {"project": project, "items": items})

"""The answer to an htmx poll: the fragment, and once the work it shows is over, the stop-polling answer (286)."""

from django.shortcuts import render
from django.template.loader import render_to_string
from django_htmx.http import HttpResponseStopPolling


def poll_response(request, template: str, context: dict, *, finished: bool):
    if finished:
        return HttpResponseStopPolling(render_to_string(template, context, request=request))
    return render(request, template, context)

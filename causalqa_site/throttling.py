"""Sign-in throttling (django-axes) answers a locked-out attempt with 429 and when to try again.

Failed sign-ins are counted per account and per address, on the page and the admin's login alike (both call
``authenticate``); after ``LOGIN_FAILURE_LIMIT`` failures that account, or that address, is refused for
``LOGIN_LOCKOUT_MINUTES`` and the password is not even checked. The REST API has DRF's throttles (settings).
"""

import math

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.shortcuts import render


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' check before the password backend. Without a request (the shell, ``Client.login`` in tests) there is
    nobody to throttle: it steps aside instead of refusing."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def login_locked_out(request, original_response=None, credentials=None):
    seconds = max(1, int(get_cool_off(request).total_seconds()))
    response = render(
        request, "registration/locked_out.html", {"minutes": math.ceil(seconds / 60)}, status=429
    )
    response["Retry-After"] = str(seconds)
    return response

"""Sign-in throttling (django-axes) answers a locked-out attempt with 429 and when to try again.

Failed sign-ins are counted per (account, address) pair, on the page and the admin's login alike (both call
``authenticate``): after ``LOGIN_FAILURE_LIMIT`` failures that account is refused to that address for
``LOGIN_LOCKOUT_MINUTES`` and the password is not even checked, while its owner still signs in from anywhere else.
An address is also limited whatever the accounts it tries: after ``LOGIN_ADDRESS_FAILURE_LIMIT`` failures in
``LOGIN_LOCKOUT_MINUTES`` it is refused until the window ends. The address is the client's as the trusted proxy
names it (``core.proxy``). The REST API has DRF's throttles (settings).
"""

import math
import time

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.shortcuts import render
from rest_framework.throttling import AnonRateThrottle as DrfAnonRateThrottle
from rest_framework.throttling import UserRateThrottle as DrfUserRateThrottle

from core.counters import count_hit, count_of, window_key


def request_address(request) -> str:
    """The client's address (``TrustedProxyMiddleware`` has put the proxy's word for it in ``REMOTE_ADDR``)."""
    return request.META.get("REMOTE_ADDR", "")


def _address_window(request) -> tuple[str, int]:
    window = max(60, int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return window_key("signin-failures", request_address(request), window, time.time())


def address_is_limited(request) -> bool:
    key, _left = _address_window(request)
    return count_of(key) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT


@receiver(user_login_failed, dispatch_uid="causalqa-address-failures")
def count_address_failure(sender, credentials=None, request=None, **kwargs):
    if request is None or getattr(request, "axes_locked_out", False):
        return
    key, left = _address_window(request)
    count_hit(key, timeout=left + 1)


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' check before the password backend, and the address's limit. Without a request (the shell,
    ``Client.login`` in tests) there is nobody to throttle: it steps aside instead of refusing."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        if address_is_limited(request):
            request.axes_locked_out = True
            request.address_locked_out = True
            raise AxesBackendPermissionDenied("too many failed sign-ins from this address")
        return super().authenticate(request, username=username, password=password, **kwargs)


def login_locked_out(request, original_response=None, credentials=None):
    if getattr(request, "address_locked_out", False):
        _key, seconds = _address_window(request)
    else:
        seconds = max(1, int(get_cool_off(request).total_seconds()))
    response = render(
        request, "registration/locked_out.html", {"minutes": math.ceil(seconds / 60)}, status=429
    )
    response["Retry-After"] = str(seconds)
    return response


# --- the API's throttles --------------------------------------------------------------------------------------


class _AtomicRateThrottle:
    """DRF's rate throttle with the count kept as one atomic counter per caller and fixed window, instead of a
    list of timestamps read, appended to and written back: concurrent requests each read the list before the others
    wrote it, and 16 threads got 92 of 200 requests past a rate of 60 a minute."""

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        now = time.time()
        key, self.left = window_key(self.scope, self.key, self.duration, now)
        return count_hit(key, timeout=self.left + 1) <= self.num_requests

    def wait(self):
        return self.left


class UserRateThrottle(_AtomicRateThrottle, DrfUserRateThrottle):
    pass


class AnonRateThrottle(_AtomicRateThrottle, DrfAnonRateThrottle):
    pass

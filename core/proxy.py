"""The client's address and scheme, believed only from the TLS proxy in front (``TRUSTED_PROXIES``).

Behind a proxy every request comes from the proxy's address: sign-in throttling, the API's throttles and the logs
would see one client. The proxy names the real one in ``X-Forwarded-For`` and says https in
``X-Forwarded-Proto``, but any client can send those headers too. So, first in the middleware:

- a request from an address of ``TRUSTED_PROXIES`` (addresses or networks) gets, as ``REMOTE_ADDR``, the
  right-most address of ``X-Forwarded-For`` that is not itself a trusted proxy (the one the proxy saw; what the
  client wrote to the left of it is not believed); the proxy's own address stays in ``PROXY_ADDR``;
- a request from anywhere else loses every ``X-Forwarded-*`` header, so ``SECURE_PROXY_SSL_HEADER`` is believed
  only from the proxy.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings

FORWARDED = (
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
)


@lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(proxy.strip(), strict=False) for proxy in proxies if proxy.strip())


def _address(text: str):
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def is_trusted_proxy(address: str) -> bool:
    parsed = _address(address or "")
    return parsed is not None and any(
        parsed in network for network in _networks(tuple(settings.TRUSTED_PROXIES))
    )


def client_address(meta: dict) -> str:
    """The client's address as the trusted proxy saw it (``REMOTE_ADDR`` when the request did not come through
    one, or the header names nothing usable)."""
    remote = meta.get("REMOTE_ADDR", "")
    if not is_trusted_proxy(remote):
        return remote
    for hop in reversed(meta.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        parsed = _address(hop)
        if parsed is None:
            return remote  # a garbled hop: nothing left of it can be believed
        if not is_trusted_proxy(str(parsed)):
            return str(parsed)
    return remote


class TrustedProxyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        remote = meta.get("REMOTE_ADDR", "")
        if is_trusted_proxy(remote):
            meta["PROXY_ADDR"] = remote
            meta["REMOTE_ADDR"] = client_address(meta)
        else:
            for name in FORWARDED:
                meta.pop(name, None)
        return self.get_response(request)

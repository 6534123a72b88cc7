"""Where a project's endpoint may connect: the hosts the site allows, checked on the address actually dialled.

A project owner types the base URL of their endpoint, and the worker connects to it from inside the site's
network. Without a check that URL could name the site's own Redis, PostgreSQL, admin pages or a cloud
metadata service. ``AddressPolicy`` holds the site's allow-list (``LLM_ALLOWED_HOSTS``); ``GuardedBackend``
resolves the host when the connection is opened, checks every address it got, and dials the checked
address itself, so a DNS answer cannot change between the check and the connection.
"""

import ipaddress
import socket
from dataclasses import dataclass

import httpcore

# The entry of LLM_ALLOWED_HOSTS that allows any public address (the default).
PUBLIC = "public"


class RefusedAddress(httpcore.ConnectError):
    """The endpoint's host resolves to an address the site does not let project endpoints reach."""


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not private, loopback, link-local (cloud metadata: 169.254.169.254), shared, reserved or multicast."""
    mapped = getattr(address, "ipv4_mapped", None) or getattr(address, "sixtofour", None)
    if mapped is not None:
        return is_public(mapped)
    return address.is_global and not address.is_multicast


@dataclass(frozen=True)
class AddressPolicy:
    """Entries: ``public`` (any public address), a host name (``api.example.org``), a domain (``*.example.org``),
    an address (``10.0.0.7``) or a network (``10.0.0.0/24``). A connection is allowed when an entry names its host
    and the address is public, or when an address or network entry contains the address."""

    entries: tuple[str, ...] = (PUBLIC,)

    @classmethod
    def from_setting(cls, value: list[str] | tuple[str, ...]) -> "AddressPolicy":
        return cls(tuple(entry.strip().lower() for entry in value if entry.strip()))

    def permits(self, host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        host = host.lower().rstrip(".")
        for entry in self.entries:
            network = _network(entry)
            if network is not None:
                if network.version == address.version and address in network:
                    return True
            elif is_public(address) and (entry == PUBLIC or _names(entry, host)):
                return True
        return False


def _network(entry: str):
    try:
        return ipaddress.ip_network(entry.strip("[]"), strict=False)
    except ValueError:
        return None


def _names(entry: str, host: str) -> bool:
    if entry.startswith("*."):
        return host.endswith(entry[1:])
    return host == entry


def check_address(policy: AddressPolicy, host: str, address: str) -> None:
    parsed = ipaddress.ip_address(address.split("%")[0])
    if not policy.permits(host, parsed):
        raise RefusedAddress(
            f"{host} resolves to {parsed}, which project endpoints may not reach: private, loopback, link-local "
            "and metadata addresses are refused unless the site lists them in LLM_ALLOWED_HOSTS"
        )


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, checking the resolved address of every new connection."""

    def __init__(self, policy: AddressPolicy):
        self.policy = policy

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = [info[4][0] for info in found]
        for address in addresses:  # every answer, so a round-robin record cannot hide a private one
            check_address(self.policy, host, address)
        # TLS still checks the certificate against the host name (httpcore passes it to start_tls).
        return super().connect_tcp(addresses[0], port, timeout, local_address, socket_options)


def refused_cause(exc: BaseException) -> RefusedAddress | None:
    """The refusal behind an SDK connection error, if that is what it was."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, RefusedAddress):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None

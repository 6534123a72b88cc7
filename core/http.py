"""HTTP clients whose connections open through a network backend of the caller's (an address guard)."""


def transport_through(network_backend, **options) -> "httpx.HTTPTransport":  # noqa: F821 - imported when called
    """An httpx transport (``options`` as ``httpx.HTTPTransport`` takes them) whose pool opens every new
    connection through ``network_backend``, an httpcore backend. httpx has no argument for it: the pool's
    attribute is set, and read by httpcore on every new connection."""
    import httpx  # loaded by the first model call, not by every process that imports the client

    transport = httpx.HTTPTransport(**options)
    transport._pool._network_backend = network_backend
    return transport

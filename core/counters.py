"""Counters of events in a time window, shared by every worker and thread: one atomic increment in the cache
(Redis ``INCR`` in production, a locked increment in the in-process cache), never a read followed by a write,
so concurrent clients cannot all pass a check that each read before the others wrote."""

from django.core.cache import cache

# Set apart the counters of one test run (or one test) from another's in a shared cache.
NAMESPACE = "count"


def window_key(name: str, identity: str, window: int, now: float) -> tuple[str, int]:
    """The key of ``identity``'s current fixed window and the seconds the window has left."""
    start = int(now // window) * window
    return f"{NAMESPACE}:{name}:{identity}:{start}", max(1, int(start + window - now))


def count_hit(key: str, *, timeout: int) -> int:
    """Add one to ``key`` and return the new count; the key expires ``timeout`` seconds after it was made."""
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between the two calls: this hit starts a new count
        cache.add(key, 0, timeout=timeout)
        return cache.incr(key)


def count_of(key: str) -> int:
    return int(cache.get(key) or 0)

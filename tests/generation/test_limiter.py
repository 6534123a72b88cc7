"""Concurrency and rate limits per endpoint: in one process, and shared through Redis."""

import os
import threading
import time
import uuid

import pytest

from generation.llm.limiter import Limits, LocalLimiter, RedisLimiter

needs_redis = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL (a real Redis)")


def hammer(limiters, calls: int, hold: float) -> tuple[int, list[float]]:
    """Run ``calls`` holders spread over the limiters; return the most at once and the start times."""
    active, most, starts, lock = 0, 0, [], threading.Lock()

    def one(limiter):
        nonlocal active, most
        lease = limiter.acquire()
        with lock:
            active += 1
            most = max(most, active)
            starts.append(time.monotonic())
        time.sleep(hold)
        with lock:
            active -= 1
        limiter.release(lease)

    threads = [threading.Thread(target=one, args=(limiters[n % len(limiters)],)) for n in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return most, sorted(starts)


def test_the_local_limiter_never_lets_more_than_max_concurrency_run():
    most, _starts = hammer(
        [LocalLimiter(Limits(max_concurrency=3, requests_per_minute=0))], calls=12, hold=0.05
    )
    assert most == 3


def test_the_local_limiter_spaces_starts_to_the_requests_per_minute():
    limiter = LocalLimiter(Limits(max_concurrency=10, requests_per_minute=120))  # 2 per second, burst of 2
    _most, starts = hammer([limiter], calls=6, hold=0)
    assert starts[-1] - starts[0] >= 1.9  # 2 at once, then one every 0.5 s


def test_a_cancelled_wait_gives_up_the_slot():
    limiter = LocalLimiter(Limits(max_concurrency=1, requests_per_minute=0))
    held = limiter.acquire()
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    assert limiter.acquire(cancel) is None
    limiter.release(held)
    assert limiter.acquire() is not None


@pytest.fixture
def redis_pair():
    import redis

    key = f"test-{uuid.uuid4().hex[:8]}"
    clients = [redis.Redis.from_url(os.environ["REDIS_URL"]) for _ in range(2)]  # as if two processes
    yield key, clients
    clients[0].delete(f"causalqa:limiter:{key}:leases", f"causalqa:limiter:{key}:tat")


@needs_redis
def test_two_processes_sharing_redis_never_exceed_the_endpoint_concurrency_together(redis_pair):
    key, clients = redis_pair
    limits = Limits(max_concurrency=3, requests_per_minute=0)
    limiters = [RedisLimiter(client, key, limits) for client in clients]
    most, _starts = hammer(limiters, calls=16, hold=0.05)
    assert most == 3


@needs_redis
def test_requests_per_minute_hold_across_processes(redis_pair):
    key, clients = redis_pair
    limits = Limits(max_concurrency=10, requests_per_minute=120)
    _most, starts = hammer([RedisLimiter(client, key, limits) for client in clients], calls=6, hold=0)
    assert starts[-1] - starts[0] >= 1.9


@needs_redis
def test_a_dead_holders_slot_expires_and_a_live_holder_keeps_its_slot(redis_pair):
    key, clients = redis_pair
    limits = Limits(max_concurrency=1, requests_per_minute=0)
    dead = RedisLimiter(clients[0], key, limits, lease_seconds=0.5)
    other = RedisLimiter(clients[1], key, limits, lease_seconds=0.5)
    assert dead.acquire() is not None  # never released: its process "died"
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    assert other.acquire(cancel) is None  # still held
    started = time.monotonic()
    lease = other.acquire()
    assert lease is not None and 0.1 < time.monotonic() - started < 1.0  # expired, taken

    for _ in range(5):  # the live holder refreshes its lease, so it does not expire under it
        time.sleep(0.2)
        other.refresh()
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    assert dead.acquire(cancel) is None
    other.release(lease)
    assert other.redis.zcard(other._leases_key) == 0, "a released slot is no longer held"

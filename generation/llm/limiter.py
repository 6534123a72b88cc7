"""How many calls an endpoint may have in flight, and how often they may start.

Two limits per endpoint: at most ``max_concurrency`` calls at once, and requests spaced so
that no more than ``requests_per_minute`` start per minute (a generic cell rate algorithm:
calls are spaced 60/R seconds apart, with a burst of up to one second's worth).

``RedisLimiter`` holds the state in Redis, so every worker process on every machine shares
it; a slot is a lease with an expiry, so a worker killed while holding one does not keep
it for ever (a live worker refreshes its leases). ``LocalLimiter`` is the in-process
version for the embedded default, where every call runs in one worker process.
"""

import random
import threading
import time
import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_concurrency: int
    requests_per_minute: int

    @property
    def interval(self) -> float:
        return 60.0 / self.requests_per_minute if self.requests_per_minute > 0 else 0.0

    @property
    def burst(self) -> int:
        return max(1, self.requests_per_minute // 60)


class LocalLimiter:
    """Limits shared by the threads of one process."""

    def __init__(self, limits: Limits, clock=time.monotonic):
        self.limits = limits
        self._clock = clock
        self._lock = threading.Condition()
        self._active = 0
        self._tat = 0.0

    def acquire(self, cancel: threading.Event | None = None) -> str | None:
        """Block until a slot is free and the rate allows a start; None if ``cancel`` was set meanwhile."""
        with self._lock:
            while self._active >= max(1, self.limits.max_concurrency):
                if cancel is not None and cancel.is_set():
                    return None
                self._lock.wait(0.05)
            self._active += 1
            delay = self._reserve_start()
        if delay > 0 and _wait(delay, cancel):
            self.release("local")
            return None
        return "local"

    def pace(self, cancel: threading.Event | None = None) -> bool:
        """For a caller that keeps its slot between calls: wait for the rate only. False if cancelled."""
        if self.limits.requests_per_minute <= 0:
            return True
        with self._lock:
            delay = self._reserve_start()
        return not (delay > 0 and _wait(delay, cancel))

    def _reserve_start(self) -> float:
        limits = self.limits
        if limits.requests_per_minute <= 0:
            return 0.0
        now = self._clock()
        tat = max(self._tat, now)
        tolerance = (limits.burst - 1) * limits.interval
        self._tat = tat + limits.interval
        return max(0.0, tat - tolerance - now)

    def release(self, lease: str | None) -> None:
        if lease is None:
            return
        with self._lock:
            self._active -= 1
            self._lock.notify()

    def refresh(self) -> None:
        """Nothing to refresh: a dead process takes its slots with it."""


# Redis's clock in milliseconds, so every process paces by the same time.
_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""


def _pacing(tat_key: str, interval: str, burst: str) -> str:
    """The generic cell rate algorithm in Lua, as ``LocalLimiter._reserve_start`` does it in one process:
    the wait before the next call starts (ms, in ``delay``), the theoretical arrival time moved on."""
    return f"""
local interval = tonumber({interval})
local tat = tonumber(redis.call('GET', {tat_key}) or '0')
if tat < now then tat = now end
local delay = tat - (tonumber({burst}) - 1) * interval - now
if delay < 0 then delay = 0 end
redis.call('SET', {tat_key}, tat + interval, 'PX', math.floor(tat + interval - now + 60000))
"""


# KEYS[1] leases (sorted set: lease id → expiry ms), KEYS[2] theoretical arrival time (ms)
# ARGV: lease id, max concurrency, interval ms, burst, lease ttl ms
_ACQUIRE = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return -1
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]) * 2)
if tonumber(ARGV[3]) <= 0 then
  return 0
end
"""
    + _pacing("KEYS[2]", "ARGV[3]", "ARGV[4]")
    + "return delay\n"
)

# KEYS[1] theoretical arrival time (ms); ARGV: interval ms, burst. Returns the wait in ms.
_PACE = _NOW + _pacing("KEYS[1]", "ARGV[1]", "ARGV[2]") + "return delay\n"

# KEYS[1] leases; ARGV: ttl ms, lease ids...
_REFRESH = (
    _NOW
    + """
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return #ARGV - 1
"""
)


class RedisLimiter:
    """Limits shared by every process that talks to the same Redis under the same ``key``."""

    def __init__(self, redis_client, key: str, limits: Limits, lease_seconds: float = 60.0):
        self.redis = redis_client
        self.limits = limits
        self.lease_ms = int(lease_seconds * 1000)
        self._leases_key = f"causalqa:limiter:{key}:leases"
        self._rate_key = f"causalqa:limiter:{key}:tat"
        self._acquire = redis_client.register_script(_ACQUIRE)
        self._pace = redis_client.register_script(_PACE)
        self._refresh = redis_client.register_script(_REFRESH)
        self._held: set[str] = set()
        self._held_lock = threading.Lock()

    def acquire(self, cancel: threading.Event | None = None) -> str | None:
        lease = uuid.uuid4().hex
        pause = 0.005
        limits = self.limits
        while True:
            if cancel is not None and cancel.is_set():
                return None
            delay_ms = self._acquire(
                keys=[self._leases_key, self._rate_key],
                args=[
                    lease,
                    max(1, limits.max_concurrency),
                    int(limits.interval * 1000),
                    limits.burst,
                    self.lease_ms,
                ],
            )
            if delay_ms >= 0:
                break
            # Every slot is taken (by this or another worker): poll, spreading the pollers out.
            _wait(pause * (0.5 + random.random()), cancel)
            pause = min(pause * 2, 0.05)
        with self._held_lock:
            self._held.add(lease)
        if delay_ms > 0 and _wait(delay_ms / 1000, cancel):
            self.release(lease)
            return None
        return lease

    def pace(self, cancel: threading.Event | None = None) -> bool:
        """For a caller that keeps its slot between calls: wait for the rate only. False if cancelled."""
        limits = self.limits
        if limits.requests_per_minute <= 0:
            return True
        delay_ms = self._pace(keys=[self._rate_key], args=[int(limits.interval * 1000), limits.burst])
        return not (delay_ms > 0 and _wait(delay_ms / 1000, cancel))

    def release(self, lease: str | None) -> None:
        if lease is None:
            return
        with self._held_lock:
            self._held.discard(lease)
        self.redis.zrem(self._leases_key, lease)

    def refresh(self) -> None:
        """Push back the expiry of the slots this process holds (call it more often than the lease time)."""
        with self._held_lock:
            held = list(self._held)
        if held:
            self._refresh(keys=[self._leases_key], args=[self.lease_ms, *held])


def _wait(seconds: float, cancel: threading.Event | None) -> bool:
    """Sleep; True if ``cancel`` was set before the time was up."""
    if cancel is None:
        time.sleep(seconds)
        return False
    return cancel.wait(seconds)

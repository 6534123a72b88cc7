"""One model call, done properly: structured output, validation, re-asking, retries, a record.

``LLMClient.complete`` sends a chat-completions request through the ``openai`` SDK to any
OpenAI-compatible server and returns a ``CallResult`` holding every attempt, whatever
happened. It never raises for what the server does; it raises only for programming errors.

- Structured output: ``response_format`` with the JSON schema when the endpoint supports it.
  A server that refuses ``response_format`` with a 400 is asked again in text mode, where
  the schema goes into the prompt and the JSON is extracted from the reply.
- Every output is validated against the schema; an invalid one is shown back to the model
  with the validation error, up to ``max_attempts`` answers.
- Temporary failures (429 honouring Retry-After, 408, 409, 5xx, timeouts, connection
  errors) are retried with exponential backoff and jitter, up to ``max_retries``.
- 400, 401, 403, 404 and other client errors are not retried; 401, 403 and 404 are marked
  ``fatal`` because they concern the endpoint (key, permission, model name, URL), not the call.
"""

import email.utils
import random
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx
    import openai

from core.http import transport_through

from .guard import AddressPolicy, GuardedBackend, refused_cause
from .parsing import NoJSONFound, coerce_root, extract_json, validation_error
from .prompts import build_messages

TEMPORARY_STATUSES = {408, 409, 429}
FATAL_STATUSES = {401, 403, 404}
MAX_RAW_CHARS = 20_000
# What is kept of an error answer's body: enough to read the server's complaint, not a page of whatever answered.
MAX_ERROR_BODY_CHARS = 300


@dataclass(frozen=True)
class EndpointConfig:
    base_url: str
    model: str
    api_key: str | None = None
    api_key_env: str = ""
    params: dict = field(default_factory=dict)
    structured_output: bool = True
    timeout: float = 60.0
    max_retries: int = 6
    max_attempts: int = 3
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    retry_after_max: float = 300.0
    price_input_per_mtok: Decimal = Decimal("0")
    price_output_per_mtok: Decimal = Decimal("0")
    max_connections: int = 16
    # Where the client may connect (a project's endpoint); None: anywhere (a site-wide endpoint set by an admin).
    address_policy: AddressPolicy | None = None

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        return (tokens_in * self.price_input_per_mtok + tokens_out * self.price_output_per_mtok) / Decimal(
            1_000_000
        )


@dataclass(frozen=True)
class PromptRequest:
    system: str
    user: str
    schema: dict
    schema_name: str = "output"


@dataclass
class Attempt:
    number: int
    outcome: str  # ok | invalid | rate_limited | server_error | timeout | connection_error | client_error
    structured: bool
    status: int | None = None
    raw: str = ""
    error: str = ""
    latency_ms: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wait_seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class CallResult:
    request: dict
    attempts: list[Attempt]
    parsed: object = None
    ok: bool = False
    error: str = ""
    fatal: bool = False
    cancelled: bool = False
    status: int | None = None
    latency_ms: int = 0

    @property
    def raw(self) -> str:
        return self.attempts[-1].raw if self.attempts else ""

    @property
    def tokens_in(self) -> int:
        return sum(attempt.tokens_in for attempt in self.attempts)

    @property
    def tokens_out(self) -> int:
        return sum(attempt.tokens_out for attempt in self.attempts)

    @property
    def retried(self) -> bool:
        return len(self.attempts) > 1


class _Temporary(Exception):
    def __init__(self, attempt: Attempt, retry_after: float | None = None):
        self.attempt = attempt
        self.retry_after = retry_after


class _Cancelled(Exception):
    pass


class _Final(Exception):
    def __init__(self, attempt: Attempt, fatal: bool):
        self.attempt = attempt
        self.fatal = fatal


class LLMClient:
    """A client for one endpoint, safe to share between threads: each thread sends through an HTTP connection
    of its own (httpx's shared pool scans every connection for every request, which at 32 threads and a
    hundred calls a second cost as much as the rest of a call), at most ``max_connections`` threads at once."""

    def __init__(
        self, config: EndpointConfig, *, limiter=None, cancel: threading.Event | None = None, rng=None
    ):
        self.config = config
        self.limiter = limiter
        self.cancel = cancel or threading.Event()
        self.rng = rng or random.Random()
        self.structured = config.structured_output
        self._local = threading.local()  # the limiter slot this thread holds, if any, and its connection
        self._connections = threading.BoundedSemaphore(max(1, config.max_connections))
        # The SDK (with pydantic, a heavy import) is imported by the first client, not when Django starts: a
        # process that never calls a model never pays for it.
        import httpx

        self._opened: list[httpx.Client] = []
        self._opened_lock = threading.Lock()
        self._tls = (
            httpx.create_ssl_context()
        )  # one for every thread's connection: building one reads the CA store
        self._address_policy = config.address_policy

    def _thread_openai(self) -> "openai.OpenAI":
        """This thread's SDK client, over an HTTP client with one keep-alive connection."""
        client = getattr(self._local, "openai", None)
        if client is None:
            import httpx
            import openai

            limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
            guarded = {}
            if self._address_policy is not None:
                transport = transport_through(
                    GuardedBackend(self._address_policy), limits=limits, verify=self._tls, trust_env=False
                )
                guarded = {"transport": transport, "trust_env": False}  # no proxy from the environment either
            http = httpx.Client(
                timeout=httpx.Timeout(self.config.timeout, connect=min(self.config.timeout, 10.0)),
                limits=limits,
                verify=self._tls,
                **guarded,
            )
            with self._opened_lock:
                self._opened.append(http)
            self._local.http = http
            client = self._local.openai = openai.OpenAI(
                base_url=self.config.base_url,
                # Servers without keys (vLLM, Ollama, llama.cpp) accept anything; the SDK insists on a value.
                api_key=self.config.api_key or "no-key",
                max_retries=0,
                timeout=self.config.timeout,
                http_client=http,
            )
        return client

    def close(self) -> None:
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for http in opened:
            http.close()

    def _hang_up(self) -> None:
        """Close this thread's connection; its next call opens a new one."""
        http = getattr(self._local, "http", None)
        if http is None:
            return
        self._local.openai = self._local.http = None
        with self._opened_lock:
            if http in self._opened:
                self._opened.remove(http)
        http.close()

    def release_slot(self) -> None:
        """Give back the limiter slot this thread kept (see ``complete(keep_slot=True)``)."""
        lease = getattr(self._local, "lease", None)
        if lease is not None:
            self._local.lease = None
            self.limiter.release(lease)

    def _take_slot(self) -> None:
        if self.limiter is None:
            return
        if getattr(self._local, "lease", None) is not None:
            if not self.limiter.pace(self.cancel):  # the slot is ours already; only the rate applies
                raise _Cancelled()
            return
        lease = self.limiter.acquire(self.cancel)
        if lease is None:
            raise _Cancelled()
        self._local.lease = lease

    def complete(self, prompt: PromptRequest, keep_slot: bool = False) -> CallResult:
        """Make the call, with every attempt it takes.

        ``keep_slot``: keep the endpoint's concurrency slot for this thread's next call instead
        of giving it back (a thread with a queue of calls saves two limiter round trips a call);
        the caller gives it back with ``release_slot()`` when it has nothing more to send.
        """
        try:
            return self._complete(prompt)
        finally:
            if not keep_slot:
                self.release_slot()

    def _complete(self, prompt: PromptRequest) -> CallResult:
        started = time.monotonic()
        messages = build_messages(
            system=prompt.system, user=prompt.user, schema=prompt.schema, structured=self.structured
        )
        result = CallResult(request=self._describe(messages, prompt), attempts=[])
        answers = 0
        temporary_failures = 0
        while True:
            if self.cancel.is_set():
                result.cancelled = True
                result.error = "cancelled before an answer was received"
                break
            number = len(result.attempts) + 1
            try:
                attempt, content = self._attempt(number, messages, prompt)
            except _Cancelled:
                continue  # recorded at the top of the loop
            except _Temporary as exc:
                result.attempts.append(exc.attempt)
                temporary_failures += 1
                if temporary_failures > self.config.max_retries:
                    result.error = (
                        f"gave up after {temporary_failures} temporary failures; last: {exc.attempt.error}"
                    )
                    result.status = exc.attempt.status
                    break
                exc.attempt.wait_seconds = self._backoff(temporary_failures, exc.retry_after)
                self.release_slot()  # nobody should wait for a slot this thread only sleeps on
                self.cancel.wait(
                    exc.attempt.wait_seconds
                )  # a cancellation is recorded at the top of the loop
                continue
            except _Final as exc:
                result.attempts.append(exc.attempt)
                if (
                    exc.attempt.status == 400
                    and self.structured
                    and _mentions_response_format(exc.attempt.error)
                ):
                    # This server cannot do structured output: ask again with the schema in the prompt.
                    self.structured = False
                    messages = build_messages(
                        system=prompt.system, user=prompt.user, schema=prompt.schema, structured=False
                    )
                    result.request = self._describe(messages, prompt)
                    continue
                result.error = exc.attempt.error
                result.fatal = exc.fatal
                result.status = exc.attempt.status
                break
            result.attempts.append(attempt)
            answers += 1
            problem, value = _check(content, prompt.schema, attempt)
            if problem is None:
                result.ok = True
                result.parsed = value
                result.status = attempt.status
                break
            attempt.outcome = "invalid"
            attempt.error = problem
            if answers >= self.config.max_attempts:
                result.error = f"no valid output after {answers} answers; last problem: {problem}"
                break
            messages = [
                *messages,
                {"role": "assistant", "content": content or ""},
                {
                    "role": "user",
                    "content": f"Your reply could not be used: {problem}. "
                    "Reply again with only the corrected JSON, nothing else.",
                },
            ]
            result.request = self._describe(messages, prompt)  # the record shows the whole exchange
        result.latency_ms = int((time.monotonic() - started) * 1000)
        return result

    # One HTTP request. Returns (attempt, content) or raises _Temporary / _Final.
    def _attempt(self, number: int, messages: list[dict], prompt: PromptRequest):
        import httpx
        import openai

        attempt = Attempt(number=number, outcome="ok", structured=self.structured)
        self._take_slot()
        started = time.monotonic()
        try:
            # The SDK's own request method, with the chat-completions body as JSON: auth, base URL,
            # timeouts and error types are the SDK's, without it rebuilding the parameters and the
            # reply as typed objects (half its cost per call, which adds up at a hundred calls a second).
            with self._connections:
                response = self._thread_openai().post(
                    "/chat/completions", cast_to=httpx.Response, body=self._body(messages, prompt)
                )
            attempt.status = response.status_code
            completion = response.json()
            choice = completion["choices"][0] if completion.get("choices") else {}
            message = choice.get("message") or {}
            usage = completion.get("usage") or {}
        except openai.APITimeoutError:
            # The provider may still be working on it: hang up (a new connection serves the next call) before
            # the slot can be given back, so the server stops and the endpoint's limit holds on its side too.
            self._hang_up()
            attempt.outcome = "timeout"
            attempt.error = f"no answer from {self.config.base_url} within {self.config.timeout:g} s"
            raise _Temporary(attempt) from None
        except openai.APIConnectionError as exc:
            refused = refused_cause(exc)
            if refused is not None:
                attempt.outcome = "client_error"
                attempt.error = f"refused to connect: {refused}"
                raise _Final(attempt, fatal=True) from None
            attempt.outcome = "connection_error"
            attempt.error = f"could not reach {self.config.base_url}: {_cause(exc)}"
            raise _Temporary(attempt) from None
        except openai.APIStatusError as exc:
            self._status_error(attempt, exc)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            attempt.outcome = "server_error"
            attempt.error = f"the server's reply is not a chat completion: {type(exc).__name__}: {exc}"
            raise _Temporary(attempt) from None
        finally:
            attempt.latency_ms = int((time.monotonic() - started) * 1000)
        attempt.tokens_in = int(usage.get("prompt_tokens") or 0)
        attempt.tokens_out = int(usage.get("completion_tokens") or 0)
        content = message.get("content")
        attempt.raw = (content or "")[:MAX_RAW_CHARS]
        if choice.get("finish_reason") == "length":
            attempt.error = "the reply was cut off by the token limit (max_tokens)"
        elif message.get("refusal"):
            attempt.error = f"the model refused: {message['refusal']}"
        return attempt, content

    def _status_error(self, attempt: Attempt, exc: "openai.APIStatusError"):
        status = exc.status_code
        attempt.status = status
        attempt.raw = _body_text(exc.response)[:MAX_ERROR_BODY_CHARS]
        message = _error_message(exc)
        if status in TEMPORARY_STATUSES or status >= 500:
            attempt.outcome = "rate_limited" if status == 429 else "server_error"
            attempt.error = f"{status} from the server: {message}"
            raise _Temporary(attempt, _retry_after(exc.response)) from None
        attempt.outcome = "client_error"
        attempt.error = self._explain(status, message)
        raise _Final(attempt, fatal=status in FATAL_STATUSES) from None

    def _explain(self, status: int, message: str) -> str:
        config = self.config
        if status == 401:
            where = f"${config.api_key_env}" if config.api_key_env else "the endpoint's key variable"
            hint = f"check the API key in {where}" + (
                "" if config.api_key else f" (it is not set: {where} is empty)"
            )
            return f"401 Unauthorized from {config.base_url}: {message} — {hint}"
        if status == 403:
            return f"403 Forbidden from {config.base_url}: {message} — the key may not use model {config.model!r}"
        if status == 404:
            return (
                f"404 Not Found from {config.base_url}: {message} — check the model name {config.model!r} "
                "and that the base URL ends where the API begins (often /v1)"
            )
        return f"{status} from {config.base_url}: {message}"

    def _body(self, messages: list[dict], prompt: PromptRequest) -> dict:
        body = {"model": self.config.model, "messages": messages, **self.config.params}
        if self.structured and prompt.schema:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": prompt.schema_name, "schema": prompt.schema, "strict": False},
            }
        return body

    def _describe(self, messages: list[dict], prompt: PromptRequest) -> dict:
        return {
            "base_url": self.config.base_url,
            "model": self.config.model,
            "params": dict(self.config.params),
            "structured_output": self.structured,
            "schema_name": prompt.schema_name,
            "messages": messages,
        }

    def _backoff(self, failures: int, retry_after: float | None) -> float:
        config = self.config
        ceiling = min(config.backoff_max, config.backoff_base * 2 ** (failures - 1))
        delay = ceiling / 2 + self.rng.uniform(0, ceiling / 2)  # "equal jitter": never near zero
        if retry_after is not None:
            delay = max(min(retry_after, config.retry_after_max), 0) + self.rng.uniform(0, 0.1)
        return round(delay, 3)


def _check(content: str | None, schema: dict, attempt: Attempt) -> tuple[str | None, object]:
    """(None, value) for usable output, else (what is wrong, None)."""
    if attempt.error:  # cut off or refused
        return attempt.error, None
    try:
        value = coerce_root(extract_json(content or ""), schema)
    except NoJSONFound as exc:
        return str(exc), None
    problem = validation_error(value, schema)
    if problem is not None:
        return f"the JSON does not match the schema {problem}", None
    return None, value


def _retry_after(response: "httpx.Response | None") -> float | None:
    if response is None:
        return None
    headers = response.headers
    if headers.get("retry-after-ms"):
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _body_text(response: "httpx.Response | None") -> str:
    if response is None:
        return ""
    try:
        return response.text
    except Exception:  # noqa: BLE001 - a body that cannot be read is simply not recorded
        return ""


def _error_message(exc: "openai.APIStatusError") -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:MAX_ERROR_BODY_CHARS]
        if isinstance(inner, str):
            return inner[:MAX_ERROR_BODY_CHARS]
    text = _body_text(exc.response).strip()
    return (text or exc.message)[:MAX_ERROR_BODY_CHARS]


def _mentions_response_format(error: str) -> bool:
    text = error.lower()
    return "response_format" in text or "json_schema" in text or "structured output" in text


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__
    return str(cause or exc) or type(cause or exc).__name__

"""A small OpenAI-compatible chat-completions server for tests and benchmarks (real sockets), scripted per test;
the product's own scripted server, the demo model, is ``generation.demo_model``, whose parts this one shares.

    with FakeLLM(latency=0.2, max_concurrency=32) as server:
        server.script(Reply.rate_limited(retry_after=1), Reply.json({"answer": "..."}))
        ... point an endpoint at server.base_url ...

Scripted replies are served first come, first served; when the script is empty the
default responder answers with JSON that satisfies the schema the request asked for
(from ``response_format``, or from the schema block a text-mode prompt carries), with
distinct strings so generated questions never repeat. Every request is recorded. Like vLLM,
llama.cpp or Ollama, the server stops working on a request when its client hangs up (a client
that timed out), so ``max_seen_concurrency`` counts the requests still worked on for a client.

``POST /v1/completions`` answers as a completions server that returns log-probabilities (vLLM's, for lm-eval's
``local-completions``): with ``echo`` and ``logprobs``, each prompt's tokens come back with the log-probability
``logprob_responder(prompt)`` gives each of them (-1.0 each without one), then one generated token.

``POST /v1/embeddings`` answers with a deterministic bag-of-words vector per input (each word
a fixed pseudo-random direction), so texts sharing words are close, or with the next scripted
reply if that is an error; ``embedding_inputs`` counts the texts it was asked to embed.
"""

import hashlib
import itertools
import json
import math
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from generation.demo_model import EMBEDDING_DIMENSIONS, embeddings, example_for_schema, schema_example
from generation.demo_model import bag_of_words_embedding as fake_embedding

_SCHEMA_BLOCK = re.compile(r"```json\n(\{.*?\})\n```", re.DOTALL)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: dozens of clients may connect at the same moment


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the model's text, for 200 replies
    body: str | None = None  # a whole raw body instead (errors, broken replies)
    headers: dict = field(default_factory=dict)
    delay: float | None = None  # overrides the server's latency
    finish_reason: str = "stop"

    @classmethod
    def json(cls, value, **kwargs) -> "Reply":
        return cls(content=json.dumps(value, ensure_ascii=False), **kwargs)

    @classmethod
    def text(cls, text: str, **kwargs) -> "Reply":
        return cls(content=text, **kwargs)

    @classmethod
    def error(cls, status: int, message: str, code: str = "error", headers: dict | None = None) -> "Reply":
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": code}})
        return cls(status=status, body=body, headers=headers or {})

    @classmethod
    def rate_limited(cls, retry_after: float = 1) -> "Reply":
        return cls.error(
            429, "Rate limit reached, slow down.", "rate_limit_exceeded", {"Retry-After": f"{retry_after:g}"}
        )

    @classmethod
    def server_error(cls, status: int = 500) -> "Reply":
        return cls.error(status, "The server had an error while processing your request.", "server_error")

    @classmethod
    def unauthorized(cls) -> "Reply":
        return cls.error(401, "Incorrect API key provided.", "invalid_api_key")

    @classmethod
    def model_not_found(cls, model: str = "no-such-model") -> "Reply":
        return cls.error(404, f"The model `{model}` does not exist.", "model_not_found")

    @classmethod
    def no_response_format(cls) -> "Reply":
        return cls.error(
            400, "response_format of type json_schema is not supported by this server", "bad_request"
        )

    @classmethod
    def hang(cls, seconds: float) -> "Reply":
        """Answer only after ``seconds`` (longer than the client's timeout, so it gives up first)."""
        return cls(content="{}", delay=seconds)


@dataclass
class Received:
    body: dict
    headers: dict
    started: float
    finished: float = 0.0
    concurrent: int = 0

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def prompt(self) -> str:
        return "\n".join(message.get("content") or "" for message in self.messages)

    @property
    def structured(self) -> bool:
        return (self.body.get("response_format") or {}).get("type") == "json_schema"


class FakeLLM:
    def __init__(
        self, latency: float = 0.0, max_concurrency: int | None = None, over_capacity: str = "queue"
    ):
        """``over_capacity``: "queue" (wait for a free slot) or "reject" (429) beyond ``max_concurrency``."""
        self.latency = latency
        self.max_concurrency = max_concurrency
        self.over_capacity = over_capacity
        self.responder = None  # callable(Received) -> Reply, instead of the schema-driven default
        self.logprob_responder = (
            None  # callable(prompt: list[int] | str) -> list[float], one per prompt token
        )
        self.completion_requests: list[dict] = []
        self.requests: list[Received] = []
        self.embedding_inputs = 0
        self.max_seen_concurrency = 0
        self.rejected = 0
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._active = 0
        self._working: dict[int, socket.socket] = {}  # requests being worked on → their connection
        self._slots = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self._stop = threading.Event()
        self._counter = itertools.count(1)
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "FakeLLM":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.max_seen_concurrency = 0
            self.rejected = 0

    @property
    def completions(self) -> list[Received]:
        with self._lock:
            return list(self.requests)

    def _next_reply(self, received: Received) -> Reply:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        if self.responder is not None:
            return self.responder(received)
        return Reply.json(self.example_for(_requested_schema(received)))

    def example_for(self, schema: dict | None):
        return _example(schema or {}, self._counter)

    def _work_until_hung_up(self, connection, seconds: float) -> bool:
        """Spend ``seconds`` on a reply, or less if the client hangs up meanwhile (then True)."""
        deadline = time.monotonic() + seconds
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([connection], [], [], min(left, 0.05))
            if readable and _hung_up(connection):
                return True
        return False

    def _forget_hung_up(self) -> None:
        """Under the lock: stop counting the requests whose client has closed its connection."""
        for key, connection in list(self._working.items()):
            if select.select([connection], [], [], 0)[0] and _hung_up(connection):
                del self._working[key]
                self._active -= 1

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in separate writes; without this, Nagle's algorithm and the
            # client's delayed ACK hold every body back ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200, json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                    )
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/").endswith("/embeddings"):
                    body = json.loads(raw or b"{}")
                    texts = body.get("input") or []
                    texts = [texts] if isinstance(texts, str) else texts
                    with fake._lock:
                        fake.embedding_inputs += len(texts)
                        scripted = fake._script.pop(0) if fake._script else None
                    if scripted is not None and scripted.status != 200:
                        self._send(scripted.status, scripted.body or "", scripted.headers)
                        return
                    self._send(200, json.dumps(_embeddings(body.get("model", "fake-embedding"), texts)))
                    return
                if self.path.rstrip("/").endswith("/completions") and "/chat/" not in self.path:
                    body = json.loads(raw or b"{}")
                    with fake._lock:
                        fake.completion_requests.append(body)
                    self._send(200, json.dumps(_text_completion(body, fake.logprob_responder)))
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                    return
                body = json.loads(raw or b"{}")
                headers = {name.lower(): value for name, value in self.headers.items()}
                received = Received(body=body, headers=headers, started=time.monotonic())
                if fake._slots is not None and fake.over_capacity == "reject":
                    if not fake._slots.acquire(blocking=False):
                        with fake._lock:
                            fake.rejected += 1
                        self._send(
                            429,
                            json.dumps({"error": {"message": "too many concurrent requests"}}),
                            {"Retry-After": "0.1"},
                        )
                        return
                elif fake._slots is not None:
                    fake._slots.acquire()
                key = id(received)
                try:
                    with fake._lock:
                        fake._forget_hung_up()  # those whose client left before this one came are no work
                        fake._working[key] = self.connection
                        fake._active += 1
                        received.concurrent = fake._active
                        fake.max_seen_concurrency = max(fake.max_seen_concurrency, fake._active)
                        fake.requests.append(received)
                    reply = fake._next_reply(received)
                    delay = fake.latency if reply.delay is None else reply.delay
                    if delay and fake._work_until_hung_up(self.connection, delay):
                        return  # the client gave up: nobody to answer
                finally:
                    with fake._lock:
                        if fake._working.pop(key, None) is not None:
                            fake._active -= 1
                    if fake._slots is not None:
                        fake._slots.release()
                    received.finished = time.monotonic()
                if reply.body is not None or reply.status != 200:
                    self._send(reply.status, reply.body or "", reply.headers)
                    return
                self._send(200, json.dumps(_completion(body, reply)), reply.headers)

            def _send(self, status: int, text: str, headers: dict | None = None):
                data = text.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


def _hung_up(connection: socket.socket) -> bool:
    """Whether a readable connection was closed by the client (no request is pipelined behind a pending one)."""
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _completion(request: dict, reply: Reply) -> dict:
    prompt = "\n".join(message.get("content") or "" for message in request.get("messages", []))
    content = reply.content or ""
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": len(prompt) // 4 + 1,
            "completion_tokens": len(content) // 4 + 1,
            "total_tokens": len(prompt) // 4 + len(content) // 4 + 2,
        },
    }


def _text_completion(request: dict, logprob_responder) -> dict:
    """A completions reply: with ``echo``, every prompt token with its log-probability, then one generated token."""
    prompts = request.get("prompt")
    if isinstance(prompts, str) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int)):
        prompts = [prompts]
    choices = []
    for index, prompt in enumerate(prompts or []):
        tokens = [str(token) for token in prompt] if isinstance(prompt, list) else prompt.split()
        logprobs = list(logprob_responder(prompt)) if logprob_responder else [-1.0] * len(tokens)
        if not request.get("echo"):
            tokens, logprobs = [], []
        tokens, logprobs = [*tokens, "<generated>"], [*logprobs, 0.0]
        choices.append(
            {
                "index": index,
                "text": "",
                "finish_reason": "length",
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": logprobs,
                    "top_logprobs": [{token: logprob} for token, logprob in zip(tokens, logprobs)],
                    "text_offset": list(range(len(tokens))),
                },
            }
        )
    return {
        "id": f"cmpl-fake-{time.monotonic_ns()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": request.get("model", "fake-model"),
        "choices": choices,
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _embeddings(model: str, texts: list[str]) -> dict:
    return embeddings(model, texts)


def _requested_schema(received: Received) -> dict | None:
    response_format = received.body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format.get("json_schema", {}).get("schema")
    blocks = _SCHEMA_BLOCK.findall(received.prompt)
    return json.loads(blocks[-1]) if blocks else None


def _example(schema: dict, counter):
    return schema_example(schema, counter)

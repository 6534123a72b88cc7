"""The model client against the fake OpenAI-compatible server: the real openai SDK over real sockets."""

import threading
import time

import pytest

from generation.llm import EndpointConfig, LLMClient, PromptRequest
from tests.fake_llm import Reply

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1}},
    "required": ["answer"],
    "additionalProperties": False,
}
PROMPT = PromptRequest(
    system="Responda em JSON.", user="Por que o céu é azul?", schema=SCHEMA, schema_name="answer"
)


def client_for(server, **overrides) -> LLMClient:
    config = {
        "base_url": server.base_url,
        "model": "fake-model-1",
        "api_key": "sk-key",
        "api_key_env": "LLM_API_KEY",
        "timeout": 2.0,
        "backoff_base": 0.05,
        "backoff_max": 0.2,
        **overrides,
    }
    return LLMClient(EndpointConfig(**config))


def test_structured_output_sends_the_schema_as_response_format_and_returns_the_parsed_json(fake_llm):
    fake_llm.script(Reply.json({"answer": "Por causa do espalhamento de Rayleigh."}))

    result = client_for(fake_llm).complete(PROMPT)

    assert result.ok and result.parsed == {"answer": "Por causa do espalhamento de Rayleigh."}
    request = fake_llm.requests[0]
    assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert request.body["model"] == "fake-model-1"
    assert request.headers["authorization"] == "Bearer sk-key"
    assert result.tokens_in > 0 and result.tokens_out > 0
    assert [attempt.outcome for attempt in result.attempts] == ["ok"]


def test_a_429_is_retried_after_the_time_its_retry_after_header_asks_for(fake_llm):
    fake_llm.script(Reply.rate_limited(retry_after=1), Reply.json({"answer": "ok"}))

    result = client_for(fake_llm).complete(PROMPT)

    first, second = fake_llm.requests
    assert result.ok
    assert second.started - first.finished >= 1.0
    assert result.attempts[0].outcome == "rate_limited" and result.attempts[0].status == 429
    assert result.attempts[0].wait_seconds >= 1.0


def test_server_errors_are_retried_with_growing_jittered_backoff(fake_llm):
    fake_llm.script(
        Reply.server_error(500),
        Reply.server_error(503),
        Reply.server_error(502),
        Reply.json({"answer": "ok"}),
    )

    result = client_for(fake_llm, backoff_base=0.1, backoff_max=10).complete(PROMPT)

    assert result.ok and len(fake_llm.requests) == 4
    waits = [attempt.wait_seconds for attempt in result.attempts[:3]]
    assert 0.05 <= waits[0] <= 0.1 and 0.1 <= waits[1] <= 0.2 and 0.2 <= waits[2] <= 0.4


def test_a_server_that_hangs_past_the_timeout_is_given_up_on_and_asked_again(fake_llm):
    fake_llm.script(Reply.hang(5), Reply.json({"answer": "finalmente"}))

    started = time.monotonic()
    result = client_for(fake_llm, timeout=0.5).complete(PROMPT)

    assert result.ok and result.parsed == {"answer": "finalmente"}
    assert result.attempts[0].outcome == "timeout" and "0.5 s" in result.attempts[0].error
    assert time.monotonic() - started < 3


def test_malformed_json_is_shown_back_to_the_model_which_then_answers_validly(fake_llm):
    fake_llm.script(Reply.text('{"answer": "sem fim'), Reply.json({"answer": "completo"}))

    result = client_for(fake_llm).complete(PROMPT)

    assert result.ok and result.parsed == {"answer": "completo"}
    assert result.attempts[0].outcome == "invalid" and "not valid JSON" in result.attempts[0].error
    again = fake_llm.requests[1].messages
    assert again[-2] == {"role": "assistant", "content": '{"answer": "sem fim'}
    assert "could not be used" in again[-1]["content"] and "not valid JSON" in again[-1]["content"]


def test_output_that_breaks_the_schema_is_re_asked_with_the_validation_error(fake_llm):
    fake_llm.script(Reply.json({"resposta": "campo errado"}), Reply.json({"answer": "certo"}))

    result = client_for(fake_llm).complete(PROMPT)

    assert result.ok and result.parsed == {"answer": "certo"}
    error = result.attempts[0].error
    assert "does not match the schema" in error and "answer" in error
    assert error in fake_llm.requests[1].messages[-1]["content"]


def test_output_that_never_validates_fails_after_the_configured_number_of_answers(fake_llm):
    fake_llm.script(*[Reply.json({"wrong": n}) for n in range(5)])

    result = client_for(fake_llm, max_attempts=2).complete(PROMPT)

    assert not result.ok and not result.fatal
    assert len(fake_llm.requests) == 2
    assert result.error.startswith("no valid output after 2 answers")


@pytest.mark.parametrize(
    "reply, status, words",
    [
        (Reply.unauthorized(), 401, ["401", "Incorrect API key", "$LLM_API_KEY"]),
        (Reply.error(403, "Not allowed for this project."), 403, ["403", "Not allowed"]),
        (Reply.model_not_found("fake-model-1"), 404, ["404", "'fake-model-1'", "model name"]),
    ],
)
def test_401_403_and_404_fail_at_once_with_a_message_that_says_what_to_fix(fake_llm, reply, status, words):
    fake_llm.script(reply, Reply.json({"answer": "never asked"}))

    started = time.monotonic()
    result = client_for(fake_llm).complete(PROMPT)

    assert not result.ok and result.fatal and result.status == status
    assert len(fake_llm.requests) == 1
    assert time.monotonic() - started < 1
    for word in words:
        assert word in result.error


def test_a_400_is_not_retried_but_does_not_condemn_the_endpoint(fake_llm):
    fake_llm.script(Reply.error(400, "This model's maximum context length is 8192 tokens."))

    result = client_for(fake_llm).complete(PROMPT)

    assert not result.ok and not result.fatal and result.status == 400
    assert len(fake_llm.requests) == 1 and "maximum context length" in result.error


def test_a_missing_key_is_named_in_the_401_message(fake_llm):
    fake_llm.script(Reply.unauthorized())

    result = client_for(fake_llm, api_key=None, api_key_env="OPENAI_API_KEY").complete(PROMPT)

    assert "$OPENAI_API_KEY is empty" in result.error


def test_temporary_failures_are_given_up_after_the_configured_retries(fake_llm):
    fake_llm.script(*[Reply.server_error() for _ in range(10)])

    result = client_for(fake_llm, max_retries=2).complete(PROMPT)

    assert not result.ok and len(fake_llm.requests) == 3
    assert result.error.startswith("gave up after 3 temporary failures") and "500" in result.error


def test_a_server_that_cannot_do_structured_output_is_asked_in_text_mode(fake_llm):
    fake_llm.script(
        Reply.no_response_format(),
        Reply.text('Claro! Aqui está:\n```json\n{"answer": "em texto"}\n```\nEspero ter ajudado.'),
    )

    result = client_for(fake_llm).complete(PROMPT)

    assert result.ok and result.parsed == {"answer": "em texto"}
    text_request = fake_llm.requests[1]
    assert not text_request.structured and "validates against this JSON schema" in text_request.prompt
    assert result.request["structured_output"] is False


def test_an_endpoint_without_structured_output_gets_the_schema_in_the_prompt(fake_llm):
    result = client_for(fake_llm, structured_output=False).complete(PROMPT)

    assert result.ok and isinstance(result.parsed["answer"], str)
    assert "response_format" not in fake_llm.requests[0].body


def test_connection_errors_are_retried_and_reported_plainly():
    client = LLMClient(
        EndpointConfig(
            base_url="http://127.0.0.1:9/v1", model="m", timeout=1, max_retries=1, backoff_base=0.01
        )
    )
    result = client.complete(PROMPT)

    assert not result.ok and len(result.attempts) == 2
    assert result.attempts[0].outcome == "connection_error"
    assert "could not reach http://127.0.0.1:9/v1" in result.error


def test_cancelling_stops_a_call_waiting_to_retry(fake_llm):
    fake_llm.script(Reply.rate_limited(retry_after=30))
    cancel = threading.Event()
    client = LLMClient(EndpointConfig(base_url=fake_llm.base_url, model="m", timeout=2), cancel=cancel)
    threading.Timer(0.3, cancel.set).start()

    started = time.monotonic()
    result = client.complete(PROMPT)

    assert result.cancelled and not result.ok
    assert time.monotonic() - started < 2
    assert len(fake_llm.requests) == 1


def test_the_endpoints_default_parameters_are_sent_with_each_request(fake_llm):
    client_for(fake_llm, params={"temperature": 0.2, "max_tokens": 300, "seed": 7, "top_k": 40}).complete(
        PROMPT
    )

    body = fake_llm.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_k"]) == (0.2, 300, 7, 40)


def test_a_reply_cut_off_by_the_token_limit_is_asked_again(fake_llm):
    fake_llm.script(
        Reply.text('{"answer": "cortad', finish_reason="length"), Reply.json({"answer": "inteira"})
    )

    result = client_for(fake_llm).complete(PROMPT)

    assert result.ok and "token limit" in result.attempts[0].error


def test_the_record_of_a_re_asked_call_holds_the_whole_exchange(fake_llm):
    fake_llm.script(Reply.json({"wrong": 1}), Reply.json({"answer": "certo"}))

    result = client_for(fake_llm).complete(PROMPT)

    roles = [message["role"] for message in result.request["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_a_call_cancelled_while_waiting_for_a_slot_is_not_sent(fake_llm):
    from generation.llm import Limits, LocalLimiter

    limiter = LocalLimiter(Limits(max_concurrency=1, requests_per_minute=0))
    held = limiter.acquire()
    cancel = threading.Event()
    client = LLMClient(EndpointConfig(base_url=fake_llm.base_url, model="m"), limiter=limiter, cancel=cancel)
    threading.Timer(0.2, cancel.set).start()

    result = client.complete(PROMPT)

    assert result.cancelled and result.attempts == [] and fake_llm.requests == []
    limiter.release(held)


def test_a_thread_may_keep_its_slot_between_calls_but_the_rate_still_applies(fake_llm):
    from generation.llm import Limits, LocalLimiter

    limiter = LocalLimiter(Limits(max_concurrency=1, requests_per_minute=120))  # 2 at once, then 2 a second
    client = LLMClient(EndpointConfig(base_url=fake_llm.base_url, model="m"), limiter=limiter)

    started = time.monotonic()
    for _ in range(4):
        assert client.complete(PROMPT, keep_slot=True).ok
        assert limiter._active == 1  # kept for this thread's next call
    assert time.monotonic() - started >= 0.9
    client.release_slot()
    assert limiter._active == 0
    assert client.complete(PROMPT).ok and limiter._active == 0  # given back by default


def test_a_thread_waiting_to_retry_holds_no_slot(fake_llm):
    from generation.llm import Limits, LocalLimiter

    limiter = LocalLimiter(Limits(max_concurrency=1, requests_per_minute=0))
    client = LLMClient(
        EndpointConfig(base_url=fake_llm.base_url, model="m", backoff_base=0.5, backoff_max=0.5),
        limiter=limiter,
    )
    fake_llm.script(Reply.server_error(), Reply.json({"answer": "ok"}))
    seen = []
    threading.Timer(0.15, lambda: seen.append(limiter._active)).start()

    assert client.complete(PROMPT).ok
    assert seen == [0]


def test_a_timed_out_call_keeps_its_slot_until_its_connection_is_closed(fake_llm):
    from generation.llm.limiter import Limits, LocalLimiter

    fake_llm.responder = lambda received: Reply.hang(3)  # the provider works longer than the client waits
    limiter = LocalLimiter(Limits(max_concurrency=4, requests_per_minute=0))
    client = LLMClient(
        EndpointConfig(
            base_url=fake_llm.base_url,
            model="m",
            timeout=0.3,
            max_retries=2,
            backoff_base=0.01,
            backoff_max=0.02,
        ),
        limiter=limiter,
    )
    threads = [threading.Thread(target=client.complete, args=(PROMPT,)) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()

    assert len(fake_llm.requests) == 36  # every call timed out three times
    assert fake_llm.max_seen_concurrency <= 4  # the server never worked on more than the endpoint's limit

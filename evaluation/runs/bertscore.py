"""BERTScore (Zhang et al., 2020) computed locally from a BERT-style model's token embeddings.

The formula is the reference ``bert-score`` package's (``score(..., model_type=<directory>, num_layers=<layer>)``):
each text is tokenized with the model's [CLS] and [SEP] markers, its tokens embedded by the hidden layer
``layer`` (default the last), and every token of the candidate matched to its most similar token of the
reference (cosine), the markers included in the matching. Precision averages those best matches over
the candidate's tokens, recall over the reference's, each token weighted by its idf over the references
when ``idf`` is on (else 1), the markers weighted 0; F1 is their harmonic mean. No baseline rescaling, so
figures are comparable only between runs that use the same model and layer (the run records both).

Long texts are not cut. A text longer than the model's window (512 tokens for BERT models) is read in
overlapping windows of that size that step by half a window; each token takes its embedding from the window
where it has the most context on both sides, so every token of the whole text counts, once. A text that fits
the window is one window and scores exactly as the reference package scores it. Empty or blank text scores 0.

Where the CPU runs it faster (AMX, or AVX-512 BF16 on an AMD processor: ``native_bfloat16``) the model runs in
bfloat16, two to three times as fast; the token embeddings are then compared in float32 as before. On the reference
test's 300 pairs and the benchmark's 100- and 600-word answers the scores move by at most 0.003 from float32's
(0.0014 F1 without idf, 0.0017 with; the reference test allows 0.005). ``precision="float32"`` keeps float32 anywhere; the run records which one scored it.

The model loads offline (``generation.local_models``). Torch is imported only when scoring: without the
``ml`` extra, ``bertscore`` raises ``LocalModelUnavailable`` and the caller notes why no score was computed.
"""

import math
import os
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

from generation.local_models import native_bfloat16, token_model

MAX_WINDOW = 512


@dataclass(frozen=True)
class BertScore:
    precision: float
    recall: float
    f1: float


ZERO = BertScore(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Scorer:
    """A loaded model with the layer to read: what a run records (``described``)."""

    name: str
    layer: int
    layers: int
    window: int
    tokenizer: object
    model: object
    precision: str = "float32"

    def described(self, *, idf: bool) -> dict:
        return {
            "model": self.name,
            "layer": self.layer,
            "layers": self.layers,
            "idf": idf,
            "window": self.window,
            "precision": self.precision,
        }

    def windowed(self, texts: list[str]) -> int:
        """How many of the texts are longer than one window (read in overlapping windows)."""
        return sum(1 for text in texts if text.strip() and len(_ids(self, text)) > self.window - 2)


def scorer(model_dir: str = "", layer: int | None = None, precision: str = "") -> Scorer:
    """Load the model (cached per process), in ``precision`` ("float32" or "bfloat16"; by default bfloat16 where
    the CPU runs it faster, ``native_bfloat16``). Raises ``LocalModelUnavailable`` without the ml extra or the directory,
    ``ValueError`` for a layer the model does not have."""
    precision = precision or ("bfloat16" if native_bfloat16() else "float32")
    if precision not in ("float32", "bfloat16"):
        raise ValueError(f"precision must be float32 or bfloat16, not {precision!r}")
    loaded = token_model(model_dir, precision)
    layers = int(loaded.model.config.num_hidden_layers)
    layer = layers if layer is None else layer
    if not 1 <= layer <= layers:
        raise ValueError(f"the model has layers 1 to {layers}, not {layer}")
    window = min(
        MAX_WINDOW,
        int(getattr(loaded.model.config, "max_position_embeddings", MAX_WINDOW)),
        int(loaded.tokenizer.model_max_length or MAX_WINDOW),
    )
    return Scorer(loaded.name, layer, layers, window, loaded.tokenizer, loaded.model, precision)


@dataclass(frozen=True)
class Idf:
    weights: dict[int, float]
    unseen: float  # a token no reference has

    def of(self, token: int) -> float:
        return self.weights.get(token, self.unseen)


def idf_weights(model: Scorer, references: list[str]) -> Idf:
    """Each token's idf over the references, as the reference package computes it: log((M + 1) / (df + 1))."""
    counts = Counter()
    for reference in references:
        counts.update(set(_ids(model, reference)))
    total = len(references)
    return Idf({token: math.log((total + 1) / (n + 1)) for token, n in counts.items()}, math.log(total + 1))


def bertscore(
    candidates: list[str],
    references: list[str],
    *,
    model: Scorer | None = None,
    model_dir: str = "",
    layer: int | None = None,
    idf: Idf | None = None,
    batch_size: int = 32,
) -> list[BertScore]:
    """One score per (candidate, reference) pair; ``idf`` from ``idf_weights`` or None (every token 1)."""
    if len(candidates) != len(references):
        raise ValueError("as many references as candidates are needed")
    if not candidates:
        return []
    model = model or scorer(model_dir, layer)
    import torch

    texts = list(dict.fromkeys(text for text in [*candidates, *references] if text.strip()))
    with torch.inference_mode():
        embedded = dict(zip(texts, _embed(model, texts, batch_size)))
        with _one_thread(torch):
            return [
                _pair(embedded.get(candidate), embedded.get(reference), idf)
                for candidate, reference in zip(candidates, references)
            ]


@contextmanager
def _threads(torch, wanted: int):
    """Torch on at most ``wanted`` threads inside the block (its own setting restored after)."""
    threads = torch.get_num_threads()
    if wanted >= threads:
        yield
        return
    torch.set_num_threads(wanted)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _one_thread(torch):
    """Torch's small operations (a text's normalisation, a pair's similarity matrix and its maxima) on one
    thread: split over two they wait for each other, and on a busy machine, whose other core is taken, each
    waited tens of milliseconds (profiled: 16 of 37 s for 100 pairs at load 9, against 0.2 s on one thread)."""
    return _threads(torch, 1)


def _forward_threads() -> int:
    """Threads for the model's forward pass: all of torch's while the machine has a core to spare, else one.
    On a machine busier than its cores each thread waits for the others at every operation: at load average
    10 on 2 cores, 64 pairs took 42 ms of CPU per pair on two threads (6 pairs/s) and 18 ms on one (12 pairs/s)."""
    try:
        busy = os.getloadavg()[0] >= (os.cpu_count() or 1)
    except OSError:
        busy = False
    return 1 if busy else 1_000


def _ids(model: Scorer, text: str) -> list[int]:
    return model.tokenizer(text.strip(), add_special_tokens=False, verbose=False)["input_ids"]


def windows(length: int, size: int) -> list[tuple[int, int]]:
    """(start, end) spans of at most ``size`` tokens covering ``length`` tokens, stepping half a window."""
    if length <= size:
        return [(0, length)]
    step = max(1, size // 2)
    spans = [(start, start + size) for start in range(0, length - size, step)]
    return spans + [(length - size, length)]


def owner_of_each_token(length: int, spans: list[tuple[int, int]]) -> list[int]:
    """For each token, the span in which it has the most context on both sides."""
    return [
        max(range(len(spans)), key=lambda s: (min(p - spans[s][0], spans[s][1] - 1 - p), -s))
        for p in range(length)
    ]


def _embed(model: Scorer, texts: list[str], batch_size: int) -> list[tuple]:
    """Per text: (unit token embeddings [CLS] + tokens + [SEP], the token ids in the same order)."""
    import torch

    tokenizer = model.tokenizer
    size = model.window - 2
    pieces = []  # (text index, span index, ids with markers)
    plans = []
    for index, text in enumerate(texts):
        ids = _ids(model, text)
        spans = windows(len(ids), size)
        plans.append((ids, spans))
        pieces.extend(
            (index, s, [tokenizer.cls_token_id, *ids[a:b], tokenizer.sep_token_id])
            for s, (a, b) in enumerate(spans)
        )
    hidden: dict[tuple[int, int], torch.Tensor] = {}
    pieces.sort(key=lambda piece: len(piece[2]))  # similar lengths together: little padding
    with _threads(torch, _forward_threads()):
        _forward(model, pieces, batch_size, hidden)
    with _one_thread(torch):
        return _assemble(model, plans, hidden)


def _forward(model: Scorer, pieces: list, batch_size: int, hidden: dict) -> None:
    import torch

    tokenizer = model.tokenizer
    for start in range(0, len(pieces), batch_size):
        batch = pieces[start : start + batch_size]
        longest = max(len(ids) for _i, _s, ids in batch)
        input_ids = torch.full((len(batch), longest), tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, (_i, _s, ids) in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            mask[row, : len(ids)] = 1
        # Views of the one layer read (the batch's other layers are freed), made float32 one text at a time.
        states = model.model(
            input_ids=input_ids, attention_mask=mask, output_hidden_states=True
        ).hidden_states[model.layer]
        for row, (index, span, ids) in enumerate(batch):
            hidden[index, span] = states[row, : len(ids)]


def _assemble(model: Scorer, plans: list, hidden: dict) -> list[tuple]:
    import torch

    tokenizer = model.tokenizer
    result = []
    for index, (ids, spans) in enumerate(plans):
        if len(spans) == 1:  # the text fits one window: its states are [CLS] + tokens + [SEP] already
            rows = hidden[index, 0]
        else:
            owners = owner_of_each_token(len(ids), spans)
            rows = [hidden[index, 0][0]]
            rows += [hidden[index, owner][1 + p - spans[owner][0]] for p, owner in enumerate(owners)]
            rows.append(hidden[index, len(spans) - 1][-1])
            rows = torch.stack(rows)
        tokens = torch.nn.functional.normalize(rows.float(), dim=-1)
        result.append((tokens, [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]))
    return result


def _pair(candidate, reference, idf: Idf | None) -> BertScore:
    if candidate is None or reference is None:
        return ZERO
    (c_tokens, c_ids), (r_tokens, r_ids) = candidate, reference
    similarity = c_tokens @ r_tokens.T
    precision = _weighted(similarity.max(dim=1).values, c_ids, idf)
    recall = _weighted(similarity.max(dim=0).values, r_ids, idf)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return BertScore(precision, recall, f1)


def _weighted(best, ids: list[int], idf: Idf | None) -> float:
    """Mean of the best matches weighted by idf (1 without), the [CLS] and [SEP] markers weighted 0."""
    weights = [0.0] + [idf.of(token) if idf else 1.0 for token in ids[1:-1]] + [0.0]
    total = sum(weights)
    if total <= 0:
        return 0.0
    return float(sum(w * float(b) for w, b in zip(weights, best.tolist()))) / total

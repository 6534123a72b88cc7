"""BERTScore (Zhang et al., 2020) computed locally from a sentence-transformers model's token embeddings.

Each token of the candidate is matched to its most similar token of the reference (cosine);
precision averages those best matches over the candidate, recall over the reference, F1 is
their harmonic mean. No idf weighting and no baseline rescaling, so figures are comparable
only between runs that use the same model (the run records which). The model loads offline
(``generation.local_models``); on the CPU, in inference mode, the figures are deterministic.
"""

from dataclasses import dataclass

from generation.local_models import sentence_model


@dataclass(frozen=True)
class BertScore:
    precision: float
    recall: float
    f1: float


def bertscore(candidates: list[str], references: list[str], *, model_dir: str = "", batch_size: int = 32
              ) -> list[BertScore]:
    """One score per (candidate, reference) pair. Raises ``LocalModelUnavailable`` without the ml extra."""
    if len(candidates) != len(references):
        raise ValueError("as many references as candidates are needed")
    if not candidates:
        return []
    import torch

    model = sentence_model(model_dir)
    with torch.inference_mode():
        candidate_tokens = _token_embeddings(model, candidates, batch_size)
        reference_tokens = _token_embeddings(model, references, batch_size)
        scores = []
        for candidate, reference in zip(candidate_tokens, reference_tokens):
            if len(candidate) == 0 or len(reference) == 0:
                scores.append(BertScore(0.0, 0.0, 0.0))
                continue
            similarity = candidate @ reference.T
            precision = similarity.max(dim=1).values.mean().item()
            recall = similarity.max(dim=0).values.mean().item()
            f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
            scores.append(BertScore(precision, recall, f1))
    return scores


def _token_embeddings(model, texts: list[str], batch_size: int) -> list:
    """Unit-length embeddings of each text's tokens, without the [CLS] and [SEP] markers."""
    import torch

    outputs = model.encode(list(texts), output_value="token_embeddings", batch_size=batch_size,
                           convert_to_numpy=False, show_progress_bar=False)
    result = []
    for tokens in outputs:
        tokens = tokens[1:-1] if len(tokens) > 2 else tokens
        result.append(torch.nn.functional.normalize(tokens.float(), dim=-1))
    return result

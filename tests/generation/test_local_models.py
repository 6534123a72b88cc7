"""The packaged local model loads offline and gives sensible, repeatable embeddings."""

import numpy as np
import pytest

pytestmark = pytest.mark.ml


def test_embeddings_are_unit_length_repeatable_and_put_similar_questions_together():
    pytest.importorskip("sentence_transformers", reason="the ml extra is not installed")
    from generation.local_models import embed

    texts = [
        "Por que o desemprego aumenta durante uma crise econômica?",
        "Por que o desemprego cresce quando a economia entra em crise?",
        "Qual ração é melhor para um gato castrado?",
    ]
    vectors = embed(texts)
    assert vectors.shape[0] == 3 and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2
    assert np.allclose(embed(texts), vectors, atol=1e-6)

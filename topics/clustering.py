"""Reducing, clustering and mapping question embeddings, free of Django.

UMAP (the paper's reducer) is not available here; PCA reduces the vectors before HDBSCAN
(scikit-learn's), which finds clusters of any shape and leaves out what fits none (label -1,
the residual topic). HDBSCAN keeps its most persistent clusters; on a few hundred short questions these can
merge several themes into one cluster holding half the corpus, depending on the number of dimensions kept.
When one cluster holds more than ``MIXED_SHARE`` of the clustered questions and its questions are clearly
less alike than those of the other clusters (``MIXED_GAP``), the finest stable clusters of the same tree
(HDBSCAN's leaf selection) are kept instead. Clusters are numbered by size, largest first, as in the
paper's Table 2.
"""

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

# scikit-learn (with the pandas and scipy it pulls in) is imported where a run needs it, not when Django
# starts: every process loads this module through the app's sweep registration, few of them cluster.

RESIDUAL = -1
# A cluster larger than this share of the clustered questions, whose questions are less similar to its centre
# (mean cosine) than the other clusters' by at least this gap, mixes themes: HDBSCAN keeps its finest clusters.
MIXED_SHARE = 0.25
MIXED_GAP = 0.05


@dataclass
class Clustering:
    labels: np.ndarray  # one per vector; RESIDUAL for those that fit no cluster
    dimensions: int  # what the vectors were reduced to before clustering (their own size if not reduced)
    finest: bool = False  # HDBSCAN's finest clusters were kept, its most persistent ones being too mixed


def normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def reduce(vectors: np.ndarray, dimensions: int, seed: int = 0) -> np.ndarray:
    """PCA down to ``dimensions`` (nothing to do when the vectors are that small already)."""
    wanted = min(dimensions, vectors.shape[0] - 1, vectors.shape[1])
    if dimensions <= 0 or wanted >= vectors.shape[1] or wanted < 2:
        return vectors
    from sklearn.decomposition import PCA

    return PCA(n_components=wanted, random_state=seed).fit_transform(vectors).astype(np.float32, copy=False)


def auto_sizes(
    n: int, *, min_cluster_size: int | None = None, min_samples: int | None = None
) -> tuple[int, int]:
    """HDBSCAN's sizes for ``n`` questions where the curator left them empty: the smallest topic about 1.5%
    of the questions (5 to 100: 5 for 300, 30 for 2,000), core neighbours as many but at most 10 (more leaves
    most of a corpus of a few hundred questions in the residual). Given values are kept."""
    if min_cluster_size is None:
        min_cluster_size = max(5, min(100, round(n * 0.015)))
    if min_samples is None:
        min_samples = min(min_cluster_size, 10)
    return min_cluster_size, min_samples


def cluster(
    vectors: np.ndarray,
    *,
    min_cluster_size: int = 10,
    min_samples: int | None = None,
    dimensions: int = 10,
    seed: int = 0,
) -> Clustering:
    """HDBSCAN over the (reduced) unit vectors, its finest clusters when the most persistent ones leave one
    holding too many questions (see the module's docstring); labels renumbered by cluster size."""
    if len(vectors) < max(2, min_cluster_size):
        raise ValueError(f"{len(vectors)} questions are too few for clusters of at least {min_cluster_size}")
    from sklearn.cluster import HDBSCAN

    reduced = reduce(normalised(vectors), dimensions, seed)

    def clusters(selection: str) -> np.ndarray:
        return HDBSCAN(
            min_cluster_size=min_cluster_size,
            min_samples=min_samples,
            cluster_selection_method=selection,
            copy=True,
        ).fit_predict(reduced)

    found = clusters("eom")
    finest = too_mixed(vectors, found)
    if finest:
        found = clusters("leaf")
    return Clustering(labels=by_size(found), dimensions=reduced.shape[1], finest=finest)


def too_mixed(vectors: np.ndarray, labels: np.ndarray) -> bool:
    """Whether the largest cluster holds more than ``MIXED_SHARE`` of the questions placed in a cluster and its
    questions are less similar to its centre, on average, than the other clusters' are to theirs by at least
    ``MIXED_GAP`` (a lone cluster that large counts as mixed)."""
    placed = labels != RESIDUAL
    if not placed.any():
        return False
    found, sizes = np.unique(labels[placed], return_counts=True)
    largest = found[sizes.argmax()]
    if sizes.max() <= MIXED_SHARE * placed.sum():
        return False
    unit = normalised(vectors)

    def coherence(label) -> float:
        members = unit[labels == label]
        return float((members @ normalised(members.mean(axis=0, keepdims=True))[0]).mean())

    others = [coherence(label) for label in found if label != largest]
    return not others or coherence(largest) <= float(np.mean(others)) - MIXED_GAP


def by_size(labels: np.ndarray) -> np.ndarray:
    """Clusters numbered 0, 1, … from the largest; the residual stays RESIDUAL."""
    found, sizes = np.unique(labels[labels != RESIDUAL], return_counts=True)
    order = found[np.lexsort((found, -sizes))]
    renumber = {int(old): new for new, old in enumerate(order)}
    return np.array([renumber.get(int(label), RESIDUAL) for label in labels], dtype=int)


def assign_nearest(
    vectors: np.ndarray, clustered: np.ndarray, labels: np.ndarray, min_similarity: float = 0.3
) -> np.ndarray:
    """For questions left out of the clustering (generated ones), the cluster whose centroid is most
    similar (cosine), or RESIDUAL when none is at least ``min_similarity``."""
    if not len(vectors):
        return np.zeros(0, dtype=int)
    clusters = sorted(set(int(label) for label in labels) - {RESIDUAL})
    if not clusters:
        return np.full(len(vectors), RESIDUAL, dtype=int)
    unit = normalised(clustered)
    centroids = normalised(np.stack([unit[labels == label].mean(axis=0) for label in clusters]))
    similarity = normalised(vectors) @ centroids.T
    best = similarity.argmax(axis=1)
    chosen = np.array(clusters)[best]
    return np.where(similarity[np.arange(len(vectors)), best] >= min_similarity, chosen, RESIDUAL)


def map_2d(vectors: np.ndarray, seed: int = 0) -> np.ndarray:
    """Two coordinates per question, scaled to 0…1 on each axis (the first two principal components)."""
    if len(vectors) == 0:
        return np.zeros((0, 2))
    if len(vectors) < 3 or vectors.shape[1] < 2:
        return np.full((len(vectors), 2), 0.5)
    from sklearn.decomposition import PCA

    points = PCA(n_components=2, random_state=seed).fit_transform(normalised(vectors))
    low, high = points.min(axis=0), points.max(axis=0)
    span = np.where(high - low > 0, high - low, 1.0)
    return (points - low) / span


def near_duplicates(
    vectors: np.ndarray, *, threshold: float, limit: int = 5000, block: int = 1024
) -> list[tuple[int, int, float]]:
    """Pairs (i, j, cosine similarity) with i < j and similarity ≥ ``threshold``, most similar first.

    Compared a block of rows at a time, so 10,000 questions never need a 10,000² matrix.
    """
    unit = normalised(vectors.astype(np.float32, copy=False))
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(unit), block):
        similarity = unit[start : start + block] @ unit.T
        rows, columns = np.nonzero(similarity >= threshold)
        for row, column in zip(rows.tolist(), columns.tolist()):
            if start + row < column:
                pairs.append((start + row, column, float(similarity[row, column])))
    pairs.sort(key=lambda pair: (-pair[2], pair[0], pair[1]))
    return pairs[:limit]


def reassign_residual(vectors: np.ndarray, labels: np.ndarray, *, min_similarity: float) -> np.ndarray:
    """HDBSCAN leaves out every question it cannot place with certainty: on a few hundred short questions that
    can be most of them. A left-out question joins the cluster whose centroid is most similar to it when that
    similarity is at least ``min_similarity`` (BERTopic's outlier reduction by embeddings); the others stay in
    the residual. ``min_similarity`` 1 keeps HDBSCAN's residual as it is."""
    left_out = labels == RESIDUAL
    if min_similarity >= 1 or not left_out.any() or left_out.all():
        return labels
    placed = labels.copy()
    placed[left_out] = assign_nearest(
        vectors[left_out], vectors[~left_out], labels[~left_out], min_similarity=min_similarity
    )
    return placed


_NOT_WORD = re.compile(r"[\W_]+")


def comparable_text(text: str) -> str:
    """A question as a duplicate check compares it: without case, accents, punctuation or extra spaces."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return _NOT_WORD.sub(" ", bare).strip()


def same_text_pairs(texts: list[str]) -> list[tuple[int, int, float]]:
    """Pairs (i, j, 1.0) of questions that are the same once case, accents and punctuation are set aside:
    typed again, they are duplicates whatever an embedding model makes of the difference."""
    first_of: dict[str, int] = {}
    pairs = []
    for index, text in enumerate(texts):
        key = comparable_text(text)
        if not key:
            continue
        if key in first_of:
            pairs.append((first_of[key], index, 1.0))
        else:
            first_of[key] = index
    return pairs

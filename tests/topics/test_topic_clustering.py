"""Clustering, c-TF-IDF, near-duplicates and seed words on hand-made data (no database, no model)."""

import math

import numpy as np
import pytest

from topics import clustering, ctfidf
from topics.run import seed_words_parse


def themes(n_per_theme=40, dimensions=384, n_themes=3, spread=0.15, seed=7):
    """Points around ``n_themes`` random unit directions, well apart, plus their true theme."""
    rng = np.random.default_rng(seed)
    centres = clustering.normalised(rng.normal(size=(n_themes, dimensions)))
    vectors, truth = [], []
    for theme, centre in enumerate(centres):
        vectors.append(centre + spread * rng.normal(size=(n_per_theme, dimensions)) / math.sqrt(dimensions))
        truth += [theme] * n_per_theme
    return np.vstack(vectors).astype(np.float32), np.array(truth)


def test_clustering_finds_clearly_separated_themes():
    vectors, truth = themes()

    found = clustering.cluster(vectors, min_cluster_size=10, dimensions=10)

    assert sorted(set(found.labels.tolist()) - {clustering.RESIDUAL}) == [0, 1, 2]
    assert found.dimensions == 10
    assert not found.finest, "no cluster mixes themes: HDBSCAN's most persistent clusters are kept"
    for theme in range(3):  # each theme lands in one cluster, and no two themes share one
        labels = set(found.labels[truth == theme].tolist()) - {clustering.RESIDUAL}
        assert len(labels) == 1
    assert len({next(iter(set(found.labels[truth == t].tolist()) - {-1})) for t in range(3)}) == 3
    assert (found.labels == clustering.RESIDUAL).sum() <= 3


def test_a_large_cluster_of_two_themes_is_mixed_and_large_clusters_of_one_theme_are_not():
    vectors, truth = themes(n_themes=4)

    assert not clustering.too_mixed(vectors, truth), "four themes, a quarter each, all as tight"
    assert not clustering.too_mixed(vectors[truth < 3], truth[truth < 3]), "a third each, all as tight"
    two_in_one = np.where(truth == 1, 0, truth)
    assert clustering.too_mixed(vectors, two_in_one), "half the questions, on two themes"
    assert not clustering.too_mixed(vectors, np.where(truth == 1, clustering.RESIDUAL, truth))


def test_clusters_are_numbered_by_size_largest_first():
    assert clustering.by_size(np.array([5, 5, 9, 9, 9, -1, 2])).tolist() == [1, 1, 0, 0, 0, -1, 2]


def test_an_outlier_far_from_every_theme_goes_to_the_residual_topic():
    vectors, _truth = themes(n_per_theme=30)
    outlier = clustering.normalised(np.random.default_rng(99).normal(size=(1, vectors.shape[1]))).astype(
        np.float32
    )

    found = clustering.cluster(np.vstack([vectors, outlier]), min_cluster_size=10, dimensions=10)

    assert found.labels[-1] == clustering.RESIDUAL


def test_too_few_questions_for_the_smallest_cluster_is_a_clear_error():
    with pytest.raises(ValueError, match="4 questions are too few for clusters of at least 10"):
        clustering.cluster(np.eye(4, dtype=np.float32), min_cluster_size=10)


def test_questions_left_out_are_assigned_to_the_nearest_cluster_centroid_or_the_residual():
    vectors, truth = themes(n_per_theme=20)
    labels = truth.copy()
    near_first = vectors[truth == 1][:2] + 0.01
    unrelated = np.zeros((1, vectors.shape[1]), dtype=np.float32)
    unrelated[0, 0] = 1.0

    assigned = clustering.assign_nearest(
        np.vstack([near_first, unrelated]), vectors, labels, min_similarity=0.5
    )

    assert assigned.tolist() == [1, 1, clustering.RESIDUAL]


def test_ctfidf_top_words_match_the_hand_computed_weights():
    texts = ["cat dog", "dog food", "python code", "code bug"]
    labels = [0, 0, 1, 1]
    # Cluster 0 has cat 1, dog 2, food 1 (4 words); cluster 1 python 1, code 2, bug 1. A = 8 / 2 = 4.
    # weight = (count / 4) * log(1 + A / frequency over all clusters)
    dog = 0.5 * math.log(1 + 4 / 2)
    cat = 0.25 * math.log(1 + 4 / 1)

    words = ctfidf.top_words(texts, labels, n=3)

    assert [word for word, _ in words[0]] == ["dog", "cat", "food"]
    assert [word for word, _ in words[1]] == ["code", "bug", "python"]
    assert words[0][0][1] == pytest.approx(dog)
    assert words[0][1][1] == pytest.approx(cat)
    assert words[0][2][1] == pytest.approx(cat)


def test_ctfidf_weighs_a_word_shared_by_clusters_below_a_word_of_one_cluster():
    texts = ["escola escola aluno", "escola professor", "gato escola", "gato ração"]
    words = dict(ctfidf.top_words(texts, [0, 0, 1, 1], n=5)[1])
    # Cluster 0 has 5 words, cluster 1 has 4, so A = 9 / 2 = 4.5.
    # gato: 2 of 4 words in cluster 1, 2 overall; escola: 1 of 4, 4 overall; ração: 1 of 4, 1 overall.
    assert words["gato"] == pytest.approx(0.5 * math.log(1 + 4.5 / 2))
    assert words["escola"] == pytest.approx(0.25 * math.log(1 + 4.5 / 4))
    assert words["ração"] == pytest.approx(0.25 * math.log(1 + 4.5 / 1))
    assert words["gato"] > words["ração"] > words["escola"]


def test_portuguese_and_english_stop_words_are_left_out():
    texts = ["Por que o gato não come a ração?", "Why does the cat not eat the food?"]
    words = {word for described in ctfidf.top_words(texts, [0, 0], n=20).values() for word, _ in described}
    assert {"gato", "come", "ração", "cat", "eat", "food"} <= words
    assert not words & {"por", "que", "não", "why", "does", "the", "not"}
    assert {"não", "que", "the", "why"} <= ctfidf.stop_words()


def test_near_duplicate_pairs_are_those_at_least_as_similar_as_the_threshold():
    base = np.eye(5, 8, dtype=np.float32)
    almost_first = base[0] + np.array([0, 0.05, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    vectors = np.vstack([base, almost_first])

    pairs = clustering.near_duplicates(vectors, threshold=0.95, block=2)

    assert [(i, j) for i, j, _ in pairs] == [(0, 5)]
    assert pairs[0][2] == pytest.approx(1 / math.sqrt(1 + 0.05**2), abs=1e-6)


def test_the_map_has_two_coordinates_per_question_within_the_unit_square():
    vectors, _truth = themes(n_per_theme=10)
    points = clustering.map_2d(vectors)
    assert points.shape == (30, 2)
    assert points.min() >= 0 and points.max() <= 1


def test_seed_words_are_read_one_topic_a_line():
    seeds = seed_words_parse("Educação: universidade, emprego,  estudo\n\npets: gato, cão\nracing, f1")
    assert seeds == {
        "Educação": ["universidade", "emprego", "estudo"],
        "pets": ["gato", "cão"],
        "racing": ["racing", "f1"],
    }
    with pytest.raises(ValueError, match="line 1: no seed words"):
        seed_words_parse("Education:   ")

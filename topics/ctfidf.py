"""Class-based TF-IDF: the words that describe each cluster (as BERTopic does), free of Django.

The questions of a cluster are read as one document. A word's weight in a cluster is its
frequency there (normalised by the cluster's word count) times ``log(1 + A / f)``, where
``f`` is the word's frequency over all clusters and ``A`` the average word count of a
cluster: a word frequent in one cluster and rare elsewhere weighs most. HTML entities that web exports leave
in questions (``&amp;``, ``&quot;``) are decoded before words are counted, so they never become words.
"""

import html
from functools import lru_cache
from pathlib import Path

import numpy as np

# scikit-learn is imported inside the functions that count words, not when Django starts (see clustering).

STOPWORDS_DIR = Path(__file__).with_name("stopwords")
TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W_]+\b"  # words of two or more characters, not starting with a digit


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """Portuguese and English stop words, from the lists shipped in ``stopwords/``."""
    words = set()
    for path in sorted(STOPWORDS_DIR.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            word = line.strip().lower()
            if word and not word.startswith("#"):
                words.add(word)
    return frozenset(words)


def class_tfidf(texts: list[str], labels: list[int]) -> tuple[list[int], list[str], np.ndarray]:
    """The c-TF-IDF matrix: (cluster labels in order, vocabulary, weights of shape clusters × words)."""
    clusters = sorted(set(labels))
    if not texts or not clusters:
        return clusters, [], np.zeros((len(clusters), 0))
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(token_pattern=TOKEN_PATTERN, lowercase=True)
    try:
        counts = vectorizer.fit_transform([html.unescape(text) for text in texts])
    except ValueError:  # no word at all (only numbers or punctuation)
        return clusters, [], np.zeros((len(clusters), 0))
    vocabulary = vectorizer.get_feature_names_out()
    keep = np.array([word not in stop_words() for word in vocabulary], dtype=bool)
    counts, vocabulary = counts[:, keep], [str(word) for word in vocabulary[keep]]
    index = {cluster: row for row, cluster in enumerate(clusters)}
    membership = np.zeros((len(clusters), len(texts)))
    for column, label in enumerate(labels):
        membership[index[label], column] = 1.0
    per_cluster = np.asarray(counts.T.dot(membership.T).T)  # clusters × words
    totals = per_cluster.sum(axis=1, keepdims=True)
    frequency = np.divide(per_cluster, totals, out=np.zeros_like(per_cluster), where=totals > 0)
    across = per_cluster.sum(axis=0)
    average = per_cluster.sum() / len(clusters)
    idf = np.log(1 + np.divide(average, across, out=np.zeros_like(across), where=across > 0))
    return clusters, vocabulary, frequency * idf


def top_words(texts: list[str], labels: list[int], n: int = 10) -> dict[int, list[tuple[str, float]]]:
    """Per cluster, its ``n`` heaviest words with their weights (ties in alphabetical order)."""
    clusters, vocabulary, weights = class_tfidf(texts, labels)
    described = {}
    for row, cluster in enumerate(clusters):
        scored = (
            [(vocabulary[column], float(weights[row, column])) for column in np.flatnonzero(weights[row] > 0)]
            if vocabulary
            else []
        )
        scored.sort(key=lambda pair: (-round(pair[1], 12), pair[0]))
        described[cluster] = scored[:n]
    return described


def label_words(
    texts: list[str], labels: list[int], described: dict[int, list[tuple[str, float]]], n: int = 3
) -> dict[int, list[tuple[str, float]]]:
    """Per cluster, the ``n`` of its top words that best tell it apart: those whose questions fall most in
    this cluster (the share of the questions containing the word that are in it), the heavier c-TF-IDF word
    first on a tie. A word common to every topic ("causa", "why") may weigh much in a cluster and still
    say nothing of it; a topic's name should not be made of it."""
    holding: dict[str, dict[int, int]] = {}
    wanted = {word for words in described.values() for word, _weight in words}
    for text, label in zip(texts, labels):
        for word in words_of(text) & wanted:
            counts = holding.setdefault(word, {})
            counts[label] = counts.get(label, 0) + 1
    chosen = {}
    for cluster, words in described.items():
        scored = []
        for rank, (word, _weight) in enumerate(words):
            counts = holding.get(word, {})
            share = counts.get(cluster, 0) / max(sum(counts.values()), 1)
            scored.append((-round(share, 9), rank, word, share))
        chosen[cluster] = [(word, share) for _s, _rank, word, share in sorted(scored)[:n]]
    return chosen


def words_of(text: str) -> set[str]:
    """The lower-case words of a text, as the c-TF-IDF tokeniser reads them (for matching seed words)."""
    from sklearn.feature_extraction.text import CountVectorizer

    analyzer = CountVectorizer(token_pattern=TOKEN_PATTERN, lowercase=True).build_analyzer()
    return set(analyzer(html.unescape(text)))

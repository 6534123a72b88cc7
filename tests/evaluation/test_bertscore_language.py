"""BERTScore warns when its model was not trained on the project's language (the packaged model is English)."""

import pytest
from django.urls import reverse

from annotation.models import Project
from generation.local_models import language_mismatch, model_languages
from tests.evaluation.runs import open_items


def card(directory, front_matter: str):
    (directory / "README.md").write_text(f"---\n{front_matter}\n---\n# A model\n", encoding="utf-8")
    return str(directory)


def test_the_packaged_model_is_english_and_a_card_says_a_directorys_languages(tmp_path):
    assert model_languages("") == {"en"}
    assert model_languages(card(tmp_path, "language:\n- pt\n- en\nlicense: mit")) == {"pt", "en"}
    (tmp_path / "README.md").write_text("---\nlanguage: pt\n---\n", encoding="utf-8")
    assert model_languages(str(tmp_path)) == {"pt"}
    (tmp_path / "README.md").write_text("# no front matter\n", encoding="utf-8")
    assert model_languages(str(tmp_path)) is None, "a card that says nothing is not guessed"
    assert model_languages(str(tmp_path / "missing")) is None


def test_a_mismatch_is_a_model_that_names_other_languages_only(tmp_path):
    assert language_mismatch("", "pt-BR") == {"en"}
    assert language_mismatch("", "en") is None
    assert language_mismatch(card(tmp_path, "language: pt"), "pt-BR") is None
    assert language_mismatch(card(tmp_path, "language: multilingual"), "pt-BR") is None
    assert language_mismatch(card(tmp_path, "language: [en, de]"), "pt-BR") == {"en", "de"}


@pytest.mark.django_db
@pytest.mark.parametrize("language, warned", [("pt-BR", True), ("en", False)])
def test_the_run_form_warns_when_bertscore_would_score_another_language(
    project, client_for, curator, endpoint, settings, language, warned
):
    settings.LOCAL_MODEL_DIR = ""
    Project.objects.filter(pk=project.pk).update(language=language)
    open_items(project, 2)

    page = client_for(curator).get(reverse("evaluation:run_list", args=[project.slug])).content.decode()

    assert ('id="bertscore-language"' in page) is warned


@pytest.mark.django_db
@pytest.mark.ml
def test_the_report_of_a_portuguese_run_scored_by_the_english_model_says_so(
    project, client_for, curator, endpoint, fake_llm, settings
):
    from evaluation.models import EvalResponse
    from evaluation.runs.services import run_create
    from tests.evaluation.runs import release_of, run_here

    settings.LOCAL_MODEL_DIR = ""
    open_items(project, 4)
    run = run_create(project=project, release=release_of(project), endpoints=[endpoint], enqueue=False)
    run_here(run)
    assert EvalResponse.objects.filter(run=run).exclude(bertscore_f1=None).exists(), run.notes

    page = client_for(curator).get(reverse("evaluation:run_detail", args=[project.slug, run.pk]))

    assert 'id="bertscore-language"' in page.content.decode()

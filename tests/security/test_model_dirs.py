"""A curator names a BERTScore model directory only from the administrators' allow-list: any other directory of
the server is refused at the door and never loaded by a worker."""

import pytest

from evaluation.runs.services import RunInvalid, run_create
from generation.local_models import model_dir_allowed

pytestmark = pytest.mark.django_db


def test_a_directory_is_allowed_when_it_is_or_lies_inside_an_allowed_one(tmp_path):
    allowed = tmp_path / "models"
    (allowed / "bertimbau").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (allowed / "escape").symlink_to(tmp_path / "elsewhere")
    assert model_dir_allowed("", [])  # the packaged default
    assert model_dir_allowed(str(allowed / "bertimbau"), [str(allowed)])
    assert not model_dir_allowed(str(tmp_path / "elsewhere"), [str(allowed)])
    assert not model_dir_allowed(str(allowed / ".." / "elsewhere"), [str(allowed)])
    assert not model_dir_allowed(str(allowed / "escape"), [str(allowed)])  # a link out of the list
    assert not model_dir_allowed("/etc", [])


def test_a_run_naming_a_directory_off_the_list_is_refused_naming_the_field(project, settings, tmp_path):
    from tests.evaluation.test_run_import import published

    settings.LOCAL_MODEL_DIRS = [str(tmp_path / "models")]
    release = published.__wrapped__(project)
    with pytest.raises(RunInvalid) as refused:
        run_create(project=project, release=release, endpoints=[], bertscore_model="/etc")
    assert "bertscore_model" in refused.value.errors

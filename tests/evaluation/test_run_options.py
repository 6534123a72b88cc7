"""A benchmark run's options have one definition of their defaults and bounds, which the page's form, the API's
input, the command and the service all read."""

import pytest

from evaluation.forms import RunForm
from evaluation.runs.options import RUN_BOUNDS, RUN_OPTIONS
from evaluation.serializers import RunCreateInputSerializer


@pytest.mark.parametrize("name", sorted(RUN_BOUNDS))
def test_the_form_and_the_api_offer_the_bounds_of_the_one_definition(name):
    form_field = RunForm.base_fields[name]
    api_field = RunCreateInputSerializer().fields[name]
    assert (form_field.min_value, form_field.max_value) == RUN_BOUNDS[name], "the page's form"
    assert (api_field.min_value, api_field.max_value) == RUN_BOUNDS[name], "the API's input"


@pytest.mark.parametrize("name", sorted(RUN_OPTIONS))
def test_the_form_the_api_and_the_command_start_from_the_same_defaults(name):
    from evaluation.management.commands.evaluate import Command

    parser = Command().create_parser("manage.py", "evaluate")
    command_default = parser.get_default(name)
    assert RunForm.base_fields[name].initial == RUN_OPTIONS[name], "the page's form"
    assert RunCreateInputSerializer().fields[name].default == RUN_OPTIONS[name], "the API's input"
    assert command_default == RUN_OPTIONS[name], "the command"

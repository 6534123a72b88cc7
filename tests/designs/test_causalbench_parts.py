"""CausalBench's three CSV parts as published: the paper's question-type names in any case, the scenario id
under a header that differs per part (kept, and grouping the four questions), Ground Truth values other than
yes/no kept and reported, every other column kept as metadata."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from annotation.importing.published import PublishedRowsRefused
from annotation.models import ItemGroup, Project
from designs.causalbench.published import causalbench_part_import

pytestmark = pytest.mark.django_db

TYPES = [
    "From Cause to Effect without Intervention",
    "from effect to cause without intervention",
    "FROM CAUSE TO EFFECT WITH INTERVENTION",
    "From Effect to Cause with Intervention",
]


def part(header: list[str], rows: list[list]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def text_part() -> bytes:
    """Two scenarios whose cells repeat the scenario with each question (so their text differs per row)."""
    rows = []
    for scenario_id, world in [(7, "Rain raises soil moisture."), (8, "Sun dries the soil.")]:
        for number, kind in enumerate(TYPES):
            question = f"Question {number} about scenario {scenario_id}?"
            rows.append(
                [
                    scenario_id,
                    f"{world}\n\n{question}",
                    question,
                    kind,
                    "Yes" if number < 2 else "No",
                    "Because.",
                ]
            )
    header = [
        "Scenario ID",
        "Scenario and Question",
        "Question",
        "Question Type",
        "Ground Truth",
        "Explanation",
    ]
    return part(header, rows)


def math_part() -> bytes:
    answers = ["Yes", "No", "0.35", "Yes"]
    rows = [
        [21, "P(A)=0.3; A raises B by 0.2.", f"Math question {number}?", kind, answer, "Worked out.", "easy"]
        for number, (kind, answer) in enumerate(zip(TYPES, answers))
    ]
    header = [
        "Scenario_ID",
        "Mathematical Scenario",
        "Question",
        "Question Type",
        "Ground Truth",
        "Explanation",
        "Difficulty",
    ]
    return part(header, rows)


def code_part() -> bytes:
    code = "def f(x):\n    return x + 1\n"
    rows = [[3, code, f"Code question {n}?", kind, "no", "Read it."] for n, kind in enumerate(TYPES)]
    header = ["Causal_Scenario_ID", "Code", "Question", "Question Type", "Ground Truth", "Explanation"]
    return part(header, rows)


@pytest.fixture
def causalbench(db):
    return Project.objects.create(name="CausalBench", slug="cb", design="causalbench", answer_format="yes_no")


def test_the_text_part_groups_its_questions_by_scenario_id_not_by_text(causalbench):
    groups, report = causalbench_part_import(
        project=causalbench, data=text_part(), filename="CausalBench_Text_Part.csv"
    )

    assert [group.external_id for group in groups] == ["causalbench-text-7", "causalbench-text-8"]
    assert (report.records, report.groups, report.items) == (8, 2, 8)
    first = groups[0]
    assert first.context == "Rain raises soil moisture."
    assert first.metadata["published_scenario_id"] == "7"
    questions = list(first.items.order_by("position_in_group"))
    assert [q.causal_class for q in questions] == [
        "cause_to_effect",
        "effect_to_cause",
        "cause_to_effect_intervention",
        "effect_to_cause_intervention",
    ]
    assert questions[0].question == "Question 0 about scenario 7?"
    assert [q.reference_answer for q in questions] == ["yes", "yes", "no", "no"]
    assert questions[1].metadata["published"]["question_type"] == "from effect to cause without intervention"


def test_the_math_part_keeps_a_ground_truth_other_than_yes_or_no_and_reports_it(causalbench):
    groups, report = causalbench_part_import(
        project=causalbench, data=math_part(), filename="CausalBench_Math_Part.csv"
    )

    [scenario] = groups
    assert scenario.external_id == "causalbench-math-21"
    item = scenario.items.get(causal_class="cause_to_effect_intervention")
    assert item.reference_answer == "0.35"
    assert (
        "1 questions have a Ground Truth other than yes or no, kept as published: '0.35' (1)" in report.notes
    )
    assert report.kept == {"Difficulty"}
    assert item.metadata["published"]["Difficulty"] == "easy"


def test_the_code_part_reads_its_own_id_header(causalbench):
    groups, _report = causalbench_part_import(
        project=causalbench, data=code_part(), filename="CausalBench_Code_Part.csv"
    )

    assert [group.external_id for group in groups] == ["causalbench-code-3"]
    assert groups[0].metadata["domain"] == "code"


def test_an_unknown_question_type_is_refused_with_its_row_and_nothing_is_written(causalbench):
    data = text_part().replace(b"From Effect to Cause with Intervention", b"Mediation", 1)

    with pytest.raises(PublishedRowsRefused) as excinfo:
        causalbench_part_import(project=causalbench, data=data, filename="CausalBench_Text_Part.csv")

    assert "row 4, Question Type: unknown question type 'Mediation'" in str(excinfo.value).replace(
        "line 4", "row 4"
    )
    assert not ItemGroup.objects.filter(project=causalbench).exists()


def test_the_command_reports_the_scenarios_and_the_other_ground_truth_values(causalbench, tmp_path, capsys):
    path = tmp_path / "CausalBench_Math_Part.csv"
    path.write_bytes(math_part())

    call_command("import_questions", str(path), project=causalbench.slug)

    out = capsys.readouterr().out
    assert "1 scenarios added, four questions each" in out
    assert "kept as item metadata: Difficulty" in out
    assert "Ground Truth other than yes or no" in out


def test_a_part_imported_again_is_refused_naming_its_rows_and_nothing_more_is_written(causalbench, tmp_path):
    path = tmp_path / "CausalBench_Code_Part.csv"
    path.write_bytes(code_part())
    call_command("import_questions", str(path), project=causalbench.slug)

    with pytest.raises(CommandError) as excinfo:
        call_command("import_questions", str(path), project=causalbench.slug)

    assert "line 1: the scenario of this row is already in the project" in str(excinfo.value)
    assert "line 4: the scenario of this row is already in the project" in str(excinfo.value)
    assert causalbench.items.count() == 4
    assert ItemGroup.objects.filter(project=causalbench).count() == 1


def test_parts_without_scenario_ids_are_named_by_their_file_and_place_and_both_go_in(causalbench):
    """A part in the platform's earlier layout has no id column: its scenarios are named by the file they come
    from, so a second such file is not taken for the first one."""

    def without_ids(data: bytes) -> bytes:
        rows = list(csv.reader(io.StringIO(data.decode())))
        return part(rows[0][1:], [row[1:] for row in rows[1:]])

    first, _report = causalbench_part_import(
        project=causalbench, data=without_ids(text_part()), filename="rain.csv"
    )
    second, _report = causalbench_part_import(
        project=causalbench,
        data=without_ids(text_part()).replace(b"Rain raises", b"Snow raises"),
        filename="snow.csv",
    )

    assert [group.external_id for group in first] == ["causalbench-text-rain-1", "causalbench-text-rain-2"]
    assert [group.external_id for group in second] == ["causalbench-text-snow-1", "causalbench-text-snow-2"]
    assert causalbench.items.count() == 16

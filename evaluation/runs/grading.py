"""How an answer to a released item is graded: one rule for the runs the platform makes and for results imported
from elsewhere, so the same answer gets the same score through either door.

The design decides what was asked (``question_of``: the item's own question and options, or a question of the
design's own, such as a CausalityCheck task with its own options and gold); the run's answer format decides how
the answer is read (a letter among the asked options, or yes / no)."""

from dataclasses import dataclass

from .choices import parse_choice, parse_yes_no, yes_no_gold
from .conditions import MULTIPLE_CHOICE, YES_NO, question_of


@dataclass(frozen=True)
class Grade:
    choice: str  # the letter or yes / no read from the answer ("" when none could be read)
    unparsed: bool
    correct: bool


def answer_grade(
    *, record: dict, design, language: str, answer_format: str, text: str, reasoning: str = ""
) -> Grade | None:
    """The grade of ``text`` (with its ``reasoning``) as an answer to the released ``record``; None for an open
    answer (scored by similarity and judges, not graded)."""
    if answer_format == MULTIPLE_CHOICE:
        asked = question_of(record, design, language)
        choice = parse_choice(text, [option["letter"] for option in asked["options"]], reasoning)
        return Grade(choice or "", choice is None, choice is not None and choice in asked["correct"])
    if answer_format == YES_NO:
        choice = parse_yes_no(text, reasoning)
        return Grade(choice or "", choice is None, choice is not None and choice == yes_no_gold(record))
    return None


def response_grade(response, record: dict, design, language: str, answer_format: str) -> None:
    """Set ``response``'s choice, unparsed and correct from its text and reasoning (closed formats)."""
    grade = answer_grade(
        record=record,
        design=design,
        language=language,
        answer_format=answer_format,
        text=response.text,
        reasoning=response.reasoning or "",
    )
    if grade is None:
        return
    response.choice = grade.choice
    response.unparsed = grade.unparsed
    response.correct = grade.correct

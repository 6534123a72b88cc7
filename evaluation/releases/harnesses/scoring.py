"""``causalqa_scoring.py``, the module every harness task of a release imports to score an answer.

It is assembled from the platform's own code, not rewritten: the whole of ``evaluation.runs.choices`` (how a
letter or a yes/no is read out of what a model wrote) and ``extract_json`` from ``generation.llm.parsing``
(how the JSON a benchmark-answer prompt asks for is found in a reply). A harness run therefore reads every
answer exactly as a benchmark run of the platform reads it. The module needs nothing but the standard library.
"""

import inspect
import re

from generation.llm import parsing

from ...runs import choices

MODULE_NAME = "causalqa_scoring"

_HEADER = '''"""How CausalQA Studio reads a model's answer: the platform's own code, copied here by the release export.

``answer_of`` finds the JSON the benchmark-answer prompt asks for (``{"answer": ...}``) and returns its
answer and reasoning; ``parse_choice`` and ``parse_yes_no`` read the option letter or the yes/no out of them.
"""

import json
import re
import unicodedata
'''

_ANSWER_OF = '''

def answer_of(reply: str) -> tuple[str, str]:
    """(answer, reasoning) of a reply: the JSON's ``answer`` and ``reasoning`` when the reply holds the JSON the
    prompt asked for, else the whole reply as the answer."""
    try:
        value = extract_json(reply or "")
    except NoJSONFound:
        return (reply or "").strip(), ""
    if isinstance(value, dict) and "answer" in value:
        return str(value.get("answer", "")), str(value.get("reasoning", "") or "")
    return (reply or "").strip(), ""


def choice_score(reply: str, letters: list[str], correct: list[str]) -> dict:
    """What a benchmark run records of a multiple-choice answer: the letter read (empty when none could be),
    whether it is right, whether it could not be read."""
    answer, reasoning = answer_of(reply)
    choice = parse_choice(answer, letters, reasoning)
    return {"choice": choice or "", "correct": choice is not None and choice in correct, "unparsed": choice is None}


def yes_no_score(reply: str, gold: str) -> dict:
    """The same for a yes/no answer: "yes" or "no" read, right when it is ``gold``."""
    answer, reasoning = answer_of(reply)
    choice = parse_yes_no(answer, reasoning)
    return {"choice": choice or "", "correct": choice is not None and choice == gold, "unparsed": choice is None}
'''


def _without_imports(source: str) -> str:
    """A module's source without its docstring and top-level imports (the header imports what they need)."""
    body = re.sub(r'^""".*?"""\n', "", source, count=1, flags=re.DOTALL)
    return "\n".join(line for line in body.splitlines() if not re.match(r"^(import |from )", line)).strip()


def scoring_source() -> str:
    """The text of ``causalqa_scoring.py``."""
    parsing_part = "\n\n".join(
        [
            f"_THINKING = re.compile({parsing._THINKING.pattern!r}, re.DOTALL | re.IGNORECASE)",
            f"_FENCE = re.compile({parsing._FENCE.pattern!r}, re.DOTALL)",
            inspect.getsource(parsing.NoJSONFound).strip(),
            inspect.getsource(parsing.extract_json).strip(),
        ]
    )
    choices_part = _without_imports(inspect.getsource(choices))
    return f"{_HEADER}\n\n# --- evaluation/runs/choices.py ---\n\n{choices_part}\n\n\n# --- generation/llm/parsing.py ---\n\n{parsing_part}\n{_ANSWER_OF}"

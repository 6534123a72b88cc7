"""The kinds of model call a benchmark run makes; ``work.register`` puts them in generation's call-kind registry."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Kind(models.TextChoices):
    BENCHMARK_ANSWER = "benchmark_answer", _("Benchmark answer")
    JUDGE_SCORE = "judge_score", _("Judge: score an answer")
    JUDGE_RANKING = "judge_ranking", _("Judge: rank answers")


# What each kind's templates are given (they may use any of them and nothing else), and the keys of the model's
# output each reads (its templates must declare them).
VARIABLES = {
    Kind.BENCHMARK_ANSWER: {
        "question",
        "context",
        "causal_class",
        "class_description",
        "language",
        "options",
        "letters",
        "examples",
    },
    Kind.JUDGE_SCORE: {"question", "context", "answer", "reference", "criteria", "causal_class", "language"},
    Kind.JUDGE_RANKING: {"question", "context", "answers", "labels", "causal_class", "language"},
}
OUTPUT_KEYS = {
    Kind.BENCHMARK_ANSWER: ("answer",),
    Kind.JUDGE_SCORE: ("scores",),
    Kind.JUDGE_RANKING: ("ranking",),
}

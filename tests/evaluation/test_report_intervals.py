"""The report's bars carry 95% bootstrap intervals as error bars: seeded, so a report reads the same each time."""

from evaluation import plots
from evaluation.runs import metrics


def test_the_interval_of_a_proportion_brackets_it_and_narrows_with_more_answers():
    few = metrics.mean_interval([1, 0] * 10)
    many = metrics.mean_interval([1, 0] * 500)
    assert few[0] < 0.5 < few[1]
    assert many[0] < 0.5 < many[1]
    assert (many[1] - many[0]) < (few[1] - few[0]) / 3, "about √50 ≈ 7 times narrower"
    assert metrics.mean_interval([1, 0] * 10) == few, "seeded: the same report twice reads the same"


def test_one_answer_has_no_interval():
    assert metrics.mean_interval([1]) is None
    assert metrics.mean_interval([]) is None


def test_intervals_by_group_follow_the_groups_of_the_table():
    rows = [{"series": "m · zero-shot", "correct": n % 4 != 0} for n in range(40)]
    rows += [{"series": "m · cot", "correct": True} for _ in range(40)]
    found = metrics.intervals_by(rows, ["series"], lambda row: 1.0 if row["correct"] else 0.0)
    assert found[("m · cot",)] == (1.0, 1.0)
    low, high = found[("m · zero-shot",)]
    assert low < 0.75 < high


def test_a_bar_with_an_interval_draws_its_error_bar_and_says_it_in_the_tooltip():
    svg = plots.grouped_bars(
        [("all", [("a", 0.5), ("b", 0.9)])],
        title="Accuracy",
        series=["a", "b"],
        max_value=1.0,
        intervals={("all", "a"): (0.4, 0.6)},
    )
    assert svg.count('class="error-bar"') == 1, "only the bar with an interval gets one"
    assert "(95% CI 0.40–0.60)" in svg

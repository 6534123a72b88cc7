"""``manage.py agreement`` on long-format CSV files from anywhere."""

import json

import pytest
from django.core.management import CommandError, call_command

from tests.evaluation.test_agreement_statistics import KRIPPENDORFF_2011


@pytest.fixture
def krippendorff_csv(tmp_path):
    lines = ["unit,rater,value"]
    for rater, values in KRIPPENDORFF_2011.items():
        lines += [
            f"u{unit + 1},{rater},{'' if value is None else value}" for unit, value in enumerate(values)
        ]
    path = tmp_path / "judgments.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("agreement", *map(str, args), stdout=out)
    return out.getvalue()


def test_json_output_has_the_figures_at_the_top_level(krippendorff_csv):
    result = json.loads(run(krippendorff_csv, "--json"))
    assert result["n_units"] == 12 and result["n_raters"] == 4
    assert round(result["krippendorff_alpha"], 3) == 0.743
    assert result["fleiss_units_used"] == 11
    assert isinstance(result["fleiss_kappa"], float)
    assert len(result["cohen_kappa"]["pairs"]) == 6
    assert result["cohen_kappa"]["mean"] == pytest.approx(
        sum(pair["kappa"] for pair in result["cohen_kappa"]["pairs"]) / 6, abs=1e-3
    )
    low, high = result["krippendorff_alpha_ci95"]
    assert low < result["krippendorff_alpha"] <= high


@pytest.mark.parametrize(("level", "alpha"), [("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_the_level_sets_alphas_distance(krippendorff_csv, level, alpha):
    result = json.loads(run(krippendorff_csv, "--json", "--level", level, "--metric", "krippendorff"))
    assert round(result["krippendorff_alpha"], 3) == alpha
    assert "fleiss_kappa" not in result and "cohen_kappa" not in result


def test_with_two_raters_the_mean_is_their_kappa(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("unit,rater,value\n1,a,yes\n1,b,yes\n2,a,no\n2,b,yes\n3,a,no\n3,b,no\n4,a,yes\n4,b,yes\n")
    result = json.loads(run(path, "--json", "--metric", "cohen"))
    assert result["cohen_kappa"]["mean"] == result["cohen_kappa"]["pairs"][0]["kappa"] == 0.5


def test_the_text_output_reads_each_kappa(krippendorff_csv):
    text = run(krippendorff_csv, "--resamples", "100")
    assert "Krippendorff's alpha (nominal): 0.743" in text
    assert "Fleiss' kappa (nominal): 0.761" in text and "(substantial)" in text
    assert "A × B" in text


def test_a_single_rater_is_explained(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("unit,rater,value\n1,a,1\n2,a,2\n")
    result = json.loads(run(path, "--json"))
    assert result["fleiss_kappa"] is None and "two raters" in result["fleiss_kappa_note"]
    assert "undefined" in run(path)


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("unit,who,value\n1,a,1\n", [], "missing column(s) rater"),
        ("unit,rater,value\n1,,1\n", [], "line 2: rater is empty"),
        (
            "unit,rater,value\n1,a,high\n1,b,2\n",
            ["--level", "interval"],
            "line 2: value 'high' is not a number",
        ),
        ("unit,rater,value\n1,a,high\n1,b,low\n", ["--level", "ordinal"], "--categories"),
        ("unit,rater,value\n1,a,1\n1,a,2\n", [], "judged unit '1' more than once"),
    ],
)
def test_bad_files_are_refused_with_the_place_of_the_problem(tmp_path, content, args, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(path, *args)


def test_categories_give_the_order_of_an_ordinal_scale(tmp_path):
    path = tmp_path / "words.csv"
    path.write_text(
        "unit,rater,value\n1,a,low\n1,b,mid\n2,a,high\n2,b,high\n3,a,low\n3,b,low\n4,a,mid\n4,b,high\n"
    )
    result = json.loads(run(path, "--json", "--level", "ordinal", "--categories", "low,mid,high,very high"))
    assert result["cohen_kappa"]["weights"] == "linear"
    assert result["krippendorff_alpha"] is not None


@pytest.fixture
def no_threes_csv(tmp_path):
    """Two raters on a 1–5 scale on which nobody answered 3."""
    path = tmp_path / "no_threes.csv"
    path.write_text("unit,rater,value\n1,a,1\n1,b,1\n2,a,2\n2,b,1\n3,a,4\n3,b,5\n4,a,5\n4,b,5\n")
    return path


def test_weighted_kappa_keeps_a_scale_value_nobody_used(no_threes_csv):
    """By hand, linear weights on ranks 0–4: observed disagreement (0 + 1 + 1 + 0) / 4 = 0.5; rater b's values are
    1 and 5 half the time each, so every value of rater a is on average 2 ranks away: κ = 1 − 0.5 / 2 = 0.75.
    Dropping the unused 3 would make it 1 − 0.5 / 1.5 = 0.667."""
    result = json.loads(run(no_threes_csv, "--json", "--metric", "cohen", "--level", "ordinal"))
    assert result["cohen_kappa"]["mean"] == 0.75
    assert result["scale"] == [1, 2, 3, 4, 5]
    assert "lowest value to the highest" in result["scale_source"]


def test_the_output_says_which_scale_was_used(no_threes_csv):
    assert "scale: 1–5 (every whole number from the lowest value to the highest)" in run(
        no_threes_csv, "--level", "ordinal", "--resamples", "0"
    )
    text = run(no_threes_csv, "--level", "ordinal", "--categories", "0,1,2,3,4,5,6", "--resamples", "0")
    assert "scale: 0–6 (given by --categories)" in text


def test_a_nominal_scale_is_the_values_seen(no_threes_csv):
    result = json.loads(run(no_threes_csv, "--json", "--metric", "cohen"))
    assert result["scale"] == [1, 2, 4, 5]
    assert result["cohen_kappa"]["weights"] is None

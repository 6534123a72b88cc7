"""ExpliCa's agreement page opens at the design's interval level, keeps its figures until a judgment arrives,
and the aggregation says how its overall mean treats skipped ratings."""

from fractions import Fraction
from unittest import mock

import pytest
from django.urls import reverse

from annotation.models import Item, Membership
from designs.explica.aggregation import label_order
from designs.explica.design import connectives_of, explica_pair_add
from evaluation.selectors import agreement as agreement_selectors
from evaluation.selectors.agreement import project_agreement
from tests.designs.test_explica import explica_project
from tests.evaluation.helpers import judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated(annotators):
    """Three items of one pair rated 1–10 by two raters: (1, 2), (3, 3) and (5, 4)."""
    project = explica_project(slug="explica-agreement", overlap=2)
    for annotator in annotators[:2]:
        Membership.objects.create(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    explica_pair_add(
        project=project, sentence_a="Choveu muito.", sentence_b="A rua alagou.", external_id="p1"
    )
    items = list(Item.objects.filter(project=project).order_by("pk"))[:3]
    for item, values in zip(items, [(1, 2), (3, 3), (5, 4)]):
        for annotator, value in zip(annotators[:2], values):
            judge(item, annotator, ratings={"acceptability": value})
    return project


def rating_row(sections):
    return next(row for row in sections[0].rows if row.criterion.key == "rating:acceptability")


def test_ratings_are_read_at_the_interval_level_by_default(rated):
    """By hand: pooled values 1, 2, 3, 3, 5, 4 (n = 6). Observed: the two units that differ give
    (1−2)² and (5−4)² twice each over n: D_o = 4/6. Expected: Σ over ordered pairs of values of their squared
    difference, 2·6·64 − 2·18² = 120, over n(n−1) = 30: D_e = 4. α = 1 − (4/6)/4 = 5/6."""
    row = rating_row(project_agreement(rated, bootstrap=None))
    assert row.criterion.level == "interval"
    assert row.summary.krippendorff.value == pytest.approx(5 / 6, abs=1e-12)
    assert row.summary.scale == list(range(1, 11))


def test_the_page_opens_at_the_interval_level(rated, client_for, curator):
    Membership.objects.create(project=rated, user=curator, role=Membership.Role.CURATOR)
    body = client_for(curator).get(reverse("evaluation:agreement", args=[rated.slug])).content.decode()
    assert '<option value="interval" selected>' in body
    assert "0.833" in body


def test_unchanged_judgments_are_not_computed_again_and_a_new_one_is(rated, annotators):
    first = rating_row(project_agreement(rated, bootstrap=None)).summary.krippendorff.value
    with mock.patch.object(agreement_selectors._Judged, "load", side_effect=AssertionError("computed again")):
        assert rating_row(project_agreement(rated, bootstrap=None)).summary.krippendorff.value == first
    item = Item.objects.filter(project=rated).order_by("pk")[3]
    judge(item, annotators[0], ratings={"acceptability": 9})
    judge(item, annotators[1], ratings={"acceptability": 1})
    after = rating_row(project_agreement(rated, bootstrap=None)).summary
    assert after.krippendorff.n_units == 4 and after.krippendorff.value < first


def test_a_new_judgment_in_round_2_keeps_round_1_cached(rated, annotators):
    project_agreement(rated, round=1, bootstrap=None)
    item = Item.objects.filter(project=rated).order_by("pk")[4]
    judge(item, annotators[0], round=2, ratings={"acceptability": 4})
    with mock.patch.object(agreement_selectors._Judged, "load", side_effect=AssertionError("computed again")):
        project_agreement(rated, round=1, bootstrap=None)


def test_the_overall_mean_pools_the_ratings_when_raters_skipped_some():
    """'so' has 4 ratings and the others 2: pooled (8+8+8+8 + 2+2 + 2+2 + 2+2) / 10 = 4.4, while the mean of the
    connective means is (8 + 2 + 2 + 2) / 4 = 3.5. The rule uses the pooled mean, and the label shows both."""
    project = explica_project(slug="explica-pooled")
    ratings = {"so": [8, 8, 8, 8], "because": [2, 2], "then": [2, 2], "after": [2, 2]}
    label = label_order(
        "ab", ratings, connectives_of(project), {"best_mean_above": 6, "overall_mean_below": 5}
    )
    assert label.overall_mean == Fraction(22, 5)
    assert label.mean_of_means == Fraction(7, 2)
    assert label.as_dict()["overall_mean"] == 4.4 and label.as_dict()["mean_of_connective_means"] == 3.5
    assert label.label == "causal" and label.connective == "so"

"""Small shortcuts the annotation tests share: judge an assignment with the project's criteria."""

from annotation.judging import judgment_submit
from annotation.models import Judgment


def judge(
    assignment, *, rating=4, vote=Judgment.Vote.ACCEPT, causal_class="associational", comment="", ratings=None
):
    project = assignment.item.project
    ratings = ratings or {key: rating for key in project.criterion_keys}
    if vote == Judgment.Vote.NEEDS_REVISION and not comment:
        comment = "Falta explicar o mecanismo."
    return judgment_submit(
        assignment=assignment, ratings=ratings, vote=vote, causal_class=causal_class, comment=comment
    )


def judgment_post(project, *, rating=4, vote="accept", causal_class="associational", comment=""):
    """Form data for the judgment form of ``project``."""
    data = {f"rating_{key}": str(rating) for key in project.criterion_keys}
    data.update(vote=vote, causal_class=causal_class, comment=comment)
    return data

"""The Causal_QA.PT design (`../shared/papers/causal_qa_pt.txt`): open causal questions with reference answers.

The platform's own pipeline as it stands: import and filter natural questions, topics, human answers,
class balancing with generated questions and model answers, blind review rounds, curation, release.
"""

from django.utils.translation import gettext_lazy as _

from annotation.designs.base import ProjectDesign, Stage, register


@register
class CausalQAPTDesign(ProjectDesign):
    key = "causal_qa_pt"
    name = "Causal_QA.PT"
    paper = "causal_qa_pt.txt"
    summary = _(
        "Open causal questions (natural and generated) with reference answers, reviewed blind in rounds."
    )
    answer_format = "open"
    run_field_groups = ("judge", "bertscore")
    example_file = ""  # annotation/demo/causal_qa_pt.json, the platform's first demo
    help_template = "designs/causal_qa_pt/_causal_qa_pt_help.html"

    def stages(self) -> list[Stage]:
        return [
            Stage("import", _("Import and filter"), _("Rows read → causal → unique → within length bounds.")),
            Stage("topics", _("Topics"), _("Clusters of the questions, named and picked by a curator.")),
            Stage(
                "answer",
                _("Human answers"),
                _("Annotators answer natural questions or skip them as too hard."),
            ),
            Stage(
                "balance",
                _("Class balancing"),
                _("A model writes questions of a class; another answers them."),
            ),
            Stage(
                "review", _("Review rounds"), _("Blind judgments on four criteria, a vote and a class label.")
            ),
            Stage("curation", _("Curation"), _("Approve into gold, reject, or send back for revision.")),
            Stage("release", _("Release"), _("Versioned gold with seeded, stratified splits.")),
        ]

    def demo_project(self) -> dict:
        from annotation.demo import causal_qa_pt_project  # the demo package imports the designs

        return causal_qa_pt_project()

    def load_example(self, project, users: dict) -> dict:
        from annotation.demo import causal_qa_pt_load

        return causal_qa_pt_load(project, users)

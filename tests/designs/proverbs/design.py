"""Each item is a Portuguese proverb read as a causal claim (cause → effect, kept in the item's metadata);
annotators rate only its plausibility on a 1–3 scale and label it causal or not."""

from django.utils.translation import gettext_lazy as _

from annotation.designs import ProjectDesign, Stage, register
from annotation.services import item_create

PROVERBS = [
    ("Quem semeia vento colhe tempestade.", "semear vento", "colher tempestade"),
    ("Água mole em pedra dura tanto bate até que fura.", "a água bater na pedra", "a pedra furar"),
    ("Cão que ladra não morde.", "o cão ladrar", "o cão não morder"),
]
PLAUSIBILITY = {"key": "plausibility", "label": "Plausibility", "min": 1, "max": 3}


@register
class ProverbDesign(ProjectDesign):
    key = "proverbs"
    name = "Provérbios"
    summary = _("Proverbs read as causal claims.")
    answer_format = "open"

    def stages(self):
        return [Stage("reading", "Reading")]

    def project_defaults(self):
        return {
            "answer_format": "open",
            "label_set": ["causal", "not-causal"],
            "overlap": 1,
            "criteria": [PLAUSIBILITY],
        }

    def load_example(self, project, users):
        for number, (proverb, cause, effect) in enumerate(PROVERBS, start=1):
            item_create(
                project=project,
                question=proverb,
                external_id=f"prov-{number}",
                metadata={"stage": "reading", "cause": cause, "effect": effect},
            )
        return {"items": len(PROVERBS)}

    def item_warnings(self, item):
        return [] if item.metadata.get("cause") else ["A proverb needs its cause."]

    def judgment_criteria(self, item):
        return [PLAUSIBILITY]

    def judgment_labels(self, item):
        return ["causal", "not-causal"]

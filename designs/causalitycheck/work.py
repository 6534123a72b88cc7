"""CausalityCheck's job: the texts a seed's checklist needs, then its 36 items."""

from functools import lru_cache
from pathlib import Path

import yaml
from django.db.models import F

from annotation.models import Item
from generation.models import GenerationJob, LLMCall
from generation.services.work import NotApplied, Work, provenance

from . import seeds as checklist

# The one-line definitions of the verdicts the checklist's prompts use, shipped beside them.
VERDICTS = Path(__file__).resolve().parent / "prompt_templates" / "verdicts.yaml"

# A call's purpose is "<step>:<seed group id>"; each step has its template (by name) and its output fields.
CHECKLIST_OUTPUTS = {
    "virtual-entity": {"entity": "entity", "invented_entity": "invented_entity"},
    "unanswerable": {"context": "unanswerable_context"},
    "paraphrase": {"context": "paraphrased_context"},
    "paraphrase-unanswerable": {"context": "paraphrased_unanswerable_context"},
    "distractor": {"sentence": "distractor_sentence"},
    "chains-double": {"correct_chain": "causal_chain", "corrupted_chain": "corrupted_chain"},
    "chain": {"chain": "causal_chain"},
    "chain-corrupt": {"chain": "corrupted_chain"},
}
CHECKLIST_TEMPLATES = (
    "virtual-entity",
    "unanswerable",
    "paraphrase",
    "distractor",
    "chains-double",
    "chain",
    "chain-corrupt",
    "verdicts-double",
    "verdict",
)
# A step whose output makes another step possible: the second is planned when the first is applied.
CHECKLIST_FOLLOW_UPS = {
    "unanswerable": ("paraphrase-unanswerable", "paraphrased_unanswerable_context"),
    "chain": ("chain-corrupt", "corrupted_chain"),
}


def checklist_steps(seed: "checklist.SeedData", *, double_prompt: bool) -> list[str]:
    """The calls a seed needs for what it lacks. With the double prompt, the correct and the corrupted chain,
    and the four conclusions, each come from one request (CausalityCheck appendix I)."""
    missing = set(seed.missing())
    steps = []
    if missing & {"entity", "invented_entity"}:
        steps.append("virtual-entity")
    if "unanswerable_context" in missing:
        steps.append("unanswerable")
    elif "paraphrased_unanswerable_context" in missing:
        steps.append("paraphrase-unanswerable")
    if "distractor_sentence" in missing:
        steps.append("distractor")
    if "paraphrased_context" in missing:
        steps.append("paraphrase")
    if "causal_chain" in missing:
        steps.append("chains-double" if double_prompt else "chain")
    elif "corrupted_chain" in missing:
        steps.append("chain-corrupt")
    lacking = seed.lacking_verdicts()
    if lacking:
        steps += ["verdicts-double"] if double_prompt else [f"verdict-{verdict}" for verdict in lacking]
    return steps


def checklist_template_name(step: str) -> str:
    return {"paraphrase-unanswerable": "paraphrase"}.get(
        step, "verdict" if step.startswith("verdict-") else step
    )


@lru_cache(maxsize=1)
def _verdict_definitions() -> dict:
    return yaml.safe_load(VERDICTS.read_text(encoding="utf-8"))


class ChecklistWork(Work):
    """The checklist texts chosen seeds lack (CausalityCheck); a seed whose texts are complete gets its 36 items."""

    def plan(self):
        params = self.job.params
        groups = checklist.seeds_of(self.project).filter(
            pk__in=params.get("group_ids", []), items__isnull=True
        )
        calls = []
        for group in groups.distinct():
            for step in checklist_steps(
                checklist.SeedData.from_group(group), double_prompt=params["double_prompt"]
            ):
                calls.append(self._call(step, group.pk))
        return calls

    def _call(self, step: str, group_id: int) -> LLMCall:
        call = self.new_call(purpose=f"{step}:{group_id}")
        call.template_id = self.job.params["templates"][checklist_template_name(step)]
        return call

    def expected_total(self, planned):
        steps = [call.purpose.split(":")[0] for call in planned]
        return len(planned) + sum(1 for step in steps if step in CHECKLIST_FOLLOW_UPS)

    @staticmethod
    def step_and_group(call: LLMCall) -> tuple[str, int]:
        step, _sep, group_id = call.purpose.rpartition(":")
        return step, int(group_id)

    def variables(self, call):
        step, group_id = self.step_and_group(call)
        seed = checklist.SeedData.from_group(checklist.seeds_of(self.project).get(pk=group_id))
        definitions = _verdict_definitions()
        definitions = definitions.get(self.project.language.split("-")[0]) or definitions["en"]
        verdict = step[len("verdict-") :] if step.startswith("verdict-") else ""
        return {
            "context": seed.context,
            "question": seed.question,
            "options": "\n".join(f"{number}. {text}" for number, text in enumerate(seed.options, start=1)),
            "answer": seed.options[seed.answer_index],
            "source_context": seed.ingredients.get("unanswerable_context", "")
            if step == "paraphrase-unanswerable"
            else seed.context,
            "chain": seed.ingredients.get("causal_chain", ""),
            "verdict": verdict,
            "verdict_definition": definitions.get(verdict, ""),
            "verdict_definitions": "\n".join(f"- {key}: {text}" for key, text in definitions.items()),
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        step, group_id = self.step_and_group(call)
        group = checklist.seeds_of(self.project).select_for_update().filter(pk=group_id).first()
        if group is None:
            raise NotApplied(f"seed group {group_id} was deleted")
        if Item.objects.filter(group=group).exists():
            raise NotApplied(f"seed {group.external_id} has its checklist already; the output was not used")
        if step == "verdicts-double":
            values = {
                "verdicts": [{"verdict": v, "explanation": parsed[v].strip()} for v in checklist.VERDICTS]
            }
        elif step.startswith("verdict-"):
            values = {
                "verdicts": [
                    {"verdict": step[len("verdict-") :], "explanation": parsed["explanation"].strip()}
                ]
            }
        else:
            values = {name: parsed[key].strip() for key, name in CHECKLIST_OUTPUTS[step].items()}
        seed = checklist.SeedData.from_group(group)
        problem = checklist.ingredient_problem(
            seed, {**seed.ingredients, **values} if step == "chain-corrupt" else values
        )
        if problem:
            raise NotApplied(problem)
        group = checklist.seed_add_ingredients(
            group=group, values=values, provenance={**provenance(call), "step": step}
        )
        seed = checklist.SeedData.from_group(group)
        follow_ups = []
        follow_up = CHECKLIST_FOLLOW_UPS.get(step)
        if follow_up and follow_up[1] in seed.missing():
            follow_ups = LLMCall.objects.bulk_create([self._call(follow_up[0], group.pk)])
        # Not before the last verdict too: with one prompt per verdict, the other ingredients may all be in
        # while a verdict's answer is still on its way.
        if seed.complete():
            items = checklist.seed_derive(group=group)
            GenerationJob.objects.filter(pk=self.job.pk).update(items_created=F("items_created") + len(items))
        return follow_ups

    def on_failed(self, call):
        step, _group_id = self.step_and_group(call)
        if step in CHECKLIST_FOLLOW_UPS:  # its follow-up will never be asked
            GenerationJob.objects.filter(pk=self.job.pk, total__gt=0).update(total=F("total") - 1)
